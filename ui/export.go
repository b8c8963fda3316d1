package ui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"canopy/compute"
	"canopy/compute/geotiff"
	"canopy/compute/outfile"
	"canopy/compute/source"
	"canopy/ui/render/layout"
)

// exportMenuButton is the toolbar's Export button with its menu.
func exportMenuButton(w *window) fyne.CanvasObject {
	var b *widget.Button
	b = widget.NewButtonWithIcon("Export", theme.DocumentSaveIcon(), func() {
		menu := fyne.NewMenu("",
			fyne.NewMenuItem("Map as PNG…", w.exportPNGDialog),
			fyne.NewMenuItem("Index as GeoTIFF (float32)…", w.exportTIFFDialog),
			fyne.NewMenuItemSeparator(),
			fyne.NewMenuItem("Timing chart as PNG…", func() { w.charts.exportChartDialog(chartTimings) }),
			fyne.NewMenuItem("Sweep chart as PNG…", func() { w.charts.exportChartDialog(chartSweep) }),
			fyne.NewMenuItem("Indices chart as PNG…", func() { w.charts.exportChartDialog(chartIndices) }),
			fyne.NewMenuItem("Timings as CSV…", w.charts.exportCSVDialog),
		)
		c := fyne.CurrentApp().Driver().CanvasForObject(b)
		pos := fyne.CurrentApp().Driver().AbsolutePositionForObject(b).AddXY(0, b.Size().Height)
		widget.ShowPopUpMenuAtPosition(menu, c, pos)
	})
	return b
}

// errNothing is returned when there is nothing to export yet.
var errNothing = errors.New("there is nothing to export yet")

// ExportPNG writes the map as a PNG: with neither legend nor title the
// map alone, georeferenced (ExportMap: its world file, .prj and .aux.xml
// beside it); with either a page layout (ExportLayout, 1600×1200 pixels).
func (w *window) ExportPNG(path string, legend bool, title string) error {
	return w.pngWriter(legend, title)(path)
}

// ExportGeoTIFF writes the index shown as a float32 GeoTIFF with the
// bands' georeferencing, GDAL_NODATA = nan and the index's name as the
// band description.
func (w *window) ExportGeoTIFF(path string) error { return w.tiffWriter()(path) }

// The writers capture what is shown now, on the event goroutine, and
// write it from any goroutine.

func (w *window) pngWriter(legend bool, title string) func(string) error {
	if !legend && title == "" {
		write := w.mapWriter()
		return func(path string) error { _, err := write(path); return err }
	}
	write := w.layoutWriter(layout.Options{Title: title, NoLegend: !legend})
	return func(path string) error { _, err := write(path); return err }
}

func (w *window) tiffWriter() func(string) error {
	s, inputs := w.shown, w.exportInputs()
	return func(path string) error {
		if s == nil {
			return errNothing
		}
		if err := refuseInput(path, inputs); err != nil {
			return err
		}
		plane, err := s.exportPlane()
		if err != nil {
			return err
		}
		return writeCOG(path, s.w, s.h, plane, s.set.geo, s.idx.name)
	}
}

// writeCOG writes the index plane shown as the terminal's `canopy compute
// --tif` writes it: through the road's COG sink (source.COG, deflate, one
// band named after the index), into a temporary file renamed into place,
// so that the same inputs give the same file, byte for byte.
func writeCOG(path string, w, h int, plane []float32, geo *compute.GeoRef, name string) error {
	return outfile.WriteFile(path, func(out *outfile.Writer) error {
		c, err := source.NewCOG(out, path, source.Grid{Width: w, Height: h, Geo: geo}, []string{name}, geotiff.Deflate, filepath.Dir(path))
		if err != nil {
			return err
		}
		if err := c.WriteRows(0, h, [][]float32{plane}); err != nil {
			c.Abort()
			return err
		}
		return c.Close()
	})
}

// exportJob runs an export in the background and reports where it went.
func (w *window) exportJob(what, path string, write func(string) error) {
	w.bridge.start("Exporting "+what, func(ctx context.Context, progress progressFunc) (func(), error) {
		progress(-1, "Writing "+filepath.Base(path)+"…")
		if err := write(path); err != nil {
			return nil, err
		}
		return func() { w.setStatus(fmt.Sprintf("Exported %s to %s", what, path), true) }, nil
	})
}

