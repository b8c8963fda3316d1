package ui

import (
	"fmt"
	"image/color"
	"runtime/debug"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"canopy/compute"
	"canopy/compute/backends"
	"canopy/ui/render/colormap"
)

// Options say what the window opens on.
type Options struct {
	// Red and NIR are band specs (FILE or FILE:B) to load at start; when
	// both are empty a fake scene is generated instead.
	Red, NIR string
	// Scene, Size and Seed describe the fake scene generated at start
	// (landscape, 2048, 1 by default).
	Scene      string
	Size, Seed int
	// Backend is the backend computed on at start: a name (optionally
	// name:mode) or "auto" (the fastest available, as the CLI picks).
	Backend string
	// Compare runs "Compare all" once the first map is shown.
	Compare bool
	// Repeat is the number of timed runs per backend in Compare all and
	// the sweep (5 when 0).
	Repeat int
	// WindowSize is the initial window size (1440×900 when zero).
	WindowSize fyne.Size
}

// hooks are what the tests and Main's smoke-test mode plug into a window;
// they are not the user's settings, so Options does not carry them.
type hooks struct {
	// backends replaces the registered backends; nil means all.
	backends []compute.Backend
	// loop replaces Fyne's event goroutine for the bridge.
	loop *eventLoop
	// onReady is called once on the event goroutine when the first map
	// (and, with Compare, the first timing chart) is shown, or when the
	// start failed.
	onReady func()
}

func (o *Options) defaults() {
	if o.Scene == "" {
		o.Scene = compute.SceneLandscape
	}
	if o.Size <= 0 {
		o.Size = 2048
	}
	if o.Backend == "" {
		o.Backend = "auto"
	}
	if o.Repeat <= 0 {
		o.Repeat = 5
	}
}

// scene is what the window shows: the bands and the NDVI computed from
// them. It is replaced whole, never edited, so a failed load or compute
// leaves the previous one on screen.
type scene struct {
	red, nir *compute.Band
	in       compute.Input
	ndvi     []float32
	label    string
	backend  string // backend the NDVI was computed on
	summary  *sceneStats
	// stretches caches the stretches read from ndvi, by mode.
	stretches map[string]colormap.Stretch
}

// Window is Canopy's main window. Its exported fields are the widgets a user
// (and a test) acts on.
type Window struct {
	App fyne.App
	Win fyne.Window

	opts    Options
	onReady func()
	bridge  *bridge
	backs   *backendPanel

	scene   *scene
	results []compute.BenchResult // latest run of each backend, for the timing chart
	sweep   []compute.BenchResult
	lut     *colormap.LUT
	ramp    string
	stretch string
	ready   bool

	// Map is the NDVI map.
	Map *MapView
	// Compute runs the selected backend; CompareAll runs every available
	// one; Sweep runs the size sweep; Cancel stops the running job.
	Compute, CompareAll, Sweep, Cancel *widget.Button
	// Progress and ProgressLabel show the running job.
	Progress      *widget.ProgressBar
	ProgressLabel *widget.Label
	// Status is the result of the last run ("go-parallel: … verified: max
	// error …") or what went wrong; Probe the pixel under the cursor.
	Status, Probe *widget.Label
	// Scene names what is shown.
	SceneLabel *widget.Label

	source    *sourcePanel
	colour    *colourPanel
	stats     *statsPanel
	charts    *chartsPanel
	busyFor   string
	tabs      *container.AppTabs
	zoomLabel *widget.Label
	spinner   *widget.ProgressBarInfinite
}

// NewWindow builds the main window on app and starts the first job: find
// the backends, generate or load the start scene and compute it.
func NewWindow(app fyne.App, opts Options) *Window { return newWindow(app, opts, hooks{}) }

func newWindow(app fyne.App, opts Options, h hooks) *Window {
	opts.defaults()
	w := &Window{App: app, opts: opts, onReady: h.onReady, ramp: colormap.DefaultRamp, stretch: colormap.StretchFull}
	w.Win = app.NewWindow("Canopy")
	w.bridge = &bridge{onBusy: w.setBusy, onProgress: w.setProgress, onError: w.showJobError, loop: h.loop}
	w.lut, _ = colormap.New(w.ramp, -1, 1)

	bs := h.backends
	if bs == nil {
		bs = backends.All()
	}
	w.backs = newBackendPanel(bs)
	w.backs.onPick = w.updateButtons
	w.backs.onError = func(err error) { w.setStatus(err.Error(), false) }

	w.build()
	if opts.Red != "" || opts.NIR != "" {
		w.source.SetSpecs(opts.Red, opts.NIR)
	}
	w.Win.SetOnClosed(w.close)
	w.start()
	return w
}

