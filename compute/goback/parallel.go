package goback

import (
	"sync"
	"time"

	"canopy/compute"
	"canopy/compute/internal/vec"
)

// GoParallel runs the Go kernel on a pool of goroutines, one per thread,
// each taking a contiguous block of pixels; built with GOEXPERIMENT=simd on
// an AVX2 CPU the kernel is 8 lanes wide (see SIMD). A run allocates
// nothing.
type GoParallel struct {
	// mu serialises jobs: a window may start a job while a cancelled
	// one is still running on the same backend.
	mu   sync.Mutex
	run  compute.PoolRunner
	prog blockProgram
}

// NewGoParallel returns the go-parallel backend with the given number of
// workers (0: GOMAXPROCS).
func NewGoParallel(threads int) *GoParallel {
	return &GoParallel{run: compute.PoolRunner{Threads: threads}}
}

// Name implements compute.Backend.
func (*GoParallel) Name() string { return compute.NameGoParallel }

// Info implements compute.Backend.
func (p *GoParallel) Info() compute.Info {
	dev := compute.CPUName(p.run.Workers()) + ", " + vec.Kernel() + " block kernels"
	return compute.Info{Name: compute.NameGoParallel, Available: true, Device: dev}
}

// Setup starts the workers (once); sizes need no preparation.
func (p *GoParallel) Setup(w, h int) (time.Duration, error) { return p.run.Start(), nil }

// Run implements compute.Backend.
func (p *GoParallel) Run(in compute.Input, out []float32) (compute.Timings, error) {
	return p.run.Run(ndviSpan, in, out)
}

// Close stops the workers.
func (p *GoParallel) Close() error {
	p.run.Close()
	return nil
}
