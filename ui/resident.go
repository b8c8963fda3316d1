package ui

import (
	"fmt"
	"image"
	"math"
	"sync"
	"time"
	"unsafe"

	"canopy/compute"
	"canopy/compute/index"
	"canopy/compute/stats"
	"canopy/ui/render/colormap"
)

// Kept on the card. When the backend picked keeps scenes on its card
// (compute.Resident on a GPU backend: cuda and gl), the window opens a
// resident session on the bands once per loaded scene, computes the index
// there, takes the statistics from its Stats and draws the map through
// its Render at the map's size, zoom and pan: a change of ramp, stretch,
// classes, zoom or pan re-renders on the card with no upload. Identify
// reads only the pixels it shows from the session (Probe); an export
// downloads the plane (Download) when the user asks for it. What else
// reads values on the host (the percentile stretches, stands) reads the
// round trip's plane, computed beside it by the same backend and checked
// against the session's at probed pixels.

// modeKept and modeKeptRerender are the modes of the timing rows of a
// session kept on the card, beside the backend's round trip.
const (
	modeKept         = "kept on the card"
	modeKeptRerender = "kept on the card, re-render"
)

// cardKeeper says which backends keep a scene on their card and opens
// their sessions; tests give a host session that claims to be on the card.
type cardKeeper interface {
	onCard(b compute.Backend, info compute.Info) bool
	open(b compute.Backend, bands []compute.BandInput, mask []uint8) (compute.ResidentSession, compute.Timings, error)
}

// residentKeeper is the real cardKeeper: GPU backends that implement
// compute.Resident.
type residentKeeper struct{}

func (residentKeeper) onCard(b compute.Backend, info compute.Info) bool {
	_, ok := b.(compute.Resident)
	return ok && info.GPU
}

func (residentKeeper) open(b compute.Backend, bands []compute.BandInput, mask []uint8) (compute.ResidentSession, compute.Timings, error) {
	r, ok := b.(compute.Resident)
	if !ok {
		return nil, compute.Timings{}, fmt.Errorf("backend %s keeps no scene on its card", b.Name())
	}
	return r.OpenResident(bands, mask)
}

// cardView is one open session: the scene it holds (key), and plane 0
// of the last Index call. Its calls are serialised: the map's generator
// renders through it while a job may compute.
type cardView struct {
	mu      sync.Mutex
	s       compute.ResidentSession
	key     string
	closed  bool
	renders int
}

// sceneKey names the bands and mask a session holds, and the backend.
func sceneKey(backend string, bands []compute.BandInput, mask []uint8) string {
	k := backend
	for _, b := range bands {
		p := 0
		if len(b.Plane.Data) > 0 {
			p = int(uintptrOf(&b.Plane.Data[0]))
		}
		k += fmt.Sprintf("|%s:%x:%dx%d", b.Role, p, b.Plane.Width, b.Plane.Height)
	}
	if len(mask) > 0 {
		k += fmt.Sprintf("|mask:%x", uintptrOf(&mask[0]))
	}
	return k
}

// close releases the session (the map stops drawing through it).
func (c *cardView) close() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed {
		c.s.Close()
		c.closed = true
	}
}

// probeWait is the longest identify waits for a pixel from the card
// before it reads the host's plane instead (the backend may be busy with
// another run).
const probeWait = 50 * time.Millisecond

// probe reads plane 0 at pixel (col, row) through the session; false
// when the session is closed, busy (a job or a render holds it, or the
// backend does not answer within probeWait) or fails: the caller then
// reads the round trip's plane, never waiting on the event goroutine.
func (c *cardView) probe(col, row int) (float32, bool) {
	if !c.mu.TryLock() {
		return 0, false
	}
	type answer struct {
		v  float32
		ok bool
	}
	done := make(chan answer, 1)
	go func() {
		defer c.mu.Unlock()
		if c.closed {
			done <- answer{}
			return
		}
		v, err := c.s.Probe(col, row)
		if err != nil || len(v) == 0 {
			done <- answer{}
			return
		}
		done <- answer{v: v[0], ok: true}
	}()
	select {
	case a := <-done:
		return a.v, a.ok
	case <-time.After(probeWait):
		return 0, false
	}
}

