package ui

import (
	"context"
	"errors"
	"fmt"
	"image"
	"path/filepath"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"canopy/compute"
	"canopy/compute/change"
	"canopy/compute/geotiff"
	"canopy/compute/index"
	"canopy/compute/outfile"
	"canopy/ui/mapview"
	"canopy/ui/render/colormap"
	"canopy/ui/swipe"
)

// The views of the two-date mode.
const (
	viewBefore     = "Before"
	viewAfter      = "After"
	viewDifference = "Difference"
	viewSwipe      = "Swipe"
)

var twoViews = []string{viewBefore, viewAfter, viewDifference, viewSwipe}

// twoDates is the window's two-date mode: the map shown is the before
// date; the user opens an after date beside it (a product, bands by
// role, a typed or dropped path, or a generated scene, as the main
// input), which is aligned onto the before grid as `canopy change`
// aligns it (compute/change: the same grid, or nearest resampling when
// both are georeferenced and overlap), its index computed on the chosen
// backend, and the difference before − after shown. The views are the
// before map, the after map, the difference (a diverging ramp centred on
// 0, or its change classes) and a swipe between the dates.
type twoDates struct {
	card fyne.CanvasObject
	// source opens the after date (its own Folder…, File…, typed path,
	// mask and generator); bands gives it bands by role from files.
	source *sourcePanel
	bands  *bandsPanel
	// Info says what the after date is, how it was aligned, or what is
	// wrong.
	Info *widget.Label
	// View picks the view (in the map's header, shown in two-date mode).
	View *widget.RadioGroup
	// DiffClasses colours the difference by its change classes instead of
	// the diverging ramp.
	DiffClasses *widget.Check
	// Close leaves the two-date mode; Export writes the difference as a
	// GeoTIFF.
	Close, Export *widget.Button
	bar           *fyne.Container
	swipe         *swipe.View

	// src is the after date (nil: one date); res what was computed from
	// it for the map shown (nil until then, or after a failure).
	src   *bandSource
	res   *twoResult
	view  string
	quiet bool
	// pending is a follow-up asked for while a job ran (pendingOpen its
	// new after date, if any): it starts when the window is idle, or
	// with the next map's follow-up, so that it never cancels the job.
	pending     bool
	pendingOpen func() (bandSource, error)
	// keepView keeps the view a session chose when its after date is
	// first shown (else the first after date shows the difference).
	keepView bool
}

// twoResult is the after date computed for one map shown.
type twoResult struct {
	// key names the after date's pixels, the index and the run: an
	// after date computed for the same key is not computed again.
	key string
	// on is the map shown (the before date) the result belongs to.
	on *shown
	// after is the after date's index on its own grid.
	after *shown
	// aligned is the after index on the before grid; diff is before −
	// after (NaN where either date has no value).
	aligned, diff []float32
	align         change.Alignment
	// afterStats and diffStats are the statistics of aligned and diff;
	// diffIdx names the difference and carries its change classes.
	afterStats, diffStats *sceneStats
	diffIdx               indexChoice
	verified              bool
}

// twoCalls are what the two-date card asks of the window: openPath opens
// a product as the after date, chosen follows a new after source from
// its panels, setView shows a view of the dates, recolour shows the view
// again in other colours, close leaves the two-date mode, export asks
// where to write the difference.
type twoCalls struct {
	openPath func(path string)
	chosen   func(bandSource)
	setView  func(view string) error
	recolour func()
	close    func()
	export   func()
}

