package raster

import (
	"errors"
	"fmt"
	"image"
	"image/color"
	"math"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"canopy/compute"
	"canopy/compute/geotiff"
)

// recorder is a PlaneAlloc that hands out planes pre-filled with garbage
// and records how it was called.
type recorder struct {
	fill  float32
	calls int
	w, h  int
	red   []float32
	nir   []float32
	// same hands out one plane for both bands.
	same bool
}

func (r *recorder) alloc(w, h int) ([]float32, []float32, error) {
	r.calls++
	r.w, r.h = w, h
	r.red, r.nir = make([]float32, w*h), make([]float32, w*h)
	for i := range r.red {
		r.red[i], r.nir[i] = r.fill, r.fill
	}
	if r.same {
		r.nir = r.red
	}
	return r.red, r.nir, nil
}

func sameBand(t *testing.T, what string, got, want *compute.Band) {
	t.Helper()
	if got.Width != want.Width || got.Height != want.Height || got.Source != want.Source || got.HasNoData != want.HasNoData ||
		(got.Geo == nil) != (want.Geo == nil) || (got.Geo != nil && !got.Geo.SameGrid(want.Geo)) {
		t.Fatalf("%s: got %dx%d %q nodata %v geo %v, LoadPair gives %dx%d %q nodata %v geo %v", what,
			got.Width, got.Height, got.Source, got.HasNoData, got.Geo, want.Width, want.Height, want.Source, want.HasNoData, want.Geo)
	}
	for i, v := range want.Data {
		if math.Float32bits(got.Data[i]) != math.Float32bits(v) {
			t.Fatalf("%s: pixel (%d,%d) = %v, LoadPair gives %v", what, i%want.Width, i/want.Width, got.Data[i], v)
		}
	}
}

func isPlane(b *compute.Band, p []float32) bool {
	return unsafe.SliceData(b.Data) == unsafe.SliceData(p) && len(b.Data) == len(p)
}

