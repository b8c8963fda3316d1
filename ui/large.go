package ui

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"math"
	"sync"
	"time"

	"canopy/compute"
	"canopy/compute/index"
	"canopy/compute/pipeline"
	"canopy/compute/pyramid"
	"canopy/compute/scene"
	"canopy/compute/source"
	"canopy/compute/stats"
	"canopy/ui/mapview"
	"canopy/ui/render/colormap"
)

// largeBytes is the size from which the window does not load an image's
// planes but reads what is on screen (largeImage): the bands as stored
// and the float32 index together past 2 GiB (a 10980² uint16 pair takes
// 0.96 GB and still loads; a 16384² pair, 2.1 GiB, does not), or past half
// the memory the system has free. A variable for the tests.
var largeBytes int64 = 2 << 30

// errLarge is what the window says of what it does not make on an image
// read by views ("exports", "stands", "two dates"), and
// the command that does it from the files.
func errLarge(what string) error {
	msg := fmt.Sprintf("%s of an image this large are not made in the window", what)
	if cmd := map[string]string{"exports": "compute --tif/--png/--layout", "stands": "zonal", "two dates": "change"}[what]; cmd != "" {
		msg += ": use canopy " + cmd + " on the files"
	}
	return errors.New(msg)
}

// largeFor reports whether the bands of roles that src gives are too
// large to load (source.Large decides, by the window's rule tooLarge):
// only bands of GeoTIFF files, and products whose bands and mask are
// GeoTIFFs on the grid, are read by views (any other source loads as
// before, and says what is wrong if it cannot).
func largeFor(src bandSource, roles []string) bool {
	switch src.kind {
	case srcFake:
		return false
	case srcProduct:
		if len(src.more) > 0 {
			return false // a mosaic is warped whole (mosaic.go)
		}
		// Not opened again when even 4-byte bands and masks would load.
		g := src.info.Grid
		if !tooLarge(int64(g.Width) * int64(g.Height) * int64(4+4*(len(roles)+2)+1)) {
			return false
		}
	}
	return source.Large(src.spec(), roles, tooLarge)
}

// tooLarge applies the rule to what loading takes: past largeBytes, or
// past half the memory the system has free.
func tooLarge(bytes int64) bool {
	if bytes > largeBytes {
		return true
	}
	free, ok := freeMemory()
	return ok && uint64(bytes) > free/2
}

// largeImage is an image the window reads by views: the files stay open
// (compute/pyramid), the map shows the view of the viewport computed on
// the run's backend, read at about screen resolution from the best
// overview (or decimated from the full resolution, filled in block by
// block), and read again when the user zooms or pans (the view being read
// is cancelled); the statistics stream over the whole image in the
// background; pins read the files at full resolution.
type largeImage struct {
	im    *pyramid.Image
	idx   indexChoice
	run   runSpec
	names []string
	exprs []*index.Expr
	point compute.Backend // computes a pin's index (the pure-Go backend)

	ctx  context.Context // the image's life: views and statistics
	stop context.CancelFunc

	// Bound by the window (bind) before the first view: do runs on the
	// event goroutine, bg in the background (Window.Wait waits for it),
	// redraw redraws the map, viewDone says a view is complete.
	do       func(func())
	bg       func(func())
	redraw   func()
	viewDone func(v *pyramid.View, took time.Duration, err error)

	mu         sync.Mutex
	cur        *pyramid.View // the last complete view
	next       *pyramid.View // the view being read, rows [0, filled) done
	filled     int
	want       pyramid.Plan
	asked      bool
	cancelView context.CancelFunc
	tmp        *image.NRGBA
	views      int
	// drawn are the views the last render drew (the last complete one,
	// and the rows [0, drawnRows) of the one being read over it): the
	// mask hatched over them is theirs.
	drawn     [2]*pyramid.View
	drawnRows int
	// firstRows is when the first view's first block was computed.
	firstRows time.Time
	// statsFor is the map whose statistics wait for the first view (the
	// view first, the rest after), nil when none waits.
	statsFor *shown
	// active counts the views and statistics running: the files close
	// when they have stopped.
	active sync.WaitGroup
	// masked is the pixels the mask masks, counted by statistics.
	masked int
}

