// Package residentcpu is the resident session (compute.ResidentSession)
// on the host: the scene's bands stay in the caller's memory, any
// backend's engine computes the indices (the c backend's block
// interpreter on every core, say), package stats summarises the planes
// and compute.RenderView draws the views. It is what a GPU session is
// timed beside and tested against: its statistics are stats.Summarize,
// stats.Histogram and stats.ClassesOf, three passes over the plane, and
// its views compute.RenderView's, which equal the window's.
package residentcpu

import (
	"errors"
	"fmt"
	"time"

	"canopy/compute"
	"canopy/compute/index"
	"canopy/compute/par"
	"canopy/compute/stats"
)

// Session is a scene held on the host. It reads the bands on every Index
// call: they must stay unchanged while the session is open.
type Session struct {
	eng    compute.Backend
	bands  []compute.BandInput
	mask   []uint8
	w, h   int
	planes [][]float32
	closed bool
}

// Open returns the session of bands (one size) and mask (nil or one byte
// a pixel) whose indices e computes. Nothing is copied: the Timings are
// zero.
func Open(e compute.Backend, bands []compute.BandInput, mask []uint8) (*Session, compute.Timings, error) {
	if e == nil {
		return nil, compute.Timings{}, fmt.Errorf("resident session: no engine")
	}
	w, h, err := compute.CheckResidentBands(bands, mask)
	if err != nil {
		return nil, compute.Timings{}, fmt.Errorf("resident session: %w", err)
	}
	return &Session{eng: e, bands: bands, mask: mask, w: w, h: h}, compute.Timings{}, nil
}

// Size implements compute.ResidentSession.
func (s *Session) Size() (w, h int) { return s.w, s.h }

// Index implements compute.ResidentSession: one job of the engine over
// the session's bands, into planes kept from the last call where their
// number allows.
func (s *Session) Index(names []string, exprs []*index.Expr) (compute.Timings, error) {
	if s.closed {
		return compute.Timings{}, errClosed
	}
	j, err := compute.PlanJob(s.bands, s.mask, names, exprs)
	if err != nil {
		return compute.Timings{}, err
	}
	n := s.w * s.h
	for len(s.planes) < len(exprs) {
		s.planes = append(s.planes, compute.NewOutput(n))
	}
	s.planes = s.planes[:len(exprs)]
	j.Out = s.planes
	if err := j.Check(); err != nil {
		return compute.Timings{}, err
	}
	t0 := time.Now()
	t, err := s.eng.RunJob(j)
	if err != nil {
		s.planes = nil
		return t, err
	}
	// The engine's Total may leave out preparing the job; the session's
	// is the call's.
	t.Total = time.Since(t0) - t.Setup
	return t, nil
}

// errClosed is the error of a call on a closed session.
var errClosed = errors.New("resident session is closed")

func (s *Session) plane(o int) ([]float32, error) {
	if s.closed {
		return nil, errClosed
	}
	if o < 0 || o >= len(s.planes) {
		return nil, compute.ErrPlane(o, len(s.planes))
	}
	return s.planes[o], nil
}

// Stats implements compute.ResidentSession with package stats: Summarize,
// then Histogram and ClassesOf when asked, each one pass.
func (s *Session) Stats(o int, q compute.StatsRequest) (compute.ResidentStats, compute.Timings, error) {
	p, err := s.plane(o)
	if err != nil {
		return compute.ResidentStats{}, compute.Timings{}, err
	}
	if err := q.Check(); err != nil {
		return compute.ResidentStats{}, compute.Timings{}, err
	}
	t0 := time.Now()
	sum := stats.Summarize(p)
	r := compute.ResidentStats{Min: sum.Min, Max: sum.Max, Mean: sum.Mean, Std: sum.Std, Valid: sum.Valid, Total: sum.Total}
	if q.Bins > 0 {
		r.Histogram = stats.Histogram(p, q.Bins, q.Lo, q.Hi)
	}
	if len(q.Classes) > 0 {
		cs := stats.ClassesOf(q.Classes, p, q.PixelAreaM2)
		px := make([]int, len(cs))
		for i, c := range cs {
			px[i] = c.Pixels
		}
		r.Classes = compute.ClassCounts(px, q.PixelAreaM2)
	}
	d := time.Since(t0)
	return r, compute.Timings{Kernel: d, Total: d}, nil
}

// Render implements compute.ResidentSession with compute.RenderView.
func (s *Session) Render(o int, v compute.View, dst []byte) (compute.Timings, error) {
	p, err := s.plane(o)
	if err != nil {
		return compute.Timings{}, err
	}
	t0 := time.Now()
	if err := compute.RenderView(dst, p, s.w, s.h, v); err != nil {
		return compute.Timings{}, err
	}
	d := time.Since(t0)
	return compute.Timings{Kernel: d, Total: d}, nil
}

// Download implements compute.ResidentSession: a copy on all cores.
func (s *Session) Download(o int, dst []float32) (compute.Timings, error) {
	p, err := s.plane(o)
	if err != nil {
		return compute.Timings{}, err
	}
	if len(dst) != len(p) {
		return compute.Timings{}, fmt.Errorf("download of %dx%d plane into %d values", s.w, s.h, len(dst))
	}
	t0 := time.Now()
	par.Copy(dst, p, 0, nil)
	d := time.Since(t0)
	return compute.Timings{Download: d, Total: d}, nil
}

// Probe implements compute.ResidentSession.
func (s *Session) Probe(x, y int) ([]float32, error) {
	if s.closed {
		return nil, errClosed
	}
	if len(s.planes) == 0 {
		return nil, compute.ErrPlane(0, 0)
	}
	if x < 0 || y < 0 || x >= s.w || y >= s.h {
		return nil, compute.ErrPixel(x, y, s.w, s.h)
	}
	out := make([]float32, len(s.planes))
	for o, p := range s.planes {
		out[o] = p[y*s.w+x]
	}
	return out, nil
}

// Close implements compute.ResidentSession: it drops the planes.
func (s *Session) Close() error {
	s.planes, s.closed = nil, true
	return nil
}

var _ compute.ResidentSession = (*Session)(nil)

// OpenFor opens the session b offers for bands and mask: its own when it
// keeps scenes on its device (compute.Resident: gl, cuda), else the host
// session over its jobs (go, go-parallel, c).
func OpenFor(b compute.Backend, bands []compute.BandInput, mask []uint8) (compute.ResidentSession, compute.Timings, error) {
	if r, ok := b.(compute.Resident); ok {
		return r.OpenResident(bands, mask)
	}
	return Open(b, bands, mask)
}
