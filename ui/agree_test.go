package ui

import (
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"canopy/compute/fake"
	"canopy/ui/render/colormap"
)

// TestGenerateReplacesProduct: Generate over an open product replaces it
// everywhere: the map, its header, the source card, the bands card and
// what Compare all compares. A Generate that is cancelled (Compare all
// tapped while it runs) leaves the sidebar on the scene still shown.
func TestGenerateReplacesProduct(t *testing.T) {
	path := writeOrtho(t, "ortho.tif", 40, 30, 0, []string{"blue", "green", "red", "nir"})
	w := newTestWindow(t, options{})
	openTyped(w, path)
	if _, _, wd, _ := w.Plane(); wd != 40 {
		t.Fatalf("the orthomosaic is not shown (%d wide)", wd)
	}
	w.source.Scene.SetSelected(fake.Noise)
	w.source.Size.SetSelected(sizeLabel(256))
	test.Tap(w.source.Generate)
	w.Wait()
	if _, _, wd, _ := w.Plane(); wd != 256 {
		t.Fatalf("after Generate the map is %d wide, want 256", wd)
	}
	if got := w.SceneLabel.Text; !strings.Contains(got, "Fake noise, 256×256") {
		t.Errorf("header %q", got)
	}
	if got := w.source.SceneLine.Text; got != "No product open" {
		t.Errorf("source card %q after Generate", got)
	}
	if got := w.bands.Row("red").Detail.Text; got != "generated (fake noise)" {
		t.Errorf("red row %q after Generate", got)
	}
	test.Tap(w.CompareAll)
	w.Wait()
	for _, r := range w.Results() {
		if r.Width != 256 {
			t.Errorf("Compare all ran %s on %d×%d, not the generated scene", r.Backend, r.Width, r.Height)
		}
	}

	// The product again, then a Generate cut short by Compare all: the
	// map, the cards and the comparison stay on the product.
	openTyped(w, path)
	cpu := w.backs.entries[0].b.(*fakeBackend)
	release := holdRuns(t, cpu)
	w.source.Size.SetSelected(sizeLabel(512))
	test.Tap(w.source.Generate)
	test.Tap(w.CompareAll)
	release()
	w.Wait()
	if _, _, wd, _ := w.Plane(); wd != 40 {
		t.Fatalf("the map is %d wide after a cancelled Generate, want the product's 40", wd)
	}
	if got := w.source.SceneLine.Text; !strings.HasPrefix(got, "orthomosaic") {
		t.Errorf("source card %q while the map shows the product", got)
	}
	if got := w.bands.Row("red").Detail.Text; !strings.Contains(got, "ortho.tif") {
		t.Errorf("red row %q while the map shows the product", got)
	}
	for _, r := range w.Results() {
		if r.Width != 40 {
			t.Errorf("Compare all ran %s on %d×%d, not the product shown", r.Backend, r.Width, r.Height)
		}
	}
}

// TestFailedBandPickNotListed: a band file that cannot be computed with
// the others (another grid) is refused with a dialog, and the bands card
// goes on listing the file the map was computed from.
func TestFailedBandPickNotListed(t *testing.T) {
	plain := writeOrtho(t, "plain.tif", 20, 10, 0, []string{"", "", "", ""})
	other := writeOrtho(t, "other.tif", 30, 10, 0, []string{"", "", "", ""})
	w := newTestWindow(t, options{})
	for _, r := range []string{"red", "nir"} {
		if err := w.bands.SetFile(r, plain); err != nil {
			t.Fatal(err)
		}
		w.Wait()
	}
	if _, wd, _ := ndviOf(w); wd != 20 {
		t.Fatalf("map %d wide", wd)
	}
	if err := w.bands.SetFile("nir", other); err != nil {
		t.Fatal(err)
	}
	w.Wait()
	if dialogText(w) == "" {
		t.Error("no dialog for a band on another grid")
	}
	if got := w.bands.Row("nir").Detail.Text; !strings.HasPrefix(got, "plain.tif") {
		t.Errorf("nir row %q after a refused file, want plain.tif (what the map shows)", got)
	}
	if f := w.src.files["nir"]; filepath.Base(f.path) != "plain.tif" {
		t.Errorf("the next Compute would read nir from %q", f.path)
	}
}