// openLarge opens the bands of roles that src gives for viewing.
func openLarge(src bandSource, roles []string, idx indexChoice, run runSpec) (*largeImage, error) {
	im, err := source.OpenViews(src.spec(), roles)
	if err != nil {
		return nil, err
	}
	point, err := compute.New(compute.NameGo)
	if err != nil {
		im.Close()
		return nil, err
	}
	ctx, stop := context.WithCancel(context.Background())
	return &largeImage{im: im, idx: idx, run: run, names: []string{idx.name}, exprs: []*index.Expr{idx.expr}, point: point, ctx: ctx, stop: stop}, nil
}

// computeLarge is computeShown for an image too large to load: it opens
// the files and returns what to show at once; the views and statistics
// follow in the background once the window shows it (Window.showLarge).
func computeLarge(progress progressFunc, src bandSource, idx indexChoice, run *runSpec, ramp, stretch string, roles []string) (*shown, *colormap.LUT, error) {
	progress(-1, "Opening the large image for viewing…")
	lg, err := openLarge(src, roles, idx, *run)
	if err != nil {
		return nil, nil, err
	}
	im := lg.im
	// One rule with the rest (source.Radiometry): integer bands with no
	// scale or offset are digital numbers, a file's or a product's.
	set := &bandSet{key: "large " + src.key(), bands: im.Bands, geo: im.Geo, w: im.Width, h: im.Height, raw: len(im.Bands) > 0}
	for _, b := range im.Bands {
		if b.Plane.Type == compute.F32 || !b.Radiometry.IsIdentity() {
			set.raw = false
		}
	}
	if set.raw && !src.rawOK {
		if err := source.CheckValues(source.DigitalNumbers, []string{idx.title()}, []*index.Expr{idx.expr}, false); err != nil {
			lg.close()
			return nil, nil, err
		}
	}
	s := &shown{src: src, set: set, idx: idx, w: im.Width, h: im.Height, label: src.describe(im.Width, im.Height),
		backend: run.label(), large: lg}
	st, ok := s.stretchFor(stretch)
	if !ok {
		// A stretch read from the data waits for the first view: the
		// catalogue's range (or -1 to 1) until then.
		st, ok = idx.fullRange()
		if !ok {
			st = colormap.Full
		}
	}
	lut, err := newLUT(ramp, st, idx)
	if err != nil {
		lg.close()
		return nil, nil, err
	}
	return s, lut, nil
}

// close cancels the views and statistics and closes the files once they
// have stopped.
func (lg *largeImage) close() {
	if lg == nil {
		return
	}
	lg.stop()
	lg.mu.Lock()
	if lg.cancelView != nil {
		lg.cancelView()
	}
	lg.mu.Unlock()
	go func() {
		// Readers stop at their next block; the files close after.
		lg.active.Wait()
		lg.im.Close()
		lg.point.Close()
	}()
}

// request asks for the view of the viewport whose top-left corner is
// image point (x0, y0) at zoom screen pixels per image pixel, vw × vh
// screen pixels: nothing when that view is the one shown or being read,
// else the view being read is cancelled and this one read in the
// background, the map redrawn as its blocks arrive.
func (lg *largeImage) request(x0, y0, zoom float64, vw, vh int) {
	if lg.do == nil {
		return
	}
	p, ok := viewPlan(lg.im, x0, y0, zoom, vw, vh)
	if !ok {
		return
	}
	lg.mu.Lock()
	defer lg.mu.Unlock()
	if lg.ctx.Err() != nil || (lg.asked && p == lg.want) {
		return
	}
	if lg.cancelView != nil {
		lg.cancelView()
	}
	ctx, cancel := context.WithCancel(lg.ctx)
	lg.want, lg.asked, lg.cancelView = p, true, cancel
	lg.next, lg.filled = nil, 0
	lg.active.Add(1)
	lg.bg(func() {
		defer lg.active.Done()
		lg.read(ctx, p)
	})
}

