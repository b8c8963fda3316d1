package ui

import (
	"context"
	"fmt"
	"image"
	"image/color"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"canopy/ui/render/colormap"
)

// colourPanel picks the ramp and the stretch and tells the window
// (onChange); the legend it owns is shown beside the map.
type colourPanel struct {
	parent   fyne.Window // its canvas scale sizes the legend
	onChange func(ramp, stretch string)
	card     fyne.CanvasObject
	Ramp     *widget.Select
	Stretch  *widget.Select
	hint     *widget.Label
	legend   *fyne.Container // the legend column beside the map
	box      *fyne.Container // the legend itself
	image    *canvas.Image
}

// Stretch choices as the user reads them, and the colormap mode of each.
var stretchChoices = []struct{ label, mode string }{
	{"Full range −1 … 1", colormap.StretchFull},
	{"Min / max of the data", colormap.StretchMinMax},
	{"Percentiles 2 – 98", colormap.StretchPercentile},
}

// Ramp choices as the user reads them.
var rampLabels = map[string]string{
	colormap.RampRdYlGn:  "Red–yellow–green",
	colormap.RampViridis: "Viridis (perceptual)",
	colormap.RampClasses: "NDVI classes",
}

func rampLabel(name string) string {
	if l, ok := rampLabels[name]; ok {
		return l
	}
	return name
}

func newColourPanel(parent fyne.Window, ramp string, onChange func(ramp, stretch string)) *colourPanel {
	p := &colourPanel{parent: parent, onChange: onChange}
	var ramps []string
	for _, r := range colormap.Ramps() {
		ramps = append(ramps, rampLabel(r))
	}
	p.Ramp = widget.NewSelect(ramps, nil)
	p.Ramp.SetSelected(rampLabel(ramp))
	p.Ramp.OnChanged = func(string) { p.changed() }
	var stretches []string
	for _, s := range stretchChoices {
		stretches = append(stretches, s.label)
	}
	p.Stretch = widget.NewSelect(stretches, nil)
	p.Stretch.SetSelected(stretchChoices[0].label)
	p.Stretch.OnChanged = func(string) { p.changed() }
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
	// The legend is drawn on white (its "no data" swatch is transparent).
	p.box = container.NewStack(canvas.NewRectangle(color.White), p.image)
	p.legend = container.NewPadded(container.NewCenter(p.box))
	return p
}

// selected returns the ramp and stretch mode chosen.
func (p *colourPanel) selected() (ramp, stretch string) {
	ramp, stretch = colormap.DefaultRamp, colormap.StretchFull
	for _, r := range colormap.Ramps() {
		if rampLabel(r) == p.Ramp.Selected {
			ramp = r
		}
	}
	for _, s := range stretchChoices {
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
	ramp, mode := p.selected()
	p.hint.SetText(colormap.Describe(ramp))
	if ramp == colormap.RampClasses {
		p.Stretch.Disable() // class bounds are absolute NDVI values
	} else {
		p.Stretch.Enable()
	}
	p.onChange(ramp, mode)
}

// recolour shows the map in ramp and the stretch named mode: at once when
// the stretch is known, else after a short job that reads it from the data.
func (w *Window) recolour(ramp, mode string) {
	s := w.scene
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
		st, err := colormap.StretchFor(mode, s.ndvi)
		if err != nil {
			return nil, err
		}
		lut, err := colormap.New(ramp, st.Lo, st.Hi)
		if err != nil {
			return nil, err
		}
		return func() {
			s.setStretch(mode, st)
			if w.scene != s {
				return
			}
			w.lut, w.ramp, w.stretch = lut, ramp, mode
			w.applyColour(true)
		}, nil
	})
}

// applyColour shows the map, the legend and the histogram in the current
// LUT.
func (w *Window) applyColour(onlyColour bool) {
	if s := w.scene; s != nil {
		if onlyColour {
			w.Map.SetLUT(w.lut)
		} else {
			w.Map.SetData(s.ndvi, s.in.Width, s.in.Height, w.lut)
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
	img := lut.Legend(float64(scale))
	p.image.Image = img
	p.image.SetMinSize(legendSize(img, scale))
	p.image.Refresh()
	p.legend.Refresh()
}

func legendSize(img image.Image, scale float32) fyne.Size {
	b := img.Bounds()
	return fyne.NewSize(float32(b.Dx())/scale, float32(b.Dy())/scale)
}

// stretchFor returns the stretch named mode if it is known for s.
func (s *scene) stretchFor(mode string) (colormap.Stretch, bool) {
	if mode == "" || mode == colormap.StretchFull {
		return colormap.Full, true
	}
	st, ok := s.stretches[mode]
	return st, ok
}

func (s *scene) setStretch(mode string, st colormap.Stretch) {
	if mode == "" || mode == colormap.StretchFull {
		return
	}
	if s.stretches == nil {
		s.stretches = map[string]colormap.Stretch{}
	}
	s.stretches[mode] = st
}

// stretchText describes the stretch of lut for the user.
func stretchText(lut *colormap.LUT) string {
	r := lut.Range()
	return fmt.Sprintf("%.3g … %.3g", r.Lo, r.Hi)
}
