package warp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"canopy/compute"
	"canopy/compute/geotiff"
	"canopy/compute/grid"
)

// needGDAL returns gdalwarp's path, or skips (fails under
// CANOPY_EXPECT_GDAL=1).
func needGDAL(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("gdalwarp")
	if err != nil {
		if os.Getenv("CANOPY_EXPECT_GDAL") == "1" {
			t.Fatal("gdalwarp not found but CANOPY_EXPECT_GDAL=1")
		}
		t.Skip("gdalwarp not found (GDAL's command line tools)")
	}
	return p
}

// testSource is a w×h float32 band in UTM zone 32N near the zone's
// eastern edge (about 11.8° E, 50.5° N), 10 m pixels: a smooth field with
// noise on it, and a block of nodata.
func testSource(t *testing.T, dir string, w, h int, typ compute.DataType) (*Source, string) {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 11))
	vals := make([]float32, w*h)
	for y := range h {
		for x := range w {
			v := 1000 + 400*math.Sin(float64(x)/9)*math.Cos(float64(y)/13) + 60*rng.Float64()
			vals[y*w+x] = float32(math.Round(v))
		}
	}
	const nd = 7
	for y := h / 3; y < h/3+12; y++ {
		for x := w / 2; x < w/2+17; x++ {
			vals[y*w+x] = nd
		}
	}
	x0, y0 := 700000.0, 5600000.0
	g := &compute.GeoRef{
		PixelScale:      []float64{10, 10, 0},
		Tiepoints:       []float64{0, 0, 0, x0, y0, 0},
		GeoKeyDirectory: []uint16{1, 1, 0, 3, 1024, 0, 1, 1, 1025, 0, 1, 1, 3072, 0, 1, 32632},
	}
	path := filepath.Join(dir, "src.tif")
	var plane compute.Plane
	var err error
	switch typ {
	case compute.U16:
		u := make([]uint16, len(vals))
		for i, v := range vals {
			u[i] = uint16(v)
		}
		plane = compute.PlaneOf(w, h, u)
		err = geotiff.WriteBands(path, w, h, [][]uint16{u}, g, geotiff.WriteOptions{NoData: "7"})
	default:
		plane = compute.PlaneOf(w, h, vals)
		err = geotiff.WriteBands(path, w, h, [][]float32{vals}, g, geotiff.WriteOptions{NoData: "7"})
	}
	if err != nil {
		t.Fatal(err)
	}
	src := &Source{Plane: plane, NoData: nd, HasNoData: true, Name: "src.tif",
		Grid: SourceGrid{Width: w, Height: h, Affine: [6]float64{x0, 10, 0, y0, 0, -10}, CRS: "EPSG:32632"}}
	return src, path
}

// gdalWarp runs gdalwarp onto grid g and returns its band as float64.
func gdalWarp(t *testing.T, gdal, dir, src string, g grid.Grid, r Resampling, typ compute.DataType) []float64 {
	t.Helper()
	out := filepath.Join(dir, fmt.Sprintf("gdal-%d-%s.tif", g.EPSG, r))
	b := g.Bounds()
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	args := []string{"-q", "-overwrite", "-t_srs", fmt.Sprintf("EPSG:%d", g.EPSG), "-te", f(b[0]), f(b[1]), f(b[2]), f(b[3]),
		"-ts", strconv.Itoa(g.Width), strconv.Itoa(g.Height), "-r", r.String(), "-wm", "2000", "-dstnodata", "7", src, out}
	if cmd := exec.Command(gdal, args...); true {
		if o, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("gdalwarp %v: %v\n%s", args, err, o)
		}
	}
	f2, err := geotiff.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f2.Close()
	if f2.Width() != g.Width || f2.Height() != g.Height {
		t.Fatalf("gdalwarp made %d×%d, the grid is %d×%d", f2.Width(), f2.Height(), g.Width, g.Height)
	}
	bd, err := f2.ReadBand(1)
	if err != nil {
		t.Fatal(err)
	}
	v := make([]float64, len(bd.Data))
	for i, x := range bd.Data {
		v[i] = float64(x)
	}
	return v
}

