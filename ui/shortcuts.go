package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
)

// Keyboard shortcuts of the window (Ctrl, or Cmd on macOS, with the key).
var (
	shortcutOpen    = &desktop.CustomShortcut{KeyName: fyne.KeyO, Modifier: fyne.KeyModifierShortcutDefault}
	shortcutCompute = &desktop.CustomShortcut{KeyName: fyne.KeyReturn, Modifier: fyne.KeyModifierShortcutDefault}
	shortcutZoomIn  = &desktop.CustomShortcut{KeyName: fyne.KeyEqual, Modifier: fyne.KeyModifierShortcutDefault}
	shortcutZoomOut = &desktop.CustomShortcut{KeyName: fyne.KeyMinus, Modifier: fyne.KeyModifierShortcutDefault}
	shortcutFit     = &desktop.CustomShortcut{KeyName: fyne.Key0, Modifier: fyne.KeyModifierShortcutDefault}
	shortcutExport  = &desktop.CustomShortcut{KeyName: fyne.KeyE, Modifier: fyne.KeyModifierShortcutDefault}
	shortcutSave    = &desktop.CustomShortcut{KeyName: fyne.KeyS, Modifier: fyne.KeyModifierShortcutDefault}
	// shortcutOpenSession is Ctrl+Shift+O (Cmd+Shift+O on macOS).
	shortcutOpenSession = &desktop.CustomShortcut{KeyName: fyne.KeyO, Modifier: fyne.KeyModifierShortcutDefault | fyne.KeyModifierShift}
)

// addShortcuts binds the shortcuts on the window's canvas: open a scene
// file, compute, zoom in and out, fit, export the map, save and open a
// session.
func (w *window) addShortcuts() {
	c := w.Win.Canvas()
	bind := func(s *desktop.CustomShortcut, f func()) { c.AddShortcut(s, func(fyne.Shortcut) { f() }) }
	bind(shortcutOpen, w.source.pickFile)
	bind(shortcutCompute, func() {
		if !w.Compute.Disabled() {
			w.computeSelected()
		}
	})
	bind(shortcutZoomIn, func() { w.Map.ZoomBy(1.5) })
	bind(shortcutZoomOut, func() { w.Map.ZoomBy(1 / 1.5) })
	bind(shortcutFit, w.Map.Fit)
	bind(shortcutExport, w.exportPNGDialog)
	bind(shortcutSave, w.saveSessionDialog)
	bind(shortcutOpenSession, w.openSessionDialog)
	w.Win.SetOnDropped(w.dropped)
}

// dropped opens what was dropped on the window: a product folder or
// file (a Sentinel-2 .SAFE or .zip, a Landsat folder or .tar, a STAC
// item, an orthomosaic), as a typed path would. Several dropped together
// are tiles of one date: one mosaic on one grid (mosaic.go).
func (w *window) dropped(pos fyne.Position, uris []fyne.URI) {
	if w.twoDropped(pos, uris) {
		return // on the two-date card: the after date
	}
	var paths []string
	for _, u := range uris {
		if u.Scheme() == "file" && u.Path() != "" {
			paths = append(paths, u.Path())
		}
	}
	switch {
	case len(paths) == 1:
		w.source.Path.SetText(paths[0])
		w.openProduct(paths[0])
	case len(paths) > 1:
		// Tiles of one date dropped together: one map on one grid.
		w.source.Path.SetText(paths[0])
		w.openMosaic(paths)
	}
}
