package warp

import (
	"fmt"
	"sync"
	"time"

	"canopy/compute/grid"
)

// Streamer is a backend that warps a mosaic's inputs as they arrive:
// next(i) blocks until input i's plan and bands are ready (i from 0 to
// n−1, in order) and the backend warps them while the next input is
// still being read. arrived(i) blocks only until input i's bands are read
// and returns them, not yet checked against the plan (next returns the
// same bands, checked): a backend may start moving or decoding them while
// the plan is still being made. It makes the targets itself, one a band, as NewTarget
// does from input 0's plan and bands (their types and nodata): a GPU sets
// them on the device instead of uploading them. The result is
// MosaicPlanned's.
type Streamer interface {
	WarpStream(n int, arrived func(i int) ([]*Source, error), next func(i int) (*Plan, []*Source, error)) ([]*Target, error)
}

// StreamTimes is where a streamed mosaic's time went. Read and Plan run
// at the same time (and with the warps of the inputs read before), so
// they overlap: Total is the wall time from the first read to the
// targets' being ready; Read the time until the last input was read;
// Plan the time until the last plan was made; Tail the time after both,
// until the targets were ready (the last input's warp and the results'
// way back); Setup a backend's one-time set-up (SetupReporter), which is
// in Total (a GPU's context is opened before, at its Available check,
// and counted in Setup but not in Total: Setup is what the backend
// reports, Total what the clock says).
type StreamTimes struct {
	Total, Read, Plan, Tail, Setup time.Duration
	// Parts is where a PartReporter backend says the time after the last
	// input's arrival went, in order.
	Parts []StreamPart
	// Events are an EventReporter backend's steps, each at its time
	// since the backend's stream began.
	Events []StreamPart
}

// EventReporter is a Streamer that says when its steps happened:
// TakeEvents returns its last WarpStream's, in order, each Time the
// offset from the stream's start.
type EventReporter interface {
	TakeEvents() []StreamPart
}

// StreamPart is a named part of a streamed mosaic's time.
type StreamPart struct {
	Name string
	Time time.Duration
}

// PartReporter is a Streamer that says where the time after the last
// input's arrival went: TakeParts returns the parts of its last
// WarpStream.
type PartReporter interface {
	TakeParts() []StreamPart
}

