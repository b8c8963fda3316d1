package chart

import (
	"errors"
	"fmt"
	"image"
	"image/color"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"canopy/compute"
	"canopy/ui/render/numfmt"
)

// Timings draws one horizontal bar per result, top to bottom in the given
// order, on a w×h pixel image: median upload, kernel and download stacked
// (ms), each bar labelled with the kernel-only time, the time with
// transfers (GPU backends) and the kernel's percentage of the ceiling, a
// whisker from the fastest to the slowest end-to-end run, and the one-time
// set-up in a panel of its own on the right. A result with an error keeps
// its row, labelled with the error. One slow run does not set the scale:
// a bar beyond the upper quartile plus three interquartile ranges is cut,
// marked with a break and labelled with its time; labels wrap rather than
// being cut; a kernel faster than the memory ceiling is said to have run
// from cache rather than at more than 100% of it.
func Timings(results []compute.BenchResult, w, h int) (image.Image, error) {
	return render(w, h, func(dc draw.Canvas) error { return drawTimings(dc, results) })
}

// finite returns v, or 0 if it is not a finite non-negative number.
func finite(v float64) float64 {
	if v > 0 && !math.IsInf(v, 0) {
		return v
	}
	return 0
}

// rowLabel is the y tick label of a result: "backend:mode\ndevice", the
// device wrapped to lines no wider than w (nothing is cut).
func rowLabel(r compute.BenchResult, sty text.Style, w vg.Length) string {
	if d := ShortDevice(r.Device); d != "" {
		return label(r) + "\n" + wrapText(d, sty, w)
	}
	return label(r)
}

// robustCap returns the end beyond which a bar is an outlier that would
// squash every other bar into a sliver: the upper quartile plus three
// times the interquartile range of the positive ends, and 0 when there
// are fewer than four of them or none lies beyond.
func robustCap(ends []float64) float64 {
	var v []float64
	for _, e := range ends {
		if e > 0 {
			v = append(v, e)
		}
	}
	if len(v) < 4 {
		return 0
	}
	slices.Sort(v)
	q := func(p float64) float64 {
		f := p * float64(len(v)-1)
		i := int(f)
		if i+1 >= len(v) {
			return v[len(v)-1]
		}
		return v[i] + (f-float64(i))*(v[i+1]-v[i])
	}
	q1, q3 := q(0.25), q(0.75)
	c := q3 + 3*(q3-q1)
	if v[len(v)-1] <= c {
		return 0
	}
	return c
}

// breakMarks draws a white double slash across each clipped bar at x,
// the sign that the bar goes on beyond the axis.
type breakMarks struct {
	rows  []float64 // y of each clipped row
	x     float64
	thick vg.Length
}

// Plot implements plot.Plotter.
func (b breakMarks) Plot(c draw.Canvas, plt *plot.Plot) {
	tx, ty := plt.Transforms(&c)
	c.SetColor(color.White)
	c.SetLineWidth(vg.Points(1.6))
	c.SetLineDash(nil, 0)
	for _, y := range b.rows {
		x0, y0 := tx(b.x), ty(y)
		for _, dx := range []vg.Length{-vg.Points(7), -vg.Points(3)} {
			var p vg.Path
			p.Move(vg.Point{X: x0 + dx - vg.Points(2), Y: y0 - b.thick*0.65})
			p.Line(vg.Point{X: x0 + dx + vg.Points(2), Y: y0 + b.thick*0.65})
			c.Stroke(p)
		}
	}
}

