package ui

import (
	"context"
	"errors"
	"fmt"
	"image"
	"sync"
	"time"

	"canopy/compute"
	"canopy/compute/pyramid"
	"canopy/compute/source"
	"canopy/ui/render/colormap"
	"canopy/ui/render/composite"
)

// largeColour is a colour view (natural or false colour) of an image read
// by views: its three bands opened by views as the index's are, the view
// of the viewport read in the background on zoom and pan and stretched as
// a composite of its own samples (between the 2nd and 98th percentiles of
// the valid samples in view), the product's mask hatched over it from the
// mask read with the view, unless it is shown under the mask.
type largeColour struct {
	im       *pyramid.Image
	title    string
	names    [3]string
	roles    [3]string
	unmasked bool

	ctx  context.Context // the view's life
	stop context.CancelFunc

	// Bound by the window once the first view is read: do runs on the
	// event goroutine, bg in the background, redraw redraws the map,
	// done follows a complete view.
	do     func(func())
	bg     func(func())
	redraw func()
	done   func(c *colourView, took time.Duration, err error)

	mu     sync.Mutex
	cur    *colourView // the last complete view
	drawn  *colourView // the view the last render drew
	want   pyramid.Plan
	asked  bool
	cancel context.CancelFunc
	active sync.WaitGroup
}

// colourView is a view's samples, the mask with them, and their
// composite.
type colourView struct {
	*pyramid.View
	comp *composite.Composite
}

// openLargeColour opens the bands of view m that src gives for viewing.
func openLargeColour(src bandSource, m viewMode, unmasked bool) (*largeColour, error) {
	spec := viewSpecs[m]
	im, err := source.OpenViews(src.spec(), spec.roles[:])
	if err != nil {
		return nil, err
	}
	ctx, stop := context.WithCancel(context.Background())
	lc := &largeColour{im: im, title: spec.label, roles: spec.roles, unmasked: unmasked, ctx: ctx, stop: stop}
	for i, r := range spec.roles {
		lc.names[i] = src.bandName(r)
	}
	return lc, nil
}

// readView reads plan p's samples of the three bands, with the mask, and
// stretches their composite (the mask left out of it under the mask).
func (lc *largeColour) readView(ctx context.Context, p pyramid.Plan) (*colourView, error) {
	bands, mask, err := lc.im.ReadMasked(ctx, p, nil)
	if err != nil {
		return nil, err
	}
	var channels [3]compute.BandInput
	for i, r := range lc.roles {
		found := false
		for _, b := range bands {
			if b.Role == r {
				channels[i], found = b, true
			}
		}
		if !found {
			return nil, fmt.Errorf("%s: no %s band among those read", lc.title, r)
		}
	}
	cm := mask
	if lc.unmasked {
		cm = nil // the picture under the mask, to judge it by
	}
	comp, err := composite.New(channels, cm, composite.Options{Title: lc.title, Names: lc.names})
	if err != nil {
		return nil, err
	}
	return &colourView{View: &pyramid.View{Plan: p, Bands: bands, Mask: mask}, comp: comp}, nil
}

// composite is the last complete view's composite (nil before one).
func (lc *largeColour) composite() *composite.Composite {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if lc.cur == nil {
		return nil
	}
	return lc.cur.comp
}

// request asks for the view of the viewport (largeImage.request's
// rule): nothing when it is the one shown or being read, else the one
// being read is cancelled and this one read in the background.
func (lc *largeColour) request(x0, y0, zoom float64, vw, vh int) {
	if lc.do == nil {
		return
	}
	p, ok := viewPlan(lc.im, x0, y0, zoom, vw, vh)
	if !ok {
		return
	}
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if lc.ctx.Err() != nil || (lc.asked && p == lc.want) {
		return
	}
	if lc.cancel != nil {
		lc.cancel()
	}
	ctx, cancel := context.WithCancel(lc.ctx)
	lc.want, lc.asked, lc.cancel = p, true, cancel
	lc.active.Add(1)
	lc.bg(func() {
		defer lc.active.Done()
		t0 := time.Now()
		cv, err := lc.readView(ctx, p)
		if ctx.Err() != nil {
			return
		}
		lc.mu.Lock()
		current := lc.want == p
		if current && err == nil {
			lc.cur = cv
		}
		lc.mu.Unlock()
		if current {
			took := time.Since(t0)
			lc.do(func() {
				lc.redraw()
				lc.done(cv, took, err)
			})
		}
	})
}

// render draws the viewport (the map view's renderer): the last complete
// view's composite, and asks for this viewport's view.
func (lc *largeColour) render(buf *image.NRGBA, _ *colormap.LUT, x0, y0, zoom float64) bool {
	lc.mu.Lock()
	cur := lc.cur
	lc.drawn = cur
	lc.mu.Unlock()
	clear(buf.Pix)
	if cur != nil {
		ox, oy := cur.Origin()
		cw, _ := cur.Cell()
		cur.comp.RenderView(buf, (x0-ox)/cw, (y0-oy)/cw, zoom*cw)
	}
	lc.request(x0, y0, zoom, buf.Rect.Dx(), buf.Rect.Dy())
	return true
}