// viewPlan is the plan of im's view of the viewport whose top-left
// corner is image point (x0, y0) at zoom screen pixels per image pixel,
// vw × vh screen pixels; false when the viewport shows none of im.
func viewPlan(im *pyramid.Image, x0, y0, zoom float64, vw, vh int) (pyramid.Plan, bool) {
	if !(zoom > 0) || vw <= 0 || vh <= 0 {
		return pyramid.Plan{}, false
	}
	W, H := float64(im.Width), float64(im.Height)
	rx0, ry0 := math.Max(0, x0), math.Max(0, y0)
	rx1, ry1 := math.Min(W, x0+float64(vw)/zoom), math.Min(H, y0+float64(vh)/zoom)
	if !(rx1 > rx0) || !(ry1 > ry0) {
		return pyramid.Plan{}, false
	}
	sw, sh := max(1, int(math.Ceil((rx1-rx0)*zoom))), max(1, int(math.Ceil((ry1-ry0)*zoom)))
	p := im.PlanView(rx0, ry0, rx1, ry1, sw, sh)
	return p, !p.Empty()
}

// read reads and computes plan p (request's background work).
func (lg *largeImage) read(ctx context.Context, p pyramid.Plan) {
	t0 := time.Now()
	var last time.Time
	v, err := lg.im.Compute(ctx, p, lg.run.b, lg.run.mode, lg.names, lg.exprs, func(v *pyramid.View, j0, j1 int) {
		lg.mu.Lock()
		if lg.want == p {
			lg.next, lg.filled = v, j1
		}
		if lg.firstRows.IsZero() {
			lg.firstRows = time.Now()
		}
		lg.mu.Unlock()
		if time.Since(last) > 100*time.Millisecond && j1 < p.Height {
			last = time.Now()
			lg.do(lg.redraw)
		}
	})
	if err != nil {
		if ctx.Err() == nil {
			lg.do(func() { lg.viewDone(nil, 0, err) })
		}
		return
	}
	took := time.Since(t0)
	lg.mu.Lock()
	current := lg.want == p && ctx.Err() == nil
	if current {
		lg.cur, lg.next, lg.filled = v, nil, 0
		lg.views++
	}
	lg.mu.Unlock()
	if current {
		lg.do(func() {
			lg.redraw()
			lg.viewDone(v, took, nil)
		})
	}
}

// current is the last complete view (nil before the first).
func (lg *largeImage) current() *pyramid.View {
	lg.mu.Lock()
	defer lg.mu.Unlock()
	return lg.cur
}

// render draws the viewport (the map view's renderer, under its lock):
// the last complete view, the rows of the one being read over it, and
// asks for this viewport's view.
func (lg *largeImage) render(buf *image.NRGBA, lut *colormap.LUT, x0, y0, zoom float64) bool {
	lg.mu.Lock()
	cur, next, filled := lg.cur, lg.next, lg.filled
	if lg.tmp == nil || lg.tmp.Rect != buf.Rect {
		lg.tmp = image.NewNRGBA(buf.Rect)
	}
	tmp := lg.tmp
	lg.drawn, lg.drawnRows = [2]*pyramid.View{cur, next}, filled
	lg.mu.Unlock()
	clear(buf.Pix)
	if cur != nil {
		drawView(buf, lut, cur, cur.Height, x0, y0, zoom)
	}
	if next != nil && filled > 0 {
		drawView(tmp, lut, next, filled, x0, y0, zoom)
		for i := 3; i < len(tmp.Pix); i += 4 {
			if tmp.Pix[i] != 0 {
				copy(buf.Pix[i-3:i+1], tmp.Pix[i-3:i+1])
			}
		}
	}
	lg.request(x0, y0, zoom, buf.Rect.Dx(), buf.Rect.Dy())
	return true
}

// markMask marks the masked pixels of the viewport (the map view's
// maskView, after render): the mask of the views render drew, at their
// resolution, the rows of the one being read over the last complete one's.
func (lg *largeImage) markMask(dst []uint8, w, h int, x0, y0, zoom float64) {
	lg.mu.Lock()
	drawn, rows := lg.drawn, lg.drawnRows
	lg.mu.Unlock()
	if v := drawn[0]; v != nil {
		markView(dst, w, h, v, v.Height, x0, y0, zoom)
	}
	if v := drawn[1]; v != nil && rows > 0 {
		markView(dst, w, h, v, rows, x0, y0, zoom)
	}
}