// MosaicStream is Mosaic over inputs still being read: grids[i] is where
// input i lies (all its plan needs) and read(i) returns its bands, called
// once for each input, in order, on a goroutine of its own, so that input
// i+1 is read while input i is warped. The plans are made on all cores
// while the inputs are read. A Streamer backend warps each input as soon
// as it and its plan are ready; the others get the inputs one by one
// (each warped into host targets while the next is read). The result
// equals Mosaic's of the same inputs.
func MosaicStream(g grid.Grid, grids []SourceGrid, names []string, read func(i int) ([]*Source, error), r Resampling, maxErr float64, be Backend) ([]*Target, StreamTimes, error) {
	var tm StreamTimes
	if len(grids) == 0 {
		return nil, tm, fmt.Errorf("no band to mosaic")
	}
	if len(names) != len(grids) {
		return nil, tm, fmt.Errorf("%d names for %d inputs", len(names), len(grids))
	}
	if sr, ok := be.(SetupReporter); ok {
		sr.TakeSetup() // what earlier calls spent is theirs
	}
	t0 := time.Now()
	n := len(grids)
	// Inputs and plans as they come; done closes when the stream is left
	// early, so that neither producer blocks on a full channel.
	type got struct {
		bands []*Source
		err   error
	}
	// Input i's bands are inputs[i] once ready[i] is closed; an input
	// that fails fails every one after it.
	inputs := make([]got, n)
	ready := make([]chan struct{}, n)
	plans := make([]chan got, n)
	for i := range n {
		ready[i] = make(chan struct{})
		plans[i] = make(chan got, 1)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	var readEnd, planEnd time.Time
	wg.Go(func() {
		defer func() { readEnd = time.Now() }()
		for i := range n {
			select {
			case <-done:
				return
			default:
			}
			b, err := read(i)
			inputs[i] = got{bands: b, err: err}
			close(ready[i])
			if err != nil {
				for j := i + 1; j < n; j++ {
					inputs[j] = got{err: err}
					close(ready[j])
				}
				return
			}
		}
	})
	planned := make([]*Plan, n)
	wg.Go(func() {
		defer func() { planEnd = time.Now() }()
		for i := range n {
			p, err := NewPlan(g, grids[i], r, maxErr)
			if err != nil {
				err = fmt.Errorf("%s: %w", names[i], err)
			}
			planned[i] = p
			select {
			case plans[i] <- got{err: err}:
			case <-done:
				return
			}
			if err != nil {
				return
			}
		}
	})
	var first []*Source
	arrived := func(i int) ([]*Source, error) {
		if i < 0 || i >= n {
			return nil, fmt.Errorf("no input %d of %d", i, n)
		}
		<-ready[i]
		return inputs[i].bands, inputs[i].err
	}
	next := func(i int) (*Plan, []*Source, error) {
		if i < 0 || i >= n {
			return nil, nil, fmt.Errorf("no input %d of %d", i, n)
		}
		<-ready[i]
		in := inputs[i]
		if in.err != nil {
			return nil, nil, in.err
		}
		p := <-plans[i]
		if p.err != nil {
			return nil, nil, p.err
		}
		if err := checkInput(in.bands, first, planned[i]); err != nil {
			return nil, nil, err
		}
		if i == 0 {
			first = in.bands
		}
		return planned[i], in.bands, nil
	}
	var out []*Target
	var err error
	if s, ok := be.(Streamer); ok {
		out, err = s.WarpStream(n, arrived, next)
	} else {
		out, err = warpEach(n, next, be)
	}
	close(done)
	wg.Wait()
	end := time.Now()
	tm.Total = end.Sub(t0)
	tm.Read, tm.Plan = readEnd.Sub(t0), planEnd.Sub(t0)
	last := readEnd
	if planEnd.After(last) {
		last = planEnd
	}
	tm.Tail = end.Sub(last)
	if sr, ok := be.(SetupReporter); ok {
		tm.Setup = sr.TakeSetup()
	}
	if pr, ok := be.(PartReporter); ok {
		tm.Parts = pr.TakeParts()
	}
	if er, ok := be.(EventReporter); ok {
		tm.Events = er.TakeEvents()
	}
	if err != nil {
		return nil, tm, err
	}
	return out, tm, nil
}

// checkInput checks an input's bands against the first input's (as many,
// of the same types) and its plan.
func checkInput(bands, first []*Source, p *Plan) error {
	if len(bands) == 0 {
		return fmt.Errorf("no band to mosaic")
	}
	if first != nil {
		if len(bands) != len(first) {
			return fmt.Errorf("%s has %d band(s), %s %d: a mosaic needs as many from each input", bands[0].Name, len(bands), first[0].Name, len(first))
		}
		for b := range bands {
			if bands[b].Plane.Type != first[b].Plane.Type {
				return fmt.Errorf("band %d of %s holds %s, of %s %s: a mosaic needs one type a band", b+1, bands[b].Name, bands[b].Plane.Type, first[b].Name, first[b].Plane.Type)
			}
		}
	}
	for _, s := range bands {
		if err := s.Check(); err != nil {
			return err
		}
		if s.Plane.Width != p.SrcW || s.Plane.Height != p.SrcH {
			return fmt.Errorf("%s: the plan is for a %d×%d source, the band is %d×%d", s.Name, p.SrcW, p.SrcH, s.Plane.Width, s.Plane.Height)
		}
	}
	return nil
}

// warpEach is MosaicStream on a backend that is not a Streamer: the
// targets made from input 0, each input warped into them as it arrives.
func warpEach(n int, next func(i int) (*Plan, []*Source, error), be Backend) ([]*Target, error) {
	var out []*Target
	for i := range n {
		plan, bands, err := next(i)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			for _, s := range bands {
				t, err := NewTarget(plan, s.Plane.Type, s.NoData, s.HasNoData)
				if err != nil {
					return nil, err
				}
				out = append(out, t)
			}
		}
		for b, s := range bands {
			if err := be.Warp(plan, s, out[b]); err != nil {
				return nil, fmt.Errorf("%s: %w", s.Name, err)
			}
		}
	}
	return out, nil
}