// TestHeaderNamesTheDateView: in two-date mode the map's header names
// what the map shows: the before date, the after date or the difference.
func TestHeaderNamesTheDateView(t *testing.T) {
	w := newTestWindow(t, options{})
	_, _, bw, bh := w.Plane()
	path, _ := afterDate(t, "after.tif", bw, bh, 7, fake.GeoRef())
	openAfterTyped(w, path)
	for _, c := range []struct{ view, want, not string }{
		{viewDifference, "dNDVI (before − after)", ""},
		{viewAfter, "after date", "before − after"},
		{viewBefore, "before date", "before − after"},
	} {
		if err := w.SetDateView(c.view); err != nil {
			t.Fatal(err)
		}
		got := w.SceneLabel.Text
		if !strings.Contains(got, c.want) || (c.not != "" && strings.Contains(got, c.not)) {
			t.Errorf("%s view: header %q, want it to say %q", c.view, got, c.want)
		}
		if c.view == viewAfter && !strings.Contains(got, "· after ·") {
			t.Errorf("after view: header %q does not name the after date's file", got)
		}
	}
	w.CloseAfter()
	w.Wait()
	if got := w.SceneLabel.Text; strings.Contains(got, "date") {
		t.Errorf("one date again: header %q", got)
	}
}

// TestIndexChangeKeepsViewAndStretch: picking another index keeps the
// zoom and the centre of the map, and the stretch is the new index's
// (its range, or its own percentiles), in the legend and the colours.
func TestIndexChangeKeepsViewAndStretch(t *testing.T) {
	w := newTestWindow(t, options{Size: 256})
	w.Map.ZoomBy(3)
	w.Map.PanBy(40, -25)
	z0, x0, y0 := w.Map.View()
	for _, name := range []string{"EVI", "NDMI", "NDVI"} {
		w.index.Index.SetSelected(name)
		w.Wait()
		if z, x, y := w.Map.View(); math.Abs(z-z0) > 1e-9 || math.Abs(x-x0) > 1e-6 || math.Abs(y-y0) > 1e-6 {
			t.Errorf("after picking %s the view is zoom %.3f at (%.1f, %.1f), was %.3f at (%.1f, %.1f)", name, z, x, y, z0, x0, y0)
		}
	}
	// Percentiles, then another index: the stretch is read from it.
	w.colour.Stretch.SetSelected(labelPercentile)
	w.Wait()
	w.index.Index.SetSelected("EVI")
	w.Wait()
	if _, mode := w.colour.selected(); mode != colormap.StretchPercentile {
		t.Fatalf("the stretch became %q on another index", w.colour.Stretch.Selected)
	}
	plane, name, _, _ := w.Plane()
	if name != "evi" {
		t.Fatalf("map shows %s", name)
	}
	lo, hi := percentiles(plane, 0.02, 0.98)
	if r := w.lut.Range(); math.Abs(r.Lo-lo) > 0.02 || math.Abs(r.Hi-hi) > 0.02 {
		t.Errorf("EVI's 2–98 %% stretch drawn over [%.3f, %.3f], EVI's percentiles are [%.3f, %.3f]", r.Lo, r.Hi, lo, hi)
	}
}

// percentiles returns the p and q quantiles of the finite values.
func percentiles(v []float32, p, q float64) (float64, float64) {
	var s []float64
	for _, x := range v {
		if !math.IsNaN(float64(x)) && !math.IsInf(float64(x), 0) {
			s = append(s, float64(x))
		}
	}
	if len(s) == 0 {
		return math.NaN(), math.NaN()
	}
	slices.Sort(s)
	return s[int(p*float64(len(s)-1))], s[int(q*float64(len(s)-1))]
}

// TestStatusFollowsView: the status line says what the view on the map
// is: the run of the index shown, the composite's bands, the after
// date's run, the difference.
func TestStatusFollowsView(t *testing.T) {
	w := newTestWindow(t, options{})
	first := w.Status.Text
	if !strings.HasPrefix(first, "NDVI on ") {
		t.Fatalf("status %q after the first map", first)
	}
	w.SetView(viewNatural)
	w.Wait()
	if got := w.Status.Text; !strings.HasPrefix(got, "Natural colour: ") {
		t.Errorf("natural colour view: status %q", got)
	}
	w.SetView(viewIndex)
	if got := w.Status.Text; got != first {
		t.Errorf("index view again: status %q, want %q", got, first)
	}
	w.SetView(viewNatural) // drawn already: no job
	if got := w.Status.Text; !strings.HasPrefix(got, "Natural colour: ") {
		t.Errorf("natural colour view again: status %q", got)
	}
	w.SetView(viewIndex)

	_, _, bw, bh := w.Plane()
	path, _ := afterDate(t, "after.tif", bw, bh, 7, fake.GeoRef())
	openAfterTyped(w, path)
	for _, c := range []struct{ view, want string }{
		{viewAfter, "After date: NDVI on "},
		{viewBefore, "NDVI on "},
		{viewDifference, "dNDVI = before − after"},
	} {
		if err := w.SetDateView(c.view); err != nil {
			t.Fatal(err)
		}
		if got := w.Status.Text; !strings.HasPrefix(got, c.want) {
			t.Errorf("%s view: status %q, want it to start %q", c.view, got, c.want)
		}
	}
}
