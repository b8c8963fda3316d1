package cli

import (
	"flag"
	"strings"

	"canopy/compute/grid"
	"canopy/compute/request"
	"canopy/compute/source"
	"canopy/compute/warp"
)

// gridFlags are --grid and --grid-resampling: the grid the bands are
// warped onto before a computation (compute, zonal, change).
type gridFlags struct {
	grid, resampling string
	// layout, when compute's layout flags share --grid (bare, it draws a
	// coordinate grid on the layout), receives that bool.
	layout *bool
}

// gridValue is --grid as a flag: a grid spec, or, where a layout shares
// the name, bare --grid for the layout's coordinate grid.
type gridValue struct{ f *gridFlags }

func (v gridValue) String() string {
	if v.f == nil {
		return ""
	}
	return v.f.grid
}

func (v gridValue) Set(s string) error {
	if v.f.layout != nil && (s == "true" || s == "false") {
		*v.f.layout = s == "true"
		return nil
	}
	v.f.grid = s
	return nil
}

// IsBoolFlag lets bare --grid through where the layout shares the flag.
func (v gridValue) IsBoolFlag() bool { return v.f != nil && v.f.layout != nil }

const gridUsage = "warp the bands onto this grid first: FILE.tif (its grid), utm[,RES] (the UTM zone covering most of the data) or EPSG:N[,RES[,W,S,E,N]]; extents aligned to the pixel size"

func (f *gridFlags) register(fs *flag.FlagSet) {
	fs.Var(gridValue{f}, "grid", gridUsage)
	fs.StringVar(&f.resampling, "grid-resampling", "bilinear", "how --grid resamples the bands: nearest, bilinear, cubic or average (masks and nodata never leak into a neighbour)")
}

// shareGrid binds bare --grid to b when fs's --grid is a grid spec's
// (compute's layout), and reports whether it did.
func shareGrid(fs *flag.FlagSet, b *bool) bool {
	fl := fs.Lookup("grid")
	if fl == nil {
		return false
	}
	v, ok := fl.Value.(gridValue)
	if !ok {
		return false
	}
	v.f.layout = b
	fl.Usage = gridUsage + "; bare --grid draws a coordinate grid on the layout"
	return true
}

// joinGridArg writes "--grid SPEC" as "--grid=SPEC" where bare --grid is
// also a bool (compute): the next argument is the spec unless it is a
// flag.
func joinGridArg(args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if (a == "--grid" || a == "-grid") && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			out = append(out, "--grid="+args[i+1])
			i++
			continue
		}
		out = append(out, a)
	}
	return out
}

// regrid is the flags as source.Options.Regrid (nil without --grid).
func (f *gridFlags) regrid() (*source.Regrid, error) {
	if f.grid == "" {
		return nil, nil
	}
	sp, err := grid.ParseSpec(f.grid, source.LikeGrid)
	if err != nil {
		return nil, request.Errorf("--grid: %v", err)
	}
	r, err := warp.ParseResampling(f.resampling)
	if err != nil {
		return nil, request.Errorf("--grid-resampling: %v", err)
	}
	return &source.Regrid{Grid: sp, Resampling: r}, nil
}

// sceneValue is the repeatable --scene: the first product, then further
// products of the same date to mosaic with it (source.Spec.More).
type sceneValue struct{ f *inputFlags }

func (v sceneValue) String() string {
	if v.f == nil {
		return ""
	}
	return strings.Join(append([]string{v.f.scene}, v.f.more...), " ")
}

func (v sceneValue) Set(s string) error {
	if v.f.scene == "" {
		v.f.scene = s
	} else {
		v.f.more = append(v.f.more, s)
	}
	return nil
}
