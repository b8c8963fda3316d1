package ui

import (
	"context"
	"fmt"
	"image"
	"image/color"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"canopy/ui/render/colormap"
)

// colourPanel picks the ramp and the stretch for the index and tells the
// window (onChange); the legend it owns is shown beside the map. The
// choices follow the index (setIndex): the full stretch is the
// catalogue's range of the index (a custom formula has none: min–max),
// and the NDVI classes are offered for NDVI alone.
type colourPanel struct {
	parent   fyne.Window // its canvas scale sizes the legend
	onChange func(ramp, stretch string)
	card     fyne.CanvasObject
	Ramp     *widget.Select
	Stretch  *widget.Select
	hint     *widget.Label
	legend   *fyne.Container   // the legend column beside the map
	box      *fyne.Container   // the legend itself
	maskRow  fyne.CanvasObject // the masked pattern's row under it
	image    *canvas.Image

	ramps    []string      // ramp names offered, in Ramp's order
	stretchs []stretchItem // stretches offered, in Stretch's order
	quiet    bool
}

// stretchItem is a stretch as the user reads it, and its colormap mode.
type stretchItem struct{ label, mode string }

// Stretch labels of the data's stretches.
const (
	labelMinMax     = "Min / max of the data"
	labelPercentile = "Percentiles 2 – 98"
)

// stretchItems are the stretches offered for idx: its range (catalogue
// indices), min–max and percentiles.
func stretchItems(idx indexChoice) []stretchItem {
	var out []stretchItem
	if r, ok := idx.fullRange(); ok {
		out = append(out, stretchItem{fmt.Sprintf("Index range %s … %s", tick(r.Lo), tick(r.Hi)), colormap.StretchFull})
	}
	return append(out, stretchItem{labelMinMax, colormap.StretchMinMax}, stretchItem{labelPercentile, colormap.StretchPercentile})
}

// Ramp choices as the user reads them.
var rampLabels = map[string]string{
	colormap.RampRdYlGn:  "Red–yellow–green",
	colormap.RampViridis: "Viridis (perceptual)",
	colormap.RampClasses: "Classes (editable)",
	colormap.RampChange:  "Blue–white–red (change)",
}

func rampLabel(name string) string {
	if l, ok := rampLabels[name]; ok {
		return l
	}
	return name
}

func newColourPanel(parent fyne.Window, ramp string, onChange func(ramp, stretch string)) *colourPanel {
	p := &colourPanel{parent: parent, onChange: onChange}
	p.Ramp = widget.NewSelect(nil, func(string) { p.changed() })
	p.Stretch = widget.NewSelect(nil, func(string) { p.changed() })
	p.hint = widget.NewLabel(colormap.Describe(ramp))
	p.hint.Wrapping = fyne.TextWrapWord
	p.hint.SizeName = theme.SizeNameCaptionText
	p.card = section("Colour", container.NewVBox(
		widget.NewForm(widget.NewFormItem("Ramp", p.Ramp), widget.NewFormItem("Stretch", p.Stretch)),
		p.hint,
	))
	p.image = canvas.NewImageFromImage(nil)
	p.image.FillMode = canvas.ImageFillContain
	p.image.ScaleMode = canvas.ImageScaleSmooth
	// The legend is drawn on white; its "no data" swatch shows the map's
	// no-data pattern, and a row under it the masked pattern when the map
	// draws a mask.
	p.box = container.NewStack(canvas.NewRectangle(color.White), p.image)
	p.maskRow = patternRow(maskedSwatch(), maskedText)
	p.maskRow.Hide()
	p.legend = container.NewPadded(container.NewCenter(container.NewVBox(p.box, p.maskRow)))
	p.setIndex(ndviChoice)
	p.quiet = true
	p.SetRamp(ramp)
	p.quiet = false
	return p
}

// setIndex offers the ramps and stretches of idx, keeping the choices
// that still apply, without telling the window.
func (p *colourPanel) setIndex(idx indexChoice) {
	ramp, mode := p.selected()
	p.quiet = true
	defer func() { p.quiet = false }()
	p.ramps = nil
	var rl []string
	for _, r := range colormap.Ramps() {
		if r == colormap.RampClasses && idx.classes == nil {
			continue // the index has no class table
		}
		p.ramps = append(p.ramps, r)
		rl = append(rl, rampLabel(r))
	}
	p.Ramp.SetOptions(rl)
	if !contains(p.ramps, ramp) {
		ramp = colormap.DefaultRamp
	}
	p.Ramp.SetSelected(rampLabel(ramp))
	p.stretchs = stretchItems(idx)
	var sl []string
	sel := p.stretchs[0].label
	for _, s := range p.stretchs {
		sl = append(sl, s.label)
		if s.mode == mode {
			sel = s.label
		}
	}
	p.Stretch.SetOptions(sl)
	p.Stretch.SetSelected(sel)
	p.enableStretch(ramp)
}

