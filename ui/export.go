package ui

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"canopy/compute"
	"canopy/compute/raster"
	"canopy/ui/render/colormap"
)

// exportMenuButton is the toolbar's Export button with its menu.
func exportMenuButton(w *Window) fyne.CanvasObject {
	var b *widget.Button
	b = widget.NewButtonWithIcon("Export", theme.DocumentSaveIcon(), func() {
		menu := fyne.NewMenu("",
			fyne.NewMenuItem("Map as PNG…", w.exportPNGDialog),
			fyne.NewMenuItem("NDVI as GeoTIFF (float32)…", w.exportTIFFDialog),
			fyne.NewMenuItemSeparator(),
			fyne.NewMenuItem("Timing chart as PNG…", func() { w.exportChartDialog(false) }),
			fyne.NewMenuItem("Sweep chart as PNG…", func() { w.exportChartDialog(true) }),
			fyne.NewMenuItem("Timings as CSV…", w.exportCSVDialog),
		)
		c := fyne.CurrentApp().Driver().CanvasForObject(b)
		pos := fyne.CurrentApp().Driver().AbsolutePositionForObject(b).AddXY(0, b.Size().Height)
		widget.ShowPopUpMenuAtPosition(menu, c, pos)
	})
	return b
}

// errNothing is returned when there is nothing to export yet.
var errNothing = errors.New("there is nothing to export yet")

// ExportPNG writes the map at full resolution, optionally with the legend
// and a title, and a world file when the bands are georeferenced.
func (w *Window) ExportPNG(path string, legend bool, title string) error {
	return w.pngWriter(legend, title)(path)
}

// ExportGeoTIFF writes the NDVI as a float32 GeoTIFF with the bands'
// georeferencing and GDAL_NODATA = nan.
func (w *Window) ExportGeoTIFF(path string) error { return w.tiffWriter()(path) }

// ExportChart writes the timing chart (or the sweep chart) as a PNG.
func (w *Window) ExportChart(path string, sweep bool) error { return w.chartWriter(sweep)(path) }

// ExportCSV writes the timings shown (and the sweep, if any) as CSV.
func (w *Window) ExportCSV(path string) error { return w.csvWriter()(path) }

// The writers capture what is shown now, on the event goroutine, and
// write it from any goroutine.

func (w *Window) pngWriter(legend bool, title string) func(string) error {
	s, ramp, lut := w.scene, w.ramp, w.lut
	return func(path string) error {
		if s == nil {
			return errNothing
		}
		return colormap.WritePNG(path, s.ndvi, s.in.Width, s.in.Height, colormap.PNGOptions{
			Ramp: ramp, Stretch: lut.Range(), Legend: legend, Title: title, Geo: s.red.Geo,
		})
	}
}

func (w *Window) tiffWriter() func(string) error {
	s := w.scene
	return func(path string) error {
		if s == nil {
			return errNothing
		}
		b := &compute.Band{
			Width: s.in.Width, Height: s.in.Height, Data: s.ndvi, Geo: s.red.Geo,
			NoData: math.NaN(), HasNoData: true, Source: "NDVI of " + s.label,
		}
		return raster.WriteGeoTIFF(path, b)
	}
}

func (w *Window) chartWriter(sweep bool) func(string) error {
	rs := w.results
	if sweep {
		rs = w.sweep
	}
	return func(path string) error {
		if len(rs) == 0 {
			return errNothing
		}
		return writeChartPNG(path, rs, sweep)
	}
}

func (w *Window) csvWriter() func(string) error {
	rs := append(append([]compute.BenchResult(nil), w.results...), w.sweep...)
	return func(path string) error {
		if len(rs) == 0 {
			return errNothing
		}
		return writeCSV(path, rs)
	}
}

// exportJob runs an export in the background and reports where it went.
func (w *Window) exportJob(what, path string, write func(string) error) {
	w.bridge.start("Exporting "+what, func(ctx context.Context, progress progressFunc) (func(), error) {
		progress(-1, "Writing "+filepath.Base(path)+"…")
		if err := write(path); err != nil {
			return nil, err
		}
		return func() { w.setStatus(fmt.Sprintf("Exported %s to %s", what, path), true) }, nil
	})
}

// saveDialog asks where to save, suggesting name, and calls save with the
// path chosen.
func (w *Window) saveDialog(title, name string, exts []string, save func(path string)) {
	d := dialog.NewFileSave(func(wc fyne.URIWriteCloser, err error) {
		if err != nil {
			dialog.ShowError(err, w.Win)
			return
		}
		if wc == nil {
			return
		}
		path := wc.URI().Path()
		wc.Close() // the engine writes to a temporary file and renames it
		if ext := strings.ToLower(filepath.Ext(path)); len(exts) > 0 && !contains(exts, ext) {
			path += exts[0]
		}
		save(path)
	}, w.Win)
	d.SetTitleText(title)
	d.SetFileName(name)
	if len(exts) > 0 {
		d.SetFilter(storage.NewExtensionFileFilter(exts))
	}
	d.Resize(fyne.NewSize(900, 600))
	d.Show()
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func (w *Window) exportPNGDialog() {
	if w.scene == nil {
		dialog.ShowError(errNothing, w.Win)
		return
	}
	legend := widget.NewCheck("Legend beside the map", nil)
	legend.SetChecked(true)
	title := widget.NewEntry()
	title.SetText("NDVI — " + w.scene.label)
	dialog.ShowForm("Export the map as PNG", "Choose file…", "Cancel", []*widget.FormItem{
		widget.NewFormItem("", legend),
		widget.NewFormItem("Title", title),
	}, func(ok bool) {
		if !ok {
			return
		}
		w.saveDialog("Export the map as PNG", "ndvi.png", []string{".png"}, func(path string) {
			w.exportJob("the map", path, w.pngWriter(legend.Checked, strings.TrimSpace(title.Text)))
		})
	}, w.Win)
}

func (w *Window) exportTIFFDialog() {
	if w.scene == nil {
		dialog.ShowError(errNothing, w.Win)
		return
	}
	w.saveDialog("Export NDVI as GeoTIFF", "ndvi.tif", []string{".tif", ".tiff"}, func(path string) {
		w.exportJob("the NDVI GeoTIFF", path, w.tiffWriter())
	})
}

func (w *Window) exportChartDialog(sweep bool) {
	name, what := "timings.png", "the timing chart"
	if sweep {
		name, what = "sweep.png", "the sweep chart"
	}
	if (sweep && len(w.sweep) == 0) || (!sweep && len(w.results) == 0) {
		dialog.ShowError(errNothing, w.Win)
		return
	}
	w.saveDialog("Export "+what, name, []string{".png"}, func(path string) {
		w.exportJob(what, path, w.chartWriter(sweep))
	})
}

func (w *Window) exportCSVDialog() {
	if len(w.results) == 0 && len(w.sweep) == 0 {
		dialog.ShowError(errNothing, w.Win)
		return
	}
	w.saveDialog("Export timings as CSV", "timings.csv", []string{".csv"}, func(path string) {
		w.exportJob("the timings", path, w.csvWriter())
	})
}
