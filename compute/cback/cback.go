// Package cback is the `c` backend: Canopy's C kernels (native/cpu) called
// through cgo, vectorised for the host CPU, one span per core on a
// par.Pool: the block interpreter that runs any index job (RunJob) and the
// fused NDVI kernel of the two-band path (Run). Importing the package
// registers it with compute.
package cback

import (
	"fmt"
	"sync"
	"time"

	"canopy/compute"
	"canopy/native/cpu"
)

func init() {
	compute.Register(compute.NameC, func() compute.Backend { return New(0) })
	compute.RegisterHostCopier(cpu.Copy)
}

// Backend runs the C kernels on a pool of threads.
type Backend struct {
	run compute.PoolRunner
	// mu serialises RunJob, which keeps one job's task.
	mu   sync.Mutex
	task jobTask
}

// New returns the c backend using threads OS threads (0: all cores).
func New(threads int) *Backend { return &Backend{run: compute.PoolRunner{Threads: threads}} }

// Name implements compute.Backend.
func (*Backend) Name() string { return compute.NameC }

// Info implements compute.Backend.
func (b *Backend) Info() compute.Info {
	return compute.Info{Name: compute.NameC, Available: true,
		Device: fmt.Sprintf("C %s kernels, %d threads", cpu.ProgramISA(), b.run.Workers())}
}

// Setup starts the worker pool (once).
func (b *Backend) Setup(w, h int) (time.Duration, error) { return b.run.Start(), nil }

// Close stops the workers.
func (b *Backend) Close() error {
	b.run.Close()
	return nil
}

// span is the C kernel in compute.SpanKernel's shape: one cgo call per
// block.
func span(out, red, nir []float32, nd compute.Nodata) {
	cpu.NDVI(out, red, nir, nd.Red, nd.NIR, nd.HasRed, nd.HasNIR)
}

// Run implements compute.Backend.
func (b *Backend) Run(in compute.Input, out []float32) (compute.Timings, error) {
	return b.run.Run(span, in, out)
}
