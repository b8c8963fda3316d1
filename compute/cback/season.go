package cback

import (
	"sync/atomic"
	"time"

	"canopy/compute"
	"canopy/compute/season"
	cseason "canopy/native/season"
)

// SeriesChunk is the pixels a worker takes at a time in RunSeries: a
// multiple of the C code's widest vector (16 pixels), so that every pixel
// but the last few of the cube runs in the vector lanes whatever the
// number of threads, and small enough that the workers finish together.
const SeriesChunk = 4096

// RunSeries runs a per-pixel model over a stack's block (season.Runner):
// native/season's C code on every core, the workers taking chunks of
// SeriesChunk pixels one after another until none is left.
func (b *Backend) RunSeries(j *season.Job) (compute.Timings, error) {
	if err := j.Check(); err != nil {
		return compute.Timings{}, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	p := j.Plan
	m := p.Model
	cj := &cseason.Job{Kind: int(m.Kind), Stat: int(m.Stat), Direction: int(m.Direction), Run: m.Run,
		Percentile: float32(m.Percentile), Critval: float32(p.Critval), Threshold: float32(m.Threshold), H: m.H,
		Coefs: p.Coefs, Values: j.Cube.Values, Pixels: j.Cube.Pixels, X: p.X32, Dates32: p.Dates32, Role: p.Role, Out: j.Out}
	start := b.run.Start()
	t0 := time.Now()
	b.run.RunTask(j.Cube.Pixels*len(p.Dates), &seriesTask{j: cj})
	k := time.Since(t0)
	return compute.Timings{Setup: start, Kernel: k, Total: k}, nil
}

// seriesTask hands out the cube's pixels by chunks: each call of Do (one a
// worker, its span of the pool's range aside) takes chunks until the cube
// is done.
type seriesTask struct {
	j    *cseason.Job
	next atomic.Int64
}

func (t *seriesTask) Do(lo, hi int) {
	for {
		a := int(t.next.Add(SeriesChunk)) - SeriesChunk
		if a >= t.j.Pixels {
			return
		}
		cseason.Pixels(t.j, a, min(a+SeriesChunk, t.j.Pixels))
	}
}
