package ui

import (
	"fmt"
	"image"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"canopy/ui/render/layout"
)

// printPanel is File › Print layout…: the map shown laid out on a page by
// the terminal's layout engine (ui/render/layout, as `canopy compute
// --layout` draws it): paper and orientation (or a size in pixels),
// resolution, title, legend, scale bar, north arrow, coordinate grid, and
// the CRS, date and source in the footer, written as PNG, PDF or SVG. The
// preview is the layout itself, drawn smaller.
type printPanel struct {
	w *window

	Paper, Orientation, Format *widget.Select
	DPI, Title, Date, Source   *widget.Entry
	Legend, ScaleBar, North    *widget.Check
	Grid                       *widget.Check
	// Info says the page's size, or what is wrong with the options.
	Info *widget.Label
	// Preview shows the layout.
	Preview *canvas.Image

	content fyne.CanvasObject
	gen     int // the preview asked for last
}

// Paper choices: a size in pixels, or a paper size.
const paperPixels = "1600 × 1200 pixels"

// print formats as the dialog offers them.
var printFormats = []string{"PDF", "PNG", "SVG"}

func newPrintPanel(w *window) *printPanel {
	p := &printPanel{w: w}
	papers := append([]string{paperPixels}, layout.PaperSizes()...)
	for i, s := range papers[1:] {
		papers[i+1] = strings.ToUpper(s[:1]) + s[1:]
	}
	change := func(string) { p.preview() }
	p.Paper = widget.NewSelect(papers, change)
	p.Orientation = widget.NewSelect([]string{"As the map", "Portrait", "Landscape"}, change)
	p.Format = widget.NewSelect(printFormats, nil)
	p.DPI = widget.NewEntry()
	p.DPI.Validator = func(s string) error { _, err := p.dpi(s); return err }
	p.Title, p.Date, p.Source = widget.NewEntry(), widget.NewEntry(), widget.NewEntry()
	for _, e := range []*widget.Entry{p.DPI, p.Title, p.Date, p.Source} {
		e.OnChanged = change
	}
	check := func(label string) *widget.Check {
		c := widget.NewCheck(label, func(bool) { p.preview() })
		c.SetChecked(true)
		return c
	}
	p.Legend, p.ScaleBar, p.North, p.Grid = check("Legend"), check("Scale bar"), check("North arrow"), check("Coordinate grid")
	p.Info = widget.NewLabel("")
	p.Info.Wrapping = fyne.TextWrapWord
	p.Preview = canvas.NewImageFromImage(nil)
	p.Preview.FillMode = canvas.ImageFillContain
	p.Preview.SetMinSize(fyne.NewSize(420, 420))

	p.fill()
	form := widget.NewForm(
		widget.NewFormItem("Paper", p.Paper),
		widget.NewFormItem("Orientation", p.Orientation),
		widget.NewFormItem("Resolution (DPI)", p.DPI),
		widget.NewFormItem("Title", p.Title),
		widget.NewFormItem("Date", p.Date),
		widget.NewFormItem("Source", p.Source),
		widget.NewFormItem("", container.NewGridWithColumns(2, p.Legend, p.ScaleBar, p.North, p.Grid)),
		widget.NewFormItem("Format", p.Format),
	)
	crsName := w.crs.label
	if crsName == "" {
		crsName = "none known"
	}
	crs := widget.NewLabel("The footer gives the map's CRS (" + crsName + "), the date and the source.")
	crs.Wrapping = fyne.TextWrapWord
	left := container.NewVBox(form, crs, p.Info)
	split := container.NewHSplit(container.NewVScroll(left), p.Preview)
	split.Offset = 0.45
	p.content = split
	return p
}

// fill sets the choices from the map shown: its header as the title, the
// product's date and its source.
func (p *printPanel) fill() {
	w := p.w
	p.Paper.SetSelected("A4")
	p.Orientation.SetSelected("As the map")
	p.Format.SetSelected("PDF")
	p.DPI.SetText("150")
	p.Title.SetText(w.SceneLabel.Text)
	if s := w.shown; s != nil {
		p.Source.SetText(s.label)
		if s.src.kind == srcProduct && s.src.info != nil && !s.src.info.Date.IsZero() {
			p.Date.SetText(s.src.info.Date.UTC().Format("2006-01-02"))
		}
	}
	p.Grid.SetChecked(false)
}

// dpi reads a resolution.
func (p *printPanel) dpi(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || v < layout.MinDPI || v > layout.MaxDPI {
		return 0, fmt.Errorf("the resolution is %d to %d DPI", layout.MinDPI, layout.MaxDPI)
	}
	return v, nil
}

// options are the layout asked for.
func (p *printPanel) options() (layout.Options, error) {
	var o layout.Options
	dpi, err := p.dpi(p.DPI.Text)
	if err != nil {
		return o, err
	}
	o.DPI = dpi
	if p.Paper.Selected != paperPixels {
		o.Paper = strings.ToLower(p.Paper.Selected)
	} else {
		o.Width, o.Height = 1600, 1200
	}
	switch p.Orientation.Selected {
	case "Portrait":
		o.Orientation = "portrait"
	case "Landscape":
		o.Orientation = "landscape"
	}
	o.Title = strings.TrimSpace(p.Title.Text)
	o.Date, o.Source = strings.TrimSpace(p.Date.Text), strings.TrimSpace(p.Source.Text)
	o.NoLegend, o.NoScaleBar, o.NoNorthArrow = !p.Legend.Checked, !p.ScaleBar.Checked, !p.North.Checked
	o.Grid = p.Grid.Checked
	return o, nil
}