// newTwoDates builds the two-date card (its dialogs over parent, its
// generator set up as opts says, its bands listed for roles) and the
// swipe over map m.
func newTwoDates(parent fyne.Window, opts options, m *mapview.View, roles []string, c twoCalls) *twoDates {
	t := &twoDates{view: viewDifference}
	t.source = newSourcePanel(parent, opts)
	t.source.onOpen = c.openPath
	t.source.onGenerate = c.chosen
	t.source.onMask = func(mask string, buffer int) {
		if t.src != nil && t.src.kind == srcProduct {
			c.chosen(t.src.withMask(mask, buffer))
		}
	}
	t.source.Path.SetPlaceHolder("after: .SAFE, .zip, .tar, .json or .tif")
	t.bands = newBandsPanel(parent)
	t.bands.onSource = c.chosen
	t.bands.mask = t.source.maskChoice
	t.bands.show(bandSource{kind: srcFiles, files: map[string]fileBand{}}, roles)
	t.Info = widget.NewLabel("Open a second date to compare with the map shown (the before date).")
	t.Info.Wrapping = fyne.TextWrapWord
	t.View = widget.NewRadioGroup(twoViews, func(v string) {
		if !t.quiet && v != "" {
			_ = c.setView(v)
		}
	})
	t.View.Horizontal = true
	t.View.Required = true
	t.quiet = true
	t.View.SetSelected(t.view)
	t.quiet = false
	// A short label: a check does not wrap, and a long one widened the
	// sidebar past its share (the map under 60 % of a 1440-wide window).
	t.DiffClasses = widget.NewCheck("Colour by change classes", func(bool) {
		if t.active() {
			c.recolour()
		}
	})
	t.Close = widget.NewButtonWithIcon("Close the after date", theme.CancelIcon(), c.close)
	t.Close.Disable()
	t.Export = widget.NewButtonWithIcon("Difference as GeoTIFF…", theme.DocumentSaveIcon(), c.export)
	t.Export.Disable()
	t.swipe = swipe.New(m)
	t.bar = container.NewHBox(widget.NewLabelWithStyle("Two dates:", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), t.View)
	t.bar.Hide()

	s := t.source
	gen := widget.NewForm(
		widget.NewFormItem("Scene", s.Scene),
		widget.NewFormItem("Size", s.Size),
		widget.NewFormItem("Seed", s.Seed),
	)
	more := widget.NewAccordion(
		widget.NewAccordionItem("Bands of the after date", container.NewVBox(t.bands.list, t.bands.note)),
		widget.NewAccordionItem("Generate a fake after date", container.NewVBox(gen, s.Generate)),
	)
	t.card = section("Two dates", container.NewVBox(
		widget.NewLabelWithStyle("Open the after date", fyne.TextAlignLeading, fyne.TextStyle{Italic: true}),
		container.NewGridWithColumns(2, s.OpenFolder, s.OpenFile),
		container.NewBorder(nil, nil, nil, s.OpenPath, s.Path),
		s.SceneLine,
		s.Mask,
		widget.NewForm(widget.NewFormItem("Buffer (px)", s.Buffer)),
		more,
		t.Info,
		t.DiffClasses,
		t.Export,
		t.Close,
	))
	return t
}

// active reports whether a difference is on screen's map: an after date
// computed for the map shown.
func (t *twoDates) active() bool { return t.res != nil }

// current is the result for the map shown, nil when there is none (or it
// belongs to a map no longer shown).
func (w *window) twoCurrent() *twoResult {
	if r := w.two.res; r != nil && w.shown != nil && r.on == w.shown {
		return r
	}
	return nil
}

// mapStack is the map with what lies over it: the swipe's divider and the
// stands' labels.
func (w *window) mapStack() fyne.CanvasObject {
	return container.NewStack(w.Map, w.two.swipe.Layer, w.standsP.labels)
}

// drawOverlay draws over the map view: the after date right of the swipe's
// divider, then the stands. It runs in the map's generator.
func (w *window) drawOverlay(buf *image.NRGBA, x0, y0, zoom float64) {
	w.two.swipe.Draw(buf, x0, y0, zoom)
	w.standsP.draw(buf, x0, y0, zoom)
}

// openAfterPath opens a product (or a multi-band GeoTIFF) as the after
// date.
func (w *window) openAfterPath(path string) {
	mask, buffer, err := w.two.source.maskChoice()
	if err != nil {
		w.setStatus(err.Error(), false)
		return
	}
	w.startFollowUp(func() (bandSource, error) { return openProduct(path, mask, buffer) })
}

