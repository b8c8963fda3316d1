package pyramid

import (
	"context"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"canopy/compute"
	"canopy/compute/fake"
	"canopy/compute/geotiff"
	_ "canopy/compute/goback"
	"canopy/compute/index"
	"canopy/compute/pipeline"
	"canopy/compute/raster"
	"canopy/compute/stats"
)

// pair writes a w×h uint16 red/NIR pair of the fake landscape as digital
// numbers (0 as nodata here and there), tiled tile², and returns the paths.
func pair(t testing.TB, dir string, w, h, tile int) (string, string) {
	t.Helper()
	s, err := fake.NewScene(fake.Landscape, w, h, 5)
	if err != nil {
		t.Fatal(err)
	}
	red, nir := make([]float32, w*h), make([]float32, w*h)
	s.Rows(0, h, red, nir)
	var paths []string
	for k, band := range [][]float32{red, nir} {
		dn := make([]uint16, w*h)
		for i, v := range band {
			dn[i] = uint16(min(v, 6.5) * 10000)
			if i%997 == 0 {
				dn[i] = 0
			}
		}
		p := filepath.Join(dir, []string{"red.tif", "nir.tif"}[k])
		if err := geotiff.WriteBands(p, w, h, [][]uint16{dn}, fake.GeoRef(), geotiff.WriteOptions{TileSize: tile, NoData: "0"}); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths[0], paths[1]
}

// full reads a band whole at its stored type.
func full(t testing.TB, role, spec string) compute.BandInput {
	t.Helper()
	b, _, err := raster.LoadStored(role, spec)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func open(t testing.TB, red, nir string) *Image {
	t.Helper()
	im, err := Open([]string{"red", "nir"}, []string{red, nir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(im.Close)
	return im
}

// every checks that plane got holds level pixels (x0 + i*step, y0 +
// j*step) of want (a lw-wide plane).
func every(t *testing.T, what string, got, want compute.Plane, x0, y0, step int) {
	t.Helper()
	for j := range got.Height {
		for i := range got.Width {
			g, e := got.At(j*got.Width+i), want.At((y0+j*step)*want.Width+x0+i*step)
			if g != e {
				t.Fatalf("%s: sample (%d, %d) = %v, want level pixel (%d, %d) = %v", what, i, j, g, x0+i*step, y0+j*step, e)
			}
		}
	}
}

func TestDecimatedReadIsEveryKthPixel(t *testing.T) {
	dir := t.TempDir()
	red, nir := pair(t, dir, 1003, 701, 64)
	im := open(t, red, nir)
	if len(im.Levels) != 1 {
		t.Fatalf("a file without overviews has %d levels", len(im.Levels))
	}
	fr, fn := full(t, "red", red), full(t, "nir", nir)
	for _, c := range []struct {
		x0, y0, x1, y1 float64
		w, h           int
		step           int
	}{
		{0, 0, 1003, 701, 143, 100, 7},       // the whole image, 7 pixels a screen pixel
		{0, 0, 1003, 701, 1003, 701, 1},      // one to one
		{123.4, 55.5, 900.2, 640, 77, 60, 9}, // a region, odd edges
		{500, 300, 560, 340, 600, 400, 1},    // zoomed in past full resolution
		{0, 0, 1003, 701, 5, 3, 200},         // steps beyond a tile
	} {
		p := im.PlanView(c.x0, c.y0, c.x1, c.y1, c.w, c.h)
		if p.Level != 0 || p.Step != c.step {
			t.Fatalf("%+v: plan %+v, want level 0 step %d", c, p, c.step)
		}
		if p.X0%p.Step != 0 || p.Y0%p.Step != 0 || float64(p.X0) > c.x0 || float64(p.Y0) > c.y0 ||
			float64(p.X0+p.Width*p.Step) < math.Min(c.x1, 1003) || float64(p.Y0+p.Height*p.Step) < math.Min(c.y1, 701) {
			t.Fatalf("%+v: plan %+v does not cover the region on a grid of its step", c, p)
		}
		var filled []int
		bands, err := im.Read(context.Background(), p, func(j0, j1 int) { filled = append(filled, j0, j1) })
		if err != nil {
			t.Fatal(err)
		}
		for k := 0; k < len(filled); k += 2 {
			if want := 0; k > 0 {
				want = filled[k-1]
				if filled[k] != want {
					t.Fatalf("rows reported %v: not one after the other", filled)
				}
			}
		}
		if len(filled) == 0 || filled[0] != 0 || filled[len(filled)-1] != p.Height {
			t.Fatalf("rows reported %v for %d rows", filled, p.Height)
		}
		every(t, "red", bands[0].Plane, fr.Plane, p.X0, p.Y0, p.Step)
		every(t, "nir", bands[1].Plane, fn.Plane, p.X0, p.Y0, p.Step)
		if bands[0].NoData != 0 || !bands[0].HasNoData || bands[0].Role != "red" {
			t.Errorf("band description lost: %+v", bands[0])
		}
	}
}

func TestLevelsFromOverviews(t *testing.T) {
	// Our COG writer: 600² float32, 64² tiles: overviews 300, 150, 75, 38.
	dir := t.TempDir()
	n := 600
	s, _ := fake.NewScene(fake.Landscape, n, n, 2)
	red, nir := make([]float32, n*n), make([]float32, n*n)
	s.Rows(0, n, red, nir)
	var paths []string
	for k, band := range [][]float32{red, nir} {
		p := filepath.Join(dir, []string{"red.tif", "nir.tif"}[k])
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := geotiff.WriteCOG(f, n, n, [][]float32{band}, fake.GeoRef(), geotiff.COGOptions{TileSize: 64}); err != nil {
			t.Fatal(err)
		}
		f.Close()
		paths = append(paths, p)
	}
	im := open(t, paths[0], paths[1])
	want := []Level{{600, 600}, {300, 300}, {150, 150}, {75, 75}, {38, 38}}
	if !slices.Equal(im.Levels, want) {
		t.Fatalf("levels %v, want %v", im.Levels, want)
	}
	f, err := geotiff.Open(paths[1])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ovs, err := f.Overviews()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		w, level, step int
	}{
		{600, 0, 1}, {599, 0, 1}, {300, 1, 1}, {200, 1, 1}, {150, 2, 1}, {100, 2, 1}, {75, 3, 1}, {40, 3, 1}, {38, 4, 1}, {19, 4, 2}, {7, 4, 5},
	} {
		p := im.PlanView(0, 0, 600, 600, c.w, c.w)
		if p.Level != c.level || p.Step != c.step {
			t.Errorf("600² on %d² screen pixels: level %d step %d, want level %d step %d", c.w, p.Level, p.Step, c.level, c.step)
			continue
		}
		bands, err := im.Read(context.Background(), p, nil)
		if err != nil {
			t.Fatal(err)
		}
		var lv compute.Plane
		if p.Level == 0 {
			lv = compute.PlaneOf(n, n, nir)
		} else {
			o := ovs[p.Level-1]
			lv = compute.NewPlane(compute.F32, o.Width(), o.Height())
			if err := o.ReadRowsInto(1, 0, o.Height(), lv); err != nil {
				t.Fatal(err)
			}
		}
		every(t, "nir", bands[1].Plane, lv, p.X0, p.Y0, p.Step)
	}
	// Zoomed in on a corner: the full resolution, that region alone.
	p := im.PlanView(500, 500, 600, 600, 400, 400)
	if p.Level != 0 || p.Step != 1 || p.X0 != 500 || p.Width != 100 {
		t.Errorf("zoomed in: %+v", p)
	}
	// Off the image: nothing to read.
	if p := im.PlanView(700, 0, 800, 100, 100, 100); !p.Empty() {
		t.Errorf("off the image: %+v", p)
	}
}

func TestOverviewsOfGDAL(t *testing.T) {
	// uint16 tiles with gdaladdo's internal overviews, as most large
	// orthomosaics come.
	if _, err := exec.LookPath("gdaladdo"); err != nil {
		t.Skip("gdaladdo not installed")
	}
	dir := t.TempDir()
	red, nir := pair(t, dir, 1000, 800, 128)
	for _, p := range []string{red, nir} {
		if out, err := exec.Command("gdaladdo", "-q", "-r", "nearest", p, "2", "4", "8").CombinedOutput(); err != nil {
			t.Fatalf("gdaladdo: %v %s", err, out)
		}
	}
	im := open(t, red, nir)
	if len(im.Levels) != 4 || im.Levels[3] != (Level{125, 100}) {
		t.Fatalf("levels %v", im.Levels)
	}
	p := im.PlanView(0, 0, 1000, 800, 250, 200)
	if p.Level != 2 || p.Step != 1 {
		t.Fatalf("plan %+v, want level 2 (4×)", p)
	}
	bands, err := im.Read(context.Background(), p, nil)
	if err != nil {
		t.Fatal(err)
	}
	f, err := geotiff.Open(red)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ovs, err := f.Overviews()
	if err != nil || len(ovs) != 3 {
		t.Fatalf("overviews %d %v", len(ovs), err)
	}
	lv := compute.NewPlane(compute.U16, 250, 200)
	if err := ovs[1].ReadRowsInto(1, 0, 200, lv); err != nil {
		t.Fatal(err)
	}
	every(t, "red from overview 4×", bands[0].Plane, lv, 0, 0, 1)
}

func TestReadPixelIsFullResolution(t *testing.T) {
	dir := t.TempDir()
	red, nir := pair(t, dir, 517, 333, 32)
	im := open(t, red, nir)
	fr, fn := full(t, "red", red), full(t, "nir", nir)
	for _, px := range [][2]int{{0, 0}, {516, 332}, {100, 200}, {33, 31}} {
		bs, err := im.ReadPixel(px[0], px[1])
		if err != nil {
			t.Fatal(err)
		}
		i := px[1]*517 + px[0]
		if bs[0].Plane.At(0) != fr.Plane.At(i) || bs[1].Plane.At(0) != fn.Plane.At(i) {
			t.Errorf("pixel %v: %v %v, want %v %v", px, bs[0].Plane.At(0), bs[1].Plane.At(0), fr.Plane.At(i), fn.Plane.At(i))
		}
	}
	if _, err := im.ReadPixel(517, 0); err == nil {
		t.Error("a pixel off the image was read")
	}
}

func ndvi(t testing.TB) ([]string, []*index.Expr, compute.Backend) {
	t.Helper()
	e, ok := index.Lookup("ndvi")
	if !ok {
		t.Fatal("no ndvi")
	}
	be, err := compute.New(compute.NameGoParallel)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { be.Close() })
	return []string{"ndvi"}, []*index.Expr{e.Expr}, be
}

func TestComputeEqualsWholeView(t *testing.T) {
	dir := t.TempDir()
	red, nir := pair(t, dir, 900, 1300, 64)
	im := open(t, red, nir)
	names, exprs, be := ndvi(t)
	defer func(b int) { maxBlockBytes = b }(maxBlockBytes)
	maxBlockBytes = 900 * 2 * 64
	p := im.PlanView(0, 0, 900, 1300, 300, 433)
	var calls int
	v, err := im.Compute(context.Background(), p, be, "", names, exprs, func(v *View, j0, j1 int) { calls++ })
	if err != nil {
		t.Fatal(err)
	}
	if calls < 2 {
		t.Errorf("%d blocks reported; the view should fill in block by block", calls)
	}
	j, err := compute.NewJob(v.Bands, nil, names, exprs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := compute.RunJob(be, j); err != nil {
		t.Fatal(err)
	}
	for i, x := range j.Out[0] {
		if math.Float32bits(x) != math.Float32bits(v.Out[0][i]) {
			t.Fatalf("pixel %d: block by block %v, whole view %v", i, v.Out[0][i], x)
		}
	}
	nan := 0
	for _, x := range v.Out[0] {
		if x != x {
			nan++
		}
	}
	if nan == 0 || nan == len(v.Out[0]) {
		t.Errorf("%d NaN of %d: the nodata pixels should be NaN, the others not", nan, len(v.Out[0]))
	}
}

func TestCancelStopsBetweenBlocks(t *testing.T) {
	dir := t.TempDir()
	red, nir := pair(t, dir, 400, 2000, 16)
	im := open(t, red, nir)
	defer func(b int) { maxBlockBytes = b }(maxBlockBytes)
	maxBlockBytes = 400 * 2 * 64
	ctx, cancel := context.WithCancel(context.Background())
	p := im.PlanView(0, 0, 400, 2000, 400, 2000)
	n := 0
	_, err := im.Read(ctx, p, func(j0, j1 int) { n++; cancel() })
	if !errors.Is(err, context.Canceled) || n != 1 {
		t.Errorf("cancelled after the first block: %v after %d blocks", err, n)
	}
}

func TestStreamedStatisticsEqualWholePlane(t *testing.T) {
	dir := t.TempDir()
	w, h := 1500, 1100
	red, nir := pair(t, dir, w, h, 64)
	im := open(t, red, nir)
	names, exprs, be := ndvi(t)
	table := compute.NDVIClasses()
	// The whole-image path: both planes loaded, one job, the plane's
	// statistics.
	j, err := compute.NewJob([]compute.BandInput{full(t, "red", red), full(t, "nir", nir)}, nil, names, exprs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := compute.RunJob(be, j); err != nil {
		t.Fatal(err)
	}
	plane := j.Out[0]
	st := stats.NewStream(100, -1, 1, table, 100)
	res, err := im.Run(context.Background(), pipeline.Options{Backend: be, Names: names, Exprs: exprs, BlockRows: 128},
		pipeline.SinkFunc(func(b *pipeline.Block) error { st.Add(b.Out[0]); return nil }))
	if err != nil {
		t.Fatal(err)
	}
	if res.Blocks < 2 {
		t.Fatalf("%d blocks", res.Blocks)
	}
	got, want := st.Summary(), stats.Summarize(plane)
	if got.Valid != want.Valid || got.Total != want.Total || got.Min != want.Min || got.Max != want.Max || math.Abs(got.Mean-want.Mean) > 1e-12 {
		t.Errorf("streamed %+v, whole plane %+v", got, want)
	}
	if g, e := st.Histogram(), stats.Histogram(plane, 100, -1, 1); !slices.Equal(g, e) {
		t.Errorf("streamed histogram %v, whole plane %v", g, e)
	}
	for i, c := range st.Classes() {
		if e := stats.ClassesOf(table, plane, 100)[i]; c != e {
			t.Errorf("class %d: streamed %+v, whole plane %+v", i, c, e)
		}
	}
	// Cancelled: the run stops with the context's error.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := im.Run(ctx, pipeline.Options{Backend: be, Names: names, Exprs: exprs}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled run: %v", err)
	}
}

func TestOneFileTwoBandsAndRefusals(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "ab.tif")
	w, h := 300, 200
	r, n := make([]uint16, w*h), make([]uint16, w*h)
	for i := range r {
		r[i], n[i] = uint16(i%1000), uint16(3000+i%777)
	}
	if err := geotiff.WriteBands(a, w, h, [][]uint16{r, n}, nil, geotiff.WriteOptions{TileSize: 32}); err != nil {
		t.Fatal(err)
	}
	im, err := Open([]string{"red", "nir"}, []string{a + ":1", a + ":2"})
	if err != nil {
		t.Fatal(err)
	}
	defer im.Close()
	p := im.PlanView(0, 0, 300, 200, 100, 100)
	bands, err := im.Read(context.Background(), p, nil)
	if err != nil {
		t.Fatal(err)
	}
	every(t, "band 1", bands[0].Plane, compute.PlaneOf(w, h, r), 0, 0, p.Step)
	every(t, "band 2", bands[1].Plane, compute.PlaneOf(w, h, n), 0, 0, p.Step)
	px, err := im.ReadPixel(299, 199)
	if err != nil || px[0].Plane.At(0) != float64(r[w*h-1]) || px[1].Plane.At(0) != float64(n[w*h-1]) {
		t.Errorf("pixel of a two-band file: %v %v", px, err)
	}
	// A multi-band file without a band, a missing file, a PNG.
	if _, err := Open([]string{"red"}, []string{a}); err == nil {
		t.Error("a multi-band file without :B opened")
	}
	if _, err := Open([]string{"red"}, []string{filepath.Join(dir, "none.tif")}); err == nil {
		t.Error("a missing file opened")
	}
}
