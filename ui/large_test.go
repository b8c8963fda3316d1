package ui

import (
	"image"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"canopy/compute"
	"canopy/compute/fake"
	"canopy/compute/geotiff"
	"canopy/compute/index"
	"canopy/compute/raster"
	"canopy/compute/stats"
	"canopy/ui/render/numfmt"
)

// writeNoisePair writes an n² uint16 red/NIR pair, tiled 256², whose every
// pixel differs from its neighbours (a hash of its place; 0, the nodata
// value, here and there), so that a value read from a decimated view
// cannot pass for the full resolution's.
func writeNoisePair(t *testing.T, dir string, n int) (string, string) {
	t.Helper()
	var paths []string
	for k, name := range []string{"red.tif", "nir.tif"} {
		dn := make([]uint16, n*n)
		for i := range dn {
			h := uint32(i)*2654435761 ^ uint32(k)*40503
			h ^= h >> 13
			dn[i] = uint16(300 + k*1700 + int(h%4000))
			if h%1009 == 0 {
				dn[i] = 0
			}
		}
		p := filepath.Join(dir, name)
		if err := geotiff.WriteBands(p, n, n, [][]uint16{dn}, fake.GeoRef(), geotiff.WriteOptions{NoData: "0"}); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths[0], paths[1]
}

// heapSampler records the largest heap in use while it runs.
type heapSampler struct {
	peak atomic.Uint64
	stop chan struct{}
	done chan struct{}
}

func sampleHeap() *heapSampler {
	h := &heapSampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(h.done)
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapInuse > h.peak.Load() {
				h.peak.Store(m.HeapInuse)
			}
			select {
			case <-h.stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	return h
}

func (h *heapSampler) end() uint64 {
	close(h.stop)
	<-h.done
	return h.peak.Load()
}

func heapInuse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// TestLargeImageByViews: a 6000² uint16 pair past the (lowered) size
// limit opens without its planes being loaded: the first view appears,
// read decimated from the full resolution at about the map's size; pins
// read the files at full resolution; the statistics streamed over the
// blocks equal the whole-image path's; Compare all runs every backend
// through the block pipeline; and the heap stays far below the 288 MB the
// planes would take.
func TestLargeImageByViews(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and reads a 6000² pair")
	}
	defer func(b int64) { largeBytes = b }(largeBytes)
	largeBytes = 64 << 20
	const n = 6000
	dir := t.TempDir()
	red, nir := writeNoisePair(t, dir, n)
	// The heap measured with little room for garbage, so that it follows
	// what is live.
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	base := heapInuse()
	hs := sampleHeap()
	w := newTestWindow(t, options{Bands: map[string]string{"red": red, "nir": nir}})
	s := w.shown
	if s == nil || s.large == nil || s.plane != nil {
		t.Fatalf("the pair was not opened by views: %+v", s)
	}
	v := s.large.current()
	if v == nil {
		t.Fatalf("no first view; status %q", w.Status.Text)
	}
	_, _, zoom, vw, vh := w.Map.Viewport()
	// The image covers sw² screen pixels; a step keeps one to two samples
	// a screen pixel.
	sw := int(math.Ceil(n * zoom))
	if v.Level != 0 || v.Step < 2 || v.Width < sw || v.Width > 2*sw+1 || v.Height != v.Width {
		t.Errorf("first view %+v for the image on %d² screen pixels: want the full resolution decimated to about that", v.Plan, sw)
	}
	if !strings.Contains(w.Status.Text, "every "+strconv.Itoa(v.Step)+" pixels") {
		t.Errorf("status %q", w.Status.Text)
	}
	img := w.Map.Draw(vw, vh).(*image.NRGBA)
	opaque := 0
	for i := 3; i < len(img.Pix); i += 4 {
		if img.Pix[i] != 0 {
			opaque++
		}
	}
	if opaque < vw*vh/3 {
		t.Errorf("the map shows %d coloured pixels of %d", opaque, vw*vh)
	}

	// Compare all, through the pipeline.
	w.compareAll()
	w.Wait()
	rs := w.Results()
	if len(rs) < 2 || !allVerified(rs) || rs[0].Width != n {
		t.Errorf("Compare all on the large image: %+v (status %q)", rs, w.Status.Text)
	}
	peak := hs.end()
	grew := int64(peak) - int64(base)
	t.Logf("heap grew by at most %d MiB", grew>>20)
	if grew > 160<<20 {
		t.Errorf("the heap grew by %d MiB opening, viewing, streaming and comparing a 6000² pair (its planes alone are 275 MiB)", grew>>20)
	}

	// The whole-image path, for the truth.
	rb, _, _ := raster.LoadStored("red", red)
	nb, _, _ := raster.LoadStored("nir", nir)
	e, _ := index.Lookup("ndvi")
	j, err := compute.NewJob([]compute.BandInput{rb, nb}, nil, []string{"ndvi"}, []*index.Expr{e.Expr})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := compute.RunJob(engine().(compute.Backend), j); err != nil {
		t.Fatal(err)
	}
	plane := j.Out[0]

	// Statistics streamed over the blocks equal the whole plane's.
	if s.summary == nil {
		t.Fatalf("no statistics; the panel says %q", w.stats.Numbers.Text)
	}
	want := stats.Summarize(plane)
	if got := s.summary.summary; got.Valid != want.Valid || got.Total != want.Total || got.Min != want.Min || got.Max != want.Max {
		t.Errorf("streamed statistics %+v, whole plane %+v", got, want)
	}
	if h := stats.Histogram(plane, histBins, s.summary.lo, s.summary.hi); !slices.Equal(h, s.summary.hist) {
		t.Errorf("streamed histogram differs from the whole plane's")
	}
	for i, c := range stats.ClassesOf(s.idx.classes.Compute(), plane, 0) {
		if s.summary.classes[i].Pixels != c.Pixels {
			t.Errorf("class %d: streamed %d pixels, whole plane %d", i, s.summary.classes[i].Pixels, c.Pixels)
		}
	}

	// Pins read the full resolution.
	c := w.Win.Canvas()
	for _, px := range [][2]int{{1234, 4321}, {4000, 500}, {3001, 2999}} {
		test.TapCanvas(c, mapPos(w, px[0], px[1]))
	}
	pins := w.identify.texts()
	if len(pins) != 3 {
		t.Fatalf("%d pins: %q", len(pins), pins)
	}
	at := regexp.MustCompile(`row (\d+), col (\d+)`)
	for _, p := range pins {
		m := at.FindStringSubmatch(p)
		if m == nil {
			t.Fatalf("pin without row and column:\n%s", p)
		}
		row, _ := strconv.Atoi(m[1])
		col, _ := strconv.Atoi(m[2])
		i := row*n + col
		wantBands := "red " + numfmt.Value(rb.Plane.At(i)) + "  nir " + numfmt.Value(nb.Plane.At(i))
		if !strings.Contains(p, wantBands) {
			t.Errorf("pin at row %d col %d lacks the full resolution's bands %q:\n%s", row, col, wantBands, p)
		}
		if x := plane[i]; x == x && !strings.Contains(p, "NDVI "+indexText(float64(x))) {
			t.Errorf("pin at row %d col %d lacks the full resolution's NDVI %s:\n%s", row, col, indexText(float64(x)), p)
		}
	}

	// What the window does not make on such an image says what does.
	if err := w.ExportGeoTIFF(filepath.Join(dir, "out.tif")); err == nil || !strings.Contains(err.Error(), "canopy compute") {
		t.Errorf("exporting the large image: %v", err)
	}

	// Zooming in reads the region at full resolution.
	w.Map.ZoomBy(64)
	x0, y0, zin, zw, zh := w.Map.Viewport()
	s.large.request(x0, y0, zin, zw, zh)
	w.Wait()
	if v := s.large.current(); v == nil || v.Step != 1 || v.Width > int(float64(zw)/zin)+2 {
		t.Errorf("zoomed in (zoom %v): view %+v", zin, v)
	} else {
		ox, oy := v.Origin()
		for k := 0; k < v.Width*v.Height; k += 997 {
			i := (int(oy)+k/v.Width)*n + int(ox) + k%v.Width
			if a, b := v.Out[0][k], plane[i]; a != b && !(a != a && b != b) {
				t.Fatalf("zoomed view sample %d: %v, full resolution %v", k, a, b)
			}
		}
	}
}

// TestLargeImageFromOverviews: files with internal overviews (gdaladdo)
// show their first view from the overview that matches the map.
func TestLargeImageFromOverviews(t *testing.T) {
	if _, err := exec.LookPath("gdaladdo"); err != nil {
		t.Skip("gdaladdo not installed")
	}
	defer func(b int64) { largeBytes = b }(largeBytes)
	largeBytes = 1 << 20
	dir := t.TempDir()
	red, nir := writeNoisePair(t, dir, 2400)
	for _, p := range []string{red, nir} {
		if out, err := exec.Command("gdaladdo", "-q", "-r", "average", p, "2", "4", "8").CombinedOutput(); err != nil {
			t.Fatalf("gdaladdo: %v %s", err, out)
		}
	}
	w := newTestWindow(t, options{Bands: map[string]string{"red": red, "nir": nir}})
	s := w.shown
	if s == nil || s.large == nil {
		t.Fatal("not opened by views")
	}
	v := s.large.current()
	if v == nil || v.Level == 0 {
		t.Fatalf("first view %+v, want one from an overview (status %q)", v, w.Status.Text)
	}
	if !strings.Contains(w.Status.Text, "from overview ") {
		t.Errorf("status %q", w.Status.Text)
	}
	if s.summary == nil || s.summary.summary.Total != 2400*2400 {
		t.Errorf("statistics over the full resolution: %+v", s.summary)
	}
}

// TestLargeWindowOnFiles opens the window's test driver on the pair that
// CANOPY_BIGVIEW_RED and CANOPY_BIGVIEW_NIR name (scripts/bigview-bench
// makes a 40000² one) at the default size limit, and logs the time to the
// first view, to the statistics, and the peak resident memory; skipped
// without them.
func TestLargeWindowOnFiles(t *testing.T) {
	red, nir := os.Getenv("CANOPY_BIGVIEW_RED"), os.Getenv("CANOPY_BIGVIEW_NIR")
	if red == "" || nir == "" {
		t.Skip("CANOPY_BIGVIEW_RED and CANOPY_BIGVIEW_NIR name no pair")
	}
	a := test.NewTempApp(t)
	var ready time.Duration
	t0 := time.Now()
	real, err := compute.New(compute.NameGoParallel)
	if err != nil {
		t.Fatal(err)
	}
	hk := hooks{backends: []compute.Backend{real}, loop: newEventLoop(), onReady: func() { ready = time.Since(t0) }}
	w := newWindow(a, options{Bands: map[string]string{"red": red, "nir": nir}, Backend: compute.NameGoParallel}, hk)
	w.Win.Resize(fyne.NewSize(1400, 900))
	w.Wait()
	all := time.Since(t0)
	defer w.Win.Close()
	s := w.shown
	if s == nil || s.large == nil || s.large.current() == nil || s.summary == nil {
		t.Fatalf("not shown by views: status %q", w.Status.Text)
	}
	v := s.large.current()
	t.Logf("%d×%d: first rows of the view %v after the window was made, the first view (level %d of %d, step %d, %d×%d samples) complete %v after; statistics of the whole image %v after; status %q",
		s.w, s.h, s.large.firstRows.Sub(t0).Round(time.Millisecond), v.Level, len(s.large.im.Levels)-1, v.Step, v.Width, v.Height, ready.Round(time.Millisecond), all.Round(time.Millisecond), w.Status.Text)
	_, _, _, vw, vh := w.Map.Viewport()
	t1 := time.Now()
	w.Map.Draw(vw, vh)
	t.Logf("drawing the %d×%d map from the view: %v", vw, vh, time.Since(t1).Round(time.Microsecond))
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "VmHWM:") {
				t.Logf("peak resident memory %s", strings.TrimSpace(strings.TrimPrefix(l, "VmHWM:")))
			}
		}
	}
}

