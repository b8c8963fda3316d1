package ui

import (
	"fmt"
	"image"
	"strconv"
	"strings"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"canopy/compute"
	"canopy/ui/render/chart"
)

// chartsCalls are what the charts panel asks of the window: do runs a
// function on the event goroutine; onSweep starts the size sweep,
// onIndices the indices sweep; saveDialog asks where to save, exportJob
// writes an export in the background, alert says there is nothing to
// export.
type chartsCalls struct {
	do         func(func())
	onSweep    func()
	onIndices  func()
	saveDialog func(title, name string, exts []string, save func(path string))
	exportJob  func(what, path string, write func(string) error)
	alert      func(error)
}

// chartsPanel shows the timing chart (one run per backend, stacked
// upload/kernel/download) with a table of the numbers, the size sweep and
// the indices-per-upload sweep. Each chart holds the results it shows
// (the latest run of each backend, the last sweeps), which the exports
// write.
type chartsPanel struct {
	chartsCalls
	timingTab  fyne.CanvasObject
	sweepTab   fyne.CanvasObject
	indicesTab fyne.CanvasObject

	Timing      *chartView
	SweepView   *chartView
	IndicesView *chartView
	table       *fyne.Container
	crossover   *widget.Label
	indicesNote *widget.Label
	SweepMax    *widget.Select
	IndicesSize *widget.Select
}

// chartKind names a chart of the panel.
type chartKind int

const (
	chartTimings chartKind = iota
	chartSweep
	chartIndices
)

// Sizes of the indices-per-upload sweep.
var indicesSizes = []int{256, 512, 1024, 2048, 4096, 8192, 10980}

// Largest sizes a sweep can go to.
var sweepMaxes = []int{1024, 2048, 4096, 8192, 10980}

// newChartsPanel builds the chart tabs.
func newChartsPanel(c chartsCalls) *chartsPanel {
	p := &chartsPanel{chartsCalls: c}
	do, onSweep, onIndices := c.do, c.onSweep, c.onIndices
	p.Timing = newChartView(chart.Timings, "Compute, or Compare all, to see what each backend costs.")
	p.SweepView = newChartView(chart.Sweep, "Run a size sweep to see where the GPU starts to win.")
	p.IndicesView = newChartView(chart.IndexSweep, "Run the sweep to see from how many indices per upload the GPU, transfers included, beats the CPU.")
	p.Timing.do, p.SweepView.do, p.IndicesView.do = do, do, do
	p.table = container.NewVBox()
	p.crossover = widget.NewLabel("")
	p.crossover.Wrapping = fyne.TextWrapWord
	var maxes []string
	for _, n := range sweepMaxes {
		maxes = append(maxes, sizeLabel(n))
	}
	p.SweepMax = widget.NewSelect(maxes, nil)
	p.SweepMax.SetSelected(sizeLabel(4096))

	tableScroll := container.NewVScroll(p.table)
	tableScroll.SetMinSize(fyne.NewSize(0, 150))
	p.timingTab = container.NewVSplit(p.Timing, tableScroll)
	p.timingTab.(*container.Split).Offset = 0.68
	controls := container.NewHBox(widget.NewLabel("From 256 × 256 up to"), p.SweepMax,
		widget.NewButtonWithIcon("Run sweep", theme.ViewRefreshIcon(), onSweep))
	p.sweepTab = container.NewBorder(controls, p.crossover, nil, nil, p.SweepView)

	var sizes []string
	for _, n := range indicesSizes {
		sizes = append(sizes, sizeLabel(n))
	}
	p.IndicesSize = widget.NewSelect(sizes, nil)
	p.IndicesSize.SetSelected(sizeLabel(2048))
	p.indicesNote = widget.NewLabel("Jobs of " + indexCounts() + " catalogue indices (" + strings.Join(sweepIndices, ", ") +
		", in that order) from one upload of the bands they read, on noise bands.")
	p.indicesNote.Wrapping = fyne.TextWrapWord
	icontrols := container.NewHBox(widget.NewLabel("Indices per upload at"), p.IndicesSize,
		widget.NewButtonWithIcon("Run", theme.ViewRefreshIcon(), onIndices))
	p.indicesTab = container.NewBorder(icontrols, p.indicesNote, nil, nil, p.IndicesView)
	return p
}

