package compute_test

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"

	"canopy/compute"
	"canopy/compute/computetest"
	"canopy/compute/fake"
)

// TestBenchJobProgress: BenchJob tells its progress in Repeat + 2 steps,
// in order: the warm-up, each timed sample, the verification.
func TestBenchJobProgress(t *testing.T) {
	b, err := compute.New(compute.NameGo)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	j := computetest.NDVIJob(fake.Noise, 64, 64, 1)
	var steps []int
	res := compute.BenchJob(t.Context(), b, j, compute.BenchOptions{Repeat: 3, HostCeiling: 1, Progress: func(done, total int) {
		if total != 5 {
			t.Errorf("total %d, want Repeat + 2 = 5", total)
		}
		steps = append(steps, done)
	}})
	if res.Error != "" {
		t.Fatal(res.Error)
	}
	if !slices.Equal(steps, []int{1, 2, 3, 4, 5}) {
		t.Errorf("steps %v, want 1 to 5", steps)
	}
}

// TestBenchJobCancel: a context cancelled during BenchJob (here after its
// warm-up) stops it before its next run: no timed sample, no
// verification, the context's error as the result's.
func TestBenchJobCancel(t *testing.T) {
	b, err := compute.New(compute.NameGo)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	j := computetest.NDVIJob(fake.Noise, 64, 64, 1)
	ctx, cancel := context.WithCancel(t.Context())
	var steps []int
	res := compute.BenchJob(ctx, b, j, compute.BenchOptions{Repeat: 3, HostCeiling: 1, Progress: func(done, total int) {
		steps = append(steps, done)
		cancel()
	}})
	if res.Error != context.Canceled.Error() || res.Verified || res.Total.Median != 0 {
		t.Errorf("after the cancel: error %q, verified %v, total %v", res.Error, res.Verified, res.Total)
	}
	if !slices.Equal(steps, []int{1}) {
		t.Errorf("steps %v, want the warm-up's alone", steps)
	}
}

// TestRunResult: one run as a result is BenchJob's figures for one sample:
// its phases as median, min and max, the bandwidths of the job's bytes,
// a CPU backend's kernel against the host ceiling, and the verdict.
func TestRunResult(t *testing.T) {
	b, err := compute.New(compute.NameGo)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	j := computetest.NDVIJob(fake.Noise, 64, 64, 1)
	tm, err := compute.RunJob(b, j)
	if err != nil {
		t.Fatal(err)
	}
	tm.Kernel, tm.Total = 2*time.Millisecond, 4*time.Millisecond
	r := compute.RunResult(b, b.Info(), j, tm, compute.VerifyJob(j), 10)
	if r.Repeat != 1 || r.Batch != 1 || r.Kernel != (compute.Phase{Median: 2, Min: 2, Max: 2}) || r.KernelMS != 2 || r.TotalMS != 4 {
		t.Errorf("phases: %+v", r)
	}
	if want := float64(j.Bytes()) / 2e6; r.KernelGBps != want || r.TotalGBps != want/2 {
		t.Errorf("bandwidths %g, %g; want %g, %g", r.KernelGBps, r.TotalGBps, want, want/2)
	}
	if r.CeilingGBps != 10 || r.CeilingKind != "host-copy" || math.Abs(r.KernelPct-100*r.KernelGBps/10) > 1e-12 {
		t.Errorf("ceiling %g %s %g%%", r.CeilingGBps, r.CeilingKind, r.KernelPct)
	}
	if !r.Verified || r.Error != "" || r.Width != 64 || r.Index != "ndvi" || r.Backend != compute.NameGo {
		t.Errorf("verdict: %+v", r)
	}
}
