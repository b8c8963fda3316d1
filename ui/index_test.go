package ui

import (
	"math"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"canopy/compute"
	"canopy/ui/render/chart"
	"canopy/ui/render/colormap"
)

// TestPickIndex: choosing EVI in the picker computes it at once (the
// bands it adds, blue, generated), and the map header, the status, the
// legend, the statistics and the colour choices all name and follow it.
func TestPickIndex(t *testing.T) {
	cpu, _, _, bs := testBackends()
	w := newTestWindow(t, options{}, hooks{backends: bs})
	runs := cpu.runs.Load()
	w.index.Index.SetSelected("EVI")
	w.Wait()
	if cpu.runs.Load() == runs {
		t.Fatal("picking EVI computed nothing")
	}
	plane, name, wd, ht := w.Plane()
	if name != "evi" || wd != 64 || ht != 64 {
		t.Fatalf("the map shows %s at %d×%d, want evi at 64×64", name, wd, ht)
	}
	if !strings.HasPrefix(w.SceneLabel.Text, "EVI — Fake landscape, 64×64") {
		t.Errorf("map header %q", w.SceneLabel.Text)
	}
	if !strings.HasPrefix(w.Status.Text, "EVI on go, 64×64: kernel") || !strings.Contains(w.Status.Text, "verified") {
		t.Errorf("status %q", w.Status.Text)
	}
	if _, ok := w.shown.set.band("blue"); !ok {
		t.Error("EVI was computed without a blue band")
	}
	if rep := verifyShown(t, w); !rep.OK() {
		t.Errorf("the EVI map against the float64 truth: %s", rep)
	}
	// The values are EVI's, not NDVI's: somewhere they differ.
	w.index.Index.SetSelected("NDVI")
	w.Wait()
	ndvi, _, _ := ndviOf(w)
	differ := false
	for i := range plane {
		differ = differ || math.Abs(float64(plane[i]-ndvi[i])) > 1e-3
	}
	if !differ {
		t.Error("the EVI map equals the NDVI map")
	}
	w.index.Index.SetSelected("EVI")
	w.Wait()
	if got := rowsShown(w); got != "blue red nir" {
		t.Errorf("the bands panel lists %q for EVI", got)
	}
	if got := w.stats.histTitle.Text; got != "Histogram of EVI" {
		t.Errorf("statistics title %q", got)
	}
	if w.shown.summary.classes != nil || w.stats.clsTitle.Visible() {
		t.Error("the NDVI class table is shown for EVI")
	}
	if strings.Join(w.colour.Stretch.Options, "|") != "Index range −1 … 1|"+labelMinMax+"|"+labelPercentile {
		t.Errorf("stretches offered for EVI: %q", w.colour.Stretch.Options)
	}
	for _, o := range w.colour.Ramp.Options {
		if o == rampLabel(colormap.RampClasses) {
			t.Error("the NDVI classes are offered for EVI")
		}
	}
	if r := w.lut.Range(); r != (colormap.Stretch{Lo: -1, Hi: 1}) {
		t.Errorf("EVI's full stretch %v, want the catalogue's range [-1, 1]", r)
	}
	// Back on NDVI the classes come back.
	w.index.Index.SetSelected("NDVI")
	w.Wait()
	if !contains(w.colour.Ramp.Options, rampLabel(colormap.RampClasses)) || w.shown.summary.classes == nil {
		t.Error("NDVI has no classes")
	}
}

// rowsShown lists the roles of the rows the bands panel shows.
func rowsShown(w *window) string {
	var out []string
	for _, o := range w.bands.list.Objects {
		for r, row := range w.bands.rows {
			if row.box == o {
				out = append(out, r)
			}
		}
	}
	return strings.Join(out, " ")
}

// TestMalformedFormula: as the user types a formula that does not parse,
// the error shows its column, Compute is disabled and neither it nor
// Enter computes anything; fixing it clears the error.
func TestMalformedFormula(t *testing.T) {
	cpu, _, _, bs := testBackends()
	w := newTestWindow(t, options{}, hooks{backends: bs})
	before, _, _ := ndviOf(w)
	runs := cpu.runs.Load()

	w.index.Formula.SetText("")
	test.Type(w.index.Formula, "nir - * red")
	if w.index.Index.Selected != customLabel {
		t.Errorf("editing the formula left the picker on %q", w.index.Index.Selected)
	}
	if got := w.index.Error.Text; !strings.HasPrefix(got, "column 7: ") || !w.index.Error.Visible() {
		t.Errorf("error label %q (visible %v), want column 7", got, w.index.Error.Visible())
	}
	if !w.Compute.Disabled() {
		t.Error("Compute is enabled for a formula that does not parse")
	}
	test.Tap(w.Compute)
	w.index.Formula.OnSubmitted(w.index.Formula.Text)
	w.Wait()
	if cpu.runs.Load() != runs {
		t.Error("a malformed formula was computed")
	}
	if after, _, _ := ndviOf(w); &after[0] != &before[0] {
		t.Error("the map changed")
	}
	// An unknown role: its column too.
	w.index.Formula.SetText("")
	test.Type(w.index.Formula, "nir - bogus")
	if got := w.index.Error.Text; !strings.HasPrefix(got, "column 7: unknown role \"bogus\"") {
		t.Errorf("error label %q", got)
	}
	// Fixed: no error, Compute back.
	w.index.Formula.SetText("")
	test.Type(w.index.Formula, "nir - red")
	if w.index.Error.Visible() || w.index.Error.Text != "" || w.Compute.Disabled() {
		t.Errorf("after a valid formula: error %q (visible %v), Compute disabled %v", w.index.Error.Text, w.index.Error.Visible(), w.Compute.Disabled())
	}
}