// OpenAfter opens path (a product or a multi-band GeoTIFF, as Open
// scene… takes) as the after date, as typing it does. The work runs off
// the event goroutine; Wait waits for it.
func (w *window) OpenAfter(path string) {
	w.two.source.Path.SetText(path)
	w.openAfterPath(path)
}

// afterChosen follows a new after source from its panels (a band file
// for a role, a band of an orthomosaic, a generated scene).
func (w *window) afterChosen(src bandSource) {
	w.startFollowUp(func() (bandSource, error) { return src, nil })
}

// CloseAfter leaves the two-date mode: the map shows the before date
// alone again.
func (w *window) CloseAfter() {
	t := w.two
	if t.src == nil {
		return
	}
	t.src, t.res = nil, nil
	t.source.setProduct(nil)
	t.bands.show(bandSource{kind: srcFiles, files: map[string]fileBand{}}, w.idx.roles())
	t.Info.SetText("Open a second date to compare with the map shown (the before date).")
	t.Info.Importance = widget.MediumImportance
	t.Info.Refresh()
	t.Close.Disable()
	t.Export.Disable()
	w.two.showBar(false, w.Win)
	t.swipe.Show(false)
	t.swipe.Set(nil, 0, 0, nil)
	w.applyColour(false)
	if s := w.shown; s != nil {
		w.stats.show(s.summary, s.idx, s.set.raw)
	}
	w.standsP.clearChange()
	w.followUp()
}

// SetDateView shows one of the two-date views: viewBefore, viewAfter,
// viewDifference or viewSwipe.
func (w *window) SetDateView(v string) error {
	if !contains(twoViews, v) {
		return fmt.Errorf("no view %q (views: %s)", v, strings.Join(twoViews, ", "))
	}
	t := w.two
	t.view = v
	if t.View.Selected != v {
		t.quiet = true
		t.View.SetSelected(v)
		t.quiet = false
	}
	if w.twoCurrent() == nil {
		return errors.New("open an after date first")
	}
	if w.view.mode != viewIndex {
		w.SetView(viewIndex) // the dates' views are of the index
	}
	w.applyTwoView(false)
	w.viewStatus()
	return nil
}

// DateView returns the two-date view shown: viewBefore with one date.
func (w *window) DateView() string {
	if w.twoCurrent() == nil {
		return viewBefore
	}
	return w.two.view
}

// Difference returns the difference before − after shown and its size
// (nil with one date).
func (w *window) Difference() (diff []float32, width, height int) {
	r := w.twoCurrent()
	if r == nil {
		return nil, 0, 0
	}
	return r.diff, r.on.w, r.on.h
}

// AfterPlane returns the after date's index on the before grid (nil with
// one date).
func (w *window) AfterPlane() []float32 {
	if r := w.twoCurrent(); r != nil {
		return r.aligned
	}
	return nil
}

// diffLUT is the difference's colour table: the diverging change ramp
// over [−1, 1] centred on 0, as `canopy change --png` draws it, or its
// change classes.
func (t *twoDates) diffLUT(r *twoResult) *colormap.LUT {
	heading := "d" + r.on.idx.heading() + " (before − after)"
	if t.DiffClasses.Checked {
		if lut, err := colormap.NewClasses(r.diffIdx.classes); err == nil {
			return lut.WithHeading(heading)
		}
	}
	lut, _ := colormap.New(colormap.RampChange, -1, 1)
	return lut.WithHeading(heading)
}

