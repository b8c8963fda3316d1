package ui

import (
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"math"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"canopy/compute"
	"canopy/compute/index"
	"canopy/compute/season"
	"canopy/compute/stack"
	"canopy/ui/mapview"
	"canopy/ui/render/colormap"
)

// tsStack is the window's door to a stack of dates (compute/stack) and to
// the per-pixel models (compute/season): the time-series view asks it for
// a date's plane and a pixel's series and never assembles the engine
// itself.
type tsStack struct {
	st    *stack.Stack
	dates []float64 // decimal years
	w, h  int
	cube  []float32 // date-major, w×h values a date
	fit   *season.Plan
	mon   *season.Plan // nil when the stack is too short to monitor
}

// openTSStack opens the GeoTIFFs or products at paths (one date each,
// dated by their metadata or name) as a stack of the index name on the
// go-parallel backend (name: a catalogue index or a formula) and keeps its cube in memory.
func openTSStack(ctx context.Context, paths []string, name string) (*tsStack, error) {
	if len(paths) < 2 {
		return nil, errors.New("--stack: a stack needs at least two dates (give --stack once for each file)")
	}
	var entries []stack.Entry
	for _, p := range paths {
		e, err := stack.DateOf(ctx, p)
		if err != nil {
			return nil, err
		}
		entries = append(entries, e)
	}
	name, ex, err := index.Resolve(name)
	if err != nil {
		return nil, err
	}
	b, err := compute.New(compute.NameGoParallel)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	st, err := stack.Build(ctx, stack.Group(entries), stack.Options{Backend: b, Name: name, Expr: ex})
	if err != nil {
		return nil, err
	}
	return newTSStack(st, paths[0])
}

// newTSStack keeps a built stack's cube in memory for the view, with the
// plans of its fit and its monitor; it takes st (closing it on failure).
// what names the stack in an error.
func newTSStack(st *stack.Stack, what string) (*tsStack, error) {
	if !st.InMemory() {
		// The view reads whole dates and keeps the cube; one past the
		// stack's memory budget is for the terminal's block-by-block runs.
		g := st.Grid
		st.Close()
		return nil, fmt.Errorf("%s: a stack of %d dates of %d×%d pixels is larger than the window keeps in memory (1 GiB); run canopy monitor or canopy stack on it", what, len(st.Dates), g.Width, g.Height)
	}
	s := &tsStack{st: st, dates: st.Decimals(), w: st.Grid.Width, h: st.Grid.Height}
	c, err := st.Cube(0, s.h, nil)
	if err != nil {
		st.Close()
		return nil, err
	}
	s.cube = c.Values
	first, last := s.dates[0], s.dates[len(s.dates)-1]
	// The fit: an annual harmonic and a trend over every date.
	s.fit, err = season.NewPlan(season.Model{Kind: season.Harmonic, Harmonics: 1, Trend: true,
		History: season.Period{From: first - 1, To: last + 1}}, s.dates)
	if err != nil {
		st.Close()
		return nil, err
	}
	// The monitor: bfastmonitor's MOSUM with the same model, the first two
	// thirds of the dates as history, the rest monitored.
	if T := len(s.dates); T >= 6 {
		split := s.dates[(2*T)/3]
		m := season.DefaultMosum(season.Period{From: first - 1, To: split}, season.Period{From: split, To: math.Inf(1)})
		m.Harmonics = 1
		if p, err := season.NewPlan(m, s.dates); err == nil {
			s.mon = p
		}
	}
	return s, nil
}

// Close releases the stack.
func (s *tsStack) Close() error { return s.st.Close() }

// Plane is date t's index map (w×h values, NaN where masked).
func (s *tsStack) Plane(t int) []float32 {
	P := s.w * s.h
	return s.cube[t*P : (t+1)*P]
}

// tsSeries is one pixel's time series and its models.
type tsSeries struct {
	Col, Row int
	Dates    []float64 // decimal years
	Values   []float64 // NaN: masked on that date
	Fitted   []float64 // the harmonic model on each date (NaN: no fit)
	Coefs    []float64 // the model's coefficients (Model.Outputs' order, past rmse and count)
	Break    float64   // the monitoring break's decimal year, NaN when none
}

