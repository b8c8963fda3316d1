package ui

import (
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/widget"

	"canopy/compute"
	"canopy/compute/index"
	"canopy/compute/season"
	"canopy/compute/stack"
	"canopy/compute/vector"
	"canopy/compute/zonal"
	"canopy/ui/mapview"
	"canopy/ui/render/colormap"
)

// tsStack is the window's door to a stack of dates (compute/stack): the
// cube in host memory, which the date slider's maps and a click's series
// read, and the grid stands are placed on. The per-pixel models run on it
// through compute/season; the view never assembles the engine itself.
type tsStack struct {
	st    *stack.Stack
	dates []float64 // decimal years
	w, h  int
	cube  []float32 // date-major, w×h values a date
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
	return buildTSStack(ctx, stack.Group(entries), name, paths[0], nil)
}

// buildTSStack builds the stack of dates (the index name computed on
// go-parallel, each date's product mask) and keeps its cube for the view;
// what names it in an error, progress hears each date.
func buildTSStack(ctx context.Context, dates []stack.Date, name, what string, progress func(done, total int)) (*tsStack, error) {
	name, ex, err := index.Resolve(name)
	if err != nil {
		return nil, err
	}
	b, err := compute.New(compute.NameGoParallel)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	st, err := stack.Build(ctx, dates, stack.Options{Backend: b, Name: name, Expr: ex, Progress: progress})
	if err != nil {
		return nil, err
	}
	return newTSStack(st, what)
}

// newTSStack keeps a built stack's cube in memory for the view; it takes
// st (closing it on failure). what names the stack in an error.
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
	return s, nil
}

// Close releases the stack.
func (s *tsStack) Close() error { return s.st.Close() }

// Plane is date t's index map (w×h values, NaN where masked).
func (s *tsStack) Plane(t int) []float32 {
	P := s.w * s.h
	return s.cube[t*P : (t+1)*P]
}

// Cube is the whole stack as one season cube.
func (s *tsStack) Cube() season.Cube {
	return season.Cube{Dates: s.dates, Pixels: s.w * s.h, Values: s.cube}
}

// tsModel is what the window's controls say of the model: the rule
// (season.Mosum, bfastmonitor's; season.Anomaly, fordead's), the
// season-trend model (harmonics, trend) fitted on the history
// [HistoryFrom, MonitorFrom), the monitoring from MonitorFrom to the last
// date, the MOSUM's level and the anomaly's threshold.
type tsModel struct {
	Rule                     season.Kind
	Harmonics                int
	Trend                    bool
	HistoryFrom, MonitorFrom float64 // decimal years
	Level, Threshold         float64
}

// plans are the model's plans over the dates: the season-trend fit of the
// history (drawn through every date) and the monitoring rule.
func (m tsModel) plans(dates []float64) (fit, mon *season.Plan, err error) {
	if !(m.MonitorFrom > m.HistoryFrom) {
		return nil, nil, errors.New("the monitoring must start after the history starts")
	}
	hist := season.Period{From: m.HistoryFrom, To: m.MonitorFrom}
	fit, err = season.NewPlan(season.Model{Kind: season.Harmonic, Harmonics: m.Harmonics, Trend: m.Trend, History: hist}, dates)
	if err != nil {
		return nil, nil, err
	}
	watch := season.Period{From: m.MonitorFrom, To: math.Inf(1)}
	mm := season.DefaultMosum(hist, watch)
	mm.Harmonics, mm.Trend, mm.Level = m.Harmonics, m.Trend, m.Level
	if m.Rule == season.Anomaly {
		mm = season.Model{Kind: season.Anomaly, Harmonics: m.Harmonics, Trend: m.Trend, History: hist, Monitor: watch,
			Threshold: m.Threshold, Direction: season.Down, Run: 3}
	}
	mon, err = season.NewPlan(mm, dates)
	return fit, mon, err
}