func (w *Window) build() {
	w.Map = NewMapView()
	w.Map.OnProbe = w.probe

	w.Compute = widget.NewButtonWithIcon("Compute", theme.MediaPlayIcon(), w.computeSelected)
	w.Compute.Importance = widget.HighImportance
	w.CompareAll = widget.NewButtonWithIcon("Compare all", theme.ListIcon(), w.compareAll)
	w.Sweep = widget.NewButtonWithIcon("Size sweep", theme.ViewRefreshIcon(), w.sizeSweep)
	w.Cancel = widget.NewButtonWithIcon("Cancel", theme.CancelIcon(), w.cancel)
	w.Cancel.Disable()
	w.Progress = widget.NewProgressBar()
	w.Progress.TextFormatter = func() string { return "" } // the label says more
	w.Progress.Hide()
	w.spinner = widget.NewProgressBarInfinite()
	w.spinner.Stop()
	w.spinner.Hide()
	w.ProgressLabel = widget.NewLabel("")
	w.ProgressLabel.Truncation = fyne.TextTruncateEllipsis
	w.Status = widget.NewLabel("Starting…")
	w.Status.Truncation = fyne.TextTruncateEllipsis
	w.Probe = widget.NewLabel("Hover over the map to read a pixel")
	w.Probe.Truncation = fyne.TextTruncateEllipsis
	w.SceneLabel = widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	w.SceneLabel.Truncation = fyne.TextTruncateEllipsis

	w.source = newSourcePanel(w.Win, w.opts, func(what string, mk bandsFunc) {
		w.bridge.start(what, w.sceneJob(mk, w.runOrAuto(), w.ramp, w.stretch))
	})
	w.colour = newColourPanel(w.Win, w.ramp, w.recolour)
	w.stats = newStatsPanel()
	w.charts = newChartsPanel(w.bridge.do, w.sizeSweep)

	w.zoomLabel = widget.NewLabelWithStyle("", fyne.TextAlignTrailing, fyne.TextStyle{})
	w.Map.OnViewChanged = w.showZoom
	// Room for "6400 %" whatever the zoom, so the bar never re-lays out.
	zoomText := container.NewStack(hspace(72), w.zoomLabel)
	zoomBar := container.NewHBox(zoomText,
		widget.NewButtonWithIcon("", theme.ZoomOutIcon(), func() { w.Map.ZoomBy(1 / 1.5) }),
		widget.NewButtonWithIcon("", theme.ZoomInIcon(), func() { w.Map.ZoomBy(1.5) }),
		widget.NewButtonWithIcon("Fit", theme.ZoomFitIcon(), w.Map.Fit),
		widget.NewButton("1:1", w.Map.ActualPixels),
	)
	mapHeader := container.NewBorder(nil, nil, nil, zoomBar, w.SceneLabel)
	mapArea := container.NewBorder(mapHeader, nil, nil, w.colour.legend, w.Map)

	sidebar := container.NewVScroll(container.NewVBox(
		w.source.card,
		section("Backend", w.backs.box),
		w.colour.card,
	))

	w.tabs = container.NewAppTabs(
		container.NewTabItemWithIcon("Timings", theme.HistoryIcon(), w.charts.timingTab),
		container.NewTabItemWithIcon("Size sweep", theme.GridIcon(), w.charts.sweepTab),
		container.NewTabItemWithIcon("Statistics", theme.InfoIcon(), w.stats.content),
	)

	right := container.NewHSplit(mapArea, w.tabs)
	right.Offset = 0.52
	main := container.NewHSplit(sidebar, right)
	main.Offset = 0.17

	toolbar := container.NewHBox(w.Compute, w.CompareAll, w.Sweep, w.Cancel,
		widget.NewSeparator(), exportMenuButton(w))
	progress := container.NewStack(w.Progress, w.spinner, container.NewPadded(w.ProgressLabel))
	top := container.NewBorder(nil, nil, toolbar, nil, progress)

	statusBar := container.NewGridWithColumns(2, w.Probe, w.Status)
	sep := canvas.NewRectangle(theme.Color(theme.ColorNameSeparator))
	sep.SetMinSize(fyne.NewSize(1, 1))
	bottom := container.NewVBox(sep, statusBar)

	w.Win.SetContent(container.NewBorder(top, bottom, nil, nil, main))
	w.Win.SetMainMenu(w.mainMenu())
	size := fyne.NewSize(1440, 900)
	if w.opts.WindowSize.Width > 0 {
		size = w.opts.WindowSize
	}
	w.Win.Resize(size)
	w.updateButtons()
}