// valueLabel is the text at the end of a result's bar.
func valueLabel(r compute.BenchResult) string {
	if r.Error != "" && r.TotalMS == 0 && r.KernelMS == 0 {
		msg := r.Error
		if rs := []rune(msg); len(rs) > 60 {
			msg = string(rs[:59]) + "…"
		}
		return "error: " + msg
	}
	var parts []string
	if r.GPU {
		parts = append(parts, "kernel "+FormatMS(r.KernelMS), "with transfers "+FormatMS(r.TotalMS))
	} else {
		parts = append(parts, FormatMS(r.KernelMS))
	}
	if r.CeilingGBps > 0 {
		kind := r.CeilingKind
		if kind == "" {
			kind = "ceiling"
		}
		if r.KernelPct > 100 {
			// Faster than a copy through memory: the bands were in cache.
			parts = append(parts, fmt.Sprintf("above the memory ceiling (%s): the data fit in cache", kind))
		} else {
			parts = append(parts, numfmt.Fixed(r.KernelPct, 0)+"% of "+kind)
		}
	}
	if !r.Verified {
		parts = append(parts, "NOT VERIFIED")
	}
	return strings.Join(parts, " · ")
}

// sizeTitle describes the sizes and repeats of results for a title.
func sizeTitle(results []compute.BenchResult) string {
	w, h, rep := results[0].Width, results[0].Height, results[0].Repeat
	same := true
	for _, r := range results {
		same = same && r.Width == w && r.Height == h
		rep = max(rep, r.Repeat)
	}
	if same {
		return fmt.Sprintf("%s of %d×%d pixels, median of %d runs", indexTitle(results), w, h, rep)
	}
	return fmt.Sprintf("%s, median of %d runs", indexTitle(results), rep)
}

// rowTicks labels row i (drawn at y = n-1-i) with labels[i].
func rowTicks(labels []string) plot.ConstantTicks {
	n := len(labels)
	t := make(plot.ConstantTicks, n)
	for i, l := range labels {
		t[i] = plot.Tick{Value: float64(n - 1 - i), Label: l}
	}
	return t
}

// hbar returns a horizontal bar chart of vs (row i at n-1-i).
func hbar(vs []float64, width vg.Length, c color.Color) (*plotter.BarChart, error) {
	n := len(vs)
	rev := make(plotter.Values, n)
	for i, v := range vs {
		rev[n-1-i] = finite(v)
	}
	b, err := plotter.NewBarChart(rev, width)
	if err != nil {
		return nil, err
	}
	b.Horizontal = true
	b.Color = c
	b.LineStyle.Width = 0
	return b, nil
}

// valueLabels puts texts at the right end (xs) of each row.
func valueLabels(xs []float64, texts []string) (*plotter.Labels, error) {
	n := len(xs)
	d := plotter.XYLabels{XYs: make(plotter.XYs, n), Labels: make([]string, n)}
	for i := range xs {
		d.XYs[n-1-i] = plotter.XY{X: finite(xs[i]), Y: float64(n - 1 - i)}
		d.Labels[n-1-i] = texts[i]
	}
	l, err := plotter.NewLabels(d)
	if err != nil {
		return nil, err
	}
	for i := range l.TextStyle {
		l.TextStyle[i].YAlign = draw.YCenter
		l.TextStyle[i].Font.Size = vg.Points(9)
		l.TextStyle[i].Font.Variant = "Sans"
	}
	l.Offset = vg.Point{X: labelGap}
	return l, nil
}

// labelGap is the room between the end of a row (its bar, or its
// whisker's cap) and its value label: the cap's line never touches the
// text.
const labelGap = vg.Length(9)

