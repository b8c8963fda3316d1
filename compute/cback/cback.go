// Package cback is the `c` backend: Canopy's C kernel (native/cpu) called
// through cgo, vectorised for the host CPU, one block per core on a
// compute.Pool. Importing the package registers it with compute.
package cback

import (
	"fmt"
	"time"

	"canopy/compute"
	"canopy/native/cpu"
)

func init() {
	compute.Register(compute.NameC, func() compute.Backend { return New(0) })
	compute.RegisterHostCopier(cpu.Copy)
}

// Backend runs the C kernel on a pool of threads.
type Backend struct {
	threads int
	pool    *compute.Pool
}

// New returns the c backend using threads OS threads (0: all cores).
func New(threads int) *Backend { return &Backend{threads: threads} }

// Name implements compute.Backend.
func (*Backend) Name() string { return compute.NameC }

// Info implements compute.Backend.
func (b *Backend) Info() compute.Info {
	t := b.threads
	if t <= 0 {
		t = compute.NewPoolSize()
	}
	return compute.Info{Name: compute.NameC, Available: true,
		Device: fmt.Sprintf("C %s kernel, %d threads", cpu.ISA(), t)}
}

// Setup starts the worker pool (once).
func (b *Backend) Setup(w, h int) (time.Duration, error) {
	if b.pool != nil {
		return 0, nil
	}
	t0 := time.Now()
	b.pool = compute.NewPool(b.threads)
	return time.Since(t0), nil
}

// Close stops the workers.
func (b *Backend) Close() error {
	if b.pool != nil {
		b.pool.Close()
		b.pool = nil
	}
	return nil
}

// span is the C kernel in compute.SpanKernel's shape: one cgo call per
// block.
func span(out, red, nir []float32, nd compute.Nodata) {
	cpu.NDVI(out, red, nir, nd.Red, nd.NIR, nd.HasRed, nd.HasNIR)
}

// Run implements compute.Backend.
func (b *Backend) Run(in compute.Input, out []float32) (compute.Timings, error) {
	return compute.RunOnPool(&b.pool, b.threads, span, in, out)
}