// targetGrid is the grid of system epsg at resolution res covering the
// middle of the source's footprint.
func targetGrid(t *testing.T, src *Source, epsg int, res float64) grid.Grid {
	t.Helper()
	sg := grid.Grid{CRS: src.Grid.CRS, EPSG: 32632, X0: src.Grid.Affine[0], Y0: src.Grid.Affine[3], ResX: 10, ResY: 10, Width: src.Grid.Width, Height: src.Grid.Height}
	crs := fmt.Sprintf("EPSG:%d", epsg)
	fp, err := grid.Footprint(sg, crs)
	if err != nil {
		t.Fatal(err)
	}
	// Cover a little more than the source (edges and outside included).
	dx, dy := (fp[2]-fp[0])*0.02, (fp[3]-fp[1])*0.02
	g, err := grid.Aligned(crs, epsg, res, res, [4]float64{fp[0] - dx, fp[1] - dy, fp[2] + dx, fp[3] + dy})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func warpRef(t *testing.T, src *Source, g grid.Grid, r Resampling) (*Plan, []float64) {
	t.Helper()
	plan, err := NewPlan(g, src.Grid, r, MaxError)
	if err != nil {
		t.Fatal(err)
	}
	dst, err := NewTarget(plan, src.Plane.Type, 7, true)
	if err != nil {
		t.Fatal(err)
	}
	Reference(plan, src, dst, 0, g.Height)
	v := make([]float64, dst.Plane.Pixels())
	for i := range v {
		v[i] = dst.Plane.At(i)
	}
	return plan, v
}

type gdalCase struct {
	name string
	epsg int
	res  float64
}

var gdalCases = []gdalCase{
	{"utm32-utm33", 32633, 10},
	{"utm32-laea", 3035, 10},
	{"utm32-geographic", 4326, 0.0001},
	{"utm32-webmercator", 3857, 15},
}

func TestNearestMatchesGDAL(t *testing.T) {
	gdal := needGDAL(t)
	dir := t.TempDir()
	src, path := testSource(t, dir, 400, 300, compute.F32)
	for _, c := range gdalCases {
		t.Run(c.name, func(t *testing.T) {
			g := targetGrid(t, src, c.epsg, c.res)
			plan, ours := warpRef(t, src, g, Nearest)
			theirs := gdalWarp(t, gdal, dir, path, g, Nearest, compute.F32)
			tr, err := newTransformer(g, src.Grid.Affine, src.Grid.CRS)
			if err != nil {
				t.Fatal(err)
			}
			same, valid := 0, 0
			for i := range ours {
				if ours[i] != 7 || theirs[i] != 7 {
					valid++
				}
				if ours[i] == theirs[i] {
					same++
					continue
				}
				// A difference is allowed only where the exact position is
				// within the error bound of a source pixel's edge.
				x, y := i%g.Width, i/g.Width
				sx, sy, ok := tr.point(float64(x)+0.5, float64(y)+0.5)
				if ok && (edgeDist(sx) > plan.MaxError && edgeDist(sy) > plan.MaxError) {
					t.Errorf("pixel (%d, %d): ours %g, gdalwarp %g, source position (%.4f, %.4f) is %.3f and %.3f from an edge", x, y, ours[i], theirs[i], sx, sy, edgeDist(sx), edgeDist(sy))
					return
				}
			}
			share := float64(same) / float64(len(ours))
			t.Logf("%s: %d×%d, %d segments, %d valid pixels, %.5f%% equal", g, g.Width, g.Height, len(plan.Segs), valid, 100*share)
			if share < 0.999 {
				t.Errorf("only %.4f%% of pixels equal gdalwarp's (want ≥ 99.9%%)", 100*share)
			}
			if valid < len(ours)/2 {
				t.Errorf("only %d of %d pixels valid", valid, len(ours))
			}
		})
	}
}

func edgeDist(v float64) float64 { return math.Abs(v - math.Round(v)) }

func TestResamplingMatchesGDAL(t *testing.T) {
	gdal := needGDAL(t)
	dir := t.TempDir()
	src, path := testSource(t, dir, 400, 300, compute.F32)
	for _, r := range []Resampling{Bilinear, Cubic} {
		for _, c := range gdalCases {
			t.Run(r.String()+"/"+c.name, func(t *testing.T) {
				g := targetGrid(t, src, c.epsg, c.res)
				plan, ours := warpRef(t, src, g, r)
				theirs := gdalWarp(t, gdal, dir, path, g, r, compute.F32)
				compareRange(t, r, plan, ours, theirs)
			})
		}
	}
	// Coarser destinations: the kernels widened, and average.
	for _, r := range []Resampling{Bilinear, Cubic, Average} {
		for _, c := range []gdalCase{{"utm32-utm33-30m", 32633, 30}, {"utm32-geographic-coarse", 4326, 0.0004}, {"utm32-utm33-25m", 32633, 25}} {
			t.Run(r.String()+"/"+c.name, func(t *testing.T) {
				g := targetGrid(t, src, c.epsg, c.res)
				plan, ours := warpRef(t, src, g, r)
				theirs := gdalWarp(t, gdal, dir, path, g, r, compute.F32)
				compareRange(t, r, plan, ours, theirs)
			})
		}
	}
}

// compareRange checks ours against gdalwarp's within 1e-4 (bilinear,
// average) or 1e-3 (cubic) of the range of gdalwarp's values, with the
// same pixels valid.
func compareRange(t *testing.T, r Resampling, plan *Plan, ours, theirs []float64) {
	t.Helper()
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range theirs {
		if v != 7 {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	tol := 1e-4 * (hi - lo)
	if r == Cubic {
		tol = 1e-3 * (hi - lo)
	}
	worst, bad, validDiff := 0.0, 0, 0
	for i := range ours {
		if (ours[i] == 7) != (theirs[i] == 7) {
			validDiff++
			if validDiff <= 4 {
				t.Logf("validity differs at (%d, %d): ours %g, gdalwarp %g", i%plan.Dst.Width, i/plan.Dst.Width, ours[i], theirs[i])
			}
			continue
		}
		if d := math.Abs(ours[i] - theirs[i]); d > tol {
			bad++
			if d > worst {
				worst = d
			}
		}
	}
	t.Logf("scale %.4f×%.4f radius %d×%d use4 %v: range [%g, %g], %d over %.3g (worst %.3g), %d differ in validity of %d",
		plan.XScale, plan.YScale, plan.XRadius, plan.YRadius, plan.Use4, lo, hi, bad, tol, worst, validDiff, len(ours))
	if bad > 0 || validDiff > len(ours)/1000 {
		t.Errorf("%d pixels differ from gdalwarp's by more than %.3g (worst %.3g); %d differ in validity", bad, tol, worst, validDiff)
	}
}