// markMask marks the masked pixels of the viewport from the mask of the
// view render drew (none under the mask).
func (lc *largeColour) markMask(dst []uint8, w, h int, x0, y0, zoom float64) {
	lc.mu.Lock()
	v := lc.drawn
	lc.mu.Unlock()
	if v != nil && !lc.unmasked {
		markView(dst, w, h, v.View, v.Height, x0, y0, zoom)
	}
}

// close cancels the view being read and closes the files once it has
// stopped.
func (lc *largeColour) close() {
	if lc == nil {
		return
	}
	lc.stop()
	lc.mu.Lock()
	if lc.cancel != nil {
		lc.cancel()
	}
	lc.mu.Unlock()
	go func() {
		lc.active.Wait()
		lc.im.Close()
	}()
}

// dropLarge closes the colour views of an image read by views.
func (v *contextView) dropLarge() {
	for _, lc := range v.larges {
		lc.close()
	}
	v.larges = nil
}

// shownLargeColour is the colour view of an image read by views on the
// map (nil: none).
func (w *window) shownLargeColour() *largeColour {
	v, s := w.view, w.shown
	if v.mode == viewIndex || s == nil || s.large == nil || v.key != s.src.key() || v.w != s.w || v.h != s.h {
		return nil
	}
	return v.larges[v.mode]
}

// setMapComposite shows composite c on the map, or for the colour view
// of an image read by views, its renderer.
func (w *window) setMapComposite(c *composite.Composite) {
	if lc := w.shownLargeColour(); lc != nil && c != nil {
		w.Map.SetComposite(nil)
		w.Map.SetRenderer(lc.render)
		w.Map.SetData(largeMapPlane, w.shown.w, w.shown.h, w.lut)
		return
	}
	w.Map.SetComposite(c)
}

// setLargeView is SetView's colour view m of s, an image read by views:
// a view made before is shown again; else a job opens the view's bands
// by views and reads the view on screen, then shows it.
func (w *window) setLargeView(s *shown, m viewMode) {
	v := w.view
	if v.key != s.src.key() || v.w != s.w || v.h != s.h {
		v.drop()
	}
	if lc := v.larges[m]; lc != nil && lc.composite() != nil {
		v.mode = m
		w.showView()
		w.viewStatus()
		return
	}
	unmasked := v.unmasked
	x0, y0, zoom, vw, vh := w.Map.Viewport()
	spec := viewSpecs[m]
	w.bridge.start(spec.jobLabel(), func(ctx context.Context, progress progressFunc) (func(), error) {
		progress(-1, spec.label+": reading the view on screen…")
		lc, err := openLargeColour(s.src, m, unmasked)
		if err != nil {
			return nil, err
		}
		p, ok := viewPlan(lc.im, x0, y0, zoom, vw, vh)
		if !ok {
			lc.close()
			return nil, errors.New(spec.label + ": no part of the image is in view")
		}
		t0 := time.Now()
		cv, err := lc.readView(ctx, p)
		if err != nil {
			lc.close()
			return nil, err
		}
		took := time.Since(t0)
		lc.cur, lc.want, lc.asked = cv, p, true
		return func() {
			cs := w.shown
			if cs == nil || cs.large == nil || cs.src.key() != s.src.key() || cs.w != s.w || cs.h != s.h || w.view.unmasked != unmasked {
				lc.close() // another scene, or the mask toggled, since
				return
			}
			v := w.view
			if v.key != s.src.key() {
				v.drop()
				v.key, v.w, v.h = s.src.key(), s.w, s.h
			}
			if old := v.larges[m]; old != nil {
				old.close()
			}
			if v.larges == nil {
				v.larges = map[viewMode]*largeColour{}
			}
			lc.do, lc.bg, lc.redraw = w.bridge.do, w.bridge.background, w.Map.Redraw
			lc.done = func(cv *colourView, took time.Duration, err error) { w.largeColourDone(lc, cv, took, err) }
			v.larges[m] = lc
			v.mode = m
			w.showView()
			w.setStatus(w.largeColourLine(cv, took), true)
		}, nil
	})
}

// largeColourDone follows a complete colour view: the legend gives its
// stretch, the status line says where it came from.
func (w *window) largeColourDone(lc *largeColour, cv *colourView, took time.Duration, err error) {
	if w.shownLargeColour() != lc {
		return
	}
	if err != nil {
		w.setStatus(lc.title+": the view could not be read: "+firstLine(err.Error()), false)
		return
	}
	w.view.drawn = cv.comp
	w.view.fillLegend(cv.comp, w.compositeMasked())
	w.setStatus(w.largeColourLine(cv, took), true)
}

// largeColourLine is the status line of colour view cv of an image read
// by views.
func (w *window) largeColourLine(cv *colourView, took time.Duration) string {
	return fmt.Sprintf("%s · view of %d×%d samples in %s, stretched over the samples in view", w.compositeLine(cv.comp),
		cv.Width, cv.Height, ms(float64(took.Microseconds())/1000))
}
