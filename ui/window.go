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
	"canopy/compute/fake"
	"canopy/ui/render/colormap"

	"canopy/ui/mapview"
)

// options say what the window opens on: the user's settings, as `canopy
// gui` takes them on its command line.
type options struct {
	// Product is a product to open at start (scene.Open: a Sentinel-2
	// .SAFE folder or .zip, a Landsat folder or .tar, a STAC item, an
	// orthomosaic GeoTIFF). Bands are band specs (FILE or FILE:B) by role
	// instead. With neither, a fake scene is generated.
	Product string
	// More are further products of the same date (--scene repeated),
	// mosaicked with Product onto one grid.
	More  []string
	Bands map[string]string
	// Fake, Size and Seed describe the fake scene (landscape, 2048, 1 by
	// default).
	Fake       string
	Size, Seed int
	// Index is the catalogue index computed at start (ndvi by default);
	// Expr a formula of the user's instead.
	Index, Expr string
	// Mask ("auto" or "none") and MaskBuffer are a product's mask.
	Mask       string
	MaskBuffer int
	// Assign gives roles to bands of the product's file (--bands
	// ROLE=B,...: an orthomosaic or a multi-band GeoTIFF), band from 1.
	Assign map[string]int
	// Scale gives bands their radiometry (--scale ROLE=S[,O]): value =
	// stored × S + O over the band's own; such a band is reflectance.
	Scale map[string]compute.Radiometry
	// Raw runs on digital numbers what needs reflectance (indices with
	// constants, class tables), as the user asked (--raw).
	Raw bool
	// Backend is the backend computed on at start: a name (optionally
	// name:mode) or "auto" (the fastest available, as the CLI picks).
	Backend string
	// Compare runs "Compare all" once the first map is shown.
	Compare bool
	// Repeat is the number of timed runs per backend in Compare all and
	// the sweeps (5 when 0).
	Repeat int
	// WindowSize is the initial window size (1440×900 when zero).
	WindowSize fyne.Size
}