// Series works out the pixel's series on the CPU from the cube in memory.
// One pixel is a few dozen values and a least-squares fit of a handful of
// coefficients: microseconds on the CPU, far less than an upload to a GPU
// and a read back would take, so no backend is involved.
func (s *tsStack) Series(col, row int) tsSeries {
	T, P := len(s.dates), s.w*s.h
	px := row*s.w + col
	one := make([]float32, T)
	r := tsSeries{Col: col, Row: row, Dates: s.dates, Values: make([]float64, T), Fitted: make([]float64, T), Break: math.NaN()}
	for t := range T {
		one[t] = s.cube[t*P+px]
		r.Values[t] = float64(one[t])
	}
	c := season.Cube{Dates: s.dates, Pixels: 1, Values: one}
	ref := season.Ref(season.NewJob(s.fit, c))
	k := s.fit.Coefs
	for j := range k {
		r.Coefs = append(r.Coefs, ref.Out[2+j][0])
	}
	for t := range T {
		v := 0.0
		for j := range k {
			v += s.fit.X[t*k+j] * r.Coefs[j]
		}
		r.Fitted[t] = v // NaN coefficients (no fit) give NaN
	}
	if s.mon != nil {
		r.Break = season.Ref(season.NewJob(s.mon, c)).Out[0][0]
	}
	return r
}

// timeSeriesView is the stack's window: a date slider over the map of the
// chosen date, and the clicked pixel's series below.
type timeSeriesView struct {
	win    fyne.Window
	s      *tsStack
	slider *widget.Slider
	label  *widget.Label
	mapv   *mapview.View
	chart  *canvas.Raster
	info   *widget.Label
	lut    *colormap.LUT
	date   int
	series *tsSeries
	// lastClick is how long the last click took to its series drawn.
	lastClick time.Duration
}

// newTimeSeriesView builds the stack's view in win.
func newTimeSeriesView(win fyne.Window, s *tsStack) *timeSeriesView {
	v := &timeSeriesView{win: win, s: s, mapv: mapview.New(), label: widget.NewLabel(""), info: widget.NewLabel("Click a pixel to draw its time series.")}
	v.lut, _ = colormap.New(colormap.DefaultRamp, -1, 1)
	v.slider = widget.NewSlider(0, float64(len(s.dates)-1))
	v.slider.Step = 1
	v.slider.OnChanged = func(f float64) { v.ShowDate(int(math.Round(f))) }
	v.chart = canvas.NewRaster(v.drawChart)
	v.chart.SetMinSize(fyne.NewSize(480, 180))
	v.mapv.OnProbe = func(col, row int, inside, pinned bool) {
		if inside && pinned {
			v.Click(col, row)
		}
	}
	top := container.NewBorder(nil, nil, v.label, nil, v.slider)
	bottom := container.NewBorder(v.info, nil, nil, nil, v.chart)
	win.SetContent(container.NewBorder(top, bottom, nil, nil, v.mapv))
	v.ShowDate(0)
	return v
}

// ShowDate shows date t's index map.
func (v *timeSeriesView) ShowDate(t int) {
	t = max(0, min(t, len(v.s.dates)-1))
	v.date = t
	d := v.s.st.Dates[t]
	v.label.SetText(fmt.Sprintf("%s (%d of %d)", d.ISO, t+1, len(v.s.dates)))
	v.mapv.SetData(v.s.Plane(t), v.s.w, v.s.h, v.lut)
	if v.slider.Value != float64(t) {
		v.slider.SetValue(float64(t))
	}
	v.chart.Refresh()
}

// Click draws the series of the pixel at col, row.
func (v *timeSeriesView) Click(col, row int) {
	t0 := time.Now()
	r := v.s.Series(col, row)
	v.series = &r
	brk := "no break"
	if r.Break == r.Break {
		brk = "break " + season.ISODate(r.Break)
	}
	v.info.SetText(fmt.Sprintf("Pixel %d, %d: %d dates, %s", col, row, len(r.Dates), brk))
	v.chart.Refresh()
	v.lastClick = time.Since(t0)
}