// markView marks in dst (a w×h viewport at (x0, y0, zoom) of the full
// image) the masked samples of rows [0, rows) of view v, and unmarks the
// others (drawView's geometry).
func markView(dst []uint8, w, h int, v *pyramid.View, rows int, x0, y0, zoom float64) {
	ox, oy := v.Origin()
	cw, _ := v.Cell()
	mask := v.Mask
	if mask != nil && bytes.IndexByte(mask[:rows*v.Width], 1) < 0 {
		mask = nil // nothing masked in those rows: unmarked at memset speed
	}
	mapview.MarkMask(dst, w, h, mask, v.Width, rows, (x0-ox)/cw, (y0-oy)/cw, zoom*cw)
}

// drawView draws rows [0, rows) of view v's index into dst, the viewport
// at (x0, y0, zoom) of the full image: v is an image of its samples, each
// Cell() full-resolution pixels wide, from Origin().
func drawView(dst *image.NRGBA, lut *colormap.LUT, v *pyramid.View, rows int, x0, y0, zoom float64) {
	ox, oy := v.Origin()
	cw, _ := v.Cell()
	lut.RenderView(dst, v.Out[0][:v.Width*rows], v.Width, rows, (x0-ox)/cw, (y0-oy)/cw, zoom*cw)
}

// readPixel fills r's bands and index at full resolution (one pixel of
// the files, its index computed on the pure-Go backend).
func (lg *largeImage) readPixel(r *reading, col, row int) {
	r.value = math.NaN()
	bands, masked, err := lg.im.Pixel(col, row)
	if err != nil {
		r.state = "unreadable"
		return
	}
	for _, b := range bands {
		r.roles = append(r.roles, b.Role)
		r.values = append(r.values, scene.Value(b, 0))
	}
	if masked {
		r.state = "masked" // as the whole image's mask says
		return
	}
	j, err := compute.NewJob(bands, nil, lg.names, lg.exprs)
	if err == nil {
		_, err = compute.RunJob(lg.point, j)
	}
	switch {
	case err != nil:
		r.state = "unreadable"
	case j.Out[0][0] != j.Out[0][0]:
		r.state = "no data"
	default:
		r.value = float64(j.Out[0][0])
	}
}

// statistics streams the index over the whole image through the block
// pipeline on the run's backend (two passes for a formula with no range:
// its min–max first, for the histogram's range) and gives the statistics
// the whole-image path computes, with progress(share) on the way.
func (lg *largeImage) statistics(area float64, areaKnown bool, progress func(float64)) (*sceneStats, error) {
	job := source.Job{Backend: lg.run.b, Mode: lg.run.mode, Names: lg.names, Exprs: lg.exprs}
	H := float64(lg.im.Height)
	masked := 0
	pass := func(st *stats.Stream, from, share float64) error {
		masked = 0
		_, err := source.RunViews(lg.ctx, lg.im, job, pipeline.SinkFunc(func(b *pipeline.Block) error {
			for _, m := range b.Mask {
				if m != 0 {
					masked++
				}
			}
			st.Add(b.Out[0])
			progress(from + share*float64(b.Y0+b.Rows)/H)
			return nil
		}))
		return err
	}
	r, ok := lg.idx.fullRange()
	from, share := 0.0, 1.0
	if !ok {
		mm := stats.NewStream(0, 0, 0, nil, 0)
		if err := pass(mm, 0, 0.5); err != nil {
			return nil, err
		}
		sm := mm.Summary()
		r = colormap.Full
		if sm.Valid > 0 {
			r = colormap.Stretch{Lo: sm.Min, Hi: sm.Max}
		}
		from, share = 0.5, 0.5
	}
	var table []compute.Class
	if lg.idx.classes != nil {
		table = lg.idx.classes.Compute()
	}
	st := stats.NewStream(histBins, r.Lo, r.Hi, table, area)
	if err := pass(st, from, share); err != nil {
		return nil, err
	}
	lg.mu.Lock()
	lg.masked = masked
	lg.mu.Unlock()
	return &sceneStats{summary: st.Summary(), hist: st.Histogram(), lo: r.Lo, hi: r.Hi, classes: st.Classes(), areaKnown: areaKnown}, nil
}

