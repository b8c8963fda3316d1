package ui

import (
	"fmt"
	"image/color"
	"math"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"canopy/compute/source"
	"canopy/compute/stats"
	"canopy/ui/render/colormap"
)

// histBins is the number of histogram bins over the index's range.
const histBins = 100

// sceneStats are the statistics of an index plane, computed by package
// stats in the job that computed the plane.
type sceneStats struct {
	summary stats.Summary
	// hist counts the values in histBins bins over [lo, hi]: the
	// catalogue's range of the index, or a custom formula's min–max.
	hist   []int
	lo, hi float64
	// classes are the shares and areas of the index's classes (none
	// when it has no class table).
	classes   []stats.ClassShare
	areaKnown bool
}

// summarize computes s's statistics (parallel passes, no copy).
func summarize(s *shown) *sceneStats {
	if s.large != nil {
		return nil // streamed over the blocks once shown (streamStatistics)
	}
	area, ok := s.set.geo.PixelArea()
	if !ok || !(area > 0) {
		area = math.NaN()
	}
	st := &sceneStats{summary: stats.Summarize(s.plane), areaKnown: ok && area > 0}
	r, ok := s.idx.fullRange()
	if !ok {
		if r, ok = colormap.MinMax(s.plane); !ok {
			r = colormap.Full
		}
	}
	st.lo, st.hi = r.Lo, r.Hi
	st.hist = stats.Histogram(s.plane, histBins, st.lo, st.hi)
	if s.idx.classes != nil {
		st.classes = stats.ClassesOf(s.idx.classes.Compute(), s.plane, area)
	}
	return st
}

// statsPanel shows the histogram, the summary numbers and the classes.
type statsPanel struct {
	content   *container.Scroll
	column    *fyne.Container // the scrolled column
	histTitle *widget.Label
	Hist      *histogram
	Numbers   *widget.Label
	clsTitle  *widget.Label
	classes   *fyne.Container
	// Raw warns that the index is one of digital numbers.
	Raw *widget.Label
	// EditClasses shows the class editor.
	EditClasses *widget.Button
	editor      *classEditor
	// allowRaw shows class tables of digital numbers (canopy gui --raw);
	// without it they are refused, as the terminal refuses them.
	allowRaw bool
}