// tsSeries is one pixel's or one stand's time series and its models.
type tsSeries struct {
	Col, Row int
	// Stand is the stand's index in the view's stands, -1 for a pixel;
	// Stat is how its pixels make a date's value ("mean", "median").
	Stand int
	Stat  string
	Dates []float64 // decimal years
	// Values: the pixel's value, or the stand's statistic, on each date
	// (NaN: masked, or none of the stand's pixels valid).
	Values []float64
	// Masked is the stand's masked share on each date (nil for a pixel).
	Masked []float64
	Fitted []float64 // the history's harmonic model on each date (NaN: no fit)
	Coefs  []float64 // the model's coefficients (Model.Outputs' order, past rmse and count)
	// Break is the monitoring's break or alert (decimal year, NaN when
	// none), Magnitude its magnitude.
	Break, Magnitude float64
}

// seriesOf works out the models of one series on the CPU with season's
// float64 reference: one series is a few dozen values and a
// least-squares fit of a handful of coefficients, microseconds, far less
// than a trip to a GPU and back.
func seriesOf(values []float64, dates []float64, fit, mon *season.Plan) tsSeries {
	T := len(dates)
	one := make([]float32, T)
	for t, v := range values {
		one[t] = float32(v)
	}
	r := tsSeries{Stand: -1, Dates: dates, Values: values, Fitted: make([]float64, T), Break: math.NaN(), Magnitude: math.NaN()}
	if fit == nil {
		for t := range r.Fitted {
			r.Fitted[t] = math.NaN()
		}
		return r
	}
	c := season.Cube{Dates: dates, Pixels: 1, Values: one}
	ref := season.Ref(season.NewJob(fit, c))
	k := fit.Coefs
	for j := range k {
		r.Coefs = append(r.Coefs, ref.Out[2+j][0])
	}
	for t := range T {
		v := 0.0
		for j := range k {
			v += fit.X[t*k+j] * r.Coefs[j]
		}
		r.Fitted[t] = v // NaN coefficients (no fit) give NaN
	}
	if mon != nil {
		o := season.Ref(season.NewJob(mon, c)).Out
		r.Break, r.Magnitude = o[0][0], o[1][0]
	}
	return r
}

// Series is the pixel's series (its values from the cube in memory) and
// its models.
func (s *tsStack) Series(col, row int, fit, mon *season.Plan) tsSeries {
	T, P := len(s.dates), s.w*s.h
	px := row*s.w + col
	vals := make([]float64, T)
	for t := range T {
		vals[t] = float64(s.cube[t*P+px])
	}
	r := seriesOf(vals, s.dates, fit, mon)
	r.Col, r.Row = col, row
	return r
}

// tsStands are stands placed on the stack's grid (in its CRS), with each
// stand's coverage of the grid worked out on its first click. The view
// swaps the whole value (atomic) so that the map's overlay, drawn on
// another goroutine, reads one consistent set.
type tsStands struct {
	spec     string
	stands   []zonal.Stand
	gt       [6]float64
	selected int
	cov      []*zonal.CoverageGrid // event goroutine only
}

// readTSStands reads the stands of spec (FILE[:LAYER]) onto the stack's
// grid.
func readTSStands(spec string, s *tsStack) (*tsStands, error) {
	geo := s.st.Grid.Geo
	if geo == nil || !geo.Valid() {
		return nil, errors.New("stands: the stack has no georeference to place stands on")
	}
	gt, ok := geo.Affine()
	if !ok {
		return nil, errors.New("stands: the stack has no affine geotransform")
	}
	path, name, err := vector.ParseStands(spec)
	if err != nil {
		return nil, err
	}
	l, err := vector.Read(path, name)
	if err != nil {
		return nil, err
	}
	if l, _, err = vector.OnRaster(l, geo); err != nil {
		return nil, fmt.Errorf("stands %s: %v", path, err)
	}
	st, err := zonal.StandsFromLayer(l, l.DefaultIDField())
	if err != nil {
		return nil, err
	}
	if len(st) == 0 {
		return nil, fmt.Errorf("stands %s: the layer is empty", path)
	}
	return &tsStands{spec: spec, stands: st, gt: gt, selected: -1, cov: make([]*zonal.CoverageGrid, len(st))}, nil
}

