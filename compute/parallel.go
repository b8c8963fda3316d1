package compute

import (
	"time"
)

// GoParallel runs the Go kernel on a Pool of goroutines, one per thread,
// each taking a contiguous block of pixels; built with GOEXPERIMENT=simd on
// an AVX2 CPU the kernel is 8 lanes wide (see SIMD). A run allocates
// nothing.
type GoParallel struct {
	threads int
	pool    *Pool
}

// NewGoParallel returns the go-parallel backend with the given number of
// workers (0: GOMAXPROCS).
func NewGoParallel(threads int) *GoParallel {
	return &GoParallel{threads: threads}
}

// Name implements Backend.
func (*GoParallel) Name() string { return NameGoParallel }

// Info implements Backend.
func (p *GoParallel) Info() Info {
	t := p.threads
	if p.pool != nil {
		t = p.pool.Threads()
	} else if t <= 0 {
		t = NewPoolSize()
	}
	dev := cpuName(t)
	if SIMD() {
		dev += ", AVX2 via simd/archsimd"
	}
	return Info{Name: NameGoParallel, Available: true, Device: dev}
}

// Setup starts the workers (once); sizes need no preparation.
func (p *GoParallel) Setup(w, h int) (time.Duration, error) {
	if p.pool != nil {
		return 0, nil
	}
	t0 := time.Now()
	p.pool = NewPool(p.threads)
	return time.Since(t0), nil
}

// Run implements Backend.
func (p *GoParallel) Run(in Input, out []float32) (Timings, error) {
	return RunOnPool(&p.pool, p.threads, ndviSpan, in, out)
}

// Close stops the workers.
func (p *GoParallel) Close() error {
	if p.pool != nil {
		p.pool.Close()
		p.pool = nil
	}
	return nil
}
