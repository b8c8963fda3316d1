package goback

import (
	"time"

	"canopy/compute"
	"canopy/compute/season"
)

// RunSeries runs a per-pixel model over a stack's block (season.Runner):
// season's float32 kernel on the calling goroutine.
func (g *goBackend) RunSeries(j *season.Job) (compute.Timings, error) {
	if err := j.Check(); err != nil {
		return compute.Timings{}, err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	t0 := time.Now()
	season.Pixels(j, 0, j.Cube.Pixels)
	k := time.Since(t0)
	return compute.Timings{Kernel: k, Total: k}, nil
}

// RunSeries runs a per-pixel model over a stack's block (season.Runner):
// season's float32 kernel on every core, each worker a contiguous span of
// pixels.
func (p *GoParallel) RunSeries(j *season.Job) (compute.Timings, error) {
	if err := j.Check(); err != nil {
		return compute.Timings{}, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	start := p.run.Start()
	t0 := time.Now()
	p.run.RunTask(j.Cube.Pixels*len(j.Cube.Dates), seriesTask{j})
	k := time.Since(t0)
	return compute.Timings{Setup: start, Kernel: k, Total: k}, nil
}

type seriesTask struct{ j *season.Job }

func (t seriesTask) Do(lo, hi int) {
	a, b := season.PixelSpan(lo, hi, len(t.j.Cube.Dates))
	season.Pixels(t.j, a, b)
}
