package ui

import (
	"image"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"canopy/compute"
	"canopy/compute/fake"
	"canopy/compute/index"
	"canopy/compute/raster"
	"canopy/ui/render/colormap"
)

// fakeBackend computes with the reference kernel and reports fixed phase
// times, so that charts and texts are the same on every machine.
type fakeBackend struct {
	name      string
	available bool
	gpu       bool
	reason    string
	// hold, when set, keeps every run waiting until it is closed (a run
	// that is still going, for the cancellation tests, without a clock).
	hold     chan struct{}
	runs     atomic.Int32
	lastMode atomic.Pointer[string] // the mode the last job asked for
	jobs     atomic.Int32
}

func (f *fakeBackend) Name() string { return f.name }
func (f *fakeBackend) Info() compute.Info {
	dev := "Test CPU"
	if f.gpu {
		dev = "Test GPU"
	}
	if !f.available {
		dev = ""
	}
	return compute.Info{Name: f.name, Available: f.available, Device: dev, Reason: f.reason, GPU: f.gpu}
}
func (f *fakeBackend) Close() error { return nil }

// wait blocks a run while f.hold is open.
func (f *fakeBackend) wait() {
	if f.hold == nil {
		return
	}
	<-f.hold
}

// holdRuns makes f's runs wait until the returned release is called (the
// test's cleanup calls it too, so a failing test never leaves a run behind).
func holdRuns(t *testing.T, f *fakeBackend) (release func()) {
	f.hold = make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(f.hold) }) }
	t.Cleanup(release)
	return release
}

// engine computes the test backends' jobs: go-parallel's block program.
var engine = sync.OnceValue(func() compute.Backend {
	b, err := compute.New(compute.NameGoParallel)
	if err != nil {
		panic(err)
	}
	return b
})

// RunJob computes any index job (with go-parallel's engine), in the fixed
// times.
func (f *fakeBackend) RunJob(j *compute.Job) (compute.Timings, error) {
	f.runs.Add(1)
	mode := j.Mode
	f.lastMode.Store(&mode)
	f.wait()
	if _, err := engine().RunJob(j); err != nil {
		return compute.Timings{}, err
	}
	t := f.timings(len(j.Out))
	if f.jobs.Add(1) == 1 {
		t.Setup = time.Millisecond // the first call sets up, as real backends do
	}
	return t, nil
}

// timings are the fixed times of a run of n indices: the CPU's kernel
// 2 ms an index; the GPU's 0.5 ms an index, its transfers 5 ms a job (so
// that with its transfers it beats the CPU from 5 + 0.5n = 2n, n = 10/3,
// indices per upload).
func (f *fakeBackend) timings(n int) compute.Timings {
	t := compute.Timings{Kernel: time.Duration(n) * 2 * time.Millisecond}
	if f.gpu {
		t.Upload, t.Kernel, t.Download = 3*time.Millisecond, time.Duration(n)*time.Millisecond/2, 2*time.Millisecond
	}
	t.Total = t.Upload + t.Kernel + t.Download
	return t
}

// testBackends: a CPU backend, an available GPU one and an unavailable one.
func testBackends() (cpu, gpu, missing *fakeBackend, all []compute.Backend) {
	cpu = &fakeBackend{name: compute.NameGo, available: true}
	gpu = &fakeBackend{name: compute.NameGL, available: true, gpu: true}
	missing = &fakeBackend{name: compute.NameCUDA, reason: "no NVIDIA driver was found (libcuda.so.1 is missing)"}
	return cpu, gpu, missing, []compute.Backend{cpu, gpu, missing}
}

// newTestWindow opens the window on a small landscape (on the test
// backends unless h names others) and waits for the first map.
func newTestWindow(t *testing.T, opts options, h ...hooks) *window {
	t.Helper()
	a := test.NewTempApp(t)
	if opts.Size == 0 {
		opts.Size = 64
	}
	var hk hooks
	if len(h) > 0 {
		hk = h[0]
	}
	if hk.backends == nil {
		_, _, _, hk.backends = testBackends()
	}
	hk.loop = newEventLoop()
	w := newWindow(a, opts, hk)
	w.Win.Resize(fyne.NewSize(1400, 900))
	w.Wait()
	t.Cleanup(w.Win.Close)
	return w
}

