package chart

import (
	"image"
	"image/color"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"canopy/compute"
)

func TestRobustCap(t *testing.T) {
	if c := robustCap([]float64{1, 2, 3, 4, 500}); c != 10 {
		t.Errorf("cap of 1..4 and 500 = %g, want Q3 + 3 IQR = 4 + 3·2 = 10", c)
	}
	for _, ends := range [][]float64{{1, 2, 3, 4, 5}, {1, 500}, {1, 2, 900}, nil} {
		if c := robustCap(ends); c != 0 {
			t.Errorf("cap of %v = %g, want none", ends, c)
		}
	}
}

// xOf returns the x of the chart's text s.
func xOf(t *testing.T, texts []svgText, s string) float64 {
	t.Helper()
	v, ok := find(texts, s)
	if !ok {
		t.Fatalf("text %q missing", s)
	}
	return v.X
}

func TestTimingsOutlierDoesNotSetTheScale(t *testing.T) {
	rs := benchAt(2048)
	// One slow run: go takes 900 ms where the others take 1-5 ms.
	rs[0].KernelMS, rs[0].TotalMS = 900, 900
	rs[0].Kernel.Median, rs[0].Total = 900, compute.Phase{Median: 900, Min: 880, Max: 1000}
	texts := svgTexts(t, 1100, 600, func(dc draw.Canvas) error { return drawTimings(dc, rs) })
	slow := "» off scale · " + valueLabel(rs[0])
	x0 := xOf(t, texts, "0")
	xs, xp := xOf(t, texts, slow), xOf(t, texts, valueLabel(rs[1]))
	// go-parallel's bar (4.6 ms) is not a sliver beside the cut 900 ms bar.
	if (xp - x0) < 0.3*(xs-x0) {
		t.Errorf("go-parallel's bar ends at %.0f, the cut bar at %.0f (axis at %.0f): a sliver", xp, xs, x0)
	}
	// Without the outlier nothing is cut.
	texts = svgTexts(t, 1100, 600, func(dc draw.Canvas) error { return drawTimings(dc, benchAt(2048)) })
	for _, tx := range texts {
		if strings.Contains(tx.S, "off scale") {
			t.Errorf("a bar was cut without an outlier: %q", tx.S)
		}
	}
}

func TestTimingsCacheNote(t *testing.T) {
	r := benchAt(512)[2]
	r.KernelPct = 230
	l := valueLabel(r)
	if strings.Contains(l, "230") || !strings.Contains(l, "above the memory ceiling (host-copy): the data fit in cache") {
		t.Errorf("label %q", l)
	}
	r.KernelPct = 85.4
	if l := valueLabel(r); !strings.Contains(l, "85% of host-copy") {
		t.Errorf("label %q", l)
	}
}

func TestTimingsLabelsWrapNotCut(t *testing.T) {
	rs := benchAt(1024)
	rs[1].Device = "Intel(R) Xeon(R) Platinum 8480+ Sapphire Rapids Processor with a long name (8 threads, linux/amd64)"
	texts := svgTexts(t, 600, 400, func(dc draw.Canvas) error { return drawTimings(dc, rs) })
	all := ""
	for _, tx := range texts {
		if strings.Contains(tx.S, "…") {
			t.Errorf("cut label %q", tx.S)
		}
		all += tx.S + " "
	}
	for _, word := range strings.Fields("Intel Xeon Platinum 8480+ Sapphire Rapids with a long name, 8 threads") {
		if !strings.Contains(all, word) {
			t.Errorf("device word %q lost", word)
		}
	}
	// A narrow chart wraps the longest value labels onto more lines, all
	// of them inside the picture.
	for _, tx := range texts {
		if tx.X < 0 || tx.X > float64(pixelsToPoints(600)) {
			t.Errorf("text %q starts outside the chart at x=%g", tx.S, tx.X)
		}
	}
}

func TestSeriesColorsDistinct(t *testing.T) {
	labels := []string{"go", "gl", "gl:host", "gl:resident", "gl:es", "cuda:overlap", "cuda:sequential", "c", "go-parallel"}
	cols := SeriesColors(labels)
	seen := map[color.NRGBA]string{}
	for _, l := range labels {
		c := cols[l]
		if o, dup := seen[c]; dup {
			t.Errorf("%s and %s share colour %v", o, l, c)
		}
		seen[c] = l
	}
	if cols["gl"] != BackendColor("gl") || cols["cuda:overlap"] != BackendColor("cuda") {
		t.Error("the first series of a backend lost the backend's colour")
	}
	st := styles(labels)
	if st["gl"].solid == st["gl:host"].solid {
		t.Error("two series share a marker")
	}
}

