package ui

import (
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/storage"
)

// TestShortcuts: Ctrl+= and Ctrl+- zoom, Ctrl+0 fits, Ctrl+Return
// computes.
func TestShortcuts(t *testing.T) {
	cpu, _, _, bs := testBackends()
	w := newTestWindow(t, options{}, hooks{backends: bs})
	c := w.Win.Canvas()
	z0, _, _ := w.Map.View()
	press := func(s *desktop.CustomShortcut) { c.(interface{ TypedShortcut(fyne.Shortcut) }).TypedShortcut(s) }
	press(shortcutZoomIn)
	if z, _, _ := w.Map.View(); z <= z0 {
		t.Errorf("Ctrl+= zoom %v, was %v", z, z0)
	}
	press(shortcutFit)
	if z, _, _ := w.Map.View(); z != z0 {
		t.Errorf("Ctrl+0 zoom %v, fit is %v", z, z0)
	}
	press(shortcutZoomOut)
	if z, _, _ := w.Map.View(); z >= z0 {
		t.Errorf("Ctrl+- zoom %v, was %v", z, z0)
	}
	runs := cpu.runs.Load()
	press(shortcutCompute)
	w.Wait()
	if cpu.runs.Load() == runs {
		t.Error("Ctrl+Return computed nothing")
	}
}

// TestDropFile: a multi-band GeoTIFF dropped on the window opens as a
// typed path would.
func TestDropFile(t *testing.T) {
	path := writeOrtho(t, "drop.tif", 20, 10, 0, []string{"blue", "green", "red", "nir"})
	w := newTestWindow(t, options{})
	w.dropped(fyne.NewPos(10, 10), []fyne.URI{storage.NewFileURI(path)})
	w.Wait()
	if _, _, wd, ht := w.Plane(); wd != 20 || ht != 10 {
		t.Errorf("after the drop the map is %d×%d, want 20×10", wd, ht)
	}
	if w.source.Path.Text != path {
		t.Errorf("the path field says %q", w.source.Path.Text)
	}
}