// at is the stand containing image point (x, y) (pixels), the last one
// when they overlap, -1 when none.
func (t *tsStands) at(x, y float64) int { return standAt(t.stands, t.gt, x, y) }

// StandSeries is stand i's series: per date the mean or median of its
// valid pixels (weighted by the share of each it covers, as the zonal
// statistics are) and its masked share, and the series' models.
func (s *tsStack) StandSeries(st *tsStands, i int, median bool, fit, mon *season.Plan) (tsSeries, error) {
	if st.cov[i] == nil {
		c, err := zonal.Coverage(st.stands[i].Geom, st.gt, s.w, s.h)
		if err != nil {
			return tsSeries{}, fmt.Errorf("stand %s: %v", st.stands[i].ID, err)
		}
		st.cov[i] = c
	}
	z, err := zonal.StandSeries(st.cov[i], s.cube, s.w, s.h, len(s.dates), median)
	if err != nil {
		return tsSeries{}, err
	}
	stat := "mean"
	if median {
		stat = "median"
	}
	r := seriesOf(z.Values, s.dates, fit, mon)
	r.Stand, r.Stat, r.Masked, r.Col, r.Row = i, stat, z.Masked, -1, -1
	return r, nil
}

// The map's choices.
const (
	tsShowIndex     = "Index on the date"
	tsShowBreak     = "Break date"
	tsShowMagnitude = "Magnitude"
	tsRuleMosum     = "MOSUM (bfastmonitor)"
	tsRuleAnomaly   = "Anomaly (fordead)"
	tsClickPixel    = "Pixel"
	tsClickMean     = "Stand, mean"
	tsClickMedian   = "Stand, median"
)

// tsLevels are the MOSUM's levels offered (strucchange's table spans
// 0.001 to 0.05).
var tsLevels = []string{"0.001", "0.005", "0.01", "0.025", "0.05"}

// tsRun is what the last model run over the whole area gave.
type tsRun struct {
	plan *season.Plan
	out  [][]float32
	// wall is the run as the user waited for it, t its phases.
	wall time.Duration
	t    compute.Timings
	// onDevice: the cube is on the backend's device; uploaded: this run
	// uploaded it (the first), upload that upload.
	onDevice, uploaded bool
	upload             compute.Timings
	backend            string
}

// timeSeriesView is the stack's window: a date slider over the map of the
// chosen date (or the model's break dates or magnitudes over the whole
// area), the model's controls, and the clicked pixel's or stand's series
// below. The model runs over the whole area on the backend the view was
// given: on a GPU backend (cuda, gl) the cube is uploaded once and kept
// there, and each change of a control re-runs the model on the kept cube;
// on a CPU backend each run goes through its season.Runner. Runs are
// bridge jobs: the window never waits, and a newer run cancels an older
// one.
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

	// The model's controls and what they say.
	rule, harmonics, level, show, click *widget.Select
	trend                               *widget.Check
	historyFrom, monitorFrom, threshold *widget.Entry
	standsButton                        *widget.Button
	runInfo                             *widget.Label
	model                               tsModel
	fit, mon                            *season.Plan

	// backend runs the models (the view's own instance, closed with
	// it); kept is the cube kept where it computes, touched only by the
	// bridge's jobs, which take turns.
	backend compute.Backend
	kept    *season.Kept
	bridge  *bridge
	// run is the last whole-area run shown; runs and uploads count the
	// runs and the cube's uploads.
	run           *tsRun
	runs, uploads int

	// stands are the stands placed on the stack's grid (nil: none);
	// standsFrom, when set, names the stands the main window has open,
	// which a click picks up.
	stands     atomic.Pointer[tsStands]
	standsFrom func() string
	// standsTried is the last stands file read (or tried).
	standsTried string
	closeOnce   sync.Once

	// lastSeries is how long the last click took to its series and
	// models, lastClick to them shown (the labels set, the chart asked to
	// redraw).
	lastSeries, lastClick time.Duration
}