// savePath is where a save dialog's file goes: the name chosen when its
// extension is one of exts (or exts is empty), else the name with exts[0]
// added, and then the empty file the dialog created under the name
// chosen is removed (it made it before asking the app), so that no
// 0-byte file is left beside the one written.
func savePath(chosen string, exts []string) string {
	if ext := strings.ToLower(filepath.Ext(chosen)); len(exts) == 0 || contains(exts, ext) {
		return chosen
	}
	if st, err := os.Lstat(chosen); err == nil && st.Mode().IsRegular() && st.Size() == 0 {
		os.Remove(chosen)
	}
	return chosen + exts[0]
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func (w *window) exportPNGDialog() {
	if w.shown == nil {
		dialog.ShowError(errNothing, w.Win)
		return
	}
	f := newPNGForm()
	w.pngForm = f
	dialog.ShowForm("Export the map as PNG", "Choose file…", "Cancel", []*widget.FormItem{
		widget.NewFormItem("", f.Legend),
		widget.NewFormItem("Title", f.Title),
		widget.NewFormItem("", f.Note),
	}, func(ok bool) {
		if !ok {
			return
		}
		name := fileName(w.shown.idx)
		if c := w.shownComposite(); c != nil {
			name = viewSpecs[w.view.mode].file
		}
		w.saveDialog("Export the map as PNG", name+".png", []string{".png"}, func(path string) {
			w.exportJob("the map", path, w.pngWriter(f.Legend.Checked, strings.TrimSpace(f.Title.Text)))
		})
	}, w.Win)
}

func (w *window) exportTIFFDialog() {
	if w.shown == nil {
		dialog.ShowError(errNothing, w.Win)
		return
	}
	w.saveDialog("Export the index as GeoTIFF", fileName(w.shown.idx)+".tif", []string{".tif", ".tiff"}, func(path string) {
		w.exportJob("the "+w.shown.idx.title()+" GeoTIFF", path, w.tiffWriter())
	})
}

// fileName suggests a file name for an export of idx.
func fileName(idx indexChoice) string {
	if idx.cat == nil {
		return "index"
	}
	return idx.cat.Name
}

// ExportMap writes the map alone at full resolution (one PNG pixel per
// raster pixel, in the colours shown) and, when the bands are
// georeferenced, its world file, .prj and .aux.xml (layout.WriteMapPNG).
// It returns the paths written.
func (w *window) ExportMap(path string) ([]string, error) { return w.mapWriter()(path) }

// ExportLayout writes a print layout of the map shown (title, legend,
// scale bar, north arrow, footer; layout.Write) in the format path's
// extension names (.png, .pdf, .svg) and returns its geometry (where the
// map and the legend are on the page).
func (w *window) ExportLayout(path string, opt layout.Options) (layout.Geometry, error) {
	return w.layoutWriter(opt)(path)
}

// exportPlane is the plane an export writes: downloaded from the session
// kept on the card when the map shown is drawn from one (the only time
// the window moves the whole plane off the card), else the host's. It
// runs on the writer's goroutine.
func (s *shown) exportPlane() ([]float32, error) {
	if s.large != nil {
		return nil, errLarge("exports")
	}
	if s.card == nil {
		return s.plane, nil
	}
	p, open, err := s.card.download(s.w * s.h)
	if err != nil {
		return nil, fmt.Errorf("downloading the map's plane from the card: %w", err)
	}
	if !open {
		return s.plane, nil // the session went; the round trip's plane is the same
	}
	return p, nil
}

// withPlane is m with the plane an export of s writes (exportPlane).
func withPlane(m layout.Map, s *shown) (layout.Map, error) {
	if s == nil || m.Composite != nil {
		return m, nil
	}
	p, err := s.exportPlane()
	m.Plane = p
	return m, err
}

// errShown is why the map shown cannot be exported: nothing yet, or an
// image too large to load.
func (w *window) errShown() error {
	if w.shown != nil && w.shown.large != nil {
		return errLarge("exports")
	}
	return errNothing
}

func (w *window) layoutMap() (layout.Map, bool) {
	s := w.shown
	if s == nil || s.large != nil {
		return layout.Map{}, false
	}
	return layout.Map{Plane: s.plane, Width: s.w, Height: s.h, Geo: s.set.geo, LUT: w.lut.WithHeading(s.idx.heading()),
		Composite: w.shownComposite()}, true
}

func (w *window) mapWriter() func(string) ([]string, error) {
	m, ok := w.layoutMap()
	s, inputs, why := w.shown, w.exportInputs(), w.errShown()
	return func(path string) ([]string, error) {
		if !ok {
			return nil, why
		}
		if err := refuseInput(path, inputs); err != nil {
			return nil, err
		}
		m, err := withPlane(m, s)
		if err != nil {
			return nil, err
		}
		return layout.WriteMapPNG(path, m)
	}
}

func (w *window) layoutWriter(opt layout.Options) func(string) (layout.Geometry, error) {
	m, ok := w.layoutMap()
	if ok && opt.Source == "" {
		opt.Source = w.shown.label
	}
	s, inputs, why := w.shown, w.exportInputs(), w.errShown()
	return func(path string) (layout.Geometry, error) {
		if !ok {
			return layout.Geometry{}, why
		}
		if err := refuseInput(path, inputs); err != nil {
			return layout.Geometry{}, err
		}
		m, err := withPlane(m, s)
		if err != nil {
			return layout.Geometry{}, err
		}
		return layout.Write(path, m, opt)
	}
}