// tappable returns the first tappable object inside o (the item of a
// one-option radio group, for instance).
func tappable(t *testing.T, o fyne.CanvasObject) fyne.Tappable {
	t.Helper()
	for _, c := range test.LaidOutObjects(o) {
		if tp, ok := c.(fyne.Tappable); ok && c != o {
			return tp
		}
	}
	t.Fatalf("nothing to tap in %T", o)
	return nil
}

func TestWindowBuilds(t *testing.T) {
	ready := 0
	w := newTestWindow(t, options{}, hooks{onReady: func() { ready++ }})
	ndvi, wd, ht := ndviOf(w)
	if ndvi == nil || wd != 64 || ht != 64 {
		t.Fatalf("first map: got %d×%d (nil %v), want 64×64", wd, ht, ndvi == nil)
	}
	if ready != 1 {
		t.Errorf("OnReady called %d times, want 1", ready)
	}
	if mw, mh := w.Map.ImageSize(); mw != 64 || mh != 64 {
		t.Errorf("map shows %d×%d", mw, mh)
	}
	if !strings.Contains(w.SceneLabel.Text, "landscape") || !strings.Contains(w.SceneLabel.Text, "64×64") {
		t.Errorf("scene label %q", w.SceneLabel.Text)
	}
	if w.backs.selectedName() != compute.NameGo {
		t.Errorf("auto picked %q, want go (the only CPU backend)", w.backs.selectedName())
	}
	if !strings.Contains(w.Status.Text, "verified: max error") {
		t.Errorf("status %q does not report the verification", w.Status.Text)
	}
	if got := w.backs.detailOf(compute.NameGL); got != "Test GPU · no session kept on the card yet: every run is a round trip" {
		t.Errorf("gl detail %q, want its device and that it keeps no session on the card", got)
	}
	if w.Busy() || w.bar.Bar.Visible() || w.bar.spinner.Visible() {
		t.Error("still busy after the first map")
	}
	// The map widget draws something other than the background.
	img := w.Win.Canvas().Capture()
	if img.Bounds().Dx() == 0 {
		t.Fatal("empty capture")
	}
}

func TestComputeUpdatesMapAndChart(t *testing.T) {
	_, gpu, _, bs := testBackends()
	w := newTestWindow(t, options{}, hooks{backends: bs})
	before, _, _ := ndviOf(w)
	if n := len(w.Results()); n != 1 {
		t.Fatalf("%d results after the first map, want 1", n)
	}

	test.Tap(tappable(t, w.backs.radio(compute.NameGL)))
	if w.backs.selectedName() != compute.NameGL {
		t.Fatalf("tapping gl selected %q", w.backs.selectedName())
	}
	if w.backs.radio(compute.NameGo).Selected != "" {
		t.Error("go is still selected next to gl")
	}
	runs := gpu.runs.Load()
	test.Tap(w.Compute)
	w.Wait()
	if gpu.runs.Load() == runs {
		t.Fatal("Compute did not run the selected backend")
	}
	after, _, _ := ndviOf(w)
	if &after[0] == &before[0] {
		t.Error("the map still shows the old NDVI plane")
	}
	if w.shown.backend != compute.NameGL {
		t.Errorf("map computed on %q", w.shown.backend)
	}
	rs := w.Results()
	if len(rs) != 2 || rs[0].Backend != compute.NameGo || rs[1].Backend != compute.NameGL {
		t.Fatalf("chart results %+v, want go and gl", rs)
	}
	if !rs[1].Verified || rs[1].UploadMS != 3 || rs[1].DownloadMS != 2 {
		t.Errorf("gl result %+v", rs[1])
	}
	if got := w.charts.Timing.Results(); len(got) != 2 {
		t.Errorf("timing chart shows %d results, want 2", len(got))
	}
	if !strings.HasPrefix(w.Status.Text, "NDVI on gl, 64×64: kernel 0.500 ms, with transfers 5.50 ms") ||
		!strings.Contains(w.Status.Text, "(setup 1.00 ms apart) · verified: max error ") {
		t.Errorf("status %q", w.Status.Text)
	}
}

// fakeGL has transfer modes of its own, as gl has.
type fakeGL struct {
	fakeBackend
	setModes atomic.Int32
}

func (f *fakeGL) Modes() []string { return []string{"mapped", "subdata"} }
func (f *fakeGL) Mode() string    { return "mapped" }

// SetMode counts: the window passes the mode with each run instead.
func (f *fakeGL) SetMode(m string) error { f.setModes.Add(1); return nil }