// tsOptions are what a time-series view is given besides its stack.
type tsOptions struct {
	// backend runs the models; the view takes it and closes it. nil:
	// go-parallel.
	backend compute.Backend
	// loop is the test's event loop (nil: Fyne's).
	loop *eventLoop
	// stands is a stands file to open (FILE[:LAYER]); standsFrom names the
	// main window's.
	stands     string
	standsFrom func() string
}

// newTimeSeriesView builds the stack's view in win and starts the first
// model run (the cube's upload on a GPU backend).
func newTimeSeriesView(win fyne.Window, s *tsStack, o tsOptions) *timeSeriesView {
	v := &timeSeriesView{win: win, s: s, mapv: mapview.New(), label: widget.NewLabel(""), info: widget.NewLabel("Click a pixel or a stand to draw its time series."),
		runInfo: widget.NewLabel(""), backend: o.backend, standsFrom: o.standsFrom}
	if v.backend == nil || !season.Runs(v.backend) {
		if v.backend != nil {
			v.backend.Close()
		}
		v.backend, _ = compute.New(compute.NameGoParallel)
	}
	v.bridge = &bridge{loop: o.loop,
		onBusy: func(busy bool, label string) {
			if busy {
				v.runInfo.SetText(label + "…")
			}
		},
		onError: func(label string, err error) { v.runInfo.SetText(label + ": " + explain(err).Error()) },
	}
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
	v.mapv.SetOverlay(v.drawStands)

	// The model's controls, at bfastmonitor's defaults: the first two
	// thirds of the dates the history, the rest monitored.
	T := len(s.dates)
	v.model = tsModel{Rule: season.Mosum, Harmonics: 1, Trend: true, Level: 0.05, Threshold: 0.1}
	v.rule = widget.NewSelect([]string{tsRuleMosum, tsRuleAnomaly}, nil)
	v.rule.SetSelected(tsRuleMosum)
	v.harmonics = widget.NewSelect([]string{"0", "1", "2", "3"}, nil)
	v.harmonics.SetSelected("1")
	v.trend = widget.NewCheck("Trend", nil)
	v.trend.SetChecked(true)
	v.historyFrom, v.monitorFrom, v.threshold = widget.NewEntry(), widget.NewEntry(), widget.NewEntry()
	v.historyFrom.SetText(s.st.Dates[0].ISO)
	v.monitorFrom.SetText(s.st.Dates[min(T-1, (2*T)/3)].ISO)
	v.threshold.SetText("0.1")
	v.level = widget.NewSelect(tsLevels, nil)
	v.level.SetSelected("0.05")
	v.show = widget.NewSelect([]string{tsShowIndex, tsShowBreak, tsShowMagnitude}, func(string) { v.refreshMap() })
	v.show.SetSelected(tsShowIndex)
	v.click = widget.NewSelect([]string{tsClickPixel, tsClickMean, tsClickMedian}, func(string) { v.redrawSeries() })
	v.click.SetSelected(tsClickPixel)
	v.standsButton = widget.NewButton("Stands…", v.openStandsDialog)
	changed := func() { v.modelChanged() }
	v.rule.OnChanged = func(string) { changed() }
	v.harmonics.OnChanged = func(string) { changed() }
	v.trend.OnChanged = func(bool) { changed() }
	v.level.OnChanged = func(string) { changed() }
	v.historyFrom.OnChanged = func(string) { changed() }
	v.monitorFrom.OnChanged = func(string) { changed() }
	v.threshold.OnChanged = func(string) { changed() }

	form := container.NewHBox(
		widget.NewLabel("Rule"), v.rule, widget.NewLabel("Harmonics"), v.harmonics, v.trend,
		widget.NewLabel("History from"), v.historyFrom, widget.NewLabel("Monitoring from"), v.monitorFrom,
		widget.NewLabel("Level"), v.level, widget.NewLabel("Threshold"), v.threshold)
	view := container.NewHBox(widget.NewLabel("Map"), v.show, widget.NewLabel("Click draws"), v.click, v.standsButton)
	top := container.NewVBox(container.NewBorder(nil, nil, v.label, nil, v.slider), container.NewHScroll(form), view, v.runInfo)
	bottom := container.NewBorder(v.info, nil, nil, nil, v.chart)
	win.SetContent(container.NewBorder(top, bottom, nil, nil, v.mapv))
	v.ShowDate(0)
	if o.stands != "" {
		v.OpenStands(o.stands)
	}
	v.modelChanged()
	return v
}

