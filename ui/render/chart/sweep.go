package chart

import (
	"fmt"
	"image"
	"image/color"
	"math"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"canopy/compute"
	"canopy/ui/render/numfmt"
)

// usable reports whether r carries a timing to plot.
func usable(r compute.BenchResult) bool {
	return pixelsOf(r) > 0 && r.KernelMS > 0 && !math.IsInf(r.KernelMS, 0) && (r.Error == "" || r.Verified)
}

// cpuTime is the end-to-end time of a CPU result (its kernel time when the
// total is missing).
func cpuTime(r compute.BenchResult) float64 {
	if r.TotalMS > 0 {
		return r.TotalMS
	}
	return r.KernelMS
}

// Crossover returns the smallest image size, in pixels, from which the GPU
// backend gpuBackend (a name, "cuda", or a label with a mode,
// "cuda:overlap") is faster than the fastest CPU backend measured at the
// same size: its kernel time alone, or its time with transfers when
// withTransfers is set. Between the last measured size where the GPU loses
// and the first where it wins, the size is interpolated on log-log axes
// (where both times are close to straight lines); when the GPU wins at the
// smallest size measured, that size is returned. ok is false when the GPU
// never wins at a size both were measured at.
func Crossover(results []compute.BenchResult, gpuBackend string, withTransfers bool) (pixels int, ok bool) {
	gpu, cpu, sizes := bestTimes(results, gpuBackend, withTransfers, pixelsOf)
	for i, px := range sizes {
		if gpu[px] >= cpu[px] {
			continue
		}
		if i == 0 {
			return px, true
		}
		p0 := sizes[i-1]
		a := math.Log(gpu[p0] / cpu[p0]) // ≥ 0: the GPU loses
		b := math.Log(gpu[px] / cpu[px]) // < 0: the GPU wins
		t := a / (a - b)
		x := math.Exp(math.Log(float64(p0)) + t*(math.Log(float64(px))-math.Log(float64(p0))))
		return int(math.Ceil(x - 1e-9)), true
	}
	return 0, false
}

// series is one line of the sweep: a label's (pixels, ms) points.
type series struct {
	label  string
	gpu    bool
	kernel plotter.XYs
	total  plotter.XYs
}

// seriesSet is the results grouped by backend label, in first-seen order,
// with the ranges of x and of the times.
type seriesSet struct {
	byLabel      map[string]*series
	order        []string
	minX, maxX   float64
	minMS, maxMS float64
}

// group puts each usable result at x(r) on its label's series: its kernel
// time, and its total time for a GPU; each is passed to also.
func group(results []compute.BenchResult, x func(compute.BenchResult) float64, also func(compute.BenchResult)) *seriesSet {
	g := &seriesSet{byLabel: map[string]*series{}, minX: math.Inf(1), maxX: math.Inf(-1), minMS: math.Inf(1), maxMS: math.Inf(-1)}
	for _, r := range results {
		if !usable(r) {
			continue
		}
		l := label(r)
		s, seen := g.byLabel[l]
		if !seen {
			s = &series{label: l, gpu: r.GPU}
			g.byLabel[l] = s
			g.order = append(g.order, l)
		}
		v := x(r)
		s.kernel = append(s.kernel, plotter.XY{X: v, Y: r.KernelMS})
		g.minX, g.maxX = math.Min(g.minX, v), math.Max(g.maxX, v)
		g.minMS, g.maxMS = math.Min(g.minMS, r.KernelMS), math.Max(g.maxMS, r.KernelMS)
		if r.GPU && r.TotalMS > 0 {
			s.total = append(s.total, plotter.XY{X: v, Y: r.TotalMS})
			g.maxMS = math.Max(g.maxMS, r.TotalMS)
		}
		if also != nil {
			also(r)
		}
	}
	return g
}

// addAll draws every series of g in its style, sorted by x, and calls
// mark for each after its lines are drawn.
func (g *seriesSet) addAll(p *plot.Plot, items *[]legendItem, mark func(s *series, c color.Color) error) error {
	sty := styles(g.order)
	for _, name := range g.order {
		s := g.byLabel[name]
		sort.Slice(s.kernel, func(i, j int) bool { return s.kernel[i].X < s.kernel[j].X })
		sort.Slice(s.total, func(i, j int) bool { return s.total[i].X < s.total[j].X })
		if err := addSeries(p, items, name, s.gpu, sty[name], s.kernel, s.total); err != nil {
			return err
		}
		if err := mark(s, sty[name].color); err != nil {
			return err
		}
	}
	return nil
}