func (w *Window) mainMenu() *fyne.MainMenu {
	file := fyne.NewMenu("File",
		fyne.NewMenuItem("Open red band…", func() { w.source.open(bandRed) }),
		fyne.NewMenuItem("Open NIR band…", func() { w.source.open(bandNIR) }),
		fyne.NewMenuItemSeparator(),
		fyne.NewMenuItem("Export map as PNG…", w.exportPNGDialog),
		fyne.NewMenuItem("Export NDVI as GeoTIFF…", w.exportTIFFDialog),
		fyne.NewMenuItem("Export timing chart…", func() { w.exportChartDialog(false) }),
		fyne.NewMenuItem("Export sweep chart…", func() { w.exportChartDialog(true) }),
		fyne.NewMenuItem("Export timings as CSV…", w.exportCSVDialog),
	)
	view := fyne.NewMenu("View",
		fyne.NewMenuItem("Fit", w.Map.Fit),
		fyne.NewMenuItem("Zoom in", func() { w.Map.ZoomBy(1.5) }),
		fyne.NewMenuItem("Zoom out", func() { w.Map.ZoomBy(1 / 1.5) }),
		fyne.NewMenuItem("Actual pixels", w.Map.ActualPixels),
	)
	run := fyne.NewMenu("Run",
		fyne.NewMenuItem("Compute", w.computeSelected),
		fyne.NewMenuItem("Compare all backends", w.compareAll),
		fyne.NewMenuItem("Size sweep", w.sizeSweep),
		fyne.NewMenuItem("Cancel", w.cancel),
	)
	return fyne.NewMainMenu(file, view, run)
}

// Wait blocks until every job started so far has finished and shown its
// result. Tests call it after an action; the window itself never waits.
func (w *Window) Wait() { w.bridge.wait() }

// Busy reports whether a job is running.
func (w *Window) Busy() bool { return w.bridge.busy() }

// NDVI returns the NDVI plane shown and its size (nil before the first map).
func (w *Window) NDVI() ([]float32, int, int) {
	if w.scene == nil {
		return nil, 0, 0
	}
	return w.scene.ndvi, w.scene.in.Width, w.scene.in.Height
}

// Results returns the latest timing of each backend shown in the chart.
func (w *Window) Results() []compute.BenchResult {
	return append([]compute.BenchResult(nil), w.results...)
}

// SweepResults returns the results of the last size sweep.
func (w *Window) SweepResults() []compute.BenchResult {
	return append([]compute.BenchResult(nil), w.sweep...)
}

func (w *Window) setBusy(busy bool, label string) {
	w.busyFor = label
	if busy {
		w.Progress.SetValue(0)
		w.showSpinner(true)
		w.ProgressLabel.SetText(label + "…")
		w.Cancel.Enable()
	} else {
		w.Progress.Hide()
		w.spinner.Stop()
		w.spinner.Hide()
		w.ProgressLabel.SetText("")
		w.Cancel.Disable()
	}
	w.updateButtons()
}

// showSpinner shows the endless bar (work of unknown length) or the
// progress bar.
func (w *Window) showSpinner(on bool) {
	if on {
		w.Progress.Hide()
		w.spinner.Show()
		w.spinner.Start()
	} else {
		w.spinner.Stop()
		w.spinner.Hide()
		w.Progress.Show()
	}
}

func (w *Window) setProgress(frac float64, msg string) {
	if frac >= 0 {
		if w.spinner.Visible() {
			w.showSpinner(false)
		}
		w.Progress.SetValue(frac)
	} else if !w.spinner.Visible() {
		w.showSpinner(true)
	}
	if msg != "" {
		w.ProgressLabel.SetText(msg)
	}
}

// showJobError shows what went wrong in a dialog; the previous scene stays.
func (w *Window) showJobError(label string, err error) {
	w.Status.SetText(label + " failed: " + firstLine(err.Error()))
	w.Status.Importance = widget.DangerImportance
	w.Status.Refresh()
	d := dialog.NewError(fmt.Errorf("%s failed:\n%w", label, err), w.Win)
	d.Show()
	if !w.ready {
		// The start scene could not be made; there is nothing to wait for.
		w.markReady()
	}
}

func (w *Window) setStatus(text string, ok bool) {
	w.Status.SetText(text)
	if ok {
		w.Status.Importance = widget.SuccessImportance
	} else {
		w.Status.Importance = widget.DangerImportance
	}
	w.Status.Refresh()
}

func (w *Window) cancel() {
	if w.bridge.stop() {
		w.setBusy(false, "")
		w.setStatus("Cancelled: "+w.busyForOr("the job"), false)
	}
}