// Wait waits for the view's jobs (the model runs, the stands read) and
// shows their results; tests use it.
func (v *timeSeriesView) Wait() { v.bridge.wait() }

// Close stops the view's jobs and frees the stack, the kept cube and the
// backend; the window calls it when it closes.
func (v *timeSeriesView) Close() {
	v.closeOnce.Do(func() {
		v.bridge.stop()
		v.bridge.wg.Wait()
		if v.kept != nil {
			v.kept.Close()
			v.kept = nil
		}
		v.backend.Close()
		v.s.Close()
	})
}

// readModel reads the controls into a model.
func (v *timeSeriesView) readModel() (tsModel, error) {
	m := tsModel{Rule: season.Mosum, Trend: v.trend.Checked}
	if v.rule.Selected == tsRuleAnomaly {
		m.Rule = season.Anomaly
	}
	var err error
	if m.Harmonics, err = strconv.Atoi(v.harmonics.Selected); err != nil {
		return m, errors.New("harmonics: pick 0 to 3")
	}
	date := func(what, s string) (float64, error) {
		t, err := time.Parse("2006-01-02", strings.TrimSpace(s))
		if err != nil {
			return 0, fmt.Errorf("%s %q: a date as YYYY-MM-DD, please", what, s)
		}
		return season.DecimalYear(t), nil
	}
	if m.HistoryFrom, err = date("History from", v.historyFrom.Text); err != nil {
		return m, err
	}
	if m.MonitorFrom, err = date("Monitoring from", v.monitorFrom.Text); err != nil {
		return m, err
	}
	if m.Level, err = strconv.ParseFloat(v.level.Selected, 64); err != nil {
		return m, errors.New("level: pick one of " + strings.Join(tsLevels, ", "))
	}
	if m.Threshold, err = strconv.ParseFloat(strings.TrimSpace(v.threshold.Text), 64); err != nil || m.Threshold < 0 || math.IsInf(m.Threshold, 0) {
		return m, fmt.Errorf("threshold %q: a number ≥ 0 (the residual below the model that counts as an anomaly)", v.threshold.Text)
	}
	return m, nil
}

// modelChanged reads the controls and, when they say a model, redraws the
// series shown with it and re-runs it over the whole area.
func (v *timeSeriesView) modelChanged() {
	anomaly := v.rule.Selected == tsRuleAnomaly
	setEnabled(v.level, !anomaly)
	setEnabled(v.threshold, anomaly)
	m, err := v.readModel()
	if err == nil {
		var fit, mon *season.Plan
		if fit, mon, err = m.plans(v.s.dates); err == nil {
			v.model, v.fit, v.mon = m, fit, mon
		}
	}
	if err != nil {
		v.bridge.stop()
		v.runInfo.SetText("Model: " + explain(err).Error())
		return
	}
	v.redrawSeries()
	v.runModel()
}

// setEnabled enables or disables a widget.
func setEnabled(w fyne.Disableable, on bool) {
	if on {
		w.Enable()
	} else {
		w.Disable()
	}
}

// runModel runs the current model over the whole area as a job: on the
// first run the cube goes where the backend computes (a GPU backend's
// card), later runs reuse it.
func (v *timeSeriesView) runModel() {
	p := v.mon
	what := fmt.Sprintf("Running %s on %s", p.Model.Kind, v.backend.Name())
	v.bridge.start(what, func(ctx context.Context, _ progressFunc) (func(), error) {
		r := &tsRun{plan: p, backend: v.backend.Name()}
		if v.kept == nil {
			k, err := season.Keep(v.backend, v.s.Cube())
			if err != nil {
				return nil, err
			}
			v.kept = k
			r.uploaded, r.upload = k.OnDevice(), k.Upload()
		}
		r.onDevice = v.kept.OnDevice()
		r.out = season.NewJob(p, season.Cube{Dates: v.s.dates, Pixels: v.kept.Pixels()}).Out
		t0 := time.Now()
		t, err := v.kept.Run(ctx, p, r.out)
		r.wall, r.t = time.Since(t0), t
		if err != nil {
			return nil, err
		}
		return func() {
			v.run = r
			v.runs++
			if r.uploaded {
				v.uploads++
			}
			v.runInfo.SetText(r.describe())
			v.refreshMap()
		}, nil
	})
}