// applyTwoView shows the view chosen: the map, the legend and the
// statistics of the before date, the after date or the difference, or the
// swipe between the dates. It reports false when there is no two-date
// result for the map shown (the map is then shown as one date).
func (w *window) applyTwoView(onlyColour bool) bool {
	r := w.twoCurrent()
	t := w.two
	if r == nil {
		t.swipe.Show(false)
		return false
	}
	s := r.on
	plane, lut := s.plane, w.lut
	switch t.view {
	case viewAfter:
		plane = r.aligned
	case viewDifference:
		plane, lut = r.diff, t.diffLUT(r)
	}
	if t.view == viewBefore || t.view == viewSwipe {
		var render func(*image.NRGBA, *colormap.LUT, float64, float64, float64) bool
		if s.card != nil {
			render = s.card.render
		}
		w.Map.SetRenderer(render)
	} else {
		w.Map.SetRenderer(nil)
	}
	t.swipe.Set(r.aligned, s.w, s.h, w.lut)
	t.swipe.Show(t.view == viewSwipe)
	if onlyColour && t.view != viewDifference {
		w.Map.SetLUT(lut)
	} else {
		w.Map.SetData(plane, s.w, s.h, lut)
	}
	switch t.view {
	case viewAfter:
		w.stats.show(r.afterStats, s.idx, s.set.raw)
		w.stats.histTitle.SetText("Histogram of " + s.idx.title() + ", after date")
	case viewDifference:
		w.stats.show(r.diffStats, r.diffIdx, s.set.raw)
		name := "d" + s.idx.heading()
		w.stats.histTitle.SetText("Histogram of " + name + " (before − after)")
		w.stats.clsTitle.SetText("Change classes of " + name)
		w.stats.EditClasses.Hide()
	default:
		w.stats.show(s.summary, s.idx, s.set.raw)
	}
	w.stats.recolour(lut)
	w.colour.showLegend(lut)
	w.standsP.table.Refresh()
	w.showHeader()
	w.showMask()
	return true
}

// twoDropped opens what was dropped on the two-date card as the after
// date, and reports whether it was dropped there.
func (w *window) twoDropped(pos fyne.Position, uris []fyne.URI) bool {
	d := fyne.CurrentApp().Driver()
	p, size := d.AbsolutePositionForObject(w.two.card), w.two.card.Size()
	if !w.two.card.Visible() || pos.X < p.X || pos.Y < p.Y || pos.X >= p.X+size.Width || pos.Y >= p.Y+size.Height {
		return false
	}
	for _, u := range uris {
		if u.Scheme() == "file" && u.Path() != "" {
			w.OpenAfter(u.Path())
			return true
		}
	}
	return true
}

// probe is what the hovered pixel reads on the after date and in the
// difference ("" with one date: r nil).
func (r *twoResult) probe(col, row int) string {
	if r == nil || col < 0 || row < 0 || col >= r.on.w || row >= r.on.h {
		return ""
	}
	i := row*r.on.w + col
	return fmt.Sprintf("after %s  ·  d%s %s", fmtValue(r.aligned[i]), r.on.idx.heading(), fmtValue(r.diff[i]))
}

func fmtValue(v float32) string {
	if v != v {
		return "no value"
	}
	return fmt.Sprintf("%.4f", v)
}

// diffChoice names the difference of idx and gives it its change classes
// (colormap.ChangeClasses: the USGS dNBR severity classes for nbr and
// nbr2, the symmetric change classes of compute/change otherwise, as
// `canopy change` classifies).
func diffChoice(idx indexChoice) indexChoice {
	d := indexChoice{name: "d" + idx.name, classes: colormap.ChangeClasses(idx.name)}
	if idx.cat != nil {
		d.cat = &index.Index{Name: "d" + idx.cat.Name, Range: [2]float64{-1, 1}}
	}
	return d
}

// followUp starts what follows a new map shown: in two-date mode the
// after date and the difference, and the stands' statistics, in one job
// (off the event goroutine; a newer job cancels it).
func (w *window) followUp() { w.startFollowUp(nil) }