// drawChart draws the series: observations as dots, masked dates as grey
// ticks at the bottom, the fitted model as a line, the break as a red
// vertical line and the shown date as a thin grey one.
func (v *timeSeriesView) drawChart(w, h int) image.Image {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	tsFill(img, color.NRGBA{255, 255, 255, 255})
	d := v.s.dates
	if w < 4 || h < 4 || len(d) == 0 {
		return img
	}
	x0, x1 := d[0], d[len(d)-1]
	if x1 <= x0 {
		x1 = x0 + 1
	}
	px := func(x float64) int { return 4 + int((x-x0)/(x1-x0)*float64(w-9)) }
	lo, hi := -1.0, 1.0
	py := func(y float64) int { return h - 5 - int((y-lo)/(hi-lo)*float64(h-10)) }
	tsVline(img, px(d[v.date]), color.NRGBA{200, 200, 200, 255})
	r := v.series
	if r == nil {
		return img
	}
	if r.Break == r.Break {
		tsVline(img, px(r.Break), color.NRGBA{220, 30, 30, 255})
	}
	for t := 1; t < len(d); t++ {
		a, b := r.Fitted[t-1], r.Fitted[t]
		if a == a && b == b {
			tsLine(img, px(d[t-1]), py(a), px(d[t]), py(b), color.NRGBA{30, 90, 200, 255})
		}
	}
	for t := range d {
		if y := r.Values[t]; y == y {
			tsDot(img, px(d[t]), py(y), color.NRGBA{20, 120, 40, 255})
		} else {
			for k := h - 8; k < h; k++ {
				img.Set(px(d[t]), k, color.NRGBA{120, 120, 120, 255})
			}
		}
	}
	return img
}

func tsFill(img *image.NRGBA, c color.NRGBA) {
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			img.SetNRGBA(x, y, c)
		}
	}
}

func tsVline(img *image.NRGBA, x int, c color.NRGBA) {
	for y := range img.Bounds().Dy() {
		img.SetNRGBA(x, y, c)
	}
}

func tsDot(img *image.NRGBA, x, y int, c color.NRGBA) {
	for dy := -2; dy <= 2; dy++ {
		for dx := -2; dx <= 2; dx++ {
			if dx*dx+dy*dy <= 5 {
				img.SetNRGBA(x+dx, y+dy, c)
			}
		}
	}
}

// tsLine draws a straight line (Bresenham); points off the image are
// clipped by SetNRGBA.
func tsLine(img *image.NRGBA, xa, ya, xb, yb int, c color.NRGBA) {
	dx, dy := tsAbs(xb-xa), -tsAbs(yb-ya)
	sx, sy := 1, 1
	if xa > xb {
		sx = -1
	}
	if ya > yb {
		sy = -1
	}
	e := dx + dy
	for n := 0; n < 1<<16; n++ {
		img.SetNRGBA(xa, ya, c)
		if xa == xb && ya == yb {
			return
		}
		if e2 := 2 * e; e2 >= dy {
			e += dy
			xa += sx
		}
		if e2 := 2 * e; e2 <= dx {
			e += dx
			ya += sy
		}
	}
}

func tsAbs(a int) int {
	if a < 0 {
		return -a
	}
	return a
}

// openTimeSeries opens the stack at paths in a window of its own, built
// off the event goroutine.
func openTimeSeries(a fyne.App, paths []string, name string) {
	win := a.NewWindow("Canopy — time series")
	msg := widget.NewLabel(fmt.Sprintf("Opening a stack of %d files…", len(paths)))
	win.SetContent(msg)
	win.Resize(fyne.NewSize(900, 700))
	win.Show()
	go func() {
		s, err := openTSStack(context.Background(), paths, name)
		fyne.Do(func() {
			if err != nil {
				msg.SetText("Stack: " + explain(err).Error())
				return
			}
			newTimeSeriesView(win, s)
			win.SetOnClosed(func() { s.Close() })
		})
	}()
}
