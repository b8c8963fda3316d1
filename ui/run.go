package ui

import (
	"context"
	"fmt"
	"sync"

	"canopy/compute"
	"canopy/ui/render/chart"
)

// runSpec is one backend in one mode, fixed on the event goroutine when a
// job starts: the job passes the mode to the engine with each run
// (compute.Job.Mode) and never reads or sets it on the backend, so the
// event goroutine never waits behind a run.
type runSpec struct {
	b    compute.Backend
	info compute.Info
	mode string
}

func (r runSpec) label() string { return chart.Label(r.b.Name(), r.mode) }

// ceiling measures the host copy bandwidth once per process (64 MiB per
// buffer: past any cache, small enough not to matter next to a scene).
var ceiling = sync.OnceValue(func() float64 { return compute.HostCopyCeiling(64 << 20) })

// hostCeiling is the host copy ceiling: CPU backends' (GPU backends
// measure their own device ceilings, and get this where they cannot).
func (r runSpec) hostCeiling() float64 { return ceiling() }

// compute runs j once on the backend in the mode through the one road
// (road: source.Run), and once more when the first run had to set up (the
// timing shown is then not the first call's), every output verified
// against the float64 truth (a cancelled ctx stops it between blocks)
// and returns the run as a one-sample BenchResult for the status bar and
// the timing chart.
func (r runSpec) compute(ctx context.Context, j *compute.Job) (compute.BenchResult, error) {
	j.Mode = r.mode
	t, reps, err := r.road(ctx, j)
	if err != nil {
		return compute.BenchResult{}, err
	}
	if t.Setup > 0 {
		setup := t.Setup
		if t, reps, err = r.road(ctx, j); err != nil {
			return compute.BenchResult{}, err
		}
		t.Setup += setup
	}
	res := compute.RunResult(r.b, r.info, j, t, reps, r.hostCeiling())
	for o, rep := range reps {
		if err := rep.Err(r.label() + " " + j.Names[o]); err != nil {
			res.Error = err.Error()
			return res, err
		}
	}
	return res, nil
}

// bench times j on the backend in the mode as the command line's bench
// does: compute.BenchJob (warm-up and setup apart, repeat timed runs,
// every output verified), telling step how far it is (nil: no one): a
// share of the run in [0, 1] and what it does now. A cancelled ctx
// stops it before its next run, with ctx's error.
func (r runSpec) bench(ctx context.Context, j *compute.Job, repeat int, step func(frac float64, what string)) (compute.BenchResult, error) {
	j.Mode = r.mode
	opt := compute.BenchOptions{Repeat: repeat, HostCeiling: r.hostCeiling()}
	if step != nil {
		step(0, "warming up")
		opt.Progress = func(done, total int) { step(float64(done)/float64(total), benchStep(done, total)) }
	}
	res := compute.BenchJob(ctx, r.b, j, opt)
	return res, ctx.Err()
}

// benchStep says what compute.BenchJob does after done of its total
// steps (the warm-up, the timed runs, the verification).
func benchStep(done, total int) string {
	switch {
	case done >= total:
		return "verified"
	case done == total-1:
		return "checking against the float64 truth"
	}
	return fmt.Sprintf("timed run %d of %d", done, total-2)
}

func ms64[T ~int64](d T) float64 { return float64(d) / 1e6 }

func onePhase(v float64) compute.Phase { return compute.Phase{Median: v, Min: v, Max: v} }