// selected returns the ramp and stretch mode chosen.
func (p *colourPanel) selected() (ramp, stretch string) {
	ramp, stretch = colormap.DefaultRamp, colormap.StretchFull
	for _, r := range p.ramps {
		if rampLabel(r) == p.Ramp.Selected {
			ramp = r
		}
	}
	for _, s := range p.stretchs {
		if s.label == p.Stretch.Selected {
			stretch = s.mode
		}
	}
	return ramp, stretch
}

// SetRamp chooses a ramp by name (rdylgn, viridis, classes).
func (p *colourPanel) SetRamp(name string) { p.Ramp.SetSelected(rampLabel(name)) }

// changed shows the ramp's description and asks the window to recolour.
func (p *colourPanel) changed() {
	if p.quiet {
		return
	}
	ramp, mode := p.selected()
	p.hint.SetText(colormap.Describe(ramp))
	p.enableStretch(ramp)
	p.onChange(ramp, mode)
}

func (p *colourPanel) enableStretch(ramp string) {
	if ramp == colormap.RampClasses {
		p.Stretch.Disable() // class bounds are absolute NDVI values
	} else {
		p.Stretch.Enable()
	}
}

// recolour shows the map in ramp and the stretch named mode: at once when
// the stretch is known, else after a short job that reads it from the data.
func (w *window) recolour(ramp, mode string) {
	s := w.shown
	if s == nil {
		if lut, err := colormap.New(ramp, -1, 1); err == nil {
			w.lut, w.ramp, w.stretch = lut, ramp, mode
			w.applyColour(false)
		}
		return
	}
	if _, ok := s.stretchFor(mode); ok || ramp == colormap.RampClasses {
		lut, _, err := makeLUT(ramp, mode, s)
		if err != nil {
			w.setStatus(err.Error(), false)
			return
		}
		w.lut, w.ramp, w.stretch = lut, ramp, mode
		w.applyColour(true)
		return
	}
	w.bridge.start("Stretching", func(ctx context.Context, progress progressFunc) (func(), error) {
		progress(-1, "Reading the "+strings.ToLower(mode)+" stretch from the data…")
		st, err := colormap.StretchFor(dataMode(s.idx, mode), s.dataPlane())
		if err != nil {
			return nil, err
		}
		lut, err := newLUT(ramp, st, s.idx)
		if err != nil {
			return nil, err
		}
		return func() {
			s.setStretch(mode, st)
			if w.shown != s {
				return
			}
			w.lut, w.ramp, w.stretch = lut, ramp, mode
			w.applyColour(true)
		}, nil
	})
}

// applyColour shows the map, the legend and the histogram in the current
// LUT.
func (w *window) applyColour(onlyColour bool) {
	defer w.showHeader()
	defer w.showMask()
	if w.applyTwoView(onlyColour) {
		return // two dates: the view chosen (ui/twodate.go)
	}
	if s := w.shown; s != nil {
		if onlyColour {
			w.Map.SetLUT(w.lut)
		} else {
			var render func(*image.NRGBA, *colormap.LUT, float64, float64, float64) bool
			plane := s.plane
			switch {
			case s.large != nil:
				render, plane = s.large.render, largeMapPlane
			case s.card != nil:
				render = s.card.render
			}
			w.Map.SetRenderer(render)
			w.Map.SetData(plane, s.w, s.h, w.lut)
		}
		w.stats.recolour(w.lut)
	}
	w.colour.showLegend(w.lut)
}

// showLegend draws lut's legend at the screen's density.
func (p *colourPanel) showLegend(lut *colormap.LUT) {
	if lut == nil {
		return
	}
	scale := float32(1)
	if c := p.parent.Canvas(); c != nil && c.Scale() > 0 {
		scale = c.Scale()
	}
	img := withNoDataPattern(lut.Legend(float64(scale)))
	p.image.Image = img
	p.image.SetMinSize(legendSize(img, scale))
	p.image.Refresh()
	p.legend.Refresh()
}

func legendSize(img image.Image, scale float32) fyne.Size {
	b := img.Bounds()
	return fyne.NewSize(float32(b.Dx())/scale, float32(b.Dy())/scale)
}

// stretchFor returns the stretch named mode if it is known for s: "full"
// is the catalogue's range of the index; the data's stretches once read.
func (s *shown) stretchFor(mode string) (colormap.Stretch, bool) {
	if mode == "" || mode == colormap.StretchFull {
		if r, ok := s.idx.fullRange(); ok {
			return r, true
		}
		mode = colormap.StretchMinMax
	}
	st, ok := s.stretches[mode]
	return st, ok
}

func (s *shown) setStretch(mode string, st colormap.Stretch) {
	if _, ok := s.idx.fullRange(); ok && (mode == "" || mode == colormap.StretchFull) {
		return
	}
	if mode == "" || mode == colormap.StretchFull {
		mode = colormap.StretchMinMax
	}
	if s.stretches == nil {
		s.stretches = map[string]colormap.Stretch{}
	}
	s.stretches[mode] = st
}

// tick formats a range end as the legend does ("−1", "0.5").
func tick(v float64) string {
	s := strconv.FormatFloat(v, 'g', 3, 64)
	return strings.Replace(s, "-", "−", 1)
}