// download copies plane 0 (n values) from the session; false when the
// session is closed.
func (c *cardView) download(n int) ([]float32, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, false, nil
	}
	p := compute.NewOutput(n)
	if _, err := c.s.Download(0, p); err != nil {
		return nil, true, err
	}
	return p, true, nil
}

// render draws plane 0 into buf through the session, as map view's
// generator asks; false when the session is closed or fails (the map then
// draws from the host plane).
func (c *cardView) render(buf *image.NRGBA, lut *colormap.LUT, x0, y0, zoom float64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	v := compute.View{Table: lut.Table(), X0: x0, Y0: y0, Zoom: zoom, Width: buf.Rect.Dx(), Height: buf.Rect.Dy()}
	if _, err := c.s.Render(0, v, buf.Pix); err != nil {
		return false
	}
	c.renders++
	return true
}

// cardRun is what a job needs to compute on the card: the keeper, the
// session open now (reused when it holds the same scene) and the map's
// size in pixels.
type cardRun struct {
	keeper cardKeeper
	prev   *cardView
	vw, vh int
}

// probeGrid is how many pixels a side computeOnCard reads from the
// session (Probe, spread evenly, corners included) to check its plane
// against the round trip's without downloading it.
const probeGrid = 24

// probed is one pixel read from the session: its index and value.
type probed struct {
	i int
	v float32
}

// cardResult is what computeOnCard gives back.
type cardResult struct {
	view    *cardView
	probes  []probed
	summary *sceneStats
	// first holds the times of the first view (upload, when the session
	// was opened by this run, index, statistics, render); rerender one
	// render alone.
	first    compute.Timings
	rerender time.Duration
}

// computeOnCard computes idx on the session kept on the card for set
// (opened when prev holds another scene) and its statistics, and reads a
// grid of its pixels for the check against the round trip: the plane
// stays on the card.
func computeOnCard(cr *cardRun, run *runSpec, set *bandSet, idx indexChoice) (*cardResult, error) {
	key := sceneKey(run.b.Name(), set.bands, set.mask)
	res := &cardResult{}
	var to compute.Timings
	if cr.prev != nil && cr.prev.key == key && !cr.prev.closed {
		res.view = cr.prev
	} else {
		s, t, err := cr.keeper.open(run.b, set.bands, set.mask)
		if err != nil {
			return nil, fmt.Errorf("%s: keeping the bands on the card: %w", run.label(), err)
		}
		res.view, to = &cardView{s: s, key: key}, t
	}
	cv := res.view
	cv.mu.Lock()
	defer cv.mu.Unlock()
	ti, err := cv.s.Index([]string{idx.name}, []*index.Expr{idx.expr})
	if err != nil {
		return res, fmt.Errorf("%s on the card: %w", run.label(), err)
	}
	area, areaOK := set.geo.PixelArea()
	if !areaOK || !(area > 0) {
		area = math.NaN()
	}
	r, ok := idx.fullRange()
	var tq compute.Timings
	if !ok {
		sum, t, err := cv.s.Stats(0, compute.StatsRequest{})
		if err != nil {
			return res, fmt.Errorf("%s on the card: %w", run.label(), err)
		}
		tq = t
		r = colormap.Full
		if sum.Min < sum.Max {
			r.Lo, r.Hi = sum.Min, sum.Max
		}
	}
	q := compute.StatsRequest{Bins: histBins, Lo: r.Lo, Hi: r.Hi, PixelAreaM2: area}
	var table []compute.Class
	if idx.classes != nil {
		table = idx.classes.Compute()
		if len(table) <= compute.MaxResidentClasses {
			q.Classes = table
		}
	}
	st, ts, err := cv.s.Stats(0, q)
	if err != nil {
		return res, fmt.Errorf("%s on the card: %w", run.label(), err)
	}
	sum := &sceneStats{summary: stats.Summary{Min: st.Min, Max: st.Max, Mean: st.Mean, Std: st.Std, Valid: st.Valid, Total: st.Total},
		hist: st.Histogram, lo: r.Lo, hi: r.Hi, areaKnown: areaOK && area > 0}
	if st.Total > 0 {
		sum.summary.ValidShare = float64(st.Valid) / float64(st.Total)
	}
	for i, c := range st.Classes {
		sum.classes = append(sum.classes, stats.ClassShare{Class: table[i], Index: i, Pixels: c.Pixels, Share: c.Share, Hectares: c.Hectares})
	}
	res.summary = sum
	w, h := cv.s.Size()
	nx, ny := min(probeGrid, w), min(probeGrid, h)
	for gy := range ny {
		y := gy * (h - 1) / max(1, ny-1)
		for gx := range nx {
			x := gx * (w - 1) / max(1, nx-1)
			v, err := cv.s.Probe(x, y)
			if err != nil {
				return res, fmt.Errorf("%s on the card: %w", run.label(), err)
			}
			res.probes = append(res.probes, probed{i: y*w + x, v: v[0]})
		}
	}
	res.first = compute.Timings{Setup: to.Setup + ti.Setup + tq.Setup + ts.Setup, Upload: to.Total,
		Kernel: ti.Total + tq.Total + ts.Total}
	return res, nil
}

