package ui

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"canopy/ui/render/colormap"
)

// TestOpenSessionInWindow: a session saved, the window changed (another
// scene, index, ramp, zoom), then File › Open session… brings back the
// saved state in the widgets (index picker, formula, ramp, class editor,
// seed, zoom) and the same map; a corrupt or missing session file shows
// one line naming the file and the problem and changes nothing.
func TestOpenSessionInWindow(t *testing.T) {
	w := newTestWindow(t, options{Seed: 3})
	w.colour.SetRamp(colormap.RampClasses)
	w.Wait()
	table, err := w.lut.Classes().WithThreshold(3, 0.55)
	if err != nil {
		t.Fatal(err)
	}
	w.SetClasses(table)
	w.Wait()
	w.Map.ZoomBy(2)
	w.Wait()
	zoom, x0, y0 := w.Map.View()
	saved, _, _, _ := w.Plane()
	saved = slices.Clone(saved)
	path := filepath.Join(t.TempDir(), "forest.json")
	if err := w.SaveSession(path); err != nil {
		t.Fatal(err)
	}

	// Change everything the session holds.
	w.source.Seed.SetText("9")
	w.source.generate()
	w.Wait()
	w.index.Index.SetSelected("EVI")
	w.Wait()
	w.colour.SetRamp(colormap.RampViridis)
	w.Wait()
	w.Map.Fit()
	if w.idx.name != "evi" || w.ramp != colormap.RampViridis || w.source.Seed.Text != "9" {
		t.Fatalf("the window did not change: %s %s seed %s", w.idx.name, w.ramp, w.source.Seed.Text)
	}

	w.OpenSession(path)
	w.Wait()
	if got := w.index.Index.Selected; got != "NDVI" {
		t.Errorf("index picker shows %q, want NDVI", got)
	}
	if !strings.Contains(w.index.Formula.Text, "nir") || w.idx.name != "ndvi" {
		t.Errorf("formula %q, index %s", w.index.Formula.Text, w.idx.name)
	}
	if got := w.colour.Ramp.Selected; got != rampLabel(colormap.RampClasses) || w.ramp != colormap.RampClasses {
		t.Errorf("ramp picker shows %q (ramp %s), want the classes", got, w.ramp)
	}
	if !w.colour.Stretch.Disabled() {
		t.Error("the stretch stays enabled with the classes ramp")
	}
	ed := w.stats.editor
	if len(ed.From) != 5 || ed.From[4] == nil || ed.From[4].Text != "0.55" {
		var got []string
		for _, f := range ed.From {
			if f != nil {
				got = append(got, f.Text)
			}
		}
		t.Errorf("class editor bounds %q, want the saved 0.55 for the top class", got)
	}
	if got := w.source.Seed.Text; got != "3" {
		t.Errorf("seed entry %q, want 3", got)
	}
	if z, a, b := w.Map.View(); z != zoom || a != x0 || b != y0 {
		t.Errorf("view %v %v %v, saved %v %v %v", z, a, b, zoom, x0, y0)
	}
	if got := w.zoomLabel.Text; got == "" {
		t.Error("zoom label empty after opening the session")
	}
	plane, name, _, _ := w.Plane()
	eq := func(a, b float32) bool { return a == b || (a != a && b != b) }
	if name != "ndvi" || !slices.EqualFunc(plane, saved, eq) {
		t.Errorf("the map shown (%s) is not the saved one", name)
	}
	if w.lut.Color(0.57) == w.lut.Color(0.5) {
		t.Error("the map is not drawn in the saved classes")
	}
	if !strings.Contains(w.Status.Text, "forest.json") || w.Status.Importance != widget.SuccessImportance {
		t.Errorf("status %q", w.Status.Text)
	}

	// A corrupt session file: one line, the file and the problem; nothing
	// else changes.
	w.index.Index.SetSelected("EVI")
	w.Wait()
	before, _, _, _ := w.Plane()
	bad := filepath.Join(t.TempDir(), "broken.json")
	os.WriteFile(bad, []byte(`{"version": 1, "index": "ndvi", "ramp": `), 0o644)
	for _, c := range []struct{ path, want string }{
		{bad, "not a Canopy session file"},
		{filepath.Join(t.TempDir(), "gone.json"), "there is no such file"},
	} {
		w.OpenSession(c.path)
		w.Wait()
		msg := w.Status.Text
		if strings.Contains(msg, "\n") || !strings.Contains(msg, filepath.Base(c.path)) || !strings.Contains(msg, c.want) {
			t.Errorf("opening %s: status %q, want one line naming it and %q", filepath.Base(c.path), msg, c.want)
		}
		if w.Status.Importance != widget.DangerImportance {
			t.Errorf("opening %s: the status is not shown as an error", filepath.Base(c.path))
		}
		after, _, _, _ := w.Plane()
		if &after[0] != &before[0] || w.idx.name != "evi" || w.index.Index.Selected != "EVI" {
			t.Errorf("a failed session changed the window: index %s, ramp %s", w.idx.name, w.ramp)
		}
		if dialogText(w) != "" {
			t.Errorf("a failed session opened a dialog: %q", dialogText(w))
		}
	}
}

// TestOpenSessionShortcut: Ctrl+Shift+O opens the session dialog, and
// the File menu lists it with that shortcut.
func TestOpenSessionShortcut(t *testing.T) {
	w := newTestWindow(t, options{})
	c := w.Win.Canvas()
	c.(interface{ TypedShortcut(fyne.Shortcut) }).TypedShortcut(shortcutOpenSession)
	if c.Overlays().Top() == nil {
		t.Error("Ctrl+Shift+O opened no dialog")
	}
	var item *fyne.MenuItem
	for _, it := range w.Win.MainMenu().Items[0].Items {
		if it.Label == "Open session…" {
			item = it
		}
	}
	if item == nil {
		t.Fatal("File has no Open session… item")
	}
	s, ok := item.Shortcut.(*desktop.CustomShortcut)
	if !ok || s.KeyName != fyne.KeyO || s.Modifier&fyne.KeyModifierShift == 0 {
		t.Errorf("Open session… shows shortcut %v", item.Shortcut)
	}
}

// TestOpenSessionView: a session saved in the false-colour view, opened in
// a window showing the index, shows false colour again.
func TestOpenSessionView(t *testing.T) {
	w := newTestWindow(t, options{Seed: 2})
	test.Tap(w.view.Buttons[viewFalse])
	w.Wait()
	path := filepath.Join(t.TempDir(), "false.json")
	if err := w.SaveSession(path); err != nil {
		t.Fatal(err)
	}
	w.SetView(viewIndex)
	w.Wait()
	if w.view.Mode() != viewIndex {
		t.Fatalf("mode %v after choosing the index view", w.view.Mode())
	}
	w.OpenSession(path)
	w.Wait()
	if w.view.Mode() != viewFalse || w.shownComposite() == nil {
		t.Errorf("the opened session shows mode %v, want false colour", w.view.Mode())
	}
}
