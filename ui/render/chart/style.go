package chart

import (
	"image/color"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"canopy/ui/render/numfmt"
)

// seriesPalette gives colours to the series a backend's own colour is
// already taken for (a second mode of gl, a third of cuda): distinct from
// the backend colours and from each other.
var seriesPalette = []color.NRGBA{
	{0xd6, 0x27, 0x28, 0xff}, {0x8c, 0x56, 0x4b, 0xff}, {0xe3, 0x77, 0xc2, 0xff}, {0x17, 0xbe, 0xcf, 0xff},
	{0xbc, 0xbd, 0x22, 0xff}, {0x39, 0x3b, 0x79, 0xff}, {0x84, 0x3c, 0x39, 0xff}, {0x63, 0x79, 0x39, 0xff},
	{0xad, 0x49, 0x4a, 0xff}, {0x6b, 0x6e, 0xcf, 0xff}, {0xe7, 0xba, 0x52, 0xff}, {0x7b, 0x41, 0x73, 0xff},
}

// glyphs are the markers series take in turn, solid (kernel) and hollow
// (with transfers).
var (
	solidGlyphs  = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.BoxGlyph{}, draw.TriangleGlyph{}, draw.PyramidGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{}}
	hollowGlyphs = []draw.GlyphDrawer{draw.RingGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.PyramidGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{}}
)

// seriesStyle is the colour and markers of one series label.
type seriesStyle struct {
	color         color.NRGBA
	solid, hollow draw.GlyphDrawer
}

// SeriesColors returns the colour of each series label (backend or
// backend:mode) as the sweep charts draw them: the first label of a
// backend takes BackendColor, every further one a colour no other label
// has, so that no two series share a colour.
func SeriesColors(labels []string) map[string]color.NRGBA {
	out := map[string]color.NRGBA{}
	used := map[color.NRGBA]bool{}
	for _, l := range labels {
		if _, seen := out[l]; seen {
			continue
		}
		c := BackendColor(l)
		if used[c] {
			for _, p := range seriesPalette {
				if !used[p] {
					c = p
					break
				}
			}
			if used[c] { // more series than colours: darken
				c = color.NRGBA{c.R / 2, c.G / 2, c.B / 2, 0xff}
			}
		}
		used[c] = true
		out[l] = c
	}
	return out
}

// styles assigns colours and markers to the series labels in order.
func styles(labels []string) map[string]seriesStyle {
	cols := SeriesColors(labels)
	out := map[string]seriesStyle{}
	for i, l := range labels {
		out[l] = seriesStyle{color: cols[l], solid: solidGlyphs[i%len(solidGlyphs)], hollow: hollowGlyphs[i%len(hollowGlyphs)]}
	}
	return out
}