func drawTimings(dc draw.Canvas, results []compute.BenchResult) error {
	if len(results) == 0 {
		return errors.New("timings chart: no results")
	}
	n := len(results)
	labels := make([]string, n)
	up, kern, down, setup, ends := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	texts, setupTexts := make([]string, n), make([]string, n)
	tick := plot.New()
	sans(tick)
	width := dc.Max.X - dc.Min.X
	for i, r := range results {
		labels[i] = rowLabel(r, tick.Y.Tick.Label, width*0.2)
		up[i], kern[i], down[i], setup[i] = finite(r.UploadMS), finite(r.KernelMS), finite(r.DownloadMS), finite(r.SetupMS)
		ends[i] = max(up[i]+kern[i]+down[i], finite(r.Total.Max))
		texts[i] = valueLabel(r)
		if r.SetupMS > 0 || r.KernelMS > 0 {
			setupTexts[i] = FormatMS(setup[i])
		}
	}
	// An outlier does not set the scale: its bar is cut at a robust
	// maximum, marked with a break and labelled with its value.
	limit := robustCap(ends)
	var clippedRows []float64
	if limit > 0 {
		rest := 0.0
		for _, e := range ends {
			if e <= limit {
				rest = max(rest, e)
			}
		}
		limit = min(limit, rest*1.3)
		for i := range results {
			if ends[i] <= limit {
				continue
			}
			texts[i] = "» off scale · " + texts[i]
			up[i] = min(up[i], limit)
			kern[i] = min(kern[i], limit-up[i])
			down[i] = min(down[i], limit-up[i]-kern[i])
			ends[i] = limit
			clippedRows = append(clippedRows, float64(n-1-i))
		}
	}
	// Layout: a legend strip at the bottom, the set-up panel on the right.
	legendH := vg.Points(22)
	body := dc
	body.Min.Y += legendH
	split := body.Min.X + (body.Max.X-body.Min.X)*0.78
	mainC, setupC := body, body
	mainC.Max.X = split
	setupC.Min.X = split

	// Bar thickness: a little over half a row.
	rowH := (body.Max.Y - body.Min.Y - vg.Points(70)) / vg.Length(n)
	barW := max(vg.Points(3), min(rowH*0.55, vg.Points(28)))

	p := plot.New()
	sans(p)
	p.X.Tick.Marker = linearTicks{6}
	p.Title.Text = sizeTitle(results)
	p.X.Label.Text = "milliseconds (median)"
	p.X.Min = 0
	p.Y.Min, p.Y.Max = -0.5, float64(n)-0.5
	p.Y.Tick.Marker = rowTicks(labels)
	p.Y.Tick.Length = 0
	p.Y.Padding = 0
	p.Add(plotter.NewGrid())
	ub, err := hbar(up, barW, ColorUpload)
	if err != nil {
		return err
	}
	kb, err := hbar(kern, barW, ColorKernel)
	if err != nil {
		return err
	}
	db, err := hbar(down, barW, ColorDownload)
	if err != nil {
		return err
	}
	kb.StackOn(ub)
	db.StackOn(kb)
	p.Add(ub, kb, db)
	// Whiskers: the spread of the end-to-end time.
	var spread plotter.XErrors
	var at plotter.XYs
	for i, r := range results {
		if r.Total.Max > 0 && r.Total.Max >= r.Total.Min && r.Total.Median > 0 && (limit == 0 || r.Total.Median < limit) {
			hi := r.Total.Max
			if limit > 0 {
				hi = min(hi, limit)
			}
			at = append(at, plotter.XY{X: r.Total.Median, Y: float64(n - 1 - i)})
			spread = append(spread, struct{ Low, High float64 }{r.Total.Median - r.Total.Min, hi - r.Total.Median})
		}
	}
	if len(at) > 0 {
		eb, err := plotter.NewXErrorBars(struct {
			plotter.XYs
			plotter.XErrors
		}{at, spread})
		if err != nil {
			return err
		}
		eb.CapWidth = barW * 0.6
		eb.LineStyle.Width = vg.Points(1)
		p.Add(eb)
	}
	if len(clippedRows) > 0 {
		p.Add(breakMarks{rows: clippedRows, x: limit, thick: barW})
	}
	// Room for the value labels: wrapped where one would take more than
	// 55% of the data area, and the axis long enough for the longest.
	labelSty := tick.X.Tick.Label
	labelSty.Font.Size = vg.Points(9)
	dataW := (mainC.Max.X - mainC.Min.X) * 0.82
	for _, l := range labels {
		for _, line := range strings.Split(l, "\n") {
			dataW = min(dataW, (mainC.Max.X-mainC.Min.X)-tick.Y.Tick.Label.Width(line)-vg.Points(24))
		}
	}
	xMax := 0.0
	for i := range texts {
		texts[i] = wrapText(texts[i], labelSty, dataW*0.55)
		lw := vg.Length(0)
		for _, line := range strings.Split(texts[i], "\n") {
			lw = max(lw, labelSty.Width(line))
		}
		frac := float64((lw + labelGap + vg.Points(4)) / dataW)
		xMax = max(xMax, ends[i]/math.Max(0.3, 1-frac))
	}
	if xMax > 0 {
		p.X.Max = xMax
	}
	vl, err := valueLabels(ends, texts)
	if err != nil {
		return err
	}
	p.Add(vl)
	wrapTitle(p, mainC)

	q := plot.New()
	sans(q)
	q.X.Tick.Marker = linearTicks{2}
	q.Title.Text = "set-up (once)"
	q.X.Label.Text = "ms"
	q.X.Min = 0
	q.Y.Min, q.Y.Max = -0.5, float64(n)-0.5
	q.HideY()
	sb, err := hbar(setup, barW, ColorSetup)
	if err != nil {
		return err
	}
	sl, err := valueLabels(setup, setupTexts)
	if err != nil {
		return err
	}
	q.Add(sb, sl)
	// The set-up labels inside their panel: its axis long enough for the
	// longest label beside the longest bar.
	setupW := (setupC.Max.X - setupC.Min.X) * 0.85
	qMax := 0.0
	for i, v := range setup {
		frac := float64((labelSty.Width(setupTexts[i]) + labelGap + vg.Points(4)) / setupW)
		qMax = max(qMax, v/math.Max(0.2, 1-frac))
	}
	if qMax > 0 {
		q.X.Max = qMax
	}

	p.Draw(mainC)
	q.Draw(setupC)
	if dc.Max.X-dc.Min.X >= pixelsToPoints(860) {
		drawLegendStrip(dc, legendH, []legendEntry{
			{"upload (host → device)", ColorUpload},
			{"kernel", ColorKernel},
			{"download (device → host)", ColorDownload},
			{"set-up, not in the total", ColorSetup},
		}, "whisker: fastest–slowest run")
	} else {
		drawLegendStrip(dc, legendH, []legendEntry{
			{"upload", ColorUpload}, {"kernel", ColorKernel}, {"download", ColorDownload}, {"set-up", ColorSetup},
		}, "whisker: run spread")
	}
	return nil
}

