package cback

import (
	"time"

	"canopy/compute"
	"canopy/compute/season"
	cseason "canopy/native/season"
)

// RunSeries runs a per-pixel model over a stack's block (season.Runner):
// native/season's C code on every core, each worker a contiguous span of
// pixels.
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
	b.run.RunTask(j.Cube.Pixels*len(p.Dates), seriesTask{cj})
	k := time.Since(t0)
	return compute.Timings{Setup: start, Kernel: k, Total: k}, nil
}

type seriesTask struct{ j *cseason.Job }

func (t seriesTask) Do(lo, hi int) {
	a, b := season.PixelSpan(lo, hi, len(t.j.Dates32))
	cseason.Pixels(t.j, a, b)
}