// startFollowUp is followUp with a new after date from open (nil: the
// current one).
func (w *window) startFollowUp(open func() (bandSource, error)) {
	s, t := w.shown, w.two
	if open == nil {
		open = t.pendingOpen
	}
	if w.bridge.busy() {
		// A computation (or another job) runs: starting now would cancel
		// it. Its map's own follow-up, or the idle window, runs this.
		t.pending, t.pendingOpen = true, open
		return
	}
	t.pending, t.pendingOpen = false, nil
	if s == nil {
		if open != nil {
			w.setStatus("Compute the before map first: the after date is compared with it", false)
		}
		return
	}
	work := w.standsP.work(s)
	if open == nil && t.src == nil && work == nil {
		return
	}
	if s.large != nil {
		what := "stands"
		if open != nil || t.src != nil {
			what = "two dates"
		}
		w.setStatus(errLarge(what).Error(), false)
		return
	}
	if open == nil && t.src != nil {
		src := *t.src
		open = func() (bandSource, error) { return src, nil }
	}
	run := w.runOrAuto()
	prev := t.res
	label := "Stand statistics"
	if open != nil {
		label = "Computing the after date"
	}
	w.bridge.start(label, func(ctx context.Context, progress progressFunc) (func(), error) {
		var (
			src     *bandSource
			res     *twoResult
			twoErr  error
			pending string
		)
		if open != nil {
			a, err := open()
			if err != nil {
				return nil, err
			}
			src = &a
			if miss := a.missing(s.idx.roles()); len(miss) > 0 {
				pending = "The after date: " + missingText(s.idx, a, miss)
			} else if res, twoErr = computeTwo(ctx, progress, a, prev, s, run); ctx.Err() != nil {
				return nil, ctx.Err()
			}
		}
		var out *standsOut
		if work != nil {
			var err error
			if out, err = work.run(ctx, progress, s, res); err != nil {
				return nil, err
			}
		}
		return func() {
			if w.shown != s {
				return // a newer map: its own follow-up comes
			}
			if src != nil {
				w.installTwo(src, res, twoErr, pending)
			}
			if out != nil {
				w.standsP.install(out)
			}
		}, nil
	})
}

// idle runs a follow-up asked for while a job ran.
func (w *window) idle() {
	if t := w.two; t != nil && t.pending && !w.bridge.busy() {
		w.startFollowUp(nil)
	}
}

// installTwo shows a computed after date (or what is wrong with it).
func (w *window) installTwo(src *bandSource, res *twoResult, err error, pending string) {
	t := w.two
	first := t.res == nil
	t.src, t.res = src, res
	t.source.setProduct(src)
	t.bands.show(*src, w.shown.idx.roles())
	t.Close.Enable()
	switch {
	case err != nil:
		line := "After date: " + firstLine(explain(err).Error())
		t.Info.SetText(line)
		t.Info.Importance = widget.DangerImportance
		w.setStatus(line, false)
	case pending != "":
		t.Info.SetText(pending)
		t.Info.Importance = widget.WarningImportance
		w.setStatus(pending, false)
	default:
		t.Info.SetText("After: " + res.after.label + "\n" + alignText(res.align))
		t.Info.Importance = widget.MediumImportance
		w.setStatus(twoStatus(res), res.verified)
	}
	t.Info.Refresh()
	if res == nil {
		t.Export.Disable()
		w.two.showBar(false, w.Win)
		t.swipe.Show(false)
		w.applyColour(false)
		w.stats.show(w.shown.summary, w.shown.idx, w.shown.set.raw)
		return
	}
	if first && !t.keepView {
		t.view = viewDifference
	}
	t.keepView = false
	t.quiet = true
	t.View.SetSelected(t.view)
	t.quiet = false
	t.Export.Enable()
	w.two.showBar(true, w.Win)
	w.applyTwoView(false)
}

// showBar shows or hides the views' bar over the map, laying the
// window's content out again when that changes its height.
func (t *twoDates) showBar(on bool, win fyne.Window) {
	if t.bar.Visible() == on {
		return
	}
	if on {
		t.bar.Show()
	} else {
		t.bar.Hide()
	}
	if c := win.Content(); c != nil {
		c.Refresh()
	}
}

// alignText says how the after date was put on the before grid, as
// `canopy change` says it.
func alignText(al change.Alignment) string {
	if !al.Resampled {
		return "Same grid as the before date: no resampling."
	}
	return fmt.Sprintf("Resampled onto the before date's grid (%s); it covers %.1f %% of it.", al.Method, 100*al.Overlap)
}