// TestCustomFormula: a valid formula of the user's is computed (Enter, or
// Compute), named by its formula, checked against the float64 truth and
// coloured over the data's min–max (it has no catalogue range).
func TestCustomFormula(t *testing.T) {
	w := newTestWindow(t, options{})
	w.index.Formula.SetText("")
	test.Type(w.index.Formula, "(nir - swir1) / (nir + swir1)")
	if w.index.Error.Visible() {
		t.Fatalf("a valid formula shows the error %q", w.index.Error.Text)
	}
	w.index.Formula.OnSubmitted(w.index.Formula.Text)
	w.Wait()
	_, name, _, _ := w.Plane()
	if name != "(nir - swir1) / (nir + swir1)" {
		t.Fatalf("the map shows %q", name)
	}
	if !strings.HasPrefix(w.SceneLabel.Text, "custom formula — ") || !strings.HasPrefix(w.Status.Text, "(nir - swir1) / (nir + swir1) on go") {
		t.Errorf("header %q, status %q", w.SceneLabel.Text, w.Status.Text)
	}
	if rep := verifyShown(t, w); !rep.OK() {
		t.Errorf("the formula's map against the float64 truth: %s", rep)
	}
	if got := rowsShown(w); got != "nir swir1" {
		t.Errorf("bands listed %q", got)
	}
	if strings.Join(w.colour.Stretch.Options, "|") != labelMinMax+"|"+labelPercentile {
		t.Errorf("stretches offered for a formula: %q", w.colour.Stretch.Options)
	}
	mm, ok := colormap.MinMax(w.shown.plane)
	if r := w.lut.Range(); !ok || r != mm {
		t.Errorf("the formula is coloured over %v, its data's min–max is %v", r, mm)
	}
	// Editing it again and tapping Compute computes the new one.
	w.index.Formula.SetText("")
	test.Type(w.index.Formula, "nir - red")
	test.Tap(w.Compute)
	w.Wait()
	if _, name, _, _ := w.Plane(); name != "nir - red" {
		t.Errorf("after Compute the map shows %q", name)
	}
}

// TestIndexSweep: the indices-per-upload sweep times jobs of 1, 2, 5 and
// 10 catalogue indices on every backend, every run verified, and says
// from how many indices the GPU with its transfers wins: the test
// backends' times (fakeBackend.timings) cross at 10/3.
func TestIndexSweep(t *testing.T) {
	w := newTestWindow(t, options{Repeat: 1})
	w.charts.IndicesSize.SetSelected(sizeLabel(256))
	if n := w.charts.indicesSize(); n != 256 {
		t.Fatalf("indices sweep size %d", n)
	}
	test.Tap(w.indexSweepButton())
	w.Wait()
	rs := w.charts.results(chartIndices)
	if len(rs) != 2*len(sweepCounts) {
		t.Fatalf("%d results, want %d", len(rs), 2*len(sweepCounts))
	}
	counts := map[int]int{}
	for _, r := range rs {
		if !r.Verified || r.Width != 256 {
			t.Errorf("%s %s: verified %v, %d wide: %s", chart.Label(r.Backend, r.Mode), r.Index, r.Verified, r.Width, r.Error)
		}
		counts[strings.Count(r.Index, ",")+1]++
	}
	for _, k := range sweepCounts {
		if counts[k] != 2 {
			t.Errorf("%d jobs of %d indices, want 2", counts[k], k)
		}
	}
	if got := w.charts.indicesNote.Text; !strings.Contains(got, "gl with its transfers beats the CPU from about 3.3 indices per upload") {
		t.Errorf("crossover note %q", got)
	}
	if len(w.charts.IndicesView.Results()) != len(rs) {
		t.Error("the chart does not show the sweep")
	}
}

// indexSweepButton returns the indices tab's Run button.
func (w *window) indexSweepButton() *widget.Button {
	for _, o := range test.LaidOutObjects(w.charts.indicesTab) {
		if b, ok := o.(*widget.Button); ok && b.Text == "Run" {
			return b
		}
	}
	return nil
}

// TestModeIsPerRun: changing the mode while a run is going neither waits
// for the run nor changes the mode that run was given; the next run gets
// the new one.
func TestModeIsPerRun(t *testing.T) {
	cpu := &fakeBackend{name: compute.NameGo, available: true}
	gl := &fakeGL{fakeBackend: fakeBackend{name: compute.NameGL, available: true, gpu: true}}
	w := newTestWindow(t, options{}, hooks{backends: []compute.Backend{cpu, gl}})
	if err := w.backs.selectSpec("gl:mapped"); err != nil {
		t.Fatal(err)
	}
	release := holdRuns(t, &gl.fakeBackend)
	test.Tap(w.Compute)
	w.backs.modePicker(compute.NameGL).SetSelected("subdata")
	if err := w.backs.selectSpec("gl:subdata"); err != nil {
		t.Fatal(err)
	}
	// The run is held until release: had changing the mode waited for it,
	// the test would not be here.
	release()
	w.Wait()
	if m := gl.lastMode.Load(); m == nil || *m != "mapped" {
		t.Errorf("the run started in mapped mode was given %v", m)
	}
	gl.hold = nil
	test.Tap(w.Compute)
	w.Wait()
	if m := gl.lastMode.Load(); m == nil || *m != "subdata" {
		t.Errorf("the next run was given %v, want subdata", m)
	}
	if n := gl.setModes.Load(); n != 0 {
		t.Errorf("SetMode called %d times", n)
	}
}
