package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"canopy/compute"
	"canopy/compute/geo"
	"canopy/compute/geotiff"
	"canopy/compute/grid"
	"canopy/compute/outfile"
	"canopy/compute/raster"
	"canopy/compute/request"
	"canopy/compute/vector"
	"canopy/compute/warp"
	_ "canopy/compute/warp/glwarp" // registers the gl warp backend
)

// warpMemory bounds what canopy warp holds at once: the inputs' bands as
// stored, the mosaic's bands and their filled maps.
const warpMemory = 8 << 30

// warpInput is one INPUT of canopy warp: its file, open until its bands
// are read, the bands it gives (1-based), their type and where they lie.
type warpInput struct {
	spec  string
	path  string
	f     *geotiff.File
	bands []int
	typ   compute.DataType
	grid  grid.Grid
}

// cmdWarp is canopy warp: reproject and mosaic bands onto one grid.
func cmdWarp(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("warp", stderr)
	crsFlag := fs.String("crs", "", "target system: EPSG:N, a bare code, or WKT (default: --like's, the stands', else the UTM zone that covers most of the inputs)")
	resFlag := fs.String("res", "", "pixel size in the target system's units, X[,Y] (default: --like's, else the inputs' finest when both are in metres)")
	bbox := fs.String("bbox", "", "extent W,S,E,N in the target system's units (aligned to the pixel size)")
	like := fs.String("like", "", "take the grid (system, pixel size, extent) of this GeoTIFF")
	stands := fs.String("stands", "", "cover these stands (FILE[:LAYER]); their system is the default target")
	resampling := fs.String("resampling", "nearest", "nearest, bilinear, cubic or average")
	backendName := fs.String("backend", "c", "warp backend: "+strings.Join(warp.Names(), ", "))
	maxErr := fs.Float64("error", warp.MaxError, "the approximate transformer's error bound in source pixels (0: every pixel exact)")
	tif := fs.String("tif", "", "output COG (float32, NaN where no input is valid)")
	asJSON := fs.Bool("json", false, "print one JSON object")
	inputs, err := parseInterspersed(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(inputs) == 0 {
		return request.Errorf("no INPUT: name one or more GeoTIFFs (FILE or FILE:BAND)")
	}
	if *tif == "" {
		return request.Errorf("--tif OUT is required")
	}
	n := 0
	for _, s := range []string{*bbox, *like, *stands} {
		if s != "" {
			n++
		}
	}
	if n > 1 {
		return request.Errorf("--bbox, --like and --stands each give the extent: name one")
	}
	if *like != "" && (*crsFlag != "" || *resFlag != "") {
		return request.Errorf("--like gives the system and pixel size: leave out --crs and --res")
	}
	r, err := warp.ParseResampling(*resampling)
	if err != nil {
		return request.Errorf("--resampling: %v", err)
	}
	be, err := warp.Get(*backendName)
	if err != nil {
		return request.Errorf("--backend: %v", err)
	}
	if !(*maxErr >= 0) || math.IsInf(*maxErr, 0) {
		return request.Errorf("--error %g: want a number ≥ 0", *maxErr)
	}
	// A GPU backend says at once when it cannot run here (and opens its
	// device, whose time is set-up, not warp).
	if a, ok := be.(interface{ Available() (bool, string) }); ok {
		if ok, why := a.Available(); !ok {
			return fmt.Errorf("--backend %s: %s", be.Name(), why)
		}
	}
	t0 := time.Now()
	ins, err := openWarpInputs(inputs)
	if err != nil {
		return err
	}
	defer closeWarpInputs(ins)
	if err := ctx.Err(); err != nil {
		return err
	}
	open := time.Since(t0)
	target, err := warpGrid(ins, *crsFlag, *resFlag, *bbox, *like, *stands)
	if err != nil {
		return err
	}
	bands := len(ins[0].bands)
	need := int64(target.Width) * int64(target.Height) * int64(bands) * int64(ins[0].typ.Size()+1)
	for _, in := range ins {
		need += int64(in.grid.Width) * int64(in.grid.Height) * int64(len(in.bands)) * int64(in.typ.Size())
	}
	if need > warpMemory {
		return fmt.Errorf("the mosaic of %s needs %s of memory, more than the %s canopy warp takes: choose a smaller extent or a coarser pixel", target, raster.Bytes(need), raster.Bytes(warpMemory))
	}
	geoRef, err := target.GeoRef()
	if err != nil {
		return err
	}

	// Each pixel from the first input valid there, in the order given:
	// the inputs read one after another (each on every core) while the
	// plans are made, and each warped as soon as it is read.
	var grids []warp.SourceGrid
	var names []string
	for _, in := range ins {
		grids = append(grids, warp.SourceGrid{Width: in.grid.Width, Height: in.grid.Height, Affine: in.grid.Affine(), CRS: in.grid.CRS})
		names = append(names, in.spec)
	}
	// A backend that inflates bands itself gets DEFLATE bands as stored.
	st, stored := be.(warp.StoredTaker)
	stored = stored && st.TakesStored()
	read := func(i int) ([]*warp.Source, error) {
		if err := ctx.Err(); err != nil {
			return nil, err // interrupted: no input is read after it
		}
		return ins[i].read(stored)
	}
	targets, times, err := warp.MosaicStream(target, grids, names, read, r, *maxErr, be)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if !slices.Contains(targets[0].Filled, 1) {
		return fmt.Errorf("no input has a valid pixel on the grid (%s): nothing written", target)
	}

	t3 := time.Now()
	var paths []string
	for _, in := range ins {
		paths = append(paths, in.path)
	}
	set := outfile.NewSet(paths...)
	if err := writeWarped(ctx, set, *tif, target, targets, geoRef); err != nil {
		set.Abort()
		return err
	}
	if err := set.Commit(); err != nil {
		return err
	}
	writeTime := time.Since(t3)
	valid := 0
	for _, f := range targets[0].Filled {
		if f != 0 {
			valid++
		}
	}
	ms := func(d time.Duration) float64 { return math.Round(float64(d.Microseconds())/10) / 100 }
	// The inputs' reading, the plans and the warps overlap: total is
	// their wall time (with the files' opening, without the grid's
	// choosing); load and plan end when the last input is read and the
	// last plan made, warp is what came after both.
	total := open + times.Total
	if *asJSON {
		// A backend's account of the time after the last input arrived.
		var parts, events []map[string]any
		for _, p := range times.Parts {
			parts = append(parts, map[string]any{"part": p.Name, "ms": ms(p.Time)})
		}
		for _, e := range times.Events {
			events = append(events, map[string]any{"event": e.Name, "at_ms": ms(e.Time)})
		}
		return json.NewEncoder(stdout).Encode(map[string]any{
			"crs": target.CRS, "epsg": target.EPSG, "res_x": target.ResX, "res_y": target.ResY,
			"width": target.Width, "height": target.Height, "x0": target.X0, "y0": target.Y0,
			"bands": bands, "inputs": len(ins), "resampling": r.String(), "backend": be.Name(),
			"valid_pixels": valid, "total_ms": ms(total), "load_ms": ms(open + times.Read), "plan_ms": ms(times.Plan),
			"warp_ms": ms(times.Tail), "write_ms": ms(writeTime), "setup_ms": ms(times.Setup), "tail_parts": parts, "events": events,
		})
	}
	fmt.Fprintf(stdout, "%s: %s, %s (%s), %d band(s) from %d input(s), %d of %d pixels valid; read, plan and warp %.1f ms (read %.1f ms with the plans made meanwhile in %.1f ms, then warp %.1f ms), write %.1f ms\n",
		*tif, target, r, be.Name(), bands, len(ins), valid, target.Width*target.Height, ms(total), ms(open+times.Read), ms(times.Plan), ms(times.Tail), ms(writeTime))
	return nil
}

// parseInterspersed parses flags anywhere among the positional
// arguments (canopy warp A.tif B.tif --crs ... or --crs ... A.tif).
func parseInterspersed(fs *flag.FlagSet, args []string, stdout io.Writer) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				printHelp(fs, stdout)
				return nil, err
			}
			return nil, request.Error{Msg: err.Error()}
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// openWarpInputs opens every input (FILE: all its bands; FILE:B: band
// B) and reads its header: what its bands hold and where they lie. The
// samples are read later (warpInput.read).
func openWarpInputs(specs []string) ([]*warpInput, error) {
	var ins []*warpInput
	for _, spec := range specs {
		path, band, err := raster.ParseSpec(spec)
		if err != nil {
			closeWarpInputs(ins)
			return nil, request.Errorf("%s: %v", spec, err)
		}
		f, err := geotiff.Open(path)
		if err != nil {
			closeWarpInputs(ins)
			return nil, err
		}
		in, err := openWarpInput(f, spec, path, band)
		if err != nil {
			f.Close()
			closeWarpInputs(ins)
			return nil, err
		}
		ins = append(ins, in)
	}
	return ins, nil
}