// TestLargeImageCustomFormulaAndZoomCancels: a formula with no range of
// its own is stretched over the view's min–max and its histogram taken
// over the whole image's min–max (two streamed passes), as the
// whole-image path does; a zoom asked for while a view is read
// supersedes it: the map ends on the zoomed view.
func TestLargeImageCustomFormulaAndZoomCancels(t *testing.T) {
	defer func(b int64) { largeBytes = b }(largeBytes)
	largeBytes = 1 << 20
	const n = 1500
	dir := t.TempDir()
	red, nir := writeNoisePair(t, dir, n)
	w := newTestWindow(t, options{Bands: map[string]string{"red": red, "nir": nir}, Expr: "nir - red"})
	s := w.shown
	if s == nil || s.large == nil || s.summary == nil {
		t.Fatalf("not shown by views with statistics: status %q", w.Status.Text)
	}
	rb, _, _ := raster.LoadStored("red", red)
	nb, _, _ := raster.LoadStored("nir", nir)
	j, err := compute.NewJob([]compute.BandInput{rb, nb}, nil, []string{s.idx.name}, []*index.Expr{s.idx.expr})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := compute.RunJob(engine().(compute.Backend), j); err != nil {
		t.Fatal(err)
	}
	whole := summarize(&shown{set: s.set, idx: s.idx, plane: j.Out[0], w: n, h: n})
	if s.summary.lo != whole.lo || s.summary.hi != whole.hi || !slices.Equal(s.summary.hist, whole.hist) || s.summary.summary.Valid != whole.summary.Valid {
		t.Errorf("streamed: range %v–%v, valid %d; whole image: %v–%v, valid %d", s.summary.lo, s.summary.hi, s.summary.summary.Valid, whole.lo, whole.hi, whole.summary.Valid)
	}
	if lo, hi := w.lut.Range().Lo, w.lut.Range().Hi; !(lo >= whole.lo && hi <= whole.hi && lo < hi) {
		t.Errorf("the stretch %v–%v is not within the data's %v–%v", lo, hi, whole.lo, whole.hi)
	}

	// Two views asked for at once: the second is shown.
	lg := s.large
	lg.mu.Lock()
	lg.asked = false // read the fitted view again
	lg.mu.Unlock()
	x0, y0, zoom, vw, vh := w.Map.Viewport()
	lg.request(x0, y0, zoom, vw, vh)
	lg.request(100, 100, 2, vw, vh)
	w.Wait()
	want := lg.im.PlanView(100, 100, 100+float64(vw)/2, 100+float64(vh)/2, vw, vh)
	if v := lg.current(); v == nil || v.Plan != want {
		t.Errorf("after a zoom during a read the view is %+v, want %+v", v, want)
	}
}