// crossoverMark draws a dashed vertical line at x from y0 to y1 in c with
// the text beside it, turned upright.
func crossoverMark(p *plot.Plot, x, y0, y1 float64, c color.Color, text string) error {
	v, err := plotter.NewLine(plotter.XYs{{X: x, Y: y0}, {X: x, Y: y1}})
	if err != nil {
		return err
	}
	v.Color, v.Width = c, vg.Points(0.8)
	v.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
	p.Add(v)
	lab, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: x, Y: y0}}, Labels: []string{" " + text}})
	if err != nil {
		return err
	}
	lab.TextStyle[0].Font.Variant = "Sans"
	lab.TextStyle[0].Font.Size = vg.Points(8)
	lab.TextStyle[0].Color = c
	lab.TextStyle[0].Rotation = math.Pi / 2
	lab.TextStyle[0].YAlign = draw.YTop
	lab.Offset = vg.Point{X: vg.Points(-2)}
	p.Add(lab)
	return nil
}

// Sweep plots time (ms, median) against image size (pixels) on log-log
// axes on a w×h pixel image: a solid line per backend (and mode) for the
// kernel alone, a dashed line in the same colour for GPU backends with
// their transfers, dotted grey ceiling lines (12 bytes a pixel at the
// ceiling bandwidth measured, per kind of ceiling, and the PCIe transfers
// at the pinned-copy ceilings), and a vertical marker where each GPU
// backend starts to beat the fastest CPU backend with its transfers
// (Crossover). The legend is beside or under the data, never over it.
// Without a result with a positive time it draws the empty axes with a
// message, so that the chart is never blank.
func Sweep(results []compute.BenchResult, w, h int) (image.Image, error) {
	return render(w, h, func(dc draw.Canvas) error { return drawSweep(dc, results) })
}

func drawSweep(dc draw.Canvas, results []compute.BenchResult) error {
	ceilings := map[string][]float64{}
	var h2d, d2h []float64
	g := group(results, func(r compute.BenchResult) float64 { return float64(pixelsOf(r)) }, func(r compute.BenchResult) {
		if r.CeilingGBps > 0 && r.CeilingKind != "" {
			ceilings[r.CeilingKind] = append(ceilings[r.CeilingKind], r.CeilingGBps)
		}
		if r.GPU && r.H2DGBps > 0 && r.D2HGBps > 0 && !SoftwareRenderer(r.Device) {
			h2d, d2h = append(h2d, r.H2DGBps), append(d2h, r.D2HGBps)
		}
	})
	minPx, maxPx, minMS, maxMS := g.minX, g.maxX, g.minMS, g.maxMS
	if len(g.order) == 0 {
		drawEmpty(dc, indexTitle(results)+" time against image size (median)", "pixels", "milliseconds",
			"No timings to plot yet: run a size sweep to see where the GPU starts to win.", true)
		return nil
	}
	if minPx == maxPx {
		minPx, maxPx = minPx/2, maxPx*2
	}

	p := plot.New()
	sans(p)
	p.Title.Text = indexTitle(results) + " time against image size (median)"
	p.X.Label.Text = "image size (side², pixels)"
	p.Y.Label.Text = "milliseconds"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker = sizeTicks(results)
	p.Y.Tick.Marker = logTicks{format: func(v float64) string { return numfmt.Tick(v, v) }}
	p.X.Min, p.X.Max = minPx, maxPx
	wrapTitle(p, dc)
	p.Add(plotter.NewGrid())
	var items []legendItem

	// Ceiling lines: what a copy of 12 bytes a pixel at the measured
	// bandwidth would take.
	type entry struct {
		name string
		l    *plotter.Line
	}
	var ceilEntries []entry
	ceilLine := func(msPerPixel float64, dashes []vg.Length, name string) error {
		pts := plotter.XYs{{X: minPx, Y: minPx * msPerPixel}, {X: maxPx, Y: maxPx * msPerPixel}}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return err
		}
		l.Color = color.Gray{0x80}
		l.Width = vg.Points(1)
		l.Dashes = dashes
		p.Add(l)
		ceilEntries = append(ceilEntries, entry{name, l})
		return nil
	}
	kinds := make([]string, 0, len(ceilings))
	for k := range ceilings {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for i, k := range kinds {
		g := median(ceilings[k])
		dash := []vg.Length{vg.Points(1), vg.Points(3)}
		if i%2 == 1 {
			dash = []vg.Length{vg.Points(1), vg.Points(2), vg.Points(5), vg.Points(2)}
		}
		if err := ceilLine(bytesPerPixel/(g*1e6), dash, fmt.Sprintf("%s ceiling, %.0f GB/s", k, g)); err != nil {
			return err
		}
	}
	if len(h2d) > 0 {
		up, down := median(h2d), median(d2h)
		// Two bands up, one down, at the pinned-copy ceilings.
		if err := ceilLine(8/(up*1e6)+4/(down*1e6), []vg.Length{vg.Points(6), vg.Points(3)},
			fmt.Sprintf("PCIe transfers at ceiling (%.0f / %.0f GB/s)", up, down)); err != nil {
			return err
		}
	}

	marks := newMarks(math.Log10(maxPx/minPx), dc)
	err := g.addAll(p, &items, func(s *series, c color.Color) error {
		if !s.gpu {
			return nil
		}
		px, ok := Crossover(results, s.label, true)
		text := fmt.Sprintf("%s wins from %s", s.label, SideLabel(float64(px)))
		if !ok || float64(px) <= minPx || marks.taken(math.Log10(float64(px)), &items, "wins from "+SideLabel(float64(px))) {
			return nil
		}
		return crossoverMark(p, float64(px), minMS*0.6, maxMS, c, text)
	})
	if err != nil {
		return err
	}
	for _, e := range ceilEntries {
		items = append(items, legendItem{e.name, []plot.Thumbnailer{e.l}})
	}
	// The axes follow the measurements; ceiling lines are clipped to them.
	p.Y.Min, p.Y.Max = minMS*0.6, maxMS*1.25
	p.Draw(outsideLegend(dc, items))
	return nil
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// logTicks labels the powers of ten in range with format and puts
// unlabelled minor ticks at 2..9 times them; with less than a decade in
// range it also labels 2 and 5 times them.
type logTicks struct {
	format func(float64) string
}

// Ticks implements plot.Ticker.
func (t logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi > lo) {
		return nil
	}
	short := math.Log10(hi/lo) < 1.5
	var ticks []plot.Tick
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		base := math.Pow(10, e)
		for m := 1.0; m < 10; m++ {
			v := base * m
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
				continue
			}
			tk := plot.Tick{Value: v}
			if m == 1 || (short && (m == 2 || m == 5)) {
				tk.Label = t.format(v)
			}
			ticks = append(ticks, tk)
		}
	}
	return ticks
}