// TestModes: a backend with transfer modes offers them in its mode
// picker; a run gets the mode picked, the result is labelled with it and
// shows the right map; Compare all times every mode, and the window never
// sets a backend's mode.
func TestModes(t *testing.T) {
	cpu := &fakeBackend{name: compute.NameGo, available: true}
	gl := &fakeGL{fakeBackend: fakeBackend{name: compute.NameGL, available: true, gpu: true}}
	w := newTestWindow(t, options{Repeat: 1}, hooks{backends: []compute.Backend{cpu, gl}})
	sel := w.backs.modePicker(compute.NameGL)
	if sel == nil || strings.Join(sel.Options, ",") != "mapped,subdata" || sel.Selected != "mapped" {
		t.Fatalf("gl's mode picker: %+v", sel)
	}
	test.Tap(tappable(t, w.backs.radio(compute.NameGL)))
	test.Tap(w.Compute)
	w.Wait()
	if m := gl.lastMode.Load(); m == nil || *m != "mapped" {
		t.Fatalf("the job ran in mode %v, want mapped", m)
	}
	if w.shown.backend != "gl:mapped" || !strings.HasPrefix(w.Status.Text, "NDVI on gl:mapped, 64×64") {
		t.Errorf("map from %q, status %q", w.shown.backend, w.Status.Text)
	}
	if rep := verifyShown(t, w); !rep.OK() {
		t.Errorf("the map after a gl:mapped run: %s", rep)
	}
	if err := w.backs.selectSpec("gl:subdata"); err != nil || sel.Selected != "subdata" {
		t.Errorf("SelectBackend(gl:subdata): %v, picker %q", err, sel.Selected)
	}
	test.Tap(w.Compute)
	w.Wait()
	if got := gl.lastMode.Load(); got == nil || *got != "subdata" {
		t.Errorf("the run after choosing gl:subdata was asked for mode %v", got)
	}
	if err := w.backs.selectSpec("gl:overlapped"); err == nil {
		t.Error("SelectBackend accepted a mode gl does not have")
	}
	test.Tap(w.CompareAll)
	w.Wait()
	var modes []string
	for _, r := range w.Results() {
		if r.Backend == compute.NameGL {
			modes = append(modes, r.Mode)
		}
	}
	slices.Sort(modes)
	if strings.Join(modes, ",") != "mapped,subdata" {
		t.Errorf("Compare all timed gl in %v", modes)
	}
	if n := gl.setModes.Load(); n != 0 {
		t.Errorf("the window set the backend's mode %d times; a mode is an argument of each run", n)
	}
}

func TestUnavailableBackendCannotStart(t *testing.T) {
	_, _, missing, bs := testBackends()
	w := newTestWindow(t, options{}, hooks{backends: bs})
	r := w.backs.radio(compute.NameCUDA)
	if !r.Disabled() {
		t.Fatal("the unavailable backend's radio is enabled")
	}
	if got := w.backs.detailOf(compute.NameCUDA); !strings.Contains(got, "Unavailable: no NVIDIA driver") {
		t.Errorf("cuda shows %q, want the reason", got)
	}
	test.Tap(tappable(t, r))
	if w.backs.selectedName() == compute.NameCUDA || r.Selected != "" {
		t.Fatal("tapping a disabled backend selected it")
	}
	if err := w.backs.selectSpec(compute.NameCUDA); err == nil || !strings.Contains(err.Error(), "no NVIDIA driver") {
		t.Errorf("SelectBackend(cuda) = %v, want the reason", err)
	}
	// Even forced into the selection, Compute refuses it.
	w.backs.selected = w.backs.entry(compute.NameCUDA)
	w.updateButtons()
	if !w.Compute.Disabled() {
		t.Error("Compute is enabled for an unavailable backend")
	}
	w.computeSelected()
	w.Wait()
	test.Tap(w.CompareAll)
	w.Wait()
	if n := missing.runs.Load(); n != 0 {
		t.Fatalf("the unavailable backend ran %d times", n)
	}
	for _, r := range w.Results() {
		if r.Backend == compute.NameCUDA {
			t.Errorf("Compare all ran cuda: %+v", r)
		}
	}
	if n := len(w.Results()); n != 2 {
		t.Errorf("Compare all gave %d results, want 2 (go, gl)", n)
	}
}

