// Package goback holds the two pure-Go backends: go, the plain
// single-goroutine loop (never vectorised), and go-parallel, the same
// kernel vectorised and spread over every core on a par.Pool.
package goback

import (
	"time"

	"canopy/compute"
)

func init() {
	compute.Register(compute.NameGo, func() compute.Backend { return &goBackend{} })
	compute.Register(compute.NameGoParallel, func() compute.Backend { return NewGoParallel(0) })
}

// goBackend is the plain single-goroutine scalar loop: the textbook's Python
// loop, written in Go (never vectorised, whatever the build).
type goBackend struct{}

func (*goBackend) Name() string { return compute.NameGo }
func (*goBackend) Info() compute.Info {
	return compute.Info{Name: compute.NameGo, Available: true, Device: compute.CPUName(1)}
}
func (*goBackend) Setup(w, h int) (time.Duration, error) { return 0, nil }
func (*goBackend) Close() error                          { return nil }

func (*goBackend) Run(in compute.Input, out []float32) (compute.Timings, error) {
	if err := compute.CheckRun(in, out); err != nil {
		return compute.Timings{}, err
	}
	t0 := time.Now()
	ndviSpanScalar(out, in.Red, in.NIR, in.Nodata)
	k := time.Since(t0)
	return compute.Timings{Kernel: k, Total: k}, nil
}