func TestLoadPairIntoMatchesLoadPair(t *testing.T) {
	dir := t.TempDir()
	// Our writer's files: tiled, one plane per band, 70×45 in 256² tiles
	// (one partial tile).
	multi := filepath.Join(dir, "multi.tif")
	multiband(t, multi, 70, 45, geo(399960))
	other := filepath.Join(dir, "other.tif")
	multiband(t, other, 70, 45, geo(399960))
	single := filepath.Join(dir, "single.tif")
	one := compute.NewBand(70, 45)
	for i := range one.Data {
		one.Data[i] = float32(i%301) - 150.5
	}
	one.NoData, one.HasNoData = -9999, true
	if err := geotiff.Write(single, one, geotiff.WriteOptions{TileSize: 16}); err != nil {
		t.Fatal(err)
	}
	g8 := image.NewGray(image.Rect(0, 0, 70, 45))
	g16 := image.NewGray16(image.Rect(0, 0, 70, 45))
	for i := range g8.Pix {
		g8.Pix[i] = uint8(i * 7)
		g16.SetGray16(i%70, i/70, color.Gray16{Y: uint16(i * 31)})
	}
	png8, png16 := filepath.Join(dir, "g8.png"), filepath.Join(dir, "g16.png")
	writePNG(t, png8, g8)
	writePNG(t, png16, g16)

	pairs := [][2]string{
		{multi + ":3", multi + ":4"},   // one file, one pass
		{multi + ":4", multi + ":4"},   // one band of one file, twice
		{other + ":1", multi + ":2"},   // two files, in parallel
		{single, multi + ":2"},         // a band without its number
		{png8, png16 + ":1"},           // PNGs
		{png16 + ":1", png16 + ":1"},   // one PNG, twice
		{single + ":1", png8},          // GeoTIFF and PNG
		{png16, other + ":3"},          // PNG and GeoTIFF
		{multi + ":2", multi + ":1"},   // bands in reverse order
		{single + ":1", single + ":1"}, // one single-band file, twice
	}
	if _, err := exec.LookPath("gdal_translate"); err == nil {
		// Pixel-interleaved strips and tiles, which our writer does not make.
		for name, args := range map[string][]string{
			"chunky-strips.tif": {"-co", "INTERLEAVE=PIXEL", "-co", "COMPRESS=DEFLATE", "-co", "BLOCKYSIZE=7"},
			"chunky-tiles.tif":  {"-co", "INTERLEAVE=PIXEL", "-co", "COMPRESS=LZW", "-co", "TILED=YES", "-co", "BLOCKXSIZE=32", "-co", "BLOCKYSIZE=16"},
		} {
			p := filepath.Join(dir, name)
			cmd := exec.Command("gdal_translate", append(append([]string{"-q", "-of", "GTiff"}, args...), multi, p)...)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("gdal_translate: %v\n%s", err, out)
			}
			pairs = append(pairs, [2]string{p + ":3", p + ":4"}, [2]string{p + ":1", multi + ":4"})
		}
	} else {
		t.Log("gdal_translate not found: pixel-interleaved files not checked here (package geotiff checks them)")
	}

	for _, pair := range pairs {
		name := filepath.Base(pair[0]) + "," + filepath.Base(pair[1])
		want, wantN, err := LoadPair(pair[0], pair[1])
		if err != nil {
			t.Fatalf("%s: LoadPair: %v", name, err)
		}
		for _, same := range []bool{false, true} {
			if same && pair[0] != pair[1] {
				continue
			}
			for _, fill := range []float32{float32(math.NaN()), 12345} {
				what := fmt.Sprintf("%s, planes of %v (one plane: %v)", name, fill, same)
				r := &recorder{fill: fill, same: same}
				red, nir, err := LoadPairInto(pair[0], pair[1], r.alloc)
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				if r.calls != 1 || r.w != 70 || r.h != 45 {
					t.Fatalf("%s: alloc called %d times, last with %dx%d; want once with 70x45", what, r.calls, r.w, r.h)
				}
				if !isPlane(red, r.red) || !isPlane(nir, r.nir) {
					t.Fatalf("%s: the bands' Data are not the planes alloc gave", what)
				}
				sameBand(t, what+", red", red, want)
				sameBand(t, what+", nir", nir, wantN)
			}
		}
		// Nil planes from alloc: allocated as LoadPair does.
		red, nir, err := LoadPairInto(pair[0], pair[1], func(w, h int) ([]float32, []float32, error) { return nil, nil, nil })
		if err != nil {
			t.Fatalf("%s, nil planes: %v", name, err)
		}
		sameBand(t, name+", nil planes, red", red, want)
		sameBand(t, name+", nil planes, nir", nir, wantN)
	}
}