// wrapText breaks s at spaces into lines no wider than w when drawn in
// sty (a word wider than w keeps its own line: nothing is cut).
func wrapText(s string, sty text.Style, w vg.Length) string {
	var out []string
	for _, para := range strings.Split(s, "\n") {
		line := ""
		for _, word := range strings.Fields(para) {
			try := word
			if line != "" {
				try = line + " " + word
			}
			if line != "" && sty.Width(try) > w {
				out = append(out, line)
				line = word
				continue
			}
			line = try
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// legendItem is one entry of a legend drawn outside the data.
type legendItem struct {
	name   string
	thumbs []plot.Thumbnailer
}

// legendStyle is the legends' look.
func legendStyle() plot.Legend {
	l := plot.NewLegend()
	l.TextStyle.Font.Typeface, l.TextStyle.Font.Variant = "Liberation", "Sans"
	l.TextStyle.Font.Size = vg.Points(9)
	l.ThumbnailWidth = vg.Points(24)
	l.Top, l.Left = true, true
	return l
}

// outsideLegend splits dc into the plot's area and a legend beside it
// (right, when the legend's column takes at most 30% of the width) or
// under it (in as many columns as fit), draws the legend and returns the
// plot's area.
func outsideLegend(dc draw.Canvas, items []legendItem) draw.Canvas {
	if len(items) == 0 {
		return dc
	}
	proto := legendStyle()
	em := proto.TextStyle.Width(" ")
	colW := vg.Length(0)
	for _, it := range items {
		colW = max(colW, proto.ThumbnailWidth+em+proto.TextStyle.Width(it.name))
	}
	colW += em * 2
	entryH := proto.TextStyle.Height("Mg") * 1.15
	width := dc.Max.X - dc.Min.X
	pad := vg.Points(6)
	if colW <= width*0.3 {
		area := dc
		area.Max.X -= colW + pad
		leg := dc
		leg.Min.X = area.Max.X + pad
		leg.Max.Y -= vg.Points(24) // below the title line
		drawLegendColumn(leg, items)
		return area
	}
	cols := max(1, int((width-pad)/colW))
	rows := (len(items) + cols - 1) / cols
	h := vg.Length(rows)*entryH + pad
	area := dc
	area.Min.Y += h
	for c := range cols {
		lo, hi := c*rows, min(len(items), (c+1)*rows)
		if lo >= hi {
			break
		}
		leg := dc
		leg.Min.X = dc.Min.X + pad + vg.Length(c)*colW
		leg.Max.X = leg.Min.X + colW
		leg.Max.Y = dc.Min.Y + h - pad/2
		drawLegendColumn(leg, items[lo:hi])
	}
	return area
}

func drawLegendColumn(c draw.Canvas, items []legendItem) {
	l := legendStyle()
	for _, it := range items {
		l.Add(it.name, it.thumbs...)
	}
	l.Draw(c)
}

// addSeries adds the kernel line of a series and, when it has them, its
// times with transfers (dashed, hollow markers) to p, with their legend
// items.
func addSeries(p *plot.Plot, items *[]legendItem, name string, gpu bool, st seriesStyle, kernel, total plotter.XYs) error {
	l, pts, err := plotter.NewLinePoints(kernel)
	if err != nil {
		return err
	}
	l.Color, l.Width = st.color, vg.Points(1.5)
	pts.Color, pts.Shape, pts.Radius = st.color, st.solid, vg.Points(2.8)
	p.Add(l, pts)
	label := name
	if gpu {
		label = name + " kernel"
	}
	*items = append(*items, legendItem{label, []plot.Thumbnailer{l, pts}})
	if len(total) == 0 {
		return nil
	}
	lt, ptt, err := plotter.NewLinePoints(total)
	if err != nil {
		return err
	}
	lt.Color, lt.Width = st.color, vg.Points(1.5)
	lt.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
	ptt.Color, ptt.Shape, ptt.Radius = st.color, st.hollow, vg.Points(2.8)
	p.Add(lt, ptt)
	*items = append(*items, legendItem{name + " with transfers", []plot.Thumbnailer{lt, ptt}})
	return nil
}

// wrapTitle wraps p's title to the width of dc.
func wrapTitle(p *plot.Plot, dc draw.Canvas) {
	p.Title.Text = wrapText(p.Title.Text, p.Title.TextStyle, (dc.Max.X-dc.Min.X)*0.96)
}

// drawEmpty draws the axes of a chart with no data and a message in the
// middle, so that the chart's place never goes blank.
func drawEmpty(dc draw.Canvas, title, xLabel, yLabel, message string, logX bool) {
	p := plot.New()
	sans(p)
	p.Title.Text = title
	wrapTitle(p, dc)
	p.X.Label.Text, p.Y.Label.Text = xLabel, yLabel
	if logX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = logTicks{format: fmtPixels}
		p.X.Min, p.X.Max = 1e4, 1e8
	} else {
		p.X.Tick.Marker = countTicks{}
		p.X.Min, p.X.Max = 0.7, 10.3
	}
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = logTicks{format: func(v float64) string { return numfmt.Tick(v, v) }}
	p.Y.Min, p.Y.Max = 0.01, 1000
	p.Add(plotter.NewGrid())
	p.Draw(dc)
	da := p.DataCanvas(dc)
	sty := p.Legend.TextStyle
	sty.Font.Size = vg.Points(11)
	sty.Color = color.Gray{0x44}
	sty.XAlign, sty.YAlign = draw.XCenter, draw.YCenter
	msg := wrapText(message, sty, (da.Max.X-da.Min.X)*0.85)
	da.FillText(sty, vg.Point{X: (da.Min.X + da.Max.X) / 2, Y: (da.Min.Y + da.Max.Y) / 2}, msg)
}

// crossMarks keeps the rotated crossover labels of a chart apart: a label
// closer than its own height to one already drawn is not drawn, and the
// crossover goes into its series' legend entry instead.
type crossMarks struct {
	minGap float64 // in axis units
	at     []float64
}

// newMarks spaces labels on an axis spanning span units drawn about 70%
// as wide as dc.
func newMarks(span float64, dc draw.Canvas) *crossMarks {
	w := float64((dc.Max.X - dc.Min.X) * 0.7)
	return &crossMarks{minGap: span * float64(vg.Points(11)) / math.Max(w, 1)}
}

// taken reports whether a label at x would touch one drawn; if so the
// text is added to the last legend item (the series' with-transfers
// line) and true returned, else x is booked.
func (m *crossMarks) taken(x float64, items *[]legendItem, text string) bool {
	for _, a := range m.at {
		if math.Abs(a-x) < m.minGap {
			if n := len(*items); n > 0 {
				(*items)[n-1].name += " (" + text + ")"
			}
			return true
		}
	}
	m.at = append(m.at, x)
	return false
}