// describe says what the run cost and where the cube is.
func (r *tsRun) describe() string {
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/1e6) }
	if !r.onDevice {
		return fmt.Sprintf("%s model %s on %s (CPU, cube in memory)", r.plan.Model.Kind, ms(r.wall), r.backend)
	}
	s := fmt.Sprintf("%s model %s on %s (kernel %s), cube resident", r.plan.Model.Kind, ms(r.wall), r.backend, ms(r.t.Kernel))
	if r.t.Setup > 0 {
		// cuda compiles a kernel for each new model (its parameters baked in)
		s = fmt.Sprintf("%s model %s on %s (kernel %s; %s compiling the new model's kernel), cube resident", r.plan.Model.Kind, ms(r.wall), r.backend, ms(r.t.Kernel), ms(r.t.Setup))
	}
	if r.uploaded {
		return s + fmt.Sprintf("; uploaded once, %s", ms(r.upload.Total))
	}
	return s + ", no upload"
}

// refreshMap shows what the Map picker says: the index on the slider's
// date, or the last run's break dates or magnitudes.
func (v *timeSeriesView) refreshMap() {
	r := v.run
	switch {
	case v.show.Selected == tsShowBreak && r != nil:
		lo, hi := r.plan.Model.Monitor.From, v.s.dates[len(v.s.dates)-1]
		lut, err := colormap.New(colormap.RampViridis, lo, math.Max(hi, lo+1.0/365))
		if err == nil {
			v.mapv.SetData(r.out[0], v.s.w, v.s.h, lut)
			return
		}
	case v.show.Selected == tsShowMagnitude && r != nil:
		if lut, err := colormap.New(colormap.DefaultRamp, -0.5, 0.5); err == nil {
			v.mapv.SetData(r.out[1], v.s.w, v.s.h, lut)
			return
		}
	}
	v.mapv.SetData(v.s.Plane(v.date), v.s.w, v.s.h, v.lut)
}

// ShowDate shows date t's index map.
func (v *timeSeriesView) ShowDate(t int) {
	t = max(0, min(t, len(v.s.dates)-1))
	v.date = t
	d := v.s.st.Dates[t]
	v.label.SetText(fmt.Sprintf("%s (%d of %d)", d.ISO, t+1, len(v.s.dates)))
	if v.show == nil || v.show.Selected == tsShowIndex || v.run == nil {
		v.mapv.SetData(v.s.Plane(t), v.s.w, v.s.h, v.lut)
	}
	if v.slider.Value != float64(t) {
		v.slider.SetValue(float64(t))
	}
	v.chart.Refresh()
}

// Click draws the series of the pixel at col, row, or of the stand there
// when the click draws stands.
func (v *timeSeriesView) Click(col, row int) {
	t0 := time.Now()
	st := v.stands.Load()
	if v.standsFrom != nil {
		if spec := v.standsFrom(); spec != "" && spec != v.standsTried && (st == nil || st.spec != spec) {
			// The main window opened other stands: read them onto the
			// stack's grid, then draw this click.
			v.openStands(spec, func() { v.Click(col, row) })
			return
		}
	}
	if v.click.Selected != tsClickPixel && st != nil {
		if i := st.at(float64(col)+0.5, float64(row)+0.5); i >= 0 {
			r, err := v.s.StandSeries(st, i, v.click.Selected == tsClickMedian, v.fit, v.mon)
			if err != nil {
				v.info.SetText(explain(err).Error())
				return
			}
			v.lastSeries = time.Since(t0)
			v.showSeries(&r)
			v.selectStand(i)
			v.lastClick = time.Since(t0)
			return
		}
	}
	r := v.s.Series(col, row, v.fit, v.mon)
	v.lastSeries = time.Since(t0)
	v.showSeries(&r)
	v.lastClick = time.Since(t0)
}