func closeWarpInputs(ins []*warpInput) {
	for _, in := range ins {
		in.close()
	}
}

func openWarpInput(f *geotiff.File, spec, path string, band int) (*warpInput, error) {
	if !f.Geo().Valid() {
		return nil, fmt.Errorf("%s is not georeferenced: a warp needs to know where its pixels are", path)
	}
	g, err := grid.Of(f.Geo(), f.Width(), f.Height())
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	bands := []int{band}
	if band == 0 {
		bands = bands[:0]
		for b := 1; b <= f.Bands(); b++ {
			bands = append(bands, b)
		}
	} else if band > f.Bands() {
		return nil, fmt.Errorf("%s has %d band(s), no band %d", path, f.Bands(), band)
	}
	t, _ := f.DataType()
	return &warpInput{spec: spec, path: path, grid: g, f: f, bands: bands, typ: t}, nil
}

// read decodes the input's bands at their stored type (warp.MosaicStream
// checks that every input gives as many, of the same types), on every
// core, and closes the file.
func (in *warpInput) read(stored bool) ([]*warp.Source, error) {
	f := in.f
	if f == nil {
		return nil, fmt.Errorf("%s: read twice", in.path)
	}
	keep := false // open for a stored band's host decoding (closeWarpInputs closes it)
	defer func() {
		if !keep {
			in.close()
		}
	}()
	nd, has := f.NoData()
	var out []*warp.Source
	g := in.grid
	for _, b := range in.bands {
		var st *geotiff.Stored
		if stored {
			var err error
			if st, err = f.ReadStored(b); err != nil {
				return nil, err
			}
		}
		p := compute.Plane{Type: in.typ, Width: f.Width(), Height: f.Height()}
		if st != nil && st.Type == in.typ {
			keep = true
		} else {
			st = nil
			p = compute.NewPlane(in.typ, f.Width(), f.Height())
			if err := f.ReadRowsInto(b, 0, f.Height(), p); err != nil {
				return nil, err
			}
		}
		s := &warp.Source{Plane: p, Stored: st, NoData: nd, HasNoData: has, Name: fmt.Sprintf("%s:%d", in.path, b),
			Grid: warp.SourceGrid{Width: g.Width, Height: g.Height, Affine: g.Affine(), CRS: g.CRS}}
		if in.typ != compute.F32 && has && (nd != math.Trunc(nd) || math.IsNaN(nd)) {
			s.HasNoData = false // no sample of the type can equal it
		}
		out = append(out, s)
	}
	return out, nil
}