type legendEntry struct {
	name string
	c    color.Color
}

// drawLegendStrip draws a one-line legend of coloured boxes along the
// bottom of dc, followed by a note.
func drawLegendStrip(dc draw.Canvas, h vg.Length, entries []legendEntry, note string) {
	lp := plot.New()
	sans(lp)
	sty := lp.Legend.TextStyle
	sty.Font.Size = vg.Points(9)
	sty.YAlign = draw.YCenter
	y := dc.Min.Y + h/2
	x := dc.Min.X + vg.Points(8)
	box := vg.Points(10)
	for _, e := range entries {
		dc.SetColor(e.c)
		dc.Fill(rectPath(x, y-box/2, x+box, y+box/2))
		x += box + vg.Points(4)
		dc.FillText(sty, vg.Point{X: x, Y: y}, e.name)
		x += sty.Width(e.name) + vg.Points(14)
	}
	if note != "" {
		sty.Color = color.Gray{0x55}
		dc.FillText(sty, vg.Point{X: x, Y: y}, note)
	}
}

func rectPath(x0, y0, x1, y1 vg.Length) vg.Path {
	var p vg.Path
	p.Move(vg.Point{X: x0, Y: y0})
	p.Line(vg.Point{X: x1, Y: y0})
	p.Line(vg.Point{X: x1, Y: y1})
	p.Line(vg.Point{X: x0, Y: y1})
	p.Close()
	return p
}