// redrawSeries draws the series shown again with the current model and
// click choice.
func (v *timeSeriesView) redrawSeries() {
	r := v.series
	if r == nil {
		return
	}
	st := v.stands.Load()
	if r.Stand >= 0 && st != nil && r.Stand < len(st.stands) && v.click.Selected != tsClickPixel {
		if n, err := v.s.StandSeries(st, r.Stand, v.click.Selected == tsClickMedian, v.fit, v.mon); err == nil {
			v.showSeries(&n)
		}
		return
	}
	if r.Stand < 0 {
		n := v.s.Series(r.Col, r.Row, v.fit, v.mon)
		v.showSeries(&n)
	}
}

// showSeries shows r in the chart and says what it is.
func (v *timeSeriesView) showSeries(r *tsSeries) {
	v.series = r
	brk := "no break"
	if r.Break == r.Break {
		what := "break"
		if v.mon != nil && v.mon.Model.Kind == season.Anomaly {
			what = "alert"
		}
		brk = fmt.Sprintf("%s %s (magnitude %.3f)", what, season.ISODate(r.Break), r.Magnitude)
	}
	missing := 0
	for _, x := range r.Values {
		if x != x {
			missing++
		}
	}
	who := fmt.Sprintf("Pixel %d, %d", r.Col, r.Row)
	if st := v.stands.Load(); r.Stand >= 0 && st != nil {
		who = fmt.Sprintf("Stand %s (%s of its valid pixels)", st.stands[r.Stand].ID, r.Stat)
	}
	v.info.SetText(fmt.Sprintf("%s: %d dates, %d without a value, %s", who, len(r.Dates), missing, brk))
	v.chart.Refresh()
}

// selectStand outlines stand i in white.
func (v *timeSeriesView) selectStand(i int) {
	if st := v.stands.Load(); st != nil && st.selected != i {
		n := *st
		n.selected = i
		v.stands.Store(&n)
		v.mapv.SetOverlay(v.drawStands)
	}
}

// OpenStands reads the stands of spec (FILE[:LAYER]) onto the stack's
// grid as a side job; clicks then draw a stand's series.
func (v *timeSeriesView) OpenStands(spec string) { v.openStands(spec, nil) }

// openStands reads the stands of spec and, once they are shown, calls
// then (nil: nothing).
func (v *timeSeriesView) openStands(spec string, then func()) {
	v.standsTried = spec
	v.bridge.side("Opening stands", func() (func(), error) {
		st, err := readTSStands(spec, v.s)
		if err != nil {
			return nil, err
		}
		return func() {
			v.stands.Store(st)
			if v.click.Selected == tsClickPixel {
				v.click.SetSelected(tsClickMean)
			}
			v.mapv.SetOverlay(v.drawStands)
			v.runInfo.SetText(fmt.Sprintf("Opened %d stands from %s: a click in one draws its series", len(st.stands), spec))
			if then != nil {
				then()
			}
		}, nil
	})
}

// openStandsDialog asks for a stands file (GeoPackage, GeoJSON) to open
// over the stack.
func (v *timeSeriesView) openStandsDialog() {
	d := dialog.NewFileOpen(func(uc fyne.URIReadCloser, err error) {
		if err != nil {
			v.runInfo.SetText(explain(err).Error())
			return
		}
		if uc == nil {
			return
		}
		path := uc.URI().Path()
		uc.Close()
		v.OpenStands(path)
	}, v.win)
	d.SetFilter(storage.NewExtensionFileFilter([]string{".gpkg", ".geojson", ".json"}))
	d.Resize(fileDialogSize(v.win))
	d.Show()
}

