package goback

import (
	"sync"

	"canopy/compute"
	"canopy/compute/internal/vec"
)

// GoParallel runs a job's block program on a pool of goroutines, one per
// thread, each taking a contiguous span of pixels, with the block kernels
// of compute/internal/vec (AVX2 where the CPU has it). A run allocates
// nothing once its register files are big enough.
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

// Close stops the workers.
func (p *GoParallel) Close() error {
	p.run.Close()
	return nil
}
