package chart

import (
	"fmt"
	"image"
	"image/color"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg/draw"

	"canopy/compute"
	"canopy/ui/render/numfmt"
)

// IndexCount is how many indices one run computed: the names in its Index
// ("ndvi,evi,savi" is 3).
func IndexCount(r compute.BenchResult) int {
	if r.Index == "" {
		return 1
	}
	return strings.Count(r.Index, ",") + 1
}

// indexTitle names the index the results timed, for a chart's title:
// "NDVI" (also for results that do not say), "NDVI, EVI", or "Index" for a
// custom formula or results of different indices.
func indexTitle(results []compute.BenchResult) string {
	name := ""
	for i, r := range results {
		if i > 0 && r.Index != name {
			return "Index"
		}
		name = r.Index
	}
	if name == "" {
		return "NDVI"
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == ',') {
			return "Index"
		}
	}
	return strings.ReplaceAll(strings.ToUpper(name), ",", ", ")
}

// IndexCrossover is Crossover with the number of indices per upload on the
// x axis instead of the image size: the smallest count from which the GPU
// backend (a name or a name:mode label) beats the fastest CPU backend run
// on the same count, its kernel alone or with its transfers. Between the
// last count where the GPU loses and the first where it wins, the count
// is interpolated linearly (each time grows about linearly with the
// count). ok is false when the GPU never wins.
func IndexCrossover(results []compute.BenchResult, gpuBackend string, withTransfers bool) (indices float64, ok bool) {
	gpu, cpu, counts := bestTimes(results, gpuBackend, withTransfers, IndexCount)
	for i, n := range counts {
		if gpu[n] >= cpu[n] {
			continue
		}
		if i == 0 {
			return float64(n), true
		}
		n0 := counts[i-1]
		a := gpu[n0] - cpu[n0] // ≥ 0: the GPU loses
		b := gpu[n] - cpu[n]   // < 0: the GPU wins
		return float64(n0) + a/(a-b)*float64(n-n0), true
	}
	return 0, false
}

// IndexSweep plots time (ms, median) against the number of indices
// computed from one upload of the bands (1, 2, 5, 10, ...) on a w×h
// pixel image: a solid line per backend (and mode) for the kernel alone,
// a dashed one in the same colour for GPU backends with their transfers,
// and a vertical marker where each GPU backend with its transfers starts
// to beat the fastest CPU backend (IndexCrossover). The legend is beside
// or under the data; without a result with a positive time it draws the
// empty axes with a message.
func IndexSweep(results []compute.BenchResult, w, h int) (image.Image, error) {
	return render(w, h, func(dc draw.Canvas) error { return drawIndexSweep(dc, results) })
}

func drawIndexSweep(dc draw.Canvas, results []compute.BenchResult) error {
	size := ""
	g := group(results, func(r compute.BenchResult) float64 { return float64(IndexCount(r)) }, func(r compute.BenchResult) {
		size = fmt.Sprintf("%d×%d", r.Width, r.Height)
	})
	minN, maxN, minMS, maxMS := g.minX, g.maxX, g.minMS, g.maxMS
	if len(g.order) == 0 {
		drawEmpty(dc, "Indices from one upload of the bands (median)", "indices per upload", "milliseconds",
			"No timings to plot yet: run the sweep to see from how many indices per upload the GPU, transfers included, beats the CPU.", false)
		return nil
	}
	if minN == maxN {
		minN, maxN = minN-1, maxN+1
	}
	p := plot.New()
	sans(p)
	p.Title.Text = fmt.Sprintf("Indices from one upload of the bands, %s (median)", size)
	p.X.Label.Text = "indices per upload"
	p.Y.Label.Text = "milliseconds"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = logTicks{format: func(v float64) string { return numfmt.Tick(v, v) }}
	p.X.Tick.Marker = countTicks{}
	p.X.Min, p.X.Max = minN-0.3, maxN+0.3
	wrapTitle(p, dc)
	p.Add(plotter.NewGrid())
	var items []legendItem
	marks := newMarks(maxN-minN+0.6, dc)
	err := g.addAll(p, &items, func(s *series, c color.Color) error {
		if len(s.total) == 0 {
			return nil
		}
		n, ok := IndexCrossover(results, s.label, true)
		if !ok || n <= minN || marks.taken(n, &items, fmt.Sprintf("wins from %.1f indices", n)) {
			return nil
		}
		return crossoverMark(p, n, minMS*0.6, maxMS, c, fmt.Sprintf("%s wins from %.1f indices", s.label, n))
	})
	if err != nil {
		return err
	}
	p.Y.Min, p.Y.Max = minMS*0.6, maxMS*1.25
	p.Draw(outsideLegend(dc, items))
	return nil
}

// countTicks labels the whole numbers in range.
type countTicks struct{}

// Ticks implements plot.Ticker.
func (countTicks) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	step := math.Max(1, math.Ceil((hi-lo)/12))
	for v := math.Ceil(lo); v <= hi; v += step {
		ts = append(ts, plot.Tick{Value: v, Label: fmt.Sprintf("%.0f", v)})
	}
	return ts
}
