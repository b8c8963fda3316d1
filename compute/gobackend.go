package compute

import (
	"fmt"
	"runtime"
	"time"
)

func init() {
	Register(NameGo, func() Backend { return &goBackend{} })
	Register(NameGoParallel, func() Backend { return NewGoParallel(0) })
}

// cpuName describes the host CPU for Info.Device.
func cpuName(threads int) string {
	return fmt.Sprintf("%s (%d threads, %s/%s)", hostCPUModel(), threads, runtime.GOOS, runtime.GOARCH)
}

// goBackend is the plain single-goroutine scalar loop: the chapter's Python
// loop, written in Go (never vectorised, whatever the build).
type goBackend struct{}

func (*goBackend) Name() string { return NameGo }
func (*goBackend) Info() Info {
	return Info{Name: NameGo, Available: true, Device: cpuName(1)}
}
func (*goBackend) Setup(w, h int) (time.Duration, error) { return 0, nil }
func (*goBackend) Close() error                          { return nil }

func (*goBackend) Run(in Input, out []float32) (Timings, error) {
	if err := checkRun(in, out); err != nil {
		return Timings{}, err
	}
	t0 := time.Now()
	ndviSpanScalar(out, in.Red, in.NIR, in.Nodata)
	k := time.Since(t0)
	return Timings{Kernel: k, Total: k}, nil
}

func checkRun(in Input, out []float32) error { return CheckRun(in, out) }

// CheckRun returns an error when in is malformed or out does not hold
// exactly its pixels; backends call it first in Run.
func CheckRun(in Input, out []float32) error {
	if err := in.Check(); err != nil {
		return err
	}
	if len(out) != in.Pixels() {
		return fmt.Errorf("output holds %d pixels, image has %d", len(out), in.Pixels())
	}
	return nil
}