// twoStatus is the status line of a difference computed.
func twoStatus(r *twoResult) string {
	s := r.on
	st := r.diffStats.summary
	grid := "same grid"
	if r.align.Resampled {
		grid = fmt.Sprintf("after resampled (%s) onto the before grid, %.1f %% covered", r.align.Method, 100*r.align.Overlap)
	}
	v := "verified"
	if !r.verified {
		v = "NOT verified"
	}
	return fmt.Sprintf("d%s = before − after on %s: %s; %s valid pixels, mean %.4f; %s", s.idx.heading(), r.after.backend, grid, thousands(st.Valid), st.Mean, v)
}

// computeTwo computes the after date src for the map shown s (off the
// event goroutine): its index on run (reusing prev's when it is the same
// after date, index and run), aligned onto s's grid by compute/change
// (OntoGrid: the same grid, or nearest when both are georeferenced and
// overlap), the difference before − after (change.Difference: NaN where
// either date has no value, so both dates' masks count) and the
// statistics of the after date and of the difference with its change
// classes.
func computeTwo(ctx context.Context, progress progressFunc, src bandSource, prev *twoResult, s *shown, run *runSpec) (*twoResult, error) {
	if run == nil {
		return nil, errors.New("no backend is available to compute the after date")
	}
	key := src.key() + "\x00" + s.idx.name + "\x00" + run.label()
	if prev != nil && prev.key == key && prev.on.w == s.w && prev.on.h == s.h && len(s.plane) > 0 && &prev.on.plane[0] == &s.plane[0] && prev.on.set.geo.SameGrid(s.set.geo) {
		r := *prev
		r.on = s
		return &r, nil
	}
	var a *shown
	verified := true
	if prev != nil && prev.key == key {
		a, verified = prev.after, prev.verified
	} else {
		var have *bandSet
		if prev != nil && prev.after != nil {
			have = prev.after.set
		}
		var (
			res compute.BenchResult
			err error
		)
		a, res, _, _, err = computeShown(ctx, progress, src, have, s.idx, run, nil, colormap.DefaultRamp, colormap.StretchFull)
		if err != nil {
			return nil, err
		}
		verified = res.Verified
		a.line, a.lineOK = "After date: "+resultLine(res, a), res.Verified
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	progress(-1, "Aligning the dates…")
	aligned, al, err := change.OntoGrid(a.plane, a.w, a.h, a.set.geo, s.w, s.h, s.set.geo)
	if err != nil {
		return nil, fmt.Errorf("%s and %s: %w", shortName(s.label), shortName(a.label), err)
	}
	progress(-1, "Difference and statistics…")
	diff := compute.NewOutput(s.w * s.h)
	if err := change.Difference(diff, s.plane, aligned); err != nil {
		return nil, err
	}
	r := &twoResult{key: key, on: s, after: a, aligned: aligned, diff: diff, align: al, diffIdx: diffChoice(s.idx), verified: verified}
	r.afterStats = summarize(&shown{set: s.set, idx: s.idx, plane: aligned, w: s.w, h: s.h})
	r.diffStats = summarize(&shown{set: s.set, idx: r.diffIdx, plane: diff, w: s.w, h: s.h})
	return r, nil
}

// viewStatus says in the status line what the view on the map is: the
// run that computed the index shown (the before or the after date's), the
// difference, or the composite's bands.
func (w *window) viewStatus() {
	s := w.shown
	if s == nil {
		return
	}
	if c := w.shownComposite(); c != nil {
		w.setStatus(w.compositeLine(c), true)
		return
	}
	if r := w.twoCurrent(); r != nil {
		switch w.two.view {
		case viewAfter:
			if r.after.line != "" {
				w.setStatus(r.after.line, r.after.lineOK)
			}
			return
		case viewDifference, viewSwipe:
			w.setStatus(twoStatus(r), r.verified)
			return
		}
	}
	if s.line != "" {
		w.setStatus(s.line, s.lineOK)
	}
}

// showHeader names what the map shows above it: the composite, or the
// index of the date in view (the before date, the after date, the
// difference of the two), and its source.
func (w *window) showHeader() {
	s := w.shown
	if s == nil {
		return
	}
	text := s.idx.title() + " — " + s.label
	if c := w.shownComposite(); c != nil {
		text = c.Title() + " — " + s.label
	} else if r := w.twoCurrent(); r != nil {
		after := r.after.label
		switch w.two.view {
		case viewAfter:
			text = s.idx.title() + ", after date — " + after
		case viewDifference:
			text = "d" + s.idx.heading() + " (before − after) — " + shortName(s.label) + " − " + shortName(after)
		case viewSwipe:
			text = s.idx.title() + ", before date | after date — " + shortName(s.label) + " | " + shortName(after)
		default:
			text = s.idx.title() + ", before date — " + s.label
		}
	}
	w.SceneLabel.SetText(text)
}

// shortName is a source's description without its size ("a.tif, 64×64"
// → "a.tif").
func shortName(label string) string {
	if i := strings.LastIndex(label, ", "); i > 0 {
		label = label[:i]
	}
	return filepath.Base(label)
}

// inputFiles are the files the source reads (an export never writes over
// them).
func (s bandSource) inputFiles() []string {
	var out []string
	switch s.kind {
	case srcFiles:
		for _, f := range s.files {
			out = append(out, f.path)
		}
	case srcProduct:
		if s.info != nil {
			out = append(out, s.info.Files()...)
		}
		out = append(out, s.moreFiles...)
	}
	return out
}

// ExportDifference writes the difference before − after shown as a
// float32 GeoTIFF on the before date's grid, NaN where it has no value,
// its band described "d" and the index, as `canopy change --tif` writes
// it; never over an input of either date.
func (w *window) ExportDifference(path string) error { return w.twoCurrent().differenceWriter()(path) }

// differenceWriter takes the difference r (nil: none shown) on the event
// goroutine and returns what writes it (on any goroutine).
func (r *twoResult) differenceWriter() func(string) error {
	return func(path string) error {
		if r == nil {
			return errors.New("export difference: open an after date first")
		}
		set := outfile.NewSet(append(r.on.src.inputFiles(), r.after.src.inputFiles()...)...)
		f, err := set.Create(path)
		if err != nil {
			return err
		}
		if err := geotiff.WriteBandsTo(f, r.on.w, r.on.h, [][]float32{r.diff}, r.on.set.geo,
			geotiff.WriteOptions{NoData: "nan", Descriptions: []string{"d" + r.on.idx.name}}); err != nil {
			set.Abort()
			return fmt.Errorf("write %s: %w", path, err)
		}
		return set.Commit()
	}
}

func (w *window) exportDifferenceDialog() {
	r := w.twoCurrent()
	if r == nil {
		return
	}
	write := r.differenceWriter()
	w.saveDialog("Export the difference as GeoTIFF", "d"+r.on.idx.name+".tif", []string{".tif"}, func(path string) {
		w.exportJob("the difference", path, write)
	})
}

// saveTo records the after date and its view in a session.
func (t *twoDates) saveTo(s *session) {
	if t == nil || t.src == nil {
		return
	}
	a := &session{}
	src := t.src
	switch src.kind {
	case srcFake:
		a.Fake, a.Size, a.Seed = src.fake, src.size, src.seed
	case srcFiles:
		a.Bands = map[string]string{}
		for r, f := range src.files {
			a.Bands[r] = f.spec()
		}
	default:
		if src.info != nil {
			a.Product = src.info.Path
		}
		a.Mask, a.MaskBuffer = src.mask, src.buffer
	}
	s.After, s.DateView = a, t.view
}

// applyTwoSession opens a session's after date (in a job, as the user's
// would be) with its view, or closes the one open when the session has
// none.
func (w *window) applyTwoSession(s session) {
	if s.After == nil {
		w.CloseAfter()
		return
	}
	t := w.two
	if contains(twoViews, s.DateView) {
		t.view, t.keepView = s.DateView, true
	}
	after := *s.After
	if after.Product != "" {
		t.source.Path.SetText(after.Product)
	}
	w.startFollowUp(func() (bandSource, error) {
		src, err := after.source(func(float64, string) {})
		if err != nil {
			return src, fmt.Errorf("the session's after date: %w", err)
		}
		return src, nil
	})
}