// previewSide is the longest side of the preview, in pixels.
const previewSide = 900

// preview draws the layout again, smaller, beside the form (in the
// background: a large map takes a moment), and says the page's size.
func (p *printPanel) preview() {
	if p.Preview == nil || p.Info == nil {
		return // still being built
	}
	o, err := p.options()
	m, ok := p.w.layoutMap()
	if err == nil && !ok {
		err = errNothing
	}
	var pw, ph int
	if err == nil {
		pw, ph, o.DPI, err = o.PageSize(m.Width, m.Height)
	}
	if err != nil {
		p.Info.SetText(firstLine(err.Error()))
		p.Info.Importance = widget.DangerImportance
		p.Info.Refresh()
		return
	}
	p.Info.SetText(fmt.Sprintf("The page: %d × %d pixels at %g DPI.", pw, ph, o.DPI))
	p.Info.Importance = widget.MediumImportance
	p.Info.Refresh()
	// The same page at a lower resolution: what is drawn scales with it.
	if f := float64(previewSide) / float64(max(pw, ph)); f < 1 {
		if o.Paper != "" {
			o.DPI = max(o.DPI*f, layout.MinDPI)
		} else {
			o.DPI *= f
			o.Width, o.Height = max(int(float64(o.Width)*f), layout.MinPixels), max(int(float64(o.Height)*f), layout.MinPixels)
		}
	}
	p.gen++
	gen, s := p.gen, p.w.shown
	p.w.bridge.side("Preview", func() (func(), error) {
		m, err := withPlane(m, s)
		var img image.Image
		if err == nil {
			img, _, err = layout.Render(m, o)
		}
		return func() {
			if gen != p.gen {
				return // a newer preview is coming
			}
			if err != nil {
				p.Info.SetText(firstLine(err.Error()))
				p.Info.Importance = widget.DangerImportance
				p.Info.Refresh()
				return
			}
			p.Preview.Image = img
			p.Preview.Refresh()
		}, nil
	})
}

// ext is the file extension of the format chosen.
func (p *printPanel) ext() string { return "." + strings.ToLower(p.Format.Selected) }

// writer returns what writes the layout to a path (the format is the
// path's extension), or what is wrong with the options.
func (p *printPanel) writer() (func(string) (layout.Geometry, error), error) {
	o, err := p.options()
	if err != nil {
		return nil, err
	}
	return p.w.layoutWriter(o), nil
}

// printLayoutDialog shows File › Print layout….
func (w *window) printLayoutDialog() {
	if _, ok := w.layoutMap(); !ok {
		if w.shown != nil && w.shown.large != nil {
			dialog.ShowError(errLarge("print layouts"), w.Win)
		} else {
			dialog.ShowError(errNothing, w.Win)
		}
		return
	}
	p := newPrintPanel(w)
	w.printer = p
	d := dialog.NewCustomConfirm("Print layout", "Save…", "Cancel", p.content, func(ok bool) {
		if !ok {
			return
		}
		write, err := p.writer()
		if err != nil {
			w.showError(err)
			return
		}
		name := fileName(w.shown.idx) + "-layout"
		w.saveDialog("Save the print layout", name+p.ext(), []string{p.ext()}, func(path string) {
			w.exportJob("the print layout", path, func(path string) error { _, err := write(path); return err })
		})
	}, w.Win)
	d.Resize(fyne.NewSize(1100, 720))
	d.Show()
	p.preview()
}

// pngForm is the form of File › Export map as PNG…: by default the map
// alone, georeferenced (layout.WriteMapPNG: one PNG pixel a raster pixel,
// with its world file, .prj and .aux.xml); a title or a legend makes it a
// layout (layout.Write), which its note says.
type pngForm struct {
	Legend *widget.Check
	Title  *widget.Entry
	Note   *widget.Label
}

// Notes of the PNG form.
const (
	pngMapNote    = "The map alone, one PNG pixel a raster pixel, with a world file (.pgw), .prj and .aux.xml that place it in a GIS. A title or a legend makes it a page layout instead."
	pngLayoutNote = "With a title or a legend this PNG is a page layout (1600 × 1200 pixels, not georeferenced). File › Print layout… sets its paper, scale bar and the rest; clear both for the georeferenced map alone."
)

func newPNGForm() *pngForm {
	f := &pngForm{Legend: widget.NewCheck("Legend beside the map", nil), Title: widget.NewEntry(), Note: widget.NewLabel(pngMapNote)}
	f.Note.Wrapping = fyne.TextWrapWord
	f.Title.SetPlaceHolder("none: the map alone")
	f.Legend.OnChanged = func(bool) { f.update() }
	f.Title.OnChanged = func(string) { f.update() }
	return f
}

// layout reports whether the PNG asked for is a layout.
func (f *pngForm) layout() bool { return f.Legend.Checked || strings.TrimSpace(f.Title.Text) != "" }

func (f *pngForm) update() {
	if f.layout() {
		f.Note.SetText(pngLayoutNote)
	} else {
		f.Note.SetText(pngMapNote)
	}
}
