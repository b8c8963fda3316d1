package compute

import (
	"runtime"
	"sync"
	"time"
)

// GoParallel runs the Go kernel on a pool of goroutines, one per thread,
// each taking a contiguous block of pixels; built with GOEXPERIMENT=simd on
// an AVX2 CPU the kernel is 8 lanes wide (see SIMD). The workers live as long as the
// backend, so a run allocates nothing.
type GoParallel struct {
	threads int
	jobs    []chan span
	wg      sync.WaitGroup
	started bool
}

type span struct {
	out, red, nir []float32
	nd            Nodata
}

// NewGoParallel returns the go-parallel backend with the given number of
// workers (0: GOMAXPROCS).
func NewGoParallel(threads int) *GoParallel {
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	return &GoParallel{threads: threads}
}

// Name implements Backend.
func (*GoParallel) Name() string { return NameGoParallel }

// Info implements Backend.
func (p *GoParallel) Info() Info {
	dev := cpuName(p.threads)
	if SIMD() {
		dev += ", AVX2 via simd/archsimd"
	}
	return Info{Name: NameGoParallel, Available: true, Device: dev}
}

// Setup starts the workers (once); sizes need no preparation.
func (p *GoParallel) Setup(w, h int) (time.Duration, error) {
	if p.started {
		return 0, nil
	}
	t0 := time.Now()
	p.jobs = make([]chan span, p.threads)
	for i := range p.jobs {
		c := make(chan span)
		p.jobs[i] = c
		go func() {
			for s := range c {
				ndviSpan(s.out, s.red, s.nir, s.nd)
				p.wg.Done()
			}
		}()
	}
	p.started = true
	return time.Since(t0), nil
}

// Run implements Backend.
func (p *GoParallel) Run(in Input, out []float32) (Timings, error) {
	if err := checkRun(in, out); err != nil {
		return Timings{}, err
	}
	var t Timings
	if !p.started {
		t.Setup, _ = p.Setup(in.Width, in.Height)
	}
	t0 := time.Now()
	p.parallelFor(len(out), func(lo, hi int) span {
		return span{out[lo:hi], in.Red[lo:hi], in.NIR[lo:hi], in.Nodata}
	})
	t.Kernel = time.Since(t0)
	t.Total = t.Kernel
	return t, nil
}

// parallelFor splits n pixels into one block per worker, aligned to 16
// pixels (64 bytes) so that no two workers write the same cache line.
func (p *GoParallel) parallelFor(n int, job func(lo, hi int) span) {
	workers := p.threads
	if n < 1<<14 {
		workers = 1 // not worth waking the pool
	}
	block := (n + workers - 1) / workers
	block = (block + 15) &^ 15
	for w := 0; w < workers; w++ {
		lo := w * block
		if lo >= n {
			break
		}
		hi := min(lo+block, n)
		p.wg.Add(1)
		p.jobs[w] <- job(lo, hi)
	}
	p.wg.Wait()
}

// Close stops the workers.
func (p *GoParallel) Close() error {
	if p.started {
		for _, c := range p.jobs {
			close(c)
		}
		p.started = false
	}
	return nil
}
