package pyramid

import (
	"context"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"canopy/compute"
	"canopy/compute/fake"
	"canopy/compute/geotiff"
	"canopy/compute/index"
	"canopy/compute/pipeline"
	"canopy/compute/stats"
)

// product writes a w×h product as compute/scene describes one: a file of
// three uint16 bands (red, NIR, alpha: 0 on a stripe and a square) and a
// QA file of its own (bit 3 set on a block of rows), tiled tile², and
// returns its Sources (reflectance = DN·1e-4 − 0.1, nodata 0; masked where
// alpha is 0 or QA has bit 3) and the whole planes.
func product(t *testing.T, w, h, tile int) (Sources, []compute.BandInput, []uint8) {
	t.Helper()
	dir := t.TempDir()
	red, nir, alpha, qa := make([]uint16, w*h), make([]uint16, w*h), make([]uint16, w*h), make([]uint16, w*h)
	for i := range red {
		x, y := i%w, i/w
		hsh := uint32(i)*2654435761 ^ 977
		hsh ^= hsh >> 13
		red[i] = uint16(1300 + hsh%2000)
		nir[i] = uint16(2500 + (hsh>>7)%4000)
		if hsh%1013 == 0 {
			red[i] = 0
		}
		alpha[i] = 255
		if x < 37 || (x > 300 && x < 340 && y > 100 && y < 180) {
			alpha[i] = 0
		}
		if y >= 400 && y < 433 {
			qa[i] = 8 | 2
		} else {
			qa[i] = 2
		}
	}
	a, q := filepath.Join(dir, "bands.tif"), filepath.Join(dir, "qa.tif")
	if err := geotiff.WriteBands(a, w, h, [][]uint16{red, nir, alpha}, fake.GeoRef(), geotiff.WriteOptions{TileSize: tile}); err != nil {
		t.Fatal(err)
	}
	if err := geotiff.WriteBands(q, w, h, [][]uint16{qa}, fake.GeoRef(), geotiff.WriteOptions{TileSize: tile}); err != nil {
		t.Fatal(err)
	}
	rad := compute.Radiometry{Scale: 1e-4, Offset: -0.1}
	band := func(role, file string, b int, r compute.Radiometry, nd bool) Source {
		return Source{BandInput: compute.BandInput{Role: role, Plane: compute.Plane{Type: compute.U16, Width: w, Height: h}, Radiometry: r, HasNoData: nd, Source: file}, File: file, Band: b}
	}
	var files []*os.File
	s := Sources{
		Bands: []Source{band("red", a, 1, rad, true), band("nir", a, 2, rad, true)},
		Masks: []Source{band("mask:alpha", a, 3, compute.Identity(), false), band("mask:qa", q, 1, compute.Identity(), false)},
		Mask: func(bands, masks []compute.Plane, mask []uint8) {
			al, qb := masks[0].U16(), masks[1].U16()
			for j := range mask {
				if al[j] == 0 || qb[j]&8 != 0 {
					mask[j] = 1
				}
			}
		},
		Open: func(file string) (io.ReaderAt, int64, string, error) {
			f, err := os.Open(file)
			if err != nil {
				return nil, 0, "", err
			}
			st, _ := f.Stat()
			files = append(files, f)
			return f, st.Size(), file, nil
		},
		Close: func() {
			for _, f := range files {
				f.Close()
			}
		},
	}
	whole := []compute.BandInput{s.Bands[0].BandInput, s.Bands[1].BandInput}
	whole[0].Plane, whole[1].Plane = compute.PlaneOf(w, h, red), compute.PlaneOf(w, h, nir)
	mask := make([]uint8, w*h)
	for j := range mask {
		if alpha[j] == 0 || qa[j]&8 != 0 {
			mask[j] = 1
		}
	}
	return s, whole, mask
}