// drawStands outlines the stands over the map (the selected one in
// white); it runs in the map's generator.
func (v *timeSeriesView) drawStands(buf *image.NRGBA, x0, y0, zoom float64) {
	st := v.stands.Load()
	if st == nil || zoom <= 0 {
		return
	}
	drawOutlines(buf, st.stands, st.gt, st.selected, x0, y0, zoom)
}

// drawChart draws the series: observations as dots, masked dates as grey
// ticks at the bottom (a stand's masked share as a grey bar), the fitted
// model as a line, the monitoring start as a light blue vertical line, the
// break as a red one and the shown date as a thin grey one.
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
	if v.mon != nil && v.mon.Model.Monitor.From > x0 && v.mon.Model.Monitor.From < x1 {
		tsVline(img, px(v.mon.Model.Monitor.From), color.NRGBA{150, 190, 240, 255})
	}
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
	grey := color.NRGBA{120, 120, 120, 255}
	for t := range d {
		if r.Masked != nil && r.Masked[t] > 0 {
			for k := h - 1 - int(math.Ceil(r.Masked[t]*float64(h/5))); k < h; k++ {
				for dx := -1; dx <= 1; dx++ {
					img.Set(px(d[t])+dx, k, grey)
				}
			}
		}
		if y := r.Values[t]; y == y {
			tsDot(img, px(d[t]), py(y), color.NRGBA{20, 120, 40, 255})
		} else if r.Masked == nil {
			for k := h - 8; k < h; k++ {
				img.Set(px(d[t]), k, grey)
			}
		}
	}
	return img
}

func tsFill(img *image.NRGBA, c color.NRGBA) {
	if len(img.Pix) < 4 {
		return
	}
	img.Pix[0], img.Pix[1], img.Pix[2], img.Pix[3] = c.R, c.G, c.B, c.A
	for n := 4; n < len(img.Pix); n *= 2 {
		copy(img.Pix[n:], img.Pix[:n])
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
		// e2 once a step: recomputed after the x step, the line could
		// miss its end and run on to the bound, off the picture.
		e2 := 2 * e
		if e2 >= dy {
			e += dy
			xa += sx
		}
		if e2 <= dx {
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

// tsBackend is a fresh instance of the backend the window computes on,
// for a time-series view to own: the same kind, its own context and
// buffers. A backend that runs no per-pixel models gives go-parallel.
func (w *window) tsBackend() compute.Backend {
	name := compute.NameGoParallel
	if r := w.runOrAuto(); r != nil {
		name = r.b.Name()
	}
	b, err := compute.New(name)
	if err != nil || !b.Info().Available || !season.Runs(b) {
		if b != nil {
			b.Close()
		}
		b, _ = compute.New(compute.NameGoParallel)
	}
	return b
}

// showTimeSeries opens a window of its own on the stack s: the models run
// on a fresh instance of the main window's backend, the stands (FILE[:LAYER];
// "": the main window's, if any) are opened over it, and clicks pick up
// stands the main window opens later.
func (w *window) showTimeSeries(s *tsStack, stands string) *timeSeriesView {
	if stands == "" {
		stands = w.standsP.spec // the main window's, if any
	}
	tw := fyne.CurrentApp().NewWindow("Canopy — time series")
	tw.Resize(fyne.NewSize(1100, 760))
	v := newTimeSeriesView(tw, s, tsOptions{backend: w.tsBackend(), loop: w.bridge.loop, stands: stands,
		standsFrom: func() string { return w.standsP.spec }})
	tw.SetOnClosed(func() { go v.Close() })
	tw.Show()
	return v
}

// openTimeSeries opens the stack at paths (`canopy gui --stack`) as a job
// of the main window and shows it in a window of its own.
func (w *window) openTimeSeries(paths []string, name, stands string) {
	w.bridge.start(fmt.Sprintf("Opening a stack of %d files", len(paths)), func(ctx context.Context, _ progressFunc) (func(), error) {
		s, err := openTSStack(ctx, paths, name)
		if err != nil {
			return nil, err
		}
		return func() { w.series = w.showTimeSeries(s, stands) }, nil
	})
}