// ndviOf returns the plane shown and its size, failing the test if it is
// not NDVI.
func ndviOf(w *window) ([]float32, int, int) {
	p, name, wd, ht := w.Plane()
	if p != nil && name != "ndvi" {
		panic("the map shows " + name + ", not ndvi")
	}
	return p, wd, ht
}

// verifyShown checks the plane shown against the float64 truth of its
// bands and index.
func verifyShown(t *testing.T, w *window) compute.Report {
	t.Helper()
	s := w.shown
	j, err := compute.NewJob(s.set.bands, s.set.mask, []string{s.idx.name}, []*index.Expr{s.idx.expr})
	if err != nil {
		t.Fatal(err)
	}
	copy(j.Out[0], s.plane)
	return compute.VerifyJob(j)[0]
}

// writeBand writes a w×h float32 GeoTIFF band.
func writeBand(t *testing.T, path string, w, h int, v float32) {
	t.Helper()
	b := compute.NewBand(w, h)
	for i := range b.Data {
		b.Data[i] = v
	}
	if err := raster.WriteGeoTIFF(path, b); err != nil {
		t.Fatal(err)
	}
}

// dialogText returns the texts of the top overlay (a dialog), "" when none.
func dialogText(w *window) string {
	top := w.Win.Canvas().Overlays().Top()
	if top == nil {
		return ""
	}
	var b strings.Builder
	for _, o := range test.LaidOutObjects(top) {
		switch o := o.(type) {
		case *widget.Label:
			b.WriteString(o.Text + "\n")
		case *widget.RichText:
			b.WriteString(o.String() + "\n")
		}
	}
	return b.String()
}

func TestLoadErrorKeepsMap(t *testing.T) {
	w := newTestWindow(t, options{})
	before, _, _ := ndviOf(w)
	label := w.SceneLabel.Text

	dir := t.TempDir()
	red, nir := filepath.Join(dir, "red.tif"), filepath.Join(dir, "nir.tif")
	writeBand(t, red, 32, 32, 0.1)
	writeBand(t, nir, 16, 16, 0.5)
	if err := w.bands.SetFile("red", red); err != nil {
		t.Fatal(err)
	}
	w.Wait()
	if got := w.bands.Row("red").Detail.Text; !strings.Contains(got, "red.tif") {
		t.Errorf("red file shown as %q", got)
	}
	if got := w.bands.Row("nir").Detail.Text; !strings.Contains(got, "no file") {
		t.Errorf("nir, not chosen yet, shown as %q", got)
	}
	if !w.Compute.Disabled() || !strings.Contains(w.Status.Text, "needs the nir band") {
		t.Errorf("with no NIR band: Compute enabled %v, status %q", !w.Compute.Disabled(), w.Status.Text)
	}
	if err := w.bands.SetFile("nir", nir); err != nil {
		t.Fatal(err)
	}
	w.Wait() // both bands chosen: computed at once

	msg := dialogText(w)
	if !strings.Contains(msg, "red.tif") || !strings.Contains(msg, "nir.tif") || !strings.Contains(msg, "size") {
		t.Errorf("error dialog says %q, want both files and the reason", msg)
	}
	after, _, _ := ndviOf(w)
	if &after[0] != &before[0] || w.SceneLabel.Text != label {
		t.Error("a failed load replaced the map")
	}
	if mw, _ := w.Map.ImageSize(); mw != 64 {
		t.Errorf("map shows width %d after a failed load", mw)
	}

	// A file that is no raster at all is refused when chosen.
	bad := filepath.Join(dir, "notes.tif")
	os.WriteFile(bad, []byte("not a tiff"), 0o644)
	if err := w.bands.SetFile("red", bad); err == nil || !strings.Contains(err.Error(), "notes.tif") {
		t.Errorf("SetFile(notes.tif) = %v, want an error naming the file", err)
	}
	if got := w.bands.Row("red").Detail.Text; !strings.Contains(got, "red.tif") {
		t.Errorf("the refused file replaced the red band: %q", got)
	}
}

