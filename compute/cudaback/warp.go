package cudaback

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"time"
	"unsafe"

	"canopy/compute"
	"canopy/compute/warp"
	"canopy/native/cuda"
)

// WarpBackend is compute/warp's "cuda" backend: the warp as a gather
// kernel (warp_ptx.go), one thread a destination pixel, over the source
// band uploaded as stored (uint16 stays two bytes a pixel), the plan's
// segments (the host runs the approximate transformer, as for every
// backend) and the target's plane and filled map. A mosaic's inputs are
// warped one after another into the target kept on the device
// (warp.Mosaicker), which is uploaded and downloaded once. Importing the
// package registers it.
type WarpBackend struct {
	once sync.Once
	b    *Backend
	// setup is the set-up time (device, context, kernel compilation)
	// spent since TakeSetup.
	mu    sync.Mutex
	setup time.Duration
}

func init() { warp.Register(&WarpBackend{}) }

// Name implements warp.Backend.
func (*WarpBackend) Name() string { return compute.NameCUDA }

func (w *WarpBackend) backend() *Backend {
	w.once.Do(func() { w.b = New() })
	return w.b
}

// Available reports whether the kernel runs here, with the device or the
// reason in a user's words.
func (w *WarpBackend) Available() (bool, string) {
	info := w.backend().Info()
	if !info.Available {
		return false, info.Reason
	}
	return true, info.Device
}

// Warp implements warp.Backend.
func (w *WarpBackend) Warp(plan *warp.Plan, src *warp.Source, dst *warp.Target) error {
	return w.WarpAll([]*warp.Plan{plan}, []*warp.Source{src}, dst)
}

// WarpAll implements warp.Mosaicker: srcs[i] along plans[i] into dst, in
// order, the target staying on the device between them.
func (w *WarpBackend) WarpAll(plans []*warp.Plan, srcs []*warp.Source, dst *warp.Target) error {
	if err := checkWarp(plans, srcs, dst); err != nil {
		return err
	}
	dev, setup, err := w.backend().newDev()
	w.addSetup(setup)
	if err != nil {
		return fmt.Errorf("cuda warp: %w", err)
	}
	defer func() {
		if leave, err := dev.enter(); err == nil {
			dev.close()
			leave()
		}
	}()
	jit, err := runWarp(dev, plans, srcs, dst)
	w.addSetup(jit)
	if err != nil {
		return fmt.Errorf("cuda warp: %w", err)
	}
	return nil
}

func (w *WarpBackend) addSetup(d time.Duration) {
	w.mu.Lock()
	w.setup += d
	w.mu.Unlock()
}

// TakeSetup implements warp.SetupReporter: the time spent opening the
// device and compiling kernels since the last call.
func (w *WarpBackend) TakeSetup() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	d := w.setup
	w.setup = 0
	return d
}

// checkWarp checks every source against its plan and the target, and the
// sizes against the kernel's 32-bit indices.
func checkWarp(plans []*warp.Plan, srcs []*warp.Source, dst *warp.Target) error {
	if len(plans) != len(srcs) {
		return fmt.Errorf("%d plans for %d sources", len(plans), len(srcs))
	}
	for i := range plans {
		if err := warp.Check(plans[i], srcs[i], dst); err != nil {
			return err
		}
		if srcs[i].Plane.Pixels() >= math.MaxInt32 {
			return fmt.Errorf("%s: %d pixels are more than the cuda warp indexes; use the c backend", srcs[i].Name, srcs[i].Plane.Pixels())
		}
	}
	if dst.Plane.Pixels() >= math.MaxInt32 {
		return fmt.Errorf("the target's %d pixels are more than the cuda warp indexes; use the c backend", dst.Plane.Pixels())
	}
	return nil
}

// raw is s's memory as bytes.
func raw[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(z)))
}

// The kernel reads compute/warp.Segment through its own idea of the
// layout (warpSegBytes; the float64s at 16).
var _ = [1]struct{}{}[unsafe.Sizeof(warp.Segment{})-warpSegBytes]
var _ = [1]struct{}{}[unsafe.Offsetof(warp.Segment{}.SX)-16]

// warpLaunchPixels is the most destination pixels one launch covers.
const warpLaunchPixels = 1 << 28

// runWarp warps on dev (entered here): the target's plane and filled map
// up, each source's band, mask and plan up and its kernel run, the plane
// and filled map down. It returns the time spent compiling kernels.
func runWarp(dev residentDev, plans []*warp.Plan, srcs []*warp.Source, dst *warp.Target) (jit time.Duration, err error) {
	leave, err := dev.enter()
	if err != nil {
		return 0, err
	}
	defer leave()
	var bufs []cuda.DevicePtr
	defer func() {
		if err != nil {
			dev.sync()
		}
		for _, p := range bufs {
			dev.free(p)
		}
	}()
	put := func(b []byte) (cuda.DevicePtr, error) {
		p, err := dev.alloc(max(len(b), 8))
		if err != nil {
			return 0, err
		}
		bufs = append(bufs, p)
		if len(b) > 0 {
			err = dev.upload(p, b)
		}
		return p, err
	}
	n := dst.Plane.Pixels()
	filled := dst.Filled
	if filled == nil {
		filled = make([]uint8, n)
	}
	dPlane, err := put(dst.Plane.Data)
	if err != nil {
		return jit, err
	}
	dFilled, err := put(filled)
	if err != nil {
		return jit, err
	}
	for k, plan := range plans {
		src := srcs[k]
		if plan.Empty || len(plan.Segs) == 0 {
			continue
		}
		sh := warpShape{Type: src.Plane.Type, Resampling: int(plan.Resampling), Use4: plan.Use4,
			Mask: src.Mask != nil, NoData: src.HasNoData, DstNoData: dst.HasNoData && src.Plane.Type != compute.F32}
		spec := genWarp(sh, dev.target())
		t0 := time.Now()
		jitted, err := dev.prepare(spec)
		if err != nil {
			return jit, err
		}
		if jitted {
			jit += time.Since(t0)
		}
		first := len(bufs)
		var ptr [6]cuda.DevicePtr
		for i, b := range [][]byte{src.Plane.Data, src.Mask, raw(plan.Segs), raw(plan.RowStart), raw(plan.Far), raw(plan.FarStart)} {
			if b == nil && i != 1 && i < 4 {
				return jit, errors.New("an empty plan or band")
			}
			if b == nil {
				continue // no mask, or no far corners (read by average only)
			}
			if ptr[i], err = put(b); err != nil {
				return jit, err
			}
		}
		for lo := 0; lo < n; lo += warpLaunchPixels {
			count := min(warpLaunchPixels, n-lo)
			args := []any{ptr[0], ptr[1], dPlane, dFilled, ptr[2], ptr[3], ptr[4], ptr[5],
				uint32(src.Plane.Width), uint32(src.Plane.Height), uint32(plan.Dst.Width), uint32(lo), uint32(count),
				uint32(plan.XRadius), uint32(plan.YRadius), src.NoData, dst.NoData, plan.XScale, plan.YScale}
			if err := dev.launch(spec, (count+residentBlock-1)/residentBlock, args); err != nil {
				return jit, err
			}
		}
		// The source's buffers go once its kernel is done.
		if err := dev.sync(); err != nil {
			return jit, err
		}
		for _, p := range bufs[first:] {
			dev.free(p)
		}
		bufs = bufs[:first]
	}
	if err := dev.download(dst.Plane.Data, dPlane); err != nil {
		return jit, err
	}
	if dst.Filled != nil {
		if err := dev.download(dst.Filled, dFilled); err != nil {
			return jit, err
		}
	}
	return jit, dev.sync()
}