func TestLoadPairIntoErrors(t *testing.T) {
	dir := t.TempDir()
	multi := filepath.Join(dir, "multi.tif")
	multiband(t, multi, 64, 33, geo(399960))
	other := filepath.Join(dir, "other.tif")
	multiband(t, other, 64, 33, geo(399960))
	small := filepath.Join(dir, "small.tif")
	multiband(t, small, 32, 33, geo(399960))
	shifted := filepath.Join(dir, "shifted.tif")
	multiband(t, shifted, 64, 33, geo(400000))
	png := filepath.Join(dir, "g.png")
	writePNG(t, png, image.NewGray(image.Rect(0, 0, 64, 34)))

	// Errors found in the headers come before alloc is called, with the
	// words LoadPair has always used.
	pairErr := compute.CheckPair(&compute.Band{Width: 32, Height: 33, Source: small + ":3"}, &compute.Band{Width: 64, Height: 33, Source: multi + ":4"})
	for _, c := range []struct {
		red, nir, want string
	}{
		{small + ":3", multi + ":4", pairErr.Error()},
		{multi + ":1", png, "the bands are not the same size: red " + multi + ":1 is 64×33 pixels, nir " + png + ":1 is 64×34"},
		{filepath.Join(dir, "nope.tif"), multi + ":4", "read " + filepath.Join(dir, "nope.tif") + ": no such file"},
		{multi, multi + ":4", "has 4 bands; pick one as " + multi + ":B"},
		{multi + ":5", multi + ":4", "read " + multi + ": band 5 does not exist (the file has 4 bands)"},
		{multi + ":2", multi + ":6", "read " + multi + ": band 6 does not exist (the file has 4 bands)"},
		{multi + ":2", other + ":6", "read " + other + ": band 6 does not exist (the file has 4 bands)"},
		{png + ":2", multi + ":1", "read " + png + ": a PNG has 1 band, not 2"},
		{png + ":1", png + ":2", "read " + png + ": a PNG has 1 band, not 2"},
	} {
		_, _, want := LoadPair(c.red, c.nir)
		called := false
		_, _, err := LoadPairInto(c.red, c.nir, func(w, h int) ([]float32, []float32, error) {
			called = true
			return nil, nil, nil
		})
		if err == nil || !strings.Contains(err.Error(), c.want) || called {
			t.Errorf("%s, %s: error %v (alloc called: %v), want one with %q, before alloc", c.red, c.nir, err, called, c.want)
		}
		if want == nil || err == nil || want.Error() != err.Error() {
			t.Errorf("%s, %s: LoadPairInto says %v, LoadPair %v", c.red, c.nir, err, want)
		}
	}
	// Both files missing: both named, as before.
	_, _, err := LoadPairInto(filepath.Join(dir, "a.tif"), filepath.Join(dir, "b.tif"), (&recorder{}).alloc)
	if err == nil || !strings.Contains(err.Error(), "a.tif: no such file") || !strings.Contains(err.Error(), "b.tif: no such file") {
		t.Errorf("two missing files: %v", err)
	}

	// The grid check still runs, after decoding.
	r := &recorder{}
	_, _, err = LoadPairInto(shifted+":3", multi+":4", r.alloc)
	if err == nil || !strings.Contains(err.Error(), "not on one grid") || !strings.Contains(err.Error(), shifted) || r.calls != 1 {
		t.Errorf("grid mismatch: %v (alloc called %d times)", err, r.calls)
	}

	// alloc's error, wrapped.
	errPinned := errors.New("out of pinned memory")
	_, _, err = LoadPairInto(multi+":3", other+":4", func(w, h int) ([]float32, []float32, error) { return nil, nil, errPinned })
	if !errors.Is(err, errPinned) || err.Error() != "allocating 64x33 planes: out of pinned memory" {
		t.Errorf("alloc failing: %v", err)
	}

	// Planes alloc should not have given.
	plane := func(n int) []float32 { return make([]float32, n) }
	shared := plane(64*33 + 10)
	for _, c := range []struct {
		name     string
		red, nir string
		r, n     []float32
		want     string
	}{
		{"short red", multi + ":3", other + ":4", plane(64*33 - 1), plane(64 * 33), "allocating 64x33 planes: the red plane holds 2111 pixels, want 2112"},
		{"long nir", multi + ":3", multi + ":4", nil, plane(64*33 + 1), "allocating 64x33 planes: the nir plane holds 2113 pixels, want 2112"},
		{"one plane, two files", multi + ":3", other + ":3", shared[:64*33], shared[:64*33], "allocating 64x33 planes: the red and nir planes overlap"},
		{"one plane, two bands", multi + ":3", multi + ":4", shared[:64*33], shared[:64*33], "allocating 64x33 planes: the red and nir planes overlap"},
		{"overlapping planes", multi + ":3", multi + ":3", shared[:64*33], shared[10:], "allocating 64x33 planes: the red and nir planes overlap"},
	} {
		_, _, err := LoadPairInto(c.red, c.nir, func(w, h int) ([]float32, []float32, error) { return c.r, c.n, nil })
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}
