package chart

import (
	"errors"
	"fmt"
	"image"
	"image/color"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"canopy/compute"
)

// Timings draws one horizontal bar per result, top to bottom in the given
// order, on a w×h pixel image: median upload, kernel and download stacked
// (ms), each bar labelled with the kernel-only time, the time with
// transfers (GPU backends) and the kernel's percentage of the ceiling, a
// whisker from the fastest to the slowest end-to-end run, and the one-time
// set-up in a panel of its own on the right. A result with an error keeps
// its row, labelled with the error.
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

// rowLabel is the y tick label of a result: "backend:mode\ndevice".
func rowLabel(r compute.BenchResult) string {
	if d := ShortDevice(r.Device); d != "" {
		return r.Label() + "\n" + d
	}
	return r.Label()
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
		parts = append(parts, fmt.Sprintf("%.0f%% of %s", r.KernelPct, kind))
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
	l.Offset = vg.Point{X: vg.Points(4)}
	return l, nil
}

func drawTimings(dc draw.Canvas, results []compute.BenchResult) error {
	if len(results) == 0 {
		return errors.New("timings chart: no results")
	}
	n := len(results)
	labels := make([]string, n)
	up, kern, down, setup, ends := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	texts, setupTexts := make([]string, n), make([]string, n)
	for i, r := range results {
		labels[i] = rowLabel(r)
		up[i], kern[i], down[i], setup[i] = finite(r.UploadMS), finite(r.KernelMS), finite(r.DownloadMS), finite(r.SetupMS)
		ends[i] = max(up[i]+kern[i]+down[i], finite(r.Total.Max))
		texts[i] = valueLabel(r)
		if r.SetupMS > 0 || r.KernelMS > 0 {
			setupTexts[i] = FormatMS(setup[i])
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
		if r.Total.Max > 0 && r.Total.Max >= r.Total.Min && r.Total.Median > 0 {
			at = append(at, plotter.XY{X: r.Total.Median, Y: float64(n - 1 - i)})
			spread = append(spread, struct{ Low, High float64 }{r.Total.Median - r.Total.Min, r.Total.Max - r.Total.Median})
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
	vl, err := valueLabels(ends, texts)
	if err != nil {
		return err
	}
	p.Add(vl)

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