// timeViews renders the fitted view of the map's size twice with lut: the
// first view's render, then a re-render (what a change of ramp, stretch,
// zoom or pan costs).
func (res *cardResult) timeViews(cr *cardRun, lut *colormap.LUT) error {
	cv := res.view
	cv.mu.Lock()
	defer cv.mu.Unlock()
	w, h := cv.s.Size()
	vw, vh := cr.vw, cr.vh
	if vw <= 0 || vh <= 0 {
		vw, vh = 1024, 768
	}
	fit := min(float64(vw)/float64(w), float64(vh)/float64(h))
	v := compute.View{Table: lut.Table(), Zoom: fit, Width: vw, Height: vh,
		X0: -(float64(vw)/fit - float64(w)) / 2, Y0: -(float64(vh)/fit - float64(h)) / 2}
	dst := make([]byte, 4*vw*vh)
	t1, err := cv.s.Render(0, v, dst)
	if err != nil {
		return err
	}
	t2, err := cv.s.Render(0, v, dst)
	if err != nil {
		return err
	}
	res.first.Kernel += t1.Total
	res.first.Setup += t1.Setup
	res.first.Total = res.first.Upload + res.first.Kernel
	res.rerender = t2.Total
	return nil
}

// keptRows are the timing rows of the session beside the round trip rt:
// the first view and a re-render. The check is the probed pixels of the
// plane kept on the card against the round trip's (verified against the
// float64 truth).
func (res *cardResult) keptRows(rt compute.BenchResult, roundTrip []float32) []compute.BenchResult {
	diff, nanOff := 0.0, 0
	for _, p := range res.probes {
		v, u := p.v, roundTrip[p.i]
		if (v != v) != (u != u) {
			nanOff++
			continue
		}
		if v == v {
			diff = max(diff, math.Abs(float64(v)-float64(u)))
		}
	}
	row := func(mode string, t compute.Timings) compute.BenchResult {
		r := compute.BenchResult{Backend: rt.Backend, Index: rt.Index, Mode: mode, Device: rt.Device, GPU: true,
			Width: rt.Width, Height: rt.Height, Repeat: 1, Batch: 1,
			SetupMS: ms64(t.Setup), UploadMS: ms64(t.Upload), KernelMS: ms64(t.Kernel), TotalMS: ms64(t.Total),
			Verified: rt.Verified && nanOff == 0 && diff <= 1e-6, MaxAbsErr: max(rt.MaxAbsErr, diff), NaNMismatch: nanOff}
		r.Upload, r.Kernel, r.Total = onePhase(r.UploadMS), onePhase(r.KernelMS), onePhase(r.TotalMS)
		if !r.Verified {
			r.Error = fmt.Sprintf("the plane kept on the card differs from the round trip's at %d probed pixels: %d NaN mismatches, max difference %.3g", len(res.probes), nanOff, diff)
		}
		return r
	}
	return []compute.BenchResult{row(modeKept, res.first), row(modeKeptRerender, compute.Timings{Kernel: res.rerender, Total: res.rerender})}
}

// keptDetail is what the backend picker says of a GPU backend about the
// resident path.
func keptDetail(k cardKeeper, e *backendEntry) string {
	if !e.info.GPU || !e.info.Available {
		return ""
	}
	if k.onCard(e.b, e.info) {
		return " · kept on the card: bands uploaded once, views and statistics computed there"
	}
	return " · no session kept on the card yet: every run is a round trip"
}

// uintptrOf is the address of p, to tell scenes apart.
func uintptrOf[T any](p *T) uintptr { return uintptr(unsafe.Pointer(p)) }