// bestTimes gathers, for each value of key (pixels, indices per upload),
// the best time of gpuBackend (kernel, or total withTransfers) and of the
// fastest CPU backend over usable results, and the keys both have, sorted:
// what Crossover and IndexCrossover interpolate between.
func bestTimes(results []compute.BenchResult, gpuBackend string, withTransfers bool, key func(compute.BenchResult) int) (gpu, cpu map[int]float64, keys []int) {
	gpu, cpu = map[int]float64{}, map[int]float64{}
	for _, r := range results {
		if !usable(r) {
			continue
		}
		k := key(r)
		switch {
		case r.GPU && (r.Backend == gpuBackend || label(r) == gpuBackend):
			t := r.KernelMS
			if withTransfers {
				t = r.TotalMS
			}
			if old, seen := gpu[k]; t > 0 && (!seen || t < old) {
				gpu[k] = t
			}
		case !r.GPU:
			if old, seen := cpu[k]; !seen || cpuTime(r) < old {
				cpu[k] = cpuTime(r)
			}
		}
	}
	for k := range gpu {
		if _, both := cpu[k]; both {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return gpu, cpu, keys
}

// SideLabel names a pixel count by the side of the square image that has
// it: "1024²" (4 194 304 pixels); a count that is no square is "≈1448²".
func SideLabel(px float64) string {
	side := math.Round(math.Sqrt(px))
	if side*side == px {
		return fmt.Sprintf("%.0f²", side)
	}
	return fmt.Sprintf("≈%.0f²", side)
}

// SoftwareRenderer reports whether a device description is a software
// renderer (Mesa's llvmpipe, softpipe, swrast; SwiftShader), whose
// "transfers" are host copies: no PCIe to draw.
func SoftwareRenderer(device string) bool {
	d := strings.ToLower(device)
	for _, s := range []string{"llvmpipe", "softpipe", "swrast", "swiftshader", "mesa software"} {
		if strings.Contains(d, s) {
			return true
		}
	}
	return false
}

// sizeTicks labels the sizes measured by their sides (256², 1024², ...)
// when every one is a square image, else the powers of ten of the pixel
// counts (logTicks).
func sizeTicks(results []compute.BenchResult) plot.Ticker {
	var px []float64
	for _, r := range results {
		if r.Width != r.Height || r.Width <= 0 {
			return logTicks{format: fmtPixels}
		}
		if v := float64(pixelsOf(r)); !slices.Contains(px, v) {
			px = append(px, v)
		}
	}
	slices.Sort(px)
	return sideTicks(px)
}

// sideTicks marks and labels the square sizes measured.
type sideTicks []float64

// Ticks implements plot.Ticker.
func (t sideTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	for _, v := range t {
		if v >= lo*(1-1e-9) && v <= hi*(1+1e-9) {
			ticks = append(ticks, plot.Tick{Value: v, Label: SideLabel(v)})
		}
	}
	return ticks
}
