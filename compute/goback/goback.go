// Package goback holds the two pure-Go backends, which run a job's
// compiled program over blocks of pixels (numexpr's way): go, the plain
// loop (plain Go loops on one goroutine, never assembly), and go-parallel,
// the same block program with the vectorised kernels of
// compute/internal/vec spread over every core on a par.Pool.
package goback

import (
	"sync"

	"canopy/compute"
)

func init() {
	compute.Register(compute.NameGo, func() compute.Backend { return &goBackend{} })
	compute.Register(compute.NameGoParallel, func() compute.Backend { return NewGoParallel(0) })
}

// goBackend is the plain loop: the job's block program on one goroutine,
// every operation a plain Go loop (never assembly, whatever the build).
type goBackend struct {
	// mu serialises jobs: a window may start a job while a cancelled
	// one is still running on the same backend.
	mu   sync.Mutex
	prog blockProgram
}

func (*goBackend) Name() string { return compute.NameGo }
func (*goBackend) Info() compute.Info {
	return compute.Info{Name: compute.NameGo, Available: true, Device: compute.CPUName(1)}
}
func (*goBackend) Close() error { return nil }