func (o *options) defaults() {
	if o.Fake == "" {
		o.Fake = fake.Landscape
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
	if o.Index == "" {
		o.Index = "ndvi"
	}
	if o.Mask == "" {
		o.Mask = "auto"
	}
}

// The map tab's splits: the sidebar takes sidebarShare of the window's
// width, the map mapShare of the rest (the legend and the statistics the
// remainder).
const (
	sidebarShare = 0.18
	mapShare     = 0.79
)

// hooks are what the tests and Main's smoke-test mode plug into a window;
// they are not the user's settings, so options does not carry them.
type hooks struct {
	// backends replaces the registered backends; nil means all.
	backends []compute.Backend
	// loop replaces Fyne's event goroutine for the bridge.
	loop *eventLoop
	// freeMemory replaces the system's free memory (freeMemory).
	freeMemory func() (uint64, bool)
	// onReady is called once on the event goroutine when the first map
	// (and, with Compare, the first timing chart) is shown, or when the
	// start failed.
	onReady func()
	// onClosed is called when the window has closed.
	onClosed func()
	// keeper replaces the backends kept on the card (residentKeeper).
	keeper cardKeeper
}

// shown is what the window shows: an index computed from bands. It is
// replaced whole, never edited (but for its cache of stretches), so a
// failed load or compute leaves the previous one on screen.
type shown struct {
	src     bandSource
	set     *bandSet
	idx     indexChoice
	plane   []float32
	w, h    int
	label   string // the source, for the header and exports
	backend string // the run that computed it ("gl:mapped")
	summary *sceneStats
	masked  int
	// stretches caches the stretches read from plane, by mode.
	stretches map[string]colormap.Stretch
	// large, when set, is an image too large to load, read by views
	// (plane is nil): the map draws its views, pins read its files.
	large *largeImage
	// card is the session kept on the card that computed plane (nil on
	// the round trip): the map draws through it.
	card *cardView
	// line is the status line of the run that computed plane (lineOK:
	// verified), said again when the view comes back to it.
	line   string
	lineOK bool
}

// window is Canopy's main window. It holds the state (where the bands
// come from, the index, what is shown) and wires the panels, which get
// callbacks, not the window. Its exported fields are the widgets a user
// (and a test) acts on.
type window struct {
	App fyne.App
	Win fyne.Window

	opts     options
	onReady  func()
	onClosed func()
	bridge   *bridge

	// The state, the event goroutine's: src is where the next bands come
	// from, idx the index chosen (idxOK: its formula parses), set the
	// bands loaded last, shown what is on screen.
	src     bandSource
	idx     indexChoice
	idxOK   bool
	set     *bandSet
	shown   *shown
	lut     *colormap.LUT
	ramp    string
	stretch string
	ready   bool
	// keeper says which backends keep a scene on their card; card is
	// the session open now (nil when none).
	keeper cardKeeper
	card   *cardView

	// Map is the index map.
	Map *mapview.View
	// Compute runs the selected backend; CompareAll runs every available
	// one; Sweep runs the size sweep; Cancel stops the running job.
	Compute, CompareAll, Sweep, Cancel *widget.Button
	// bar shows the running job.
	bar *jobBar
	// Status is the result of the last run ("NDVI on go-parallel: …
	// verified: max error …") or what went wrong; Probe the pixel under
	// the cursor.
	Status, Probe *widget.Label
	// SceneLabel names what is shown: the index and the source.
	SceneLabel *widget.Label

	backs    *backendPanel
	index    *indexPanel
	bands    *bandsPanel
	source   *sourcePanel
	colour   *colourPanel
	stats    *statsPanel
	charts   *chartsPanel
	identify *identifyPanel
	standsP  *standsPanel
	two      *twoDates                      // the two-date mode (ui/twodate.go)
	tables   map[string]colormap.ClassTable // the user's class tables, by index
	freeMem  func() (uint64, bool)
	// memoryWarning is the last warning about memory shown; compareNeed
	// the memory the last Compare all was estimated to need.
	memoryWarning string
	compareNeed   uint64
	crs           crsInfo            // the CRS of what is shown
	tabs          *container.AppTabs // Map, Benchmarks
	benchTabs     *container.AppTabs // Timings, Size sweep, Indices per upload
	zoomLabel     *widget.Label
	view          *contextView    // Index | Natural colour | False colour (NIR)
	archive       archiveState    // File › Search the archive… (ui/search.go)
	series        *timeSeriesView // the last time-series window opened (ui/timeseries.go)
	printer       *printPanel     // the last File › Print layout… (ui/print.go)
	pngForm       *pngForm        // the last File › Export map as PNG…
	saveForm      *saveForm       // the last save asked for
	sidebar       *container.Scroll
}

// newWindow builds the main window on app and starts the first job: find
// the backends, open or generate the start scene and compute it (hooks
// are the tests' fakes; Main passes none).
func newWindow(app fyne.App, opts options, h hooks) *window {
	opts.defaults()
	w := &window{App: app, opts: opts, onReady: h.onReady, onClosed: h.onClosed, ramp: colormap.DefaultRamp, stretch: colormap.StretchFull}
	w.Win = app.NewWindow("Canopy")
	w.keeper = h.keeper
	if w.keeper == nil {
		w.keeper = residentKeeper{}
	}
	w.freeMem = h.freeMemory
	if w.freeMem == nil {
		w.freeMem = freeMemory
	}
	w.bridge = &bridge{onBusy: w.setBusy, onProgress: func(frac float64, msg string) { w.bar.set(frac, msg) }, onError: w.showJobError, loop: h.loop}
	w.lut, _ = colormap.New(w.ramp, -1, 1)

	bs := h.backends
	if bs == nil {
		bs = backends.All()
	}
	w.backs = newBackendPanel(bs)
	w.backs.onPick = w.updateButtons
	w.backs.keeper = w.keeper
	w.src = fakeSource(opts.Fake, opts.Size, uint64(opts.Seed))
	if len(opts.Bands) > 0 {
		w.src = specSource(opts.Bands) // until the start job has read the files
	}

	w.build()
	w.Win.SetOnClosed(w.close)
	w.start()
	return w
}

func (w *window) build() {
	w.Map = mapview.New()
	w.Map.OnProbe = w.probe

	w.Compute = widget.NewButtonWithIcon("Compute", theme.MediaPlayIcon(), w.computeSelected)
	w.Compute.Importance = widget.HighImportance
	w.CompareAll = widget.NewButtonWithIcon("Compare all", theme.ListIcon(), w.compareAll)
	w.Sweep = widget.NewButtonWithIcon("Size sweep", theme.ViewRefreshIcon(), w.sizeSweep)
	w.Cancel = widget.NewButtonWithIcon("Cancel", theme.CancelIcon(), w.cancel)
	w.Cancel.Disable()
	w.bar = newJobBar()
	w.Status = widget.NewLabel("Starting…")
	w.Status.Truncation = fyne.TextTruncateEllipsis
	w.Probe = widget.NewLabel("Hover over the map to read a pixel")
	w.Probe.Truncation = fyne.TextTruncateEllipsis
	w.SceneLabel = widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	w.SceneLabel.Truncation = fyne.TextTruncateEllipsis

	w.index = newIndexPanel()
	w.index.onChange = w.indexChanged
	w.index.onSubmit = w.computeSelected
	// parseFlags checked the start index; a bad one here (a caller of
	// newWindow) shows its error in the panel.
	_ = w.index.set(w.opts.Index, w.opts.Expr)
	w.idx, w.idxOK = w.index.choice, w.index.valid
	w.idx.classes = w.classesFor(w.idx)
	w.source = newSourcePanel(w.Win, w.opts)
	w.bands = newBandsPanel(w.Win)
	w.bands.onSource = w.sourceChosen
	w.bands.mask = w.source.maskChoice
	w.source.onOpen = w.openProduct
	w.source.onGenerate = w.sourceChosen
	w.source.onMask = w.maskChanged
	w.colour = newColourPanel(w.Win, w.ramp, w.recolour)
	w.colour.setIndex(w.idx)
	w.stats = newStatsPanel(w.SetClasses)
	w.stats.allowRaw = w.opts.Raw
	w.charts = newChartsPanel(chartsCalls{
		do: w.bridge.do, onSweep: w.sizeSweep, onIndices: w.indexSweep,
		saveDialog: w.saveDialog, exportJob: w.exportJob,
		alert: func(err error) { dialog.ShowError(err, w.Win) },
	})
	w.bands.show(w.src, bandRoles(w.src, w.idx))
	w.standsP = newStandsPanel(w.Win, w.Map, standsCalls{
		open:       w.OpenStands,
		status:     w.setStatus,
		showError:  w.showError,
		saveDialog: w.saveDialog,
		showTable:  w.showStandsTab,
		lut:        func() *colormap.LUT { return w.lut },
		diffLUT: func() *colormap.LUT {
			if r := w.twoCurrent(); r != nil && w.DateView() == viewDifference {
				return w.two.diffLUT(r)
			}
			return nil
		},
		afterFiles: func() []string {
			if r := w.twoCurrent(); r != nil {
				return r.after.src.inputFiles()
			}
			return nil
		},
		indexTitle: func() string {
			if w.shown == nil {
				return ""
			}
			return w.shown.idx.title()
		},
	})
	w.two = newTwoDates(w.Win, w.opts, w.Map, w.idx.roles(), twoCalls{
		openPath: w.openAfterPath,
		chosen:   w.afterChosen,
		setView:  w.SetDateView,
		recolour: func() { w.applyTwoView(false) },
		close:    w.CloseAfter,
		export:   w.exportDifferenceDialog,
	})
	w.Map.SetOverlay(w.drawOverlay)

	w.zoomLabel = widget.NewLabelWithStyle("", fyne.TextAlignTrailing, fyne.TextStyle{})
	w.Map.OnViewChanged = func() { w.showZoom(); w.standsP.labels.Refresh() }
	// Room for "6400 %" whatever the zoom, so the bar never re-lays out.
	zoomText := container.NewStack(hspace(72), w.zoomLabel)
	zoomBar := container.NewHBox(zoomText,
		widget.NewButtonWithIcon("", theme.ZoomOutIcon(), func() { w.Map.ZoomBy(1 / 1.5) }),
		widget.NewButtonWithIcon("", theme.ZoomInIcon(), func() { w.Map.ZoomBy(1.5) }),
		widget.NewButtonWithIcon("Fit", theme.ZoomFitIcon(), w.Map.Fit),
		widget.NewButton("1:1", w.Map.ActualPixels),
	)
	mapHeader := container.NewBorder(nil, nil, nil, zoomBar, w.SceneLabel)
	w.view = newContextView(w.SetView, w.colour.legend.Objects)
	mapArea := container.NewBorder(container.NewVBox(mapHeader, w.view.bar, w.two.bar), nil, nil, nil, w.mapStack())
	w.view.area = mapArea

	sidebarScroll := container.NewVScroll(container.NewVBox(
		w.index.card,
		w.source.card,
		w.bands.card,
		section("Backend", w.backs.box),
		w.colour.card,
		w.two.card,
		w.standsP.card,
	))
	w.sidebar = sidebarScroll
	sidebar := container.NewStack(sidebarScroll, newWheelLayer(sidebarScroll))
	// Beside the map: its legend, then the statistics (histogram, numbers,
	// classes), so that the colours of the three are read side by side.
	w.identify = newIdentifyPanel(identifyCalls{saveDialog: w.saveDialog, showError: w.showError, status: w.setStatus, inputs: w.exportInputs})
	w.identify.onChange = func() { w.Map.SetPins(w.identify.points()) }
	w.stats.prepend(w.identify.card)
	statsSide := container.NewBorder(w.colour.legend, nil, nil, nil, w.stats.content)
	w.view.side = statsSide

	w.benchTabs = container.NewAppTabs(
		container.NewTabItemWithIcon("Timings", theme.HistoryIcon(), w.charts.timingTab),
		container.NewTabItemWithIcon("Size sweep", theme.GridIcon(), w.charts.sweepTab),
		container.NewTabItemWithIcon("Indices per upload", theme.ListIcon(), w.charts.indicesTab),
	)

	// The map is the main view: the controls on its left, its legend and
	// statistics on its right; the benchmarks are one click away in their
	// own tab. A finished job never changes the tab the user is on.
	right := container.NewHSplit(mapArea, statsSide)
	right.Offset = mapShare
	mapTab := container.NewHSplit(sidebar, right)
	mapTab.Offset = sidebarShare
	w.tabs = container.NewAppTabs(
		container.NewTabItemWithIcon("Map", theme.MediaPhotoIcon(), mapTab),
		container.NewTabItemWithIcon("Benchmarks", theme.HistoryIcon(), w.benchTabs),
		container.NewTabItemWithIcon("Stands", theme.ListIcon(), w.standsP.tableTab),
	)
	// A chart comes into view: draw it again (never a blank picture).
	w.benchTabs.OnSelected = func(*container.TabItem) { w.charts.reshow(w.benchTabs.SelectedIndex()) }
	w.tabs.OnSelected = func(ti *container.TabItem) {
		if ti.Content == w.benchTabs {
			w.charts.reshow(w.benchTabs.SelectedIndex())
		}
	}

	toolbar := container.NewHBox(w.Compute, w.CompareAll, w.Sweep, w.Cancel,
		widget.NewSeparator(), exportMenuButton(w))
	top := container.NewBorder(nil, nil, toolbar, nil, w.bar.box)

	statusBar := container.NewGridWithColumns(2, w.Probe, w.Status)
	sep := canvas.NewRectangle(theme.Color(theme.ColorNameSeparator))
	sep.SetMinSize(fyne.NewSize(1, 1))
	bottom := container.NewVBox(sep, statusBar)

	w.Win.SetContent(container.NewBorder(top, bottom, nil, nil, w.tabs))
	w.Win.SetMainMenu(w.mainMenu())
	w.addShortcuts()
	size := fyne.NewSize(1440, 900)
	if w.opts.WindowSize.Width > 0 {
		size = w.opts.WindowSize
	}
	w.Win.Resize(size)
	w.updateButtons()
}

func (w *window) mainMenu() *fyne.MainMenu {
	file := fyne.NewMenu("File",
		fyne.NewMenuItem("Open scene folder…", w.source.pickFolder),
		withShortcut(fyne.NewMenuItem("Open scene file…", w.source.pickFile), shortcutOpen),
		fyne.NewMenuItem("Search the archive…", w.searchDialog),
		fyne.NewMenuItem("Open stack…", func() { w.openStackDialog() }),
		fyne.NewMenuItemSeparator(),
		withShortcut(fyne.NewMenuItem("Open session…", w.openSessionDialog), shortcutOpenSession),
		withShortcut(fyne.NewMenuItem("Save session…", w.saveSessionDialog), shortcutSave),
		fyne.NewMenuItemSeparator(),
		withShortcut(fyne.NewMenuItem("Export map as PNG…", w.exportPNGDialog), shortcutExport),
		fyne.NewMenuItem("Print layout…", w.printLayoutDialog),
		fyne.NewMenuItem("Export index as GeoTIFF…", w.exportTIFFDialog),
		fyne.NewMenuItem("Export timing chart…", func() { w.charts.exportChartDialog(chartTimings) }),
		fyne.NewMenuItem("Export sweep chart…", func() { w.charts.exportChartDialog(chartSweep) }),
		fyne.NewMenuItem("Export indices chart…", func() { w.charts.exportChartDialog(chartIndices) }),
		fyne.NewMenuItem("Export timings as CSV…", w.charts.exportCSVDialog),
	)
	view := fyne.NewMenu("View",
		withShortcut(fyne.NewMenuItem("Fit", w.Map.Fit), shortcutFit),
		withShortcut(fyne.NewMenuItem("Zoom in", func() { w.Map.ZoomBy(1.5) }), shortcutZoomIn),
		withShortcut(fyne.NewMenuItem("Zoom out", func() { w.Map.ZoomBy(1 / 1.5) }), shortcutZoomOut),
		fyne.NewMenuItem("Actual pixels", w.Map.ActualPixels),
		fyne.NewMenuItemSeparator(),
		fyne.NewMenuItem("Index map", func() { w.SetView(viewIndex) }),
		fyne.NewMenuItem("Natural colour", func() { w.SetView(viewNatural) }),
		fyne.NewMenuItem("False colour (NIR)", func() { w.SetView(viewFalse) }),
	)
	run := fyne.NewMenu("Run",
		withShortcut(fyne.NewMenuItem("Compute", w.computeSelected), shortcutCompute),
		fyne.NewMenuItem("Compare all backends", w.compareAll),
		fyne.NewMenuItem("Size sweep", w.sizeSweep),
		fyne.NewMenuItem("Indices per upload", w.indexSweep),
		fyne.NewMenuItem("Cancel", w.cancel),
	)
	return fyne.NewMainMenu(file, view, run)
}

// withShortcut shows a shortcut beside a menu item.
func withShortcut(it *fyne.MenuItem, s fyne.Shortcut) *fyne.MenuItem {
	it.Shortcut = s
	return it
}

// Wait blocks until every job started so far has finished and shown its
// result. Tests call it after an action; the window itself never waits.
func (w *window) Wait() { w.bridge.wait() }

// Busy reports whether a job is running.
func (w *window) Busy() bool { return w.bridge.busy() }

// Plane returns the index plane shown, its name and size (nil before the
// first map).
func (w *window) Plane() (plane []float32, name string, width, height int) {
	if w.shown == nil {
		return nil, "", 0, 0
	}
	return w.shown.plane, w.shown.idx.name, w.shown.w, w.shown.h
}

// Results returns the latest timing of each backend shown in the chart.
func (w *window) Results() []compute.BenchResult { return w.charts.results(chartTimings) }

// Masked returns how many pixels of the map the product's mask removed.
func (w *window) Masked() int {
	if w.shown == nil {
		return 0
	}
	return w.shown.masked
}

func (w *window) setBusy(busy bool, label string) {
	w.bar.busy(busy, label)
	if busy {
		w.Cancel.Enable()
	} else {
		w.Cancel.Disable()
	}
	w.updateButtons()
	if !busy {
		w.syncSource() // the cards show what the map was computed from
		w.idle()       // a follow-up asked for meanwhile (ui/twodate.go)
	}
}

// showJobError shows what went wrong in a dialog; the previous map stays.
func (w *window) showJobError(label string, err error) {
	err = explain(err)
	w.setStatus(label+" failed: "+err.Error(), false)
	d := dialog.NewError(fmt.Errorf("%s failed:\n%w", label, err), w.Win)
	d.Show()
	if !w.ready {
		// The start scene could not be made; there is nothing to wait for.
		w.markReady()
	}
}

func (w *window) setStatus(text string, ok bool) {
	w.Status.SetText(text)
	if ok {
		w.Status.Importance = widget.SuccessImportance
	} else {
		w.Status.Importance = widget.DangerImportance
	}
	w.Status.Refresh()
}

func (w *window) cancel() {
	if w.bridge.stop() {
		w.setBusy(false, "")
		w.setStatus("Cancelled: "+w.bar.jobOr("the job"), false)
	}
}

// computable reports whether Compute can run now, and if not why.
func (w *window) computable() (bool, string) { return w.computableFrom(w.src) }

// computableFrom reports whether the index can be computed from src now,
// and if not why.
func (w *window) computableFrom(src bandSource) (bool, string) {
	if !w.idxOK {
		return false, "the formula does not parse: " + w.index.Error.Text
	}
	if miss := src.missing(w.idx.roles()); len(miss) > 0 {
		return false, missingText(w.idx, src, miss)
	}
	sel := w.backs.selected
	if sel == nil {
		return false, "no backend is selected"
	}
	if !sel.info.Available {
		return false, fmt.Sprintf("backend %s cannot run here: %s; choose another", sel.name(), sel.info.Reason)
	}
	return true, ""
}

// missingText says which bands an index lacks and how to give them.
func missingText(idx indexChoice, src bandSource, miss []string) string {
	what := idx.title()
	if idx.cat == nil {
		what = "the formula"
	}
	band := "band"
	if len(miss) > 1 {
		band = "bands"
	}
	s := fmt.Sprintf("%s needs the %s %s", what, strings.Join(miss, ", "), band)
	switch {
	case src.kind == srcProduct && !src.ortho():
		return s + ", which this product does not have"
	case src.ortho():
		return s + ": choose its band under Bands"
	}
	return s + ": open a file for it under Bands"
}

// updateButtons enables what can be done now.
func (w *window) updateButtons() {
	if w.Compute == nil {
		return
	}
	if ok, _ := w.computable(); ok {
		w.Compute.Enable()
	} else {
		w.Compute.Disable()
	}
	if w.shown != nil && w.anyAvailable() {
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

func (w *window) anyAvailable() bool { return len(w.backs.available()) > 0 }

// runOrAuto is the selected backend as a job runs it, or the automatic
// choice when the selected one cannot run (nil when none can).
func (w *window) runOrAuto() *runSpec {
	if e := w.backs.selectedOrAuto(); e != nil {
		r := e.run()
		return &r
	}
	return nil
}

// probe shows the pixel under the cursor (its index value, row and
// column, map coordinates, latitude and longitude, every band); a click
// pins it in the identify panel. Off the map the last reading stays.
func (w *window) probe(col, row int, inside, pinned bool) {
	s := w.shown
	if s == nil || !inside {
		return
	}
	r := w.read(s, col, row)
	text := r.probeText()
	if t := w.twoCurrent().probe(col, row); t != "" {
		text += "  ·  " + t
	}
	w.Probe.SetText(text)
	if pinned {
		w.identify.add(r)
		w.standsP.tapped(col, row)
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// show puts s on screen: the map, the legend, the statistics.
func (w *window) show(s *shown) {
	old := w.shown
	w.shown = s
	w.crs = crsOf(s)
	w.repin(old, s)
	w.applyColour(false)
	w.viewShown()
	w.stats.show(s.summary, s.idx, s.set.raw)
	w.source.showShown(s)
	w.followUp() // the after date and the stands (ui/twodate.go)
	w.updateButtons()
	w.showLarge(old, s)
	if old != nil && len(old.plane) >= bigImage && (len(s.plane) == 0 || &old.plane[0] != &s.plane[0]) {
		// A big plane was dropped: give its memory back now rather than at
		// the next GC cycle, so that RSS stays near one scene.
		go debug.FreeOSMemory()
	}
	if !w.ready && !w.opts.Compare && s.large == nil {
		w.markReady() // a large image is ready with its first view
	}
}

// repin reads the pins again on a new map of the same grid (another
// index, backend or mask), and drops them on another grid.
func (w *window) repin(old, s *shown) {
	if len(w.identify.pins) == 0 {
		return
	}
	if old == nil || old.w != s.w || old.h != s.h || old.label != s.label {
		w.identify.clear()
		return
	}
	pins := w.identify.pins
	for i, p := range pins {
		pins[i] = w.read(s, p.col, p.row)
	}
	w.identify.refresh()
}

// showZoom shows the map's zoom in the header.
func (w *window) showZoom() {
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

func (w *window) markReady() {
	if w.ready {
		return
	}
	w.ready = true
	if w.onReady != nil {
		w.onReady()
	}
}

// close releases the backends when the window goes.
func (w *window) close() {
	if w.onClosed != nil {
		defer w.onClosed()
	}
	w.bridge.stop()
	if w.shown != nil {
		w.shown.large.close()
	}
	if w.view != nil {
		w.view.dropLarge()
	}
	go func() {
		w.bridge.wait()
		w.card.close()
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