func (w *Window) busyForOr(s string) string {
	if w.busyFor != "" {
		return strings.ToLower(w.busyFor[:1]) + w.busyFor[1:]
	}
	return s
}

// updateButtons enables what can be done now.
func (w *Window) updateButtons() {
	if w.Compute == nil {
		return
	}
	haveBands := w.scene != nil
	if sel := w.backs.selected; haveBands && sel != nil && sel.info.Available {
		w.Compute.Enable()
	} else {
		w.Compute.Disable()
	}
	if haveBands && w.anyAvailable() {
		w.CompareAll.Enable()
	} else {
		w.CompareAll.Disable()
	}
	if w.anyAvailable() {
		w.Sweep.Enable()
	} else {
		w.Sweep.Disable()
	}
}

func (w *Window) anyAvailable() bool { return len(w.backs.available()) > 0 }

// runOrAuto is the selected backend as a job runs it, or the automatic
// choice when the selected one cannot run (nil when none can).
func (w *Window) runOrAuto() *runSpec {
	if e := w.backs.selectedOrAuto(); e != nil {
		r := e.run()
		return &r
	}
	return nil
}

// probe shows the pixel under the cursor: row/column, map coordinates when
// georeferenced, red, NIR and NDVI.
func (w *Window) probe(col, row int, inside, pinned bool) {
	s := w.scene
	if s == nil || !inside {
		if !pinned {
			w.Probe.SetText("Hover over the map to read a pixel")
		}
		return
	}
	i := row*s.in.Width + col
	var b strings.Builder
	if pinned {
		b.WriteString("Pinned: ")
	}
	fmt.Fprintf(&b, "row %d, col %d", row, col)
	if s.red.Geo.Valid() {
		if x, y, ok := s.red.Geo.PixelToMap(col, row); ok {
			fmt.Fprintf(&b, "  ·  x %.2f, y %.2f", x, y)
		}
	}
	fmt.Fprintf(&b, "  ·  red %s  NIR %s  NDVI %s", num(s.in.Red[i]), num(s.in.NIR[i]), ndviText(s.ndvi[i]))
	w.Probe.SetText(b.String())
}

func num(v float32) string { return fmt.Sprintf("%.4g", v) }

func ndviText(v float32) string {
	if v != v {
		return "no data"
	}
	return fmt.Sprintf("%.4f", v)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// showScene puts s on screen: the map, the legend, the statistics.
func (w *Window) showScene(s *scene) {
	old := w.scene
	w.scene = s
	w.SceneLabel.SetText(s.label)
	w.applyColour(false)
	w.stats.show(s.summary)
	w.source.showScene(s)
	w.updateButtons()
	if old != nil && len(old.ndvi) >= bigImage && (len(s.ndvi) != len(old.ndvi) || &old.ndvi[0] != &s.ndvi[0]) {
		// A big plane was dropped: give its memory back now rather than at
		// the next GC cycle, so that RSS stays near one scene.
		go debug.FreeOSMemory()
	}
	if !w.ready && !w.opts.Compare {
		w.markReady()
	}
}

// showZoom shows the map's zoom in the header.
func (w *Window) showZoom() {
	z, _, _ := w.Map.View()
	switch {
	case z <= 0:
		w.zoomLabel.SetText("")
	case z < 0.1:
		w.zoomLabel.SetText(fmt.Sprintf("%.1f %%", 100*z))
	default:
		w.zoomLabel.SetText(fmt.Sprintf("%.0f %%", 100*z))
	}
}

func (w *Window) markReady() {
	if w.ready {
		return
	}
	w.ready = true
	if w.onReady != nil {
		w.onReady()
	}
}

// close releases the backends when the window goes.
func (w *Window) close() {
	w.bridge.stop()
	go func() {
		w.bridge.wait()
		for _, e := range w.backs.entries {
			e.b.Close()
		}
	}()
}

// section is a titled part of the sidebar.
func section(title string, content fyne.CanvasObject) fyne.CanvasObject {
	head := widget.NewLabelWithStyle(title, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	head.SizeName = theme.SizeNameSubHeadingText
	return container.NewVBox(head, content, widget.NewSeparator())
}

// swatch is a small filled square of colour c.
func swatch(c color.Color, size float32) fyne.CanvasObject {
	r := canvas.NewRectangle(c)
	r.CornerRadius = 2
	r.SetMinSize(fyne.NewSize(size, size))
	return container.NewCenter(r)
}

// hspace is horizontal room.
func hspace(width float32) fyne.CanvasObject {
	r := canvas.NewRectangle(color.Transparent)
	r.SetMinSize(fyne.NewSize(width, 1))
	return r
}