// describe says how the image is read, for the source panel.
func (lg *largeImage) describe() string {
	n := len(lg.im.Levels) - 1
	how := "no overviews: views are read from the full resolution, decimated, and fill in block by block"
	if n > 0 {
		how = fmt.Sprintf("%d overview levels", n)
	}
	return fmt.Sprintf("Shown: %d×%d, too large to load: read by views at screen resolution (%s); statistics stream over the blocks", lg.im.Width, lg.im.Height, how)
}

// background runs f off the event goroutine, beside the jobs (neither
// cancelling nor cancelled by them); Wait waits for it too.
func (b *bridge) background(f func()) {
	b.wg.Add(1)
	b.pending.Add(1)
	go func() {
		defer b.wg.Done()
		defer b.pending.Add(-1)
		f()
	}()
}

// showLarge follows a new map on the window's side: the large image of
// the old map is closed when the new one does not show it; the new one's
// is bound to the window, asked for the view on screen and, when its
// statistics are not known, streams them.
func (w *window) showLarge(old, s *shown) {
	if old != nil && old.large != nil && old.large != s.large {
		old.large.close()
	}
	lg := s.large
	if lg == nil {
		return
	}
	if lg.do == nil {
		lg.do, lg.bg = w.bridge.do, w.bridge.background
		lg.redraw = w.Map.Redraw
		lg.viewDone = func(v *pyramid.View, took time.Duration, err error) { w.largeViewDone(lg, v, took, err) }
	}
	x0, y0, zoom, vw, vh := w.Map.Viewport()
	lg.request(x0, y0, zoom, vw, vh)
	if s.summary == nil {
		// The view first: the statistics start with the first view (at
		// once when there is one), so that they do not slow it down.
		if lg.current() != nil {
			w.streamStatistics(s)
		} else {
			lg.statsFor = s
			w.stats.Numbers.SetText("Statistics of the whole image: after the first view…")
		}
	}
}

// largeViewDone follows a complete view: the status bar says where it
// came from and how long it took; the first one makes the window ready.
func (w *window) largeViewDone(lg *largeImage, v *pyramid.View, took time.Duration, err error) {
	if w.shown == nil || w.shown.large != lg {
		return
	}
	if s := lg.statsFor; s != nil {
		lg.statsFor = nil
		w.streamStatistics(s)
	}
	if err != nil {
		w.setStatus("The view could not be read: "+firstLine(err.Error()), false)
		if !w.ready && !w.opts.Compare {
			w.markReady() // the start failed: --exit-after still ends
		}
		return
	}
	from := "the full resolution"
	if v.Level > 0 {
		from = fmt.Sprintf("overview %d of %d", v.Level, len(lg.im.Levels)-1)
	}
	if v.Step > 1 {
		from += fmt.Sprintf(", every %d pixels", v.Step)
	}
	w.setStatus(fmt.Sprintf("%s on %s, %d×%d: view of %d×%d samples from %s in %s (kernel %s)", lg.idx.title(), lg.run.label(), lg.im.Width, lg.im.Height,
		v.Width, v.Height, from, ms(float64(took.Microseconds())/1000), ms(float64(v.Timings.Kernel.Microseconds())/1000)), true)
	if _, ok := w.shown.stretchFor(w.stretch); !ok && w.ramp != colormap.RampClasses {
		// The stretch read from the data: from this view.
		if st2, err := colormap.StretchFor(dataMode(w.shown.idx, w.stretch), v.Out[0]); err == nil {
			w.shown.setStretch(w.stretch, st2)
			if lut, err := newLUT(w.ramp, st2, w.shown.idx); err == nil {
				w.lut = lut
				w.applyColour(true)
			}
		}
	}
	if !w.ready && !w.opts.Compare {
		w.markReady()
	}
}