// close closes the input's file (again: nothing).
func (in *warpInput) close() {
	if in.f != nil {
		in.f.Close()
		in.f = nil
	}
}

// warpGrid decides the target grid from the flags and the inputs.
func warpGrid(ins []*warpInput, crsFlag, resFlag, bbox, like, stands string) (grid.Grid, error) {
	if like != "" {
		f, err := geotiff.Open(like)
		if err != nil {
			return grid.Grid{}, err
		}
		defer f.Close()
		g, err := grid.Of(f.Geo(), f.Width(), f.Height())
		if err != nil {
			return grid.Grid{}, fmt.Errorf("--like %s: %v", like, err)
		}
		return g, nil
	}
	var layer *vector.Layer
	if stands != "" {
		path, name, err := vector.ParseStands(stands)
		if err != nil {
			return grid.Grid{}, request.Errorf("--stands: %v", err)
		}
		if layer, err = vector.Read(path, name); err != nil {
			return grid.Grid{}, err
		}
		if layer.CRS == "" {
			return grid.Grid{}, fmt.Errorf("%s says nothing of its CRS: the stands' place is unknown", path)
		}
	}
	// The system.
	var def string
	var epsg int
	var err error
	switch {
	case crsFlag != "":
		if def, epsg, err = grid.ParseCRS(crsFlag); err != nil {
			return grid.Grid{}, request.Errorf("--crs: %v", err)
		}
	case layer != nil:
		if def, epsg, err = grid.ParseCRS(layer.CRS); err != nil {
			return grid.Grid{}, fmt.Errorf("--stands: %v", err)
		}
	default:
		var areas [][4]float64
		for _, in := range ins {
			ll, err := grid.LonLat(in.grid)
			if err != nil {
				return grid.Grid{}, fmt.Errorf("%s: %v", in.spec, err)
			}
			areas = append(areas, ll)
		}
		code, err := grid.UTMZone(areas...)
		if err != nil {
			return grid.Grid{}, err
		}
		def, epsg = fmt.Sprintf("EPSG:%d", code), code
	}
	// The pixel size.
	var rx, ry float64
	if resFlag != "" {
		parts := strings.Split(resFlag, ",")
		if len(parts) > 2 {
			return grid.Grid{}, request.Errorf("--res %q: want X or X,Y", resFlag)
		}
		for i, p := range parts {
			v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
			if err != nil || !(v > 0) || math.IsInf(v, 0) {
				return grid.Grid{}, request.Errorf("--res %q: %q is not a positive number", resFlag, p)
			}
			if i == 0 {
				rx, ry = v, v
			} else {
				ry = v
			}
		}
	} else {
		c, err := geo.Describe(def)
		if err != nil {
			return grid.Grid{}, err
		}
		m, ok := c.MetresPerUnit()
		for _, in := range ins {
			ic, err := geo.Describe(in.grid.CRS)
			if err != nil {
				return grid.Grid{}, err
			}
			im, iok := ic.MetresPerUnit()
			if !ok || !iok {
				return grid.Grid{}, request.Errorf("--res: the target system or %s is not in metres; give the pixel size", in.spec)
			}
			px := math.Min(in.grid.ResX, in.grid.ResY) * im / m
			if rx == 0 || px < rx {
				rx, ry = px, px
			}
		}
	}
	// The extent.
	var b [4]float64
	switch {
	case bbox != "":
		if b, err = grid.ParseBBox(bbox); err != nil {
			return grid.Grid{}, request.Errorf("--bbox: %v", err)
		}
	case layer != nil:
		lb := layer.Bound()
		sg := grid.Grid{CRS: layer.CRS, X0: lb.Min[0], Y0: lb.Max[1], ResX: math.Max(lb.Max[0]-lb.Min[0], 1e-9) / 100, ResY: math.Max(lb.Max[1]-lb.Min[1], 1e-9) / 100, Width: 100, Height: 100}
		if b, err = grid.Footprint(sg, def); err != nil {
			return grid.Grid{}, fmt.Errorf("--stands: %v", err)
		}
	default:
		var fps [][4]float64
		for _, in := range ins {
			fp, err := grid.Footprint(in.grid, def)
			if err != nil {
				return grid.Grid{}, fmt.Errorf("%s: %v", in.spec, err)
			}
			fps = append(fps, fp)
		}
		b = grid.Union(fps...)
	}
	g, err := grid.Aligned(def, epsg, rx, ry, b)
	if err != nil {
		return grid.Grid{}, err
	}
	return g, nil
}