func TestLoadBands(t *testing.T) {
	w := newTestWindow(t, options{})
	dir := t.TempDir()
	red, nir := filepath.Join(dir, "red.tif"), filepath.Join(dir, "nir.tif")
	writeBand(t, red, 40, 30, 0.1)
	writeBand(t, nir, 40, 30, 0.5)
	w.bands.SetFile("red", red)
	w.bands.SetFile("nir", nir)
	w.Wait()
	ndvi, wd, ht := ndviOf(w)
	if wd != 40 || ht != 30 {
		t.Fatalf("loaded %d×%d, want 40×30", wd, ht)
	}
	r, n := float64(float32(0.1)), float64(float32(0.5))
	if want := (n - r) / (n + r); math.Abs(float64(ndvi[0])-want) > 1e-7 {
		t.Errorf("ndvi[0] = %v, want %v", ndvi[0], want)
	}
	if msg := dialogText(w); msg != "" {
		t.Errorf("unexpected dialog %q", msg)
	}
	if !strings.Contains(w.SceneLabel.Text, "NDVI — red.tif + nir.tif, 40×30") {
		t.Errorf("scene label %q", w.SceneLabel.Text)
	}
}

func TestGenerateScene(t *testing.T) {
	w := newTestWindow(t, options{})
	w.source.Scene.SetSelected(fake.Noise)
	w.source.Size.SetSelected(sizeLabel(256))
	w.source.Seed.SetText("")
	test.Type(w.source.Seed, "17")
	test.Tap(w.source.Generate)
	w.Wait()
	if _, wd, _ := ndviOf(w); wd != 256 {
		t.Fatalf("generated width %d", wd)
	}
	if got := w.SceneLabel.Text; got != "NDVI — Fake noise, 256×256, seed 17" {
		t.Errorf("scene %q", got)
	}
	// A bad seed is refused with a dialog; the map stays.
	w.source.Seed.SetText("abc")
	test.Tap(w.source.Generate)
	w.Wait()
	if !strings.Contains(strings.ToLower(dialogText(w)), "seed") {
		t.Errorf("no dialog for a bad seed: %q", dialogText(w))
	}
	if _, wd, _ := ndviOf(w); wd != 256 {
		t.Error("the map changed after a refused seed")
	}
}

func TestCompareAllAndSweep(t *testing.T) {
	w := newTestWindow(t, options{Repeat: 2})
	test.Tap(w.CompareAll)
	w.Wait()
	rs := w.Results()
	if len(rs) != 2 {
		t.Fatalf("%d results, want 2", len(rs))
	}
	for _, r := range rs {
		if !r.Verified || r.Repeat != 2 {
			t.Errorf("%s: verified %v repeat %d", r.Backend, r.Verified, r.Repeat)
		}
	}
	if !strings.Contains(w.Status.Text, "all verified") {
		t.Errorf("status %q", w.Status.Text)
	}

	w.charts.SweepMax.SetSelected(sizeLabel(1024))
	test.Tap(w.Sweep)
	w.Wait()
	sw := w.charts.results(chartSweep)
	if len(sw) != 3*2 {
		t.Fatalf("sweep gave %d results, want 6 (256, 512, 1024 × 2 backends)", len(sw))
	}
	if got := w.charts.SweepView.Results(); len(got) != 6 {
		t.Errorf("sweep chart shows %d", len(got))
	}
}

func TestCancel(t *testing.T) {
	cpu, _, _, bs := testBackends()
	w := newTestWindow(t, options{}, hooks{backends: bs})
	before, _, _ := ndviOf(w)
	release := holdRuns(t, cpu)
	test.Tap(w.Compute)
	if !w.Busy() || w.Cancel.Disabled() {
		t.Fatal("not busy while computing")
	}
	test.Tap(w.Cancel)
	if w.Busy() || !w.Cancel.Disabled() {
		t.Error("still busy after Cancel")
	}
	release()
	w.Wait()
	after, _, _ := ndviOf(w)
	if &after[0] != &before[0] {
		t.Error("a cancelled compute replaced the map")
	}
	if !strings.HasPrefix(w.Status.Text, "Cancelled") {
		t.Errorf("status %q", w.Status.Text)
	}
}

func TestColourAndStretch(t *testing.T) {
	w := newTestWindow(t, options{})
	w.colour.Ramp.SetSelected(rampLabel(colormap.RampViridis))
	w.Wait()
	if w.ramp != colormap.RampViridis || w.lut.Ramp() != colormap.RampViridis {
		t.Fatalf("ramp %q", w.ramp)
	}
	w.colour.Stretch.SetSelected(labelMinMax)
	w.Wait()
	r := w.lut.Range()
	sm := w.shown.summary.summary
	if float32(r.Lo) < float32(sm.Min)-1e-6 || r.Hi > sm.Max+1e-3 || r == colormap.Full {
		t.Errorf("min/max stretch %v, data %v … %v", r, sm.Min, sm.Max)
	}
	w.colour.Ramp.SetSelected(rampLabel(colormap.RampClasses))
	if !w.colour.Stretch.Disabled() {
		t.Error("the stretch applies to classes")
	}
	if w.colour.image.Image == nil {
		t.Error("no legend")
	}
}