func newStatsPanel(onClasses func(colormap.ClassTable)) *statsPanel {
	p := &statsPanel{}
	p.editor = newClassEditor(onClasses, func() { onClasses(nil) })
	p.editor.box.Hide()
	p.EditClasses = widget.NewButton("Edit…", func() {
		if p.editor.box.Visible() {
			p.editor.box.Hide()
		} else {
			p.editor.box.Show()
		}
	})
	p.Raw = widget.NewLabel("")
	p.Raw.Wrapping = fyne.TextWrapWord
	p.Raw.Importance = widget.WarningImportance
	p.Raw.Hide()
	p.Hist = newHistogram()
	p.Numbers = widget.NewLabel("")
	p.Numbers.Wrapping = fyne.TextWrapWord
	p.classes = container.NewVBox()
	title := func(s string) *widget.Label {
		return widget.NewLabelWithStyle(s, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	}
	p.histTitle, p.clsTitle = title("Histogram"), title("NDVI classes")
	p.column = container.NewVBox(
		p.histTitle, p.Hist,
		p.Raw,
		p.Numbers,
		container.NewBorder(nil, nil, nil, p.EditClasses, p.clsTitle), p.classes, p.editor.box,
	)
	// The scroll bar is drawn over the column's right edge: keep the
	// buttons there out from under it.
	p.content = container.NewVScroll(container.New(layout.NewCustomPaddedLayout(0, 0, 0, theme.ScrollBarSize()), p.column))
	return p
}

// prepend puts o at the top of the panel's scrolled column (the identify
// panel: pins first, then the statistics).
func (p *statsPanel) prepend(o fyne.CanvasObject) {
	p.column.Objects = append([]fyne.CanvasObject{o}, p.column.Objects...)
	p.column.Refresh()
}

// show fills the panel from st, the statistics of idx (nil: empty).
func (p *statsPanel) show(st *sceneStats, idx indexChoice, raw bool) {
	p.classes.RemoveAll()
	if raw {
		p.Raw.SetText("Raw digital numbers: these bands carry no radiometry (scale, offset), so " +
			idx.title() + " is computed from digital numbers, not reflectance; its values and classes may mislead.")
		p.Raw.Show()
	} else {
		p.Raw.Hide()
	}
	p.editor.load(idx.classes)
	if idx.classes == nil {
		p.EditClasses.Hide()
	} else {
		p.EditClasses.Show()
	}
	if st == nil {
		p.Numbers.SetText("")
		p.Hist.set(nil, -1, 1)
		return
	}
	p.histTitle.SetText("Histogram of " + idx.title())
	p.Hist.set(st.hist, st.lo, st.hi)
	sm := st.summary
	p.Numbers.SetText(fmt.Sprintf("Min %.4f   Max %.4f   Mean %.4f   Std %.4f\nValid pixels %.2f %% (%s of %s)",
		sm.Min, sm.Max, sm.Mean, sm.Std, 100*sm.ValidShare, thousands(sm.Valid), thousands(sm.Total)))

	if st.classes != nil && raw && !p.allowRaw {
		p.clsTitle.Hide()
		note := widget.NewLabel(source.CheckClasses(source.DigitalNumbers, "the class table of "+idx.title(), false).Error())
		note.Wrapping = fyne.TextWrapWord
		note.Importance = widget.WarningImportance
		p.classes.Add(note)
		return
	}
	if st.classes == nil {
		p.clsTitle.Hide()
		note := widget.NewLabel(idx.title() + " has no class table.")
		note.SizeName = theme.SizeNameCaptionText
		p.classes.Add(note)
		return
	}
	p.clsTitle.SetText("Classes of " + idx.title())
	p.clsTitle.Show()
	// One row a class, narrow enough to sit beside the map: its colour and
	// name, its share on the right, its bounds and area under the name.
	for i := len(st.classes) - 1; i >= 0; i-- { // dense first, as the legend
		c := st.classes[i]
		area := "area unknown"
		if st.areaKnown && !math.IsNaN(c.Hectares) {
			area = fmt.Sprintf("%s ha", thousandsF(c.Hectares))
		}
		share := "—"
		if !math.IsNaN(c.Share) {
			share = fmt.Sprintf("%.1f %%", 100*c.Share)
		}
		name := widget.NewLabelWithStyle(c.Class.Name, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
		name.Truncation = fyne.TextTruncateEllipsis
		detail := widget.NewLabel(c.Class.Bounds() + "  ·  " + area)
		detail.SizeName = theme.SizeNameCaptionText
		detail.Truncation = fyne.TextTruncateEllipsis
		shareLabel := widget.NewLabelWithStyle(share, fyne.TextAlignTrailing, fyne.TextStyle{})
		row := container.NewBorder(nil, nil, swatch(idx.classes[c.Index].Color, 14), shareLabel,
			container.New(&tightVBox{}, name, detail))
		p.classes.Add(row)
	}
	if !st.areaKnown {
		note := widget.NewLabel("Areas need georeferenced bands (the pixel size is unknown).")
		note.SizeName = theme.SizeNameCaptionText
		p.classes.Add(note)
	}
}

// recolour paints the histogram bars in lut's colours.
func (p *statsPanel) recolour(lut *colormap.LUT) { p.Hist.setLUT(lut) }

// thousands formats n with thin spaces between thousands.
func thousands(n int) string {
	s := fmt.Sprint(n)
	out := make([]byte, 0, len(s)+len(s)/3*3)
	for i := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, "\u2009"...)
		}
		out = append(out, s[i])
	}
	return string(out)
}

func thousandsF(v float64) string {
	if v >= 100 {
		return thousands(int(math.Round(v)))
	}
	return fmt.Sprintf("%.2f", v)
}

// histogram draws bin counts over [lo, hi] as bars coloured by the LUT,
// with an axis. The counts come from stats.Histogram; it only scales them.
type histogram struct {
	widget.BaseWidget
	counts []int
	lo, hi float64
	lut    *colormap.LUT
}

func newHistogram() *histogram {
	h := &histogram{lo: -1, hi: 1}
	h.ExtendBaseWidget(h)
	return h
}

func (h *histogram) set(counts []int, lo, hi float64) {
	h.counts, h.lo, h.hi = counts, lo, hi
	h.Refresh()
}

func (h *histogram) setLUT(lut *colormap.LUT) {
	h.lut = lut
	h.Refresh()
}

// Counts returns the bins shown.
func (h *histogram) Counts() []int { return h.counts }

func (h *histogram) MinSize() fyne.Size { return fyne.NewSize(240, 150) }

