// Package cback is the `c` backend: Canopy's C block interpreter
// (native/cpu) called through cgo, vectorised for the host CPU, one span
// per core on a par.Pool, running any index job (RunJob). Importing the
// package registers it with compute.
package cback

import (
	"fmt"
	"sync"

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

// Close stops the workers.
func (b *Backend) Close() error {
	b.run.Close()
	return nil
}