func TestStatistics(t *testing.T) {
	w := newTestWindow(t, options{})
	st := w.shown.summary
	if st == nil || st.summary.Total != 64*64 {
		t.Fatalf("stats %+v", st)
	}
	if n := len(w.stats.Hist.Counts()); n != histBins {
		t.Errorf("%d histogram bins", n)
	}
	if !strings.Contains(w.stats.Numbers.Text, "Valid pixels") {
		t.Errorf("numbers %q", w.stats.Numbers.Text)
	}
	if !st.areaKnown {
		t.Log("fake landscape is not georeferenced: no hectares")
	}
}

func TestExport(t *testing.T) {
	w := newTestWindow(t, options{})
	dir := t.TempDir()
	png1 := filepath.Join(dir, "map.png")
	if err := w.ExportPNG(png1, true, "Test"); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(png1)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() <= 64 || b.Dy() < 64 {
		t.Errorf("PNG with legend is %v", b)
	}
	tif := filepath.Join(dir, "ndvi.tif")
	if err := w.ExportGeoTIFF(tif); err != nil {
		t.Fatal(err)
	}
	b, err := raster.Load(tif)
	if err != nil {
		t.Fatal(err)
	}
	ndvi, _, _ := ndviOf(w)
	if b.Width != 64 || b.Data[100] != ndvi[100] && !(b.Data[100] != b.Data[100]) {
		t.Errorf("GeoTIFF round trip: %d wide, %v vs %v", b.Width, b.Data[100], ndvi[100])
	}
	if err := w.charts.exportCSV(filepath.Join(dir, "t.csv")); err != nil {
		t.Fatal(err)
	}
	if err := w.charts.exportChart(filepath.Join(dir, "t.png"), chartTimings); err != nil {
		t.Fatal(err)
	}
	if err := w.charts.exportChart(filepath.Join(dir, "s.png"), chartSweep); err != errNothing {
		t.Errorf("sweep chart with no sweep: %v", err)
	}
}

var _ image.Image

func TestStartOnFiles(t *testing.T) {
	dir := t.TempDir()
	red, nir := filepath.Join(dir, "B04.tif"), filepath.Join(dir, "B08.tif")
	writeBand(t, red, 24, 20, 0.2)
	writeBand(t, nir, 24, 20, 0.6)
	w := newTestWindow(t, options{Bands: map[string]string{"red": red, "nir": nir}})
	if _, wd, ht := ndviOf(w); wd != 24 || ht != 20 {
		t.Fatalf("start map %d×%d, want 24×20", wd, ht)
	}
	if got := w.bands.Row("nir").Detail.Text; !strings.Contains(got, "B08.tif") {
		t.Errorf("band rows not filled: %q", got)
	}
	if !strings.Contains(w.SceneLabel.Text, "B04.tif + B08.tif") {
		t.Errorf("scene %q", w.SceneLabel.Text)
	}
}

func TestStartOnMissingFile(t *testing.T) {
	dir := t.TempDir()
	nir := filepath.Join(dir, "B08.tif")
	writeBand(t, nir, 24, 20, 0.6)
	ready := false
	w := newTestWindow(t, options{Bands: map[string]string{"red": filepath.Join(dir, "B04.tif"), "nir": nir}}, hooks{onReady: func() { ready = true }})
	if ndvi, _, _ := ndviOf(w); ndvi != nil {
		t.Error("a map without a red band")
	}
	if msg := dialogText(w); !strings.Contains(msg, "B04.tif") {
		t.Errorf("dialog %q does not name the missing file", msg)
	}
	if !ready {
		t.Error("OnReady not called after a failed start: a smoke test would hang")
	}
	if !w.CompareAll.Disabled() {
		t.Error("Compare all enabled with no map")
	}
	if got := w.bands.Row("red").Detail.Text; !strings.Contains(got, "B04.tif") {
		t.Errorf("the red band's row says %q, want the file asked for (to replace it)", got)
	}
}
