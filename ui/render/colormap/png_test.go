package colormap

import (
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"canopy/compute"
)

// scene returns a small synthetic w×h NDVI plane: a diagonal gradient from
// −0.6 to 0.9, a NaN disc (no data) and a bare road across it.
func scene(w, h int) []float32 {
	p := make([]float32, w*h)
	for y := range h {
		for x := range w {
			v := -0.6 + 1.5*float64(x+y)/float64(w+h-2)
			dx, dy := float64(x)-0.7*float64(w), float64(y)-0.3*float64(h)
			switch {
			case dx*dx+dy*dy < float64(h*h)/25:
				v = math.NaN()
			case y == h*2/3 || y == h*2/3+1:
				v = 0.1
			}
			p[y*w+x] = float32(v)
		}
	}
	return p
}

func readPNG(t *testing.T, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("decode %s: %v", path, err)
	}
	return img
}

func TestWorldFile(t *testing.T) {
	// North-up, 10 m pixels, top-left corner at (500000, 4650000).
	g := &compute.GeoRef{PixelScale: []float64{10, 10, 0}, Tiepoints: []float64{0, 0, 0, 500000, 4650000, 0}}
	wf, ok := WorldFile(g)
	if want := "10\n0\n0\n-10\n500005\n4649995\n"; !ok || wf != want {
		t.Errorf("world file %q, want %q", wf, want)
	}
	// A rotated transformation: A, D, B, E order and the pixel centre.
	m := make([]float64, 16)
	m[0], m[1], m[3] = 2, 0.5, 1000   // x = 1000 + 2 col + 0.5 row
	m[4], m[5], m[7] = 0.25, -3, 2000 // y = 2000 + 0.25 col - 3 row
	m[15] = 1
	wf, ok = WorldFile(&compute.GeoRef{Transformation: m})
	if want := "2\n0.25\n0.5\n-3\n1001.25\n1998.625\n"; !ok || wf != want {
		t.Errorf("rotated world file %q, want %q", wf, want)
	}
	if _, ok := WorldFile(nil); ok {
		t.Error("world file for no georeferencing")
	}
	if _, ok := WorldFile(&compute.GeoRef{PixelScale: []float64{1, 1}}); ok {
		t.Error("world file without tiepoint")
	}
	if got := WorldFilePath("/a/b/map.png"); got != "/a/b/map.pgw" {
		t.Errorf("WorldFilePath = %s", got)
	}
}

