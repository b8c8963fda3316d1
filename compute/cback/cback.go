// Package cback is the `c` backend: Canopy's C kernel (native/cpu) called
// through cgo, vectorised for the host CPU and multi-threaded. Importing the
// package registers it with compute.
package cback

import (
	"fmt"
	"time"

	"canopy/compute"
	"canopy/native/cpu"
)

func init() {
	compute.Register(compute.NameC, func() compute.Backend { return New(0) })
}

// Backend runs the C kernel on up to Threads threads.
type Backend struct {
	threads int
}

// New returns the c backend using threads OS threads (0: all cores).
func New(threads int) *Backend { return &Backend{threads: threads} }

// Name implements compute.Backend.
func (*Backend) Name() string { return compute.NameC }

// Info implements compute.Backend.
func (b *Backend) Info() compute.Info {
	t := b.threads
	if t <= 0 {
		t = cpu.MaxThreads()
	}
	return compute.Info{Name: compute.NameC, Available: true,
		Device: fmt.Sprintf("C %s, OpenMP %d threads", cpu.ISA(), t)}
}

// Setup implements compute.Backend; the C kernel needs no preparation.
func (*Backend) Setup(w, h int) (time.Duration, error) { return 0, nil }

// Close implements compute.Backend.
func (*Backend) Close() error { return nil }

// Run implements compute.Backend.
func (b *Backend) Run(in compute.Input, out []float32) (compute.Timings, error) {
	if err := in.Check(); err != nil {
		return compute.Timings{}, err
	}
	if len(out) != in.Pixels() {
		return compute.Timings{}, fmt.Errorf("output holds %d pixels, image has %d", len(out), in.Pixels())
	}
	nd := in.Nodata
	t0 := time.Now()
	cpu.NDVI(in.Red, in.NIR, out, nd.Red, nd.NIR, nd.HasRed, nd.HasNIR, b.threads)
	k := time.Since(t0)
	return compute.Timings{Kernel: k, Total: k}, nil
}
