package ui

import (
	"strings"
	"sync/atomic"
	"testing"

	"fyne.io/fyne/v2/test"

	"canopy/compute"
)

// announced is a test backend that says when a run starts, once armed.
type announced struct {
	*fakeBackend
	armed atomic.Pointer[chan struct{}]
}

// arm returns a channel closed when the next run starts.
func (a *announced) arm() <-chan struct{} {
	ch := make(chan struct{})
	a.armed.Store(&ch)
	return ch
}

func (a *announced) RunJob(j *compute.Job) (compute.Timings, error) {
	if ch := a.armed.Swap(nil); ch != nil {
		close(*ch)
	}
	return a.fakeBackend.RunJob(j)
}

// TestCompareAllCancelStopsTheBench: Cancel while Compare all times a
// backend (its first run under way) stops that backend's bench before its
// next run (compute.BenchJob hears the run's context), not after its
// warm-up and every timed run, and no other backend starts; the chart
// keeps what it had.
func TestCompareAllCancelStopsTheBench(t *testing.T) {
	cpu, gpu, missing, _ := testBackends()
	first := &announced{fakeBackend: cpu}
	w := newTestWindow(t, options{Repeat: 5}, hooks{backends: []compute.Backend{first, gpu, missing}})
	chart := w.Results()
	started := first.arm()
	release := holdRuns(t, cpu)
	cpuRuns, gpuRuns := cpu.runs.Load(), gpu.runs.Load()
	test.Tap(w.CompareAll)
	<-started // the bench's warm-up run, held
	test.Tap(w.Cancel)
	release()
	w.Wait()
	if n := cpu.runs.Load() - cpuRuns; n != 1 {
		t.Errorf("the cancelled bench ran %d runs, want the one under way alone", n)
	}
	if n := gpu.runs.Load() - gpuRuns; n != 0 {
		t.Errorf("the next backend ran %d runs after Cancel", n)
	}
	if len(w.Results()) != len(chart) {
		t.Errorf("the timing chart changed: %d results, had %d", len(w.Results()), len(chart))
	}
	if !strings.HasPrefix(w.Status.Text, "Cancelled") {
		t.Errorf("status %q", w.Status.Text)
	}
}
