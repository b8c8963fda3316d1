package chart

import (
	"errors"
	"fmt"
	"image"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"canopy/ui/render/numfmt"
)

// Minimum size of a histogram in pixels (it fits beside the map).
const (
	MinHistogramWidth  = 240
	MinHistogramHeight = 160
)

// HistogramOptions say how Histogram draws.
type HistogramOptions struct {
	// Title heads the chart ("" for none).
	Title string
	// XLabel names the values ("" is "value").
	XLabel string
	// Color gives a bin its colour from its centre value (the map's:
	// a LUT's Color); nil draws every bin in one colour.
	Color func(v float64) color.Color
	// Marks are values drawn as thin vertical lines (class thresholds).
	Marks []float64
	// LogCounts draws the counts on a log axis (a few huge bins beside
	// many small ones).
	LogCounts bool
}

// histBars draws bins as adjacent bars.
type histBars struct {
	bins   []int
	lo, hi float64
	color  func(v float64) color.Color
	log    bool
}

var histColor = color.NRGBA{0x4e, 0x79, 0xa7, 0xff}

// Plot implements plot.Plotter.
func (b histBars) Plot(c draw.Canvas, plt *plot.Plot) {
	tx, ty := plt.Transforms(&c)
	step := (b.hi - b.lo) / float64(len(b.bins))
	base := 0.0
	if b.log {
		base = plt.Y.Min
	}
	for i, n := range b.bins {
		if n <= 0 {
			continue
		}
		x0, x1 := b.lo+float64(i)*step, b.lo+float64(i+1)*step
		col := color.Color(histColor)
		if b.color != nil {
			col = b.color((x0 + x1) / 2)
		}
		c.SetColor(col)
		c.Fill(rectPath(tx(x0), ty(base), tx(x1), ty(float64(n))))
	}
}

// DataRange implements plot.DataRanger.
func (b histBars) DataRange() (xmin, xmax, ymin, ymax float64) {
	top := 1
	for _, n := range b.bins {
		top = max(top, n)
	}
	ymin = 0
	if b.log {
		ymin = 0.8
	}
	return b.lo, b.hi, ymin, float64(top)
}

// countTicker labels counts with round steps and thousands grouped, or
// with k/M suffixes when they are large (numfmt.Count and numfmt.Short).
type countTicker struct{}

// Ticks implements plot.Ticker.
func (countTicker) Ticks(lo, hi float64) []plot.Tick {
	vs, step := numfmt.Ticks(lo, hi, 4)
	step = math.Max(1, step)
	var ts []plot.Tick
	for _, v := range vs {
		if v != math.Trunc(v) || math.Mod(v, step) > 1e-9 {
			continue
		}
		label := numfmt.Count(int(v))
		if hi >= 1e5 {
			label = numfmt.Short(v)
		}
		ts = append(ts, plot.Tick{Value: v, Label: label})
	}
	return ts
}

// Histogram draws the counts of bins equal bins spanning [lo, hi] as
// adjacent bars on a w×h pixel image, with a value axis of round ticks
// (the numbers formatted as the legend and the statistics format them),
// a count axis ("pixels") and the total in the corner; bins may take the
// map's colours (opt.Color) and thresholds be marked (opt.Marks). A
// histogram with no count draws its axes and says so.
func Histogram(bins []int, lo, hi float64, w, h int, opt HistogramOptions) (image.Image, error) {
	if len(bins) == 0 {
		return nil, errors.New("histogram: no bins")
	}
	if !(hi > lo) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return nil, fmt.Errorf("histogram: range [%g, %g] must be finite with low < high", lo, hi)
	}
	for i, n := range bins {
		if n < 0 {
			return nil, fmt.Errorf("histogram: bin %d holds %d values", i+1, n)
		}
	}
	return renderMin(w, h, MinHistogramWidth, MinHistogramHeight, func(dc draw.Canvas) error {
		return drawHistogram(dc, bins, lo, hi, opt)
	})
}

func drawHistogram(dc draw.Canvas, bins []int, lo, hi float64, opt HistogramOptions) error {
	total := 0
	for _, n := range bins {
		total += n
	}
	p := plot.New()
	sans(p)
	p.Title.Text = opt.Title
	if p.Title.Text != "" {
		wrapTitle(p, dc)
	}
	p.X.Label.Text = opt.XLabel
	if p.X.Label.Text == "" {
		p.X.Label.Text = "value"
	}
	p.Y.Label.Text = "pixels"
	p.X.Tick.Marker = linearTicks{max(2, int((dc.Max.X-dc.Min.X)/vg.Points(60)))}
	p.Y.Tick.Marker = countTicker{}
	if opt.LogCounts {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = logTicks{format: func(v float64) string { return numfmt.Short(v) }}
	}
	p.X.Min, p.X.Max = lo, hi
	p.Add(plotter.NewGrid())
	bars := histBars{bins: bins, lo: lo, hi: hi, color: opt.Color, log: opt.LogCounts}
	p.Add(bars)
	top := 1.0
	for _, n := range bins {
		top = math.Max(top, float64(n))
	}
	p.Y.Max = top * 1.12
	if opt.LogCounts {
		p.Y.Min, p.Y.Max = 0.8, top*2
	}
	for _, m := range opt.Marks {
		if m <= lo || m >= hi {
			continue
		}
		l, err := plotter.NewLine(plotter.XYs{{X: m, Y: p.Y.Min}, {X: m, Y: p.Y.Max}})
		if err != nil {
			return err
		}
		l.Color, l.Width = color.Gray{0x33}, vg.Points(0.7)
		l.Dashes = []vg.Length{vg.Points(3), vg.Points(2)}
		p.Add(l)
	}
	p.Draw(dc)
	da := p.DataCanvas(dc)
	sty := p.Legend.TextStyle
	sty.Font.Size = vg.Points(8.5)
	sty.Color = color.Gray{0x33}
	if total == 0 {
		sty.XAlign, sty.YAlign = draw.XCenter, draw.YCenter
		da.FillText(sty, vg.Point{X: (da.Min.X + da.Max.X) / 2, Y: (da.Min.Y + da.Max.Y) / 2}, "no values to count")
		return nil
	}
	sty.XAlign, sty.YAlign = draw.XRight, draw.YTop
	da.FillText(sty, vg.Point{X: da.Max.X - vg.Points(3), Y: da.Max.Y - vg.Points(2)}, "n = "+numfmt.Count(total))
	return nil
}