// streamStatistics computes s's statistics over the whole image in the
// background and shows them when done (if s is still shown).
func (w *window) streamStatistics(s *shown) {
	lg := s.large
	area, ok := s.set.geo.PixelArea()
	if !ok || !(area > 0) {
		area = math.NaN()
	}
	known := ok && area > 0
	w.stats.Numbers.SetText("Statistics of the whole image: streaming over its blocks…")
	lg.active.Add(1)
	lg.bg(func() {
		defer lg.active.Done()
		var last time.Time
		st, err := lg.statistics(area, known, func(f float64) {
			if time.Since(last) < 500*time.Millisecond {
				return
			}
			last = time.Now()
			lg.do(func() {
				if w.shown == s {
					w.stats.Numbers.SetText(fmt.Sprintf("Statistics of the whole image: %.0f %% streamed…", 100*f))
				}
			})
		})
		lg.do(func() {
			if err != nil {
				if w.shown == s && !errors.Is(err, context.Canceled) {
					w.stats.Numbers.SetText("Statistics: " + err.Error())
				}
				return
			}
			s.summary = st
			lg.mu.Lock()
			s.masked = lg.masked
			lg.mu.Unlock()
			if w.shown == s {
				w.stats.show(st, s.idx, s.set.raw)
				w.stats.recolour(w.lut)
				w.showMask() // the legend's masked row, if nothing is masked
			}
		})
	})
}

// compareLarge is Compare all on an image read by views: every backend
// runs the index over the whole image through the block pipeline,
// verified block by block against the float64 truth (no copy of the
// image per backend), once each.
func (w *window) compareLarge(s *shown, runs []runSpec) {
	lg := s.large
	w.bridge.start("Comparing backends", func(ctx context.Context, progress progressFunc) (func(), error) {
		var results []compute.BenchResult
		for i, r := range runs {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			progress(float64(i)/float64(len(runs)), fmt.Sprintf("Compare all: %s on %s over %d×%d in blocks (%d of %d)…", s.idx.title(), r.label(), s.w, s.h, i+1, len(runs)))
			job := source.Job{Backend: r.b, Mode: r.mode, Names: lg.names, Exprs: lg.exprs, Verify: true}
			res, err := source.RunViews(ctx, lg.im, job)
			results = append(results, largeResult(r, s, res, err))
		}
		progress(1, "")
		return func() {
			w.charts.showTimings(results)
			w.setStatus(compareLine(results), allVerified(results))
			w.markReady()
		}, nil
	})
}

// largeResult is a pipeline run of Compare all as a timing row: the
// phases summed over the blocks, one sample.
func largeResult(r runSpec, s *shown, res *pipeline.Result, err error) compute.BenchResult {
	b := compute.BenchResult{Backend: r.b.Name(), Index: s.idx.name, Mode: r.mode, Device: r.info.Device, GPU: r.info.GPU,
		Width: s.w, Height: s.h, Repeat: 1, Batch: 1}
	if err != nil {
		b.Error = err.Error()
		return b
	}
	t := res.Timings
	b.SetupMS = float64(t.Setup.Microseconds()) / 1000
	b.UploadMS = float64(t.Upload.Microseconds()) / 1000
	b.KernelMS = float64(t.Kernel.Microseconds()) / 1000
	b.DownloadMS = float64(t.Download.Microseconds()) / 1000
	b.TotalMS = float64(t.Total.Microseconds()) / 1000
	b.Verified = len(res.Reports) > 0
	for _, rep := range res.Reports {
		b.MaxAbsErr = math.Max(b.MaxAbsErr, rep.MaxAbsErr)
		if rep.Wrong > 0 || rep.NaNMismatch > 0 {
			b.Verified = false
			b.Error = fmt.Sprintf("%d pixels differ from the float64 truth", rep.Wrong+rep.NaNMismatch)
		}
	}
	return b
}

// dataPlane is the plane a stretch is read from: the index plane, or for
// an image read by views the view on screen (nil before the first).
func (s *shown) dataPlane() []float32 {
	if s.large != nil {
		if v := s.large.current(); v != nil {
			return v.Out[0]
		}
		return nil
	}
	return s.plane
}

// largeMapPlane stands for the plane of an image read by views in the
// map view (whose renderer draws it).
var largeMapPlane = []float32{}