func TestWritePNG(t *testing.T) {
	const w, h = 60, 40
	ndvi := scene(w, h)
	dir := t.TempDir()
	geo := &compute.GeoRef{PixelScale: []float64{10, 10, 0}, Tiepoints: []float64{0, 0, 0, 300000, 5000000, 0},
		GeoKeyDirectory: []uint16{1, 1, 0, 2, 1024, 0, 1, 1, 3072, 0, 1, 32633}}

	// Map only: exactly w×h, colours from the palette, NaN transparent.
	plain := filepath.Join(dir, "plain.png")
	if err := WritePNG(plain, ndvi, w, h, PNGOptions{Ramp: RampViridis, Stretch: Stretch{-0.5, 0.8}}); err != nil {
		t.Fatal(err)
	}
	img := readPNG(t, plain)
	l := mustNew(t, RampViridis, -0.5, 0.8)
	if img.Bounds() != image.Rect(0, 0, w, h) {
		t.Fatalf("plain map is %v", img.Bounds())
	}
	for y := range h {
		for x := range w {
			got := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
			want := l.Palette()[l.Index(ndvi[y*w+x])].(color.NRGBA)
			if got != want {
				t.Fatalf("pixel (%d,%d) value %g = %v, want %v", x, y, ndvi[y*w+x], got, want)
			}
			if math.IsNaN(float64(ndvi[y*w+x])) != (got.A == 0) {
				t.Fatalf("pixel (%d,%d) value %g has alpha %d", x, y, ndvi[y*w+x], got.A)
			}
		}
	}
	if _, err := os.Stat(WorldFilePath(plain)); !os.IsNotExist(err) {
		t.Errorf("world file written without georeferencing (%v)", err)
	}

	// With legend, title and georeferencing: the map keeps its place at the
	// top-left, the strip is to the right, and no world file places the
	// strip on the ground.
	full := filepath.Join(dir, "full.png")
	if err := WritePNG(full, ndvi, w, h, PNGOptions{Ramp: RampClasses, Legend: true, Title: "Test stand", Geo: geo}); err != nil {
		t.Fatal(err)
	}
	img = readPNG(t, full)
	if img.Bounds().Dx() <= w || img.Bounds().Dy() < h {
		t.Fatalf("map with legend is %v", img.Bounds())
	}
	cl := mustNew(t, RampClasses, 0, 0)
	for y := range h {
		for x := range w {
			if got, want := color.NRGBAModel.Convert(img.At(x, y)), cl.Color(ndvi[y*w+x]); got != want {
				t.Fatalf("legend moved the map: pixel (%d,%d) = %v, want %v", x, y, got, want)
			}
		}
	}
	if _, err := os.Stat(WorldFilePath(full)); !os.IsNotExist(err) {
		t.Errorf("world file written for a map with a legend strip (%v)", err)
	}
	// The map alone with georeferencing gets its world file.
	alone := filepath.Join(dir, "alone.png")
	if err := WritePNG(alone, ndvi, w, h, PNGOptions{Ramp: RampClasses, Geo: geo}); err != nil {
		t.Fatal(err)
	}
	for _, side := range []string{PRJPath(alone), AuxPath(alone)} {
		if _, err := os.Stat(side); err != nil {
			t.Errorf("map alone: %v", err)
		}
	}
	for _, side := range []string{PRJPath(full), AuxPath(full)} {
		if _, err := os.Stat(side); !os.IsNotExist(err) {
			t.Errorf("map with a legend strip: %s written (%v)", side, err)
		}
	}
	if aux, _ := os.ReadFile(AuxPath(alone)); !strings.Contains(string(aux), "<SRS>PROJCS[&#34;WGS 84 / UTM zone") {
		t.Errorf("aux.xml %.80s", aux)
	}
	wf, err := os.ReadFile(WorldFilePath(alone))
	if want, _ := WorldFile(geo); err != nil || string(wf) != want {
		t.Errorf("world file %q (%v), want %q", wf, err, want)
	}
	if lines := strings.Split(strings.TrimSpace(string(wf)), "\n"); len(lines) != 6 || lines[4] != "300005" || lines[5] != "4999995" {
		t.Errorf("world file lines %q", lines)
	}
	// A wide map gets the strip below.
	wide := filepath.Join(dir, "wide.png")
	if err := WritePNG(wide, scene(300, 60), 300, 60, PNGOptions{Legend: true}); err != nil {
		t.Fatal(err)
	}
	if b := readPNG(t, wide).Bounds(); b.Dx() != 300 || b.Dy() <= 60 {
		t.Errorf("wide map with legend is %v, want the strip below", b)
	}

	// Failures leave an existing file as it was and no temporary behind.
	before, _ := os.ReadFile(full)
	for _, c := range []struct {
		name string
		opt  PNGOptions
		n    int
	}{
		{"bad ramp", PNGOptions{Ramp: "rainbow"}, w * h},
		{"bad stretch", PNGOptions{Stretch: Stretch{1, 0}}, w * h},
		{"short plane", PNGOptions{}, w*h - 1},
	} {
		err := WritePNG(full, ndvi[:c.n], w, h, c.opt)
		if err == nil || !strings.Contains(err.Error(), full) {
			t.Errorf("%s: error %v does not name the file", c.name, err)
		}
	}
	if after, _ := os.ReadFile(full); string(after) != string(before) {
		t.Error("a failed write changed the existing file")
	}
	// The target is a directory: encoding succeeds, the rename fails.
	if err := os.Mkdir(filepath.Join(dir, "taken.png"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WritePNG(filepath.Join(dir, "taken.png"), ndvi, w, h, PNGOptions{}); err == nil {
		t.Error("writing over a directory succeeded")
	}
	if err := WritePNG(filepath.Join(dir, "missing", "x.png"), ndvi, w, h, PNGOptions{}); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("writing into a missing directory: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

func TestComposeGolden(t *testing.T) {
	ndvi := scene(96, 64)
	for _, c := range []struct {
		name string
		opt  PNGOptions
	}{
		{"map_rdylgn.png", PNGOptions{}},
		{"map_classes_legend.png", PNGOptions{Ramp: RampClasses, Legend: true, Title: "Stand 12"}},
		{"map_viridis_legend.png", PNGOptions{Ramp: RampViridis, Stretch: Stretch{-0.2, 0.8}, Legend: true}},
	} {
		img, err := Compose(ndvi, 96, 64, c.opt)
		if err != nil {
			t.Fatal(err)
		}
		checkGolden(t, c.name, img)
	}
}

// TestWritePNGMemory checks that export stays at about one byte per pixel:
// a 3000×2000 map (6 Mpixel, 24 MB of NRGBA) must allocate well under
// that.
func TestWritePNGMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates a 6 Mpixel map")
	}
	const w, h = 3000, 2000
	ndvi := scene(w, h)
	path := filepath.Join(t.TempDir(), "big.png")
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if err := WritePNG(path, ndvi, w, h, PNGOptions{Legend: true, Title: "big"}); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	if limit := uint64(w*h*3/2 + 8<<20); alloc > limit {
		t.Errorf("WritePNG of %dx%d allocated %d MB, limit %d MB", w, h, alloc>>20, limit>>20)
	}
	t.Logf("WritePNG %dx%d allocated %.1f MB (NRGBA would be %.1f MB)", w, h, float64(alloc)/(1<<20), float64(4*w*h)/(1<<20))
}