func (h *histogram) CreateRenderer() fyne.WidgetRenderer {
	r := &histRenderer{h: h}
	r.axis = canvas.NewLine(theme.Color(theme.ColorNameForeground))
	r.axis.StrokeWidth = 1
	for range 5 {
		t := canvas.NewText("", theme.Color(theme.ColorNameForeground))
		t.TextSize = theme.CaptionTextSize()
		r.ticks = append(r.ticks, t)
	}
	r.rebuild()
	return r
}

// tickValue is the value of tick i of n over [lo, hi].
func (h *histogram) tickValue(i, n int) float64 {
	return h.lo + float64(i)*(h.hi-h.lo)/float64(n-1)
}

func histTick(v, step float64) string {
	if math.Abs(v) < step*1e-6 {
		return "0"
	}
	return tick(v)
}

type histRenderer struct {
	h     *histogram
	bars  []*canvas.Rectangle
	axis  *canvas.Line
	ticks []*canvas.Text
	objs  []fyne.CanvasObject
}

func (r *histRenderer) rebuild() {
	n := len(r.h.counts)
	for len(r.bars) < n {
		r.bars = append(r.bars, canvas.NewRectangle(color.Transparent))
	}
	r.bars = r.bars[:n]
	r.objs = r.objs[:0]
	for _, b := range r.bars {
		r.objs = append(r.objs, b)
	}
	r.objs = append(r.objs, r.axis)
	for _, t := range r.ticks {
		r.objs = append(r.objs, t)
	}
	r.colour()
}

func (r *histRenderer) colour() {
	n := len(r.bars)
	for i, b := range r.bars {
		c := color.Color(theme.Color(theme.ColorNamePrimary))
		if r.h.lut != nil {
			v := r.h.lo + (float64(i)+0.5)*(r.h.hi-r.h.lo)/float64(n)
			c = r.h.lut.Color(float32(v))
		}
		b.FillColor = c
	}
}

func (r *histRenderer) Layout(s fyne.Size) {
	tickH := theme.CaptionTextSize() + 4
	plotH := s.Height - tickH
	top := 0
	for _, c := range r.h.counts {
		top = max(top, c)
	}
	n := len(r.bars)
	if n > 0 {
		bw := s.Width / float32(n)
		for i, b := range r.bars {
			hgt := float32(0)
			if top > 0 {
				hgt = plotH * float32(r.h.counts[i]) / float32(top)
			}
			b.Move(fyne.NewPos(float32(i)*bw, plotH-hgt))
			b.Resize(fyne.NewSize(fyne.Max(bw-0.5, 0.5), hgt))
		}
	}
	r.axis.Position1 = fyne.NewPos(0, plotH)
	r.axis.Position2 = fyne.NewPos(s.Width, plotH)
	for i, t := range r.ticks {
		v := r.h.tickValue(i, len(r.ticks))
		t.Text = histTick(v, (r.h.hi-r.h.lo)/float64(len(r.ticks)-1))
		ts := t.MinSize()
		x := float32((v-r.h.lo)/(r.h.hi-r.h.lo)) * s.Width
		x = fyne.Min(fyne.Max(x-ts.Width/2, 0), s.Width-ts.Width)
		t.Move(fyne.NewPos(x, plotH+2))
		t.Resize(ts)
	}
}

func (r *histRenderer) MinSize() fyne.Size { return r.h.MinSize() }
func (r *histRenderer) Objects() []fyne.CanvasObject {
	return r.objs
}
func (r *histRenderer) Destroy() {}
func (r *histRenderer) Refresh() {
	if len(r.bars) != len(r.h.counts) {
		r.rebuild()
	} else {
		r.colour()
	}
	for _, t := range r.ticks {
		t.Color = theme.Color(theme.ColorNameForeground)
	}
	r.axis.StrokeColor = theme.Color(theme.ColorNameForeground)
	r.Layout(r.h.Size())
	for _, o := range r.objs {
		o.Refresh()
	}
}

// tightVBox stacks objects with no padding between them (a name and its
// caption).
type tightVBox struct{}

func (tightVBox) Layout(objs []fyne.CanvasObject, size fyne.Size) {
	y := float32(0)
	for _, o := range objs {
		h := o.MinSize().Height * 0.8
		o.Move(fyne.NewPos(0, y))
		o.Resize(fyne.NewSize(size.Width, h))
		y += h
	}
}

func (tightVBox) MinSize(objs []fyne.CanvasObject) fyne.Size {
	var s fyne.Size
	for _, o := range objs {
		m := o.MinSize()
		s.Width = max(s.Width, m.Width)
		s.Height += m.Height * 0.8
	}
	return s
}