// indexCounts lists sweepCounts for the user: "1, 2, 5 and 10".
func indexCounts() string {
	var s []string
	for _, n := range sweepCounts {
		s = append(s, strconv.Itoa(n))
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// indicesSize returns the image side of the indices sweep chosen.
func (p *chartsPanel) indicesSize() int {
	for _, n := range indicesSizes {
		if sizeLabel(n) == p.IndicesSize.Selected {
			return n
		}
	}
	return 2048
}

// showIndexSweep draws the indices sweep and says where the GPU wins.
func (p *chartsPanel) showIndexSweep(rs []compute.BenchResult) {
	p.IndicesView.set(rs)
	p.indicesNote.SetText(indexCrossoverText(rs))
}

// sweepMax returns the largest size of the sweep chosen.
func (p *chartsPanel) sweepMax() int {
	for _, n := range sweepMaxes {
		if sizeLabel(n) == p.SweepMax.Selected {
			return n
		}
	}
	return 4096
}

// showTimings draws the timing chart and the table of numbers.
func (p *chartsPanel) showTimings(rs []compute.BenchResult) {
	p.Timing.set(rs)
	p.table.RemoveAll()
	if len(rs) == 0 {
		return
	}
	head := func(s string) fyne.CanvasObject {
		return widget.NewLabelWithStyle(s, fyne.TextAlignTrailing, fyne.TextStyle{Bold: true})
	}
	cell := func(s string) fyne.CanvasObject {
		return widget.NewLabelWithStyle(s, fyne.TextAlignTrailing, fyne.TextStyle{})
	}
	grid := container.NewGridWithColumns(7,
		widget.NewLabelWithStyle("Backend", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		head("Setup"), head("Kernel"), head("+ transfers"), head("GB/s"), head("% ceiling"), head("Check"))
	for _, r := range rs {
		name := widget.NewLabel(chart.Label(r.Backend, r.Mode))
		if r.Error != "" && !r.Verified {
			grid.Add(name)
			msg := widget.NewLabel(firstLine(r.Error))
			msg.Importance = widget.DangerImportance
			msg.Truncation = fyne.TextTruncateEllipsis
			grid.Add(msg)
			for range 5 {
				grid.Add(widget.NewLabel(""))
			}
			continue
		}
		check := widget.NewLabelWithStyle("✔ "+strconv.FormatFloat(r.MaxAbsErr, 'g', 2, 64), fyne.TextAlignTrailing, fyne.TextStyle{})
		check.Importance = widget.SuccessImportance
		grid.Add(name)
		grid.Add(cell(ms(r.SetupMS)))
		grid.Add(cell(ms(r.KernelMS)))
		grid.Add(cell(ms(r.TotalMS)))
		grid.Add(cell(fmt.Sprintf("%.1f", r.KernelGBps)))
		grid.Add(cell(ceilingText(r.KernelPct)))
		grid.Add(check)
	}
	runs := fmt.Sprintf("medians of %d runs after a warm-up", rs[0].Repeat)
	if rs[0].Repeat <= 1 {
		runs = "one run each (Compute times a run that is not the first call; Compare all takes medians)"
	}
	cache := ""
	for _, r := range rs {
		if r.KernelPct > 100 {
			cache = " \"in cache\": faster than the ceiling, because the bands fit in the processor's cache, which the copy that sets the ceiling does not use."
			break
		}
	}
	note := widget.NewLabel(fmt.Sprintf("%s, %d×%d, %s; setup (context, compile, buffers) apart. "+
		"Kernel GB/s count the bytes the job moves (bands as stored, mask, output); the ceiling is a host memory copy for CPU backends, a device copy for GPU ones.%s",
		strings.ToUpper(rs[0].Index), rs[0].Width, rs[0].Height, runs, cache))
	note.Wrapping = fyne.TextWrapWord
	note.SizeName = theme.SizeNameCaptionText
	p.table.Add(grid)
	p.table.Add(note)
}

// ceilingText is the kernel's share of the ceiling as the table gives
// it: a percentage up to 100, "in cache" above (the note says why).
func ceilingText(pct float64) string {
	if pct > 100 {
		return "in cache"
	}
	return fmt.Sprintf("%.0f%%", pct)
}

// addResult puts a single run into the timing chart, replacing the
// backend's previous run; runs at another size or of another index are
// dropped.
func (p *chartsPanel) addResult(r compute.BenchResult) {
	var keep []compute.BenchResult
	replaced := false
	for _, o := range p.Timing.Results() {
		if o.Width != r.Width || o.Height != r.Height || o.Index != r.Index {
			continue
		}
		if o.Backend == r.Backend && o.Mode == r.Mode {
			keep = append(keep, r)
			replaced = true
			continue
		}
		keep = append(keep, o)
	}
	if !replaced {
		keep = append(keep, r)
	}
	sortResults(keep)
	p.showTimings(keep)
}

// results are the results a chart shows (a copy).
func (p *chartsPanel) results(which chartKind) []compute.BenchResult {
	v := p.Timing
	switch which {
	case chartSweep:
		v = p.SweepView
	case chartIndices:
		v = p.IndicesView
	}
	return append([]compute.BenchResult(nil), v.Results()...)
}

// The writers capture what is shown now, on the event goroutine, and
// write it from any goroutine.

func (p *chartsPanel) chartWriter(which chartKind) func(string) error {
	rs := p.results(which)
	return func(path string) error {
		if len(rs) == 0 {
			return errNothing
		}
		return writeChartPNG(path, rs, which)
	}
}

func (p *chartsPanel) csvWriter() func(string) error {
	runs := []chart.Run{{Name: "timings", Results: p.results(chartTimings)}, {Name: "size sweep", Results: p.results(chartSweep)}, {Name: "indices per upload", Results: p.results(chartIndices)}}
	n := len(runs[0].Results) + len(runs[1].Results) + len(runs[2].Results)
	return func(path string) error {
		if n == 0 {
			return errNothing
		}
		return writeCSV(path, runs)
	}
}

// exportChart writes a chart (the timings, the size sweep or the
// indices-per-upload sweep) as a PNG.
func (p *chartsPanel) exportChart(path string, which chartKind) error {
	return p.chartWriter(which)(path)
}

// exportCSV writes the timings shown (and the sweeps, if any) as CSV.
func (p *chartsPanel) exportCSV(path string) error { return p.csvWriter()(path) }

func (p *chartsPanel) exportChartDialog(which chartKind) {
	names := map[chartKind][2]string{
		chartTimings: {"timings.png", "the timing chart"},
		chartSweep:   {"sweep.png", "the sweep chart"},
		chartIndices: {"indices.png", "the indices chart"},
	}
	name, what := names[which][0], names[which][1]
	if len(p.results(which)) == 0 {
		p.alert(errNothing)
		return
	}
	p.saveDialog("Export "+what, name, []string{".png"}, func(path string) {
		p.exportJob(what, path, p.chartWriter(which))
	})
}

func (p *chartsPanel) exportCSVDialog() {
	if len(p.results(chartTimings)) == 0 && len(p.results(chartSweep)) == 0 && len(p.results(chartIndices)) == 0 {
		p.alert(errNothing)
		return
	}
	p.saveDialog("Export timings as CSV", "timings.csv", []string{".csv"}, func(path string) {
		p.exportJob("the timings", path, p.csvWriter())
	})
}

// showSweep draws the sweep chart and says where the GPU starts to win.
func (p *chartsPanel) showSweep(rs []compute.BenchResult) {
	p.SweepView.set(rs)
	p.crossover.SetText(crossoverText(rs))
}

// chartFunc draws a chart of results at w×h pixels.
type chartFunc func(rs []compute.BenchResult, w, h int) (image.Image, error)

// chartView shows a chart drawn by the engine at the size of the widget
// (re-drawn, in the background, when the size changes).
type chartView struct {
	widget.BaseWidget
	draw  chartFunc
	do    func(func()) // runs on the event goroutine
	empty *widget.Label
	image *canvas.Image

	mu      sync.Mutex
	results []compute.BenchResult
	drawnAt fyne.Size
	timer   *time.Timer
}

func newChartView(draw chartFunc, emptyText string) *chartView {
	v := &chartView{draw: draw, do: fyne.Do}
	v.empty = widget.NewLabel(emptyText)
	v.empty.Wrapping = fyne.TextWrapWord
	v.empty.Alignment = fyne.TextAlignCenter
	v.image = canvas.NewImageFromImage(nil)
	v.image.FillMode = canvas.ImageFillContain
	v.image.ScaleMode = canvas.ImageScaleSmooth
	v.ExtendBaseWidget(v)
	return v
}

// Image returns the chart shown, nil when there is none.
func (v *chartView) Image() image.Image { return v.image.Image }

// Results returns what the chart shows.
func (v *chartView) Results() []compute.BenchResult {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.results
}

func (v *chartView) set(rs []compute.BenchResult) {
	v.mu.Lock()
	v.results = rs
	v.drawnAt = fyne.Size{}
	v.mu.Unlock()
	if len(rs) == 0 {
		v.image.Image = nil
		v.image.Hide()
		v.empty.Show()
		v.image.Refresh()
		return
	}
	v.redraw(v.Size())
}

// redraw draws the chart for size s on the event goroutine: new results
// are shown at once.
func (v *chartView) redraw(s fyne.Size) {
	v.mu.Lock()
	rs := v.results
	if len(rs) == 0 || s.Width < 50 || s.Height < 50 || s == v.drawnAt {
		v.mu.Unlock()
		return
	}
	v.drawnAt = s
	v.mu.Unlock()
	pw, ph := v.pixels(s)
	img, err := v.draw(rs, pw, ph)
	v.show(img, err)
}

// pixels converts a size to physical pixels.
func (v *chartView) pixels(s fyne.Size) (int, int) {
	scale := float32(1)
	if c := fyne.CurrentApp().Driver().CanvasForObject(v); c != nil && c.Scale() > 0 {
		scale = c.Scale()
	}
	// The bars need room beside their labels: a narrower chart is drawn
	// wider, keeping the widget's shape, and shrinks into the widget.
	pw, ph := float64(s.Width*scale), float64(s.Height*scale)
	if pw < minChartW {
		ph *= minChartW / pw
		pw = minChartW
	}
	if ph < minChartH {
		pw *= minChartH / ph
		ph = minChartH
	}
	return int(pw), int(ph)
}

// The narrowest and lowest chart drawn, in pixels: below that the labels
// crowd the bars out (the engine refuses below 560×300).
const minChartW, minChartH = 900, 320

func (v *chartView) show(img image.Image, err error) {
	if err != nil || img == nil {
		v.image.Hide()
		if err != nil {
			v.empty.SetText("The chart could not be drawn: " + err.Error())
		}
		v.empty.Show()
		return
	}
	v.empty.Hide()
	v.image.Image = img
	v.image.Show()
	v.image.Refresh()
}

// Resize redraws the chart for the new size in the background, once the
// size has settled (drawing a gonum plot takes tens of milliseconds; the
// old picture is stretched meanwhile).
func (v *chartView) Resize(s fyne.Size) {
	v.BaseWidget.Resize(s)
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.results) == 0 || s.Width < 50 || s.Height < 50 || s == v.drawnAt {
		return
	}
	if v.image.Image == nil {
		v.mu.Unlock()
		v.redraw(s)
		v.mu.Lock()
		return
	}
	if v.timer != nil {
		v.timer.Stop()
	}
	rs := v.results
	pw, ph := v.pixels(s)
	v.timer = time.AfterFunc(150*time.Millisecond, func() {
		img, err := v.draw(rs, pw, ph)
		v.do(func() {
			v.mu.Lock()
			stale := len(v.results) != len(rs) || (len(rs) > 0 && &v.results[0] != &rs[0]) || v.Size() != s
			if !stale {
				v.drawnAt = s
			}
			v.mu.Unlock()
			if !stale {
				v.show(img, err)
			}
		})
	})
}

// reshow draws the chart again when it comes into view (its tab picked):
// a picture that is missing is drawn, one that is there is uploaded
// again, so that a chart never stays blank after another tab's runs.
func (v *chartView) reshow() {
	v.mu.Lock()
	has := len(v.results) > 0
	v.drawnAt = fyne.Size{}
	v.mu.Unlock()
	if !has {
		return
	}
	if v.image.Image == nil || !v.image.Visible() {
		v.redraw(v.Size())
		return
	}
	v.image.Refresh()
}

// reshow draws again the chart of the Benchmarks tab shown (i: 0
// Timings, 1 Size sweep, 2 Indices per upload).
func (p *chartsPanel) reshow(i int) {
	for k, v := range []*chartView{p.Timing, p.SweepView, p.IndicesView} {
		if k == i {
			v.reshow()
		}
	}
}

func (v *chartView) MinSize() fyne.Size { return fyne.NewSize(200, 160) }

// CreateRenderer builds the chart's renderer, the first time and again
// whenever Fyne's cache dropped the old one (it drops the renderers of
// widgets that were not painted for a minute: a hidden tab's, during a long
// run elsewhere). The new one shows what the chart holds, laid out at the
// widget's size at once: hiding the picture here, or waiting for a layout
// that only a resize brings, left the charts blank after "Indices per
// upload".
func (v *chartView) CreateRenderer() fyne.WidgetRenderer {
	if v.image.Image != nil {
		v.image.Show()
		v.empty.Hide()
	} else {
		v.image.Hide()
		v.empty.Show()
	}
	r := widget.NewSimpleRenderer(container.NewStack(v.image, container.NewVBox(layout.NewSpacer(), v.empty, layout.NewSpacer())))
	r.Layout(v.Size())
	return r
}