// TestSourcesMaskedLikeWhole: an image of a product's bands with a mask
// made from bands of their own (one in the bands' file, one in a file of
// its own) gives, in full-resolution and decimated views, at a pixel and
// streamed through the pipeline, exactly the masked index of the whole
// image computed at once.
func TestSourcesMaskedLikeWhole(t *testing.T) {
	const w, h = 701, 523
	src, whole, mask := product(t, w, h, 64)
	im, err := OpenSources(src)
	if err != nil {
		t.Fatal(err)
	}
	defer im.Close()
	e, _ := index.Lookup("ndvi")
	names, exprs := []string{"ndvi"}, []*index.Expr{e.Expr}
	be, err := compute.New(compute.NameGo)
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	j, err := compute.NewJob(whole, mask, names, exprs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := compute.RunJob(be, j); err != nil {
		t.Fatal(err)
	}
	plane := j.Out[0]
	masked := 0
	for _, m := range mask {
		masked += int(m)
	}
	if masked < w*40 {
		t.Fatalf("the fixture masks %d pixels", masked)
	}

	for _, step := range []int{1, 3} {
		p := im.PlanView(0, 0, w, h, w/step, h/step)
		if p.Step != step {
			t.Fatalf("plan %+v, want step %d", p, step)
		}
		v, err := im.Compute(context.Background(), p, be, "", names, exprs, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(v.Bands) != 2 || v.Mask == nil {
			t.Fatalf("view of %d bands, mask %v", len(v.Bands), v.Mask != nil)
		}
		nan := 0
		for jj := range v.Height {
			for ii := range v.Width {
				k := (p.Y0+jj*step)*w + p.X0 + ii*step
				got, want := v.Out[0][jj*v.Width+ii], plane[k]
				if math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
					t.Fatalf("step %d sample (%d, %d): %v, whole image %v", step, ii, jj, got, want)
				}
				if v.Mask[jj*v.Width+ii] != mask[k] {
					t.Fatalf("step %d sample (%d, %d): view mask %d, whole %d", step, ii, jj, v.Mask[jj*v.Width+ii], mask[k])
				}
				if got != got {
					nan++
				}
			}
		}
		if nan < v.Width*10 {
			t.Errorf("step %d: %d masked or nodata samples", step, nan)
		}
	}

	for _, px := range [][2]int{{10, 10}, {320, 150}, {500, 410}, {500, 300}} {
		bands, m, err := im.Pixel(px[0], px[1])
		if err != nil {
			t.Fatal(err)
		}
		k := px[1]*w + px[0]
		if m != (mask[k] != 0) || bands[0].Plane.At(0) != whole[0].Plane.At(k) || bands[1].Plane.At(0) != whole[1].Plane.At(k) ||
			bands[0].Radiometry != whole[0].Radiometry || len(bands) != 2 {
			t.Errorf("pixel %v: masked %v bands %v %v, whole image masked %d %v %v", px, m, bands[0].Plane.At(0), bands[1].Plane.At(0), mask[k], whole[0].Plane.At(k), whole[1].Plane.At(k))
		}
	}

	st := stats.NewStream(100, -1, 1, nil, 1)
	res, err := im.Run(context.Background(), pipeline.Options{Backend: be, Names: names, Exprs: exprs, Verify: true, BlockRows: 64},
		pipeline.SinkFunc(func(b *pipeline.Block) error { st.Add(b.Out[0]); return nil }))
	if err != nil {
		t.Fatal(err)
	}
	if res.Blocks < 2 || len(res.Reports) != 1 || res.Reports[0].Wrong+res.Reports[0].NaNMismatch != 0 {
		t.Errorf("run %+v", res)
	}
	want := stats.NewStream(100, -1, 1, nil, 1)
	want.Add(plane)
	if g, x := st.Summary(), want.Summary(); g.Valid != x.Valid || g.Total != x.Total || g.Min != x.Min || g.Max != x.Max || x.Valid > w*h-masked {
		t.Errorf("streamed %+v, whole image %+v", g, x)
	}
	if g, x := st.Histogram(), want.Histogram(); !slices.Equal(g, x) {
		t.Errorf("streamed histogram %v, whole image %v", g, x)
	}

	// Without a mask the mask's bands are not read, and nothing is masked.
	src2, _, _ := product(t, 130, 90, 32)
	src2.Mask = nil
	im2, err := OpenSources(src2)
	if err != nil {
		t.Fatal(err)
	}
	defer im2.Close()
	if len(im2.groups) != 1 {
		t.Errorf("no mask: %d files open, want the bands' one", len(im2.groups))
	}
	if _, m, err := im2.Pixel(5, 5); err != nil || m {
		t.Errorf("no mask: pixel masked %v, %v", m, err)
	}
}

// TestSourcesFullResolution: a product's files with internal overviews
// give views from them, unless the mask must be made from the full
// resolution (FullResolution): then the image has that level alone, and
// a view of the whole image is decimated from it.
func TestSourcesFullResolution(t *testing.T) {
	if _, err := exec.LookPath("gdaladdo"); err != nil {
		t.Skip("gdaladdo not installed")
	}
	src, _, _ := product(t, 640, 480, 64)
	for _, f := range []string{src.Bands[0].File, src.Masks[1].File} {
		if out, err := exec.Command("gdaladdo", "-q", "-r", "nearest", f, "2", "4").CombinedOutput(); err != nil {
			t.Fatalf("gdaladdo: %v %s", err, out)
		}
	}
	im, err := OpenSources(src)
	if err != nil {
		t.Fatal(err)
	}
	defer im.Close()
	if len(im.Levels) != 3 {
		t.Fatalf("%d levels, want the full resolution and 2 overviews", len(im.Levels))
	}
	src2, _, _ := product(t, 640, 480, 64)
	for _, f := range []string{src2.Bands[0].File, src2.Masks[1].File} {
		if out, err := exec.Command("gdaladdo", "-q", "-r", "nearest", f, "2", "4").CombinedOutput(); err != nil {
			t.Fatalf("gdaladdo: %v %s", err, out)
		}
	}
	src2.FullResolution = true
	im2, err := OpenSources(src2)
	if err != nil {
		t.Fatal(err)
	}
	defer im2.Close()
	p := im2.PlanView(0, 0, 640, 480, 160, 120)
	if len(im2.Levels) != 1 || p.Level != 0 || p.Step != 4 {
		t.Fatalf("full resolution only: %d levels, plan %+v", len(im2.Levels), p)
	}
	be, _ := compute.New(compute.NameGo)
	defer be.Close()
	e, _ := index.Lookup("ndvi")
	if v, err := im2.Compute(context.Background(), p, be, "", []string{"ndvi"}, []*index.Expr{e.Expr}, nil); err != nil || v.Mask == nil {
		t.Fatalf("decimated view: %v", err)
	}
}