// writeWarped writes the mosaic's bands as a float32 COG: each pixel's
// value where an input was valid, NaN elsewhere.
func writeWarped(ctx context.Context, set *outfile.Set, path string, g grid.Grid, targets []*warp.Target, geoRef *compute.GeoRef) error {
	fw, err := set.Create(path)
	if err != nil {
		return err
	}
	var out io.WriterAt = fw
	if wr := wrapOutput(fw); wr != outWriter(fw) {
		out = wr
	}
	c, err := geotiff.NewCOG(out, g.Width, g.Height, len(targets), geoRef, geotiff.COGOptions{ScratchDir: filepath.Dir(path)})
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	const block = 256
	rows := make([][]float32, len(targets))
	for b := range rows {
		rows[b] = make([]float32, block*g.Width)
	}
	for y0 := 0; y0 < g.Height; y0 += block {
		if err := ctx.Err(); err != nil {
			c.Abort()
			return err
		}
		n := min(block, g.Height-y0)
		for b, t := range targets {
			for i := 0; i < n*g.Width; i++ {
				j := y0*g.Width + i
				if t.Filled[j] != 0 {
					rows[b][i] = float32(t.Plane.At(j))
				} else {
					rows[b][i] = float32(math.NaN())
				}
			}
		}
		part := make([][]float32, len(rows))
		for b := range rows {
			part[b] = rows[b][:n*g.Width]
		}
		if err := c.WriteRows(y0, n, part); err != nil {
			c.Abort()
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	if err := c.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