func TestSweepModesAndLegendOutside(t *testing.T) {
	var all []compute.BenchResult
	for _, w := range []int{64, 256, 1024, 4096} {
		rs := benchAt(w)
		host, res := rs[3], rs[3]
		host.Mode, host.TotalMS = "host", rs[3].TotalMS*0.8
		res.Mode, res.TotalMS = "resident", rs[3].TotalMS*0.5
		all = append(all, append(rs, host, res)...)
	}
	img, err := Sweep(all, 900, 560)
	if err != nil {
		t.Fatal(err)
	}
	cols := SeriesColors([]string{"go", "go-parallel", "c", "gl", "cuda:overlap", "gl:host", "gl:resident"})
	for _, l := range []string{"gl", "gl:host", "gl:resident"} {
		if colourShare(img, cols[l]) == 0 {
			t.Errorf("no %s line in its own colour", l)
		}
	}
	// Legend entries lie outside the data area: right of the last x tick
	// label or below the x axis title.
	for _, size := range [][2]int{{1400, 600}, {700, 500}} {
		texts := svgTexts(t, size[0], size[1], func(dc draw.Canvas) error { return drawSweep(dc, all) })
		axis, _ := find(texts, "pixels")
		last, _ := find(texts, "10M")
		for _, name := range []string{"go-parallel", "gl:host kernel", "gl:resident kernel"} {
			e, ok := find(texts, name)
			if !ok {
				t.Fatalf("%v: legend entry %q missing", size, name)
			}
			if !(e.Y < axis.Y || e.X > last.X) {
				t.Errorf("%v: legend entry %q at (%.0f, %.0f) inside the data area (x axis title at y=%.0f, last tick at x=%.0f)", size, name, e.X, e.Y, axis.Y, last.X)
			}
		}
	}
}

func TestHistogram(t *testing.T) {
	bins := make([]int, 40)
	for i := range bins {
		x := float64(i-25) / 6
		bins[i] = int(20000 * math.Exp(-x*x/2))
	}
	total := 0
	for _, n := range bins {
		total += n
	}
	green := color.NRGBA{0x1a, 0x73, 0x35, 0xff}
	blue := color.NRGBA{0x2c, 0x7b, 0xb6, 0xff}
	col := func(v float64) color.Color {
		if v < 0 {
			return blue
		}
		return green
	}
	img, err := Histogram(bins, -1, 1, 400, 220, HistogramOptions{XLabel: "NDVI", Color: col, Marks: []float64{0, 0.2}})
	if err != nil {
		t.Fatal(err)
	}
	if img.Bounds() != image.Rect(0, 0, 400, 220) {
		t.Errorf("histogram %v", img.Bounds())
	}
	// Bins below 0 in the map's blue, above in its green: more green.
	b, g := colourShare(img, blue), colourShare(img, green)
	if b == 0 || g <= b {
		t.Errorf("blue %.3f, green %.3f", b, g)
	}
	c := vgsvgTexts(t, 400, 220, bins, HistogramOptions{XLabel: "NDVI"})
	for _, want := range []string{"NDVI", "pixels", "−1", "−0.5", "0", "0.5", "1", "20\u202f000", "n = " + groupThousands(total)} {
		if _, ok := find(c, want); !ok {
			t.Errorf("histogram text %q missing", want)
		}
	}
	// Empty: axes and a word.
	if _, ok := find(vgsvgTexts(t, 300, 180, make([]int, 8), HistogramOptions{}), "no values to count"); !ok {
		t.Error("empty histogram says nothing")
	}
	for name, f := range map[string]func() error{
		"no bins":    func() error { _, err := Histogram(nil, 0, 1, 300, 200, HistogramOptions{}); return err },
		"bad range":  func() error { _, err := Histogram(bins, 1, 1, 300, 200, HistogramOptions{}); return err },
		"negative":   func() error { _, err := Histogram([]int{1, -2}, 0, 1, 300, 200, HistogramOptions{}); return err },
		"too small":  func() error { _, err := Histogram(bins, 0, 1, 100, 50, HistogramOptions{}); return err },
		"infinities": func() error { _, err := Histogram(bins, math.Inf(-1), 1, 300, 200, HistogramOptions{}); return err },
	} {
		if err := f(); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
}

// vgsvgTexts draws a histogram as SVG and returns its texts.
func vgsvgTexts(t *testing.T, w, h int, bins []int, opt HistogramOptions) []svgText {
	t.Helper()
	return svgTexts(t, w, h, func(dc draw.Canvas) error { return drawHistogram(dc, bins, -1, 1, opt) })
}

func groupThousands(n int) string {
	s := ""
	for n >= 1000 {
		s = "\u202f" + pad3(n%1000) + s
		n /= 1000
	}
	return itoa(n) + s
}

func pad3(n int) string {
	return string([]byte{byte('0' + n/100), byte('0' + n/10%10), byte('0' + n%10)})
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// TestTimingsSetupLabelsInside: the set-up panel's labels stay inside
// the picture whatever the longest set-up (a GPU's shader compile dwarfs
// the CPUs').
func TestTimingsSetupLabelsInside(t *testing.T) {
	rs := benchAt(4096)
	for i := range rs {
		rs[i].SetupMS = 0.2
		rs[i].Total = compute.Phase{Median: rs[i].TotalMS, Min: 0.8 * rs[i].TotalMS, Max: 1.6 * rs[i].TotalMS}
	}
	rs[len(rs)-1].SetupMS = 900
	const w = 1100
	texts := svgTexts(t, w, 520, func(dc draw.Canvas) error { return drawTimings(dc, rs) })
	face := plot.New().X.Tick.Label
	face.Font.Size = vg.Points(9)
	for _, tx := range texts {
		if tx.S == "900 ms" {
			// Inside the panel: clear of the picture's edge by a margin.
			if end := tx.X + float64(face.Width(tx.S)); end > float64(pixelsToPoints(w)-vg.Points(8)) {
				t.Errorf("the set-up label %q ends at %.0f pt, at the edge of the %.0f pt chart", tx.S, end, float64(pixelsToPoints(w)))
			}
		}
	}
}
