package cudaback

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"sync"
	"time"
	"unsafe"

	"canopy/compute"
	"canopy/compute/par"
	"canopy/compute/warp"
	"canopy/native/cuda"
)

// WarpBackend is compute/warp's "cuda" backend: the warp as a gather
// kernel (warp_ptx.go), one thread a destination pixel, over the source
// band uploaded as stored (uint16 stays two bytes a pixel), the plan's
// segments (the host runs the approximate transformer, as for every
// backend) and the target's plane and filled map. A mosaic's inputs are
// warped one after another into the target kept on the device
// (warp.Mosaicker), which is uploaded and downloaded once; a streamed
// mosaic (warp.Streamer) makes the target on the device (set there, not
// uploaded) and warps each input while the next is read. Importing the
// package registers it.
type WarpBackend struct {
	once sync.Once
	b    *Backend
	// setup is the set-up time (device, context, kernel compilation)
	// spent since TakeSetup.
	mu    sync.Mutex
	setup time.Duration
	// parts is where the last WarpStream's tail went (TakeParts), events
	// its steps (TakeEvents).
	parts, events []warp.StreamPart
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

// warpJob is one run of the warp kernel on dev: the device buffers it
// holds and the time it spent compiling kernels.
type warpJob struct {
	dev  residentDev
	bufs []cuda.DevicePtr
	jit  time.Duration
	// parts is where a stream's time after its last input went; events
	// its steps, each at its time since start.
	parts  []warp.StreamPart
	events []warp.StreamPart
	start  time.Time
}

// event records a step of the stream at its time since r.start.
func (r *warpJob) event(format string, args ...any) {
	r.events = append(r.events, warp.StreamPart{Name: fmt.Sprintf(format, args...), Time: time.Since(r.start)})
}

// part adds the time since *t as the named part and moves *t on.
func (r *warpJob) part(name string, t *time.Time) {
	now := time.Now()
	r.parts = append(r.parts, warp.StreamPart{Name: name, Time: now.Sub(*t)})
	*t = now
}

// put allocates a device buffer for b and queues b's upload.
func (r *warpJob) put(b []byte) (cuda.DevicePtr, error) {
	p, err := r.alloc(len(b))
	if err != nil {
		return 0, err
	}
	if len(b) > 0 {
		err = r.dev.upload(p, b)
	}
	return p, err
}

// freeFrom frees the buffers from the first-th on (the caller has
// synchronised the work that reads them).
func (r *warpJob) freeFrom(first int) {
	for _, p := range r.bufs[first:] {
		r.dev.free(p)
	}
	r.bufs = r.bufs[:first]
}

// input uploads src's band (unless onDev holds it on the device already,
// one of r's buffers) and mask and plan's segments and queues the kernel
// over the target's plane and filled map on the device. It returns the
// index of its first buffer in r.bufs.
func (r *warpJob) input(plan *warp.Plan, src *warp.Source, onDev, dPlane, dFilled cuda.DevicePtr, dst *warp.Target) (int, error) {
	first := len(r.bufs)
	if onDev != 0 {
		r.bufs = append(r.bufs, onDev) // freed with the input's buffers
	}
	if plan.Empty || len(plan.Segs) == 0 {
		return first, nil
	}
	dev := r.dev
	spec, err := r.prepareWarp(plan, src, dst)
	if err != nil {
		return first, err
	}
	var ptr [6]cuda.DevicePtr
	ptr[0] = onDev
	if onDev == 0 {
		var err error
		if ptr[0], err = r.stored(src); err != nil {
			return first, err
		}
		if ptr[0] != 0 {
			r.bufs = append(r.bufs, ptr[0])
		}
	}
	for i, b := range [][]byte{src.Plane.Data, src.Mask, raw(plan.Segs), raw(plan.RowStart), raw(plan.Far), raw(plan.FarStart)} {
		if i == 0 && ptr[0] != 0 {
			continue // on the device already
		}
		if b == nil && i != 1 && i < 4 {
			return first, errors.New("an empty plan or band")
		}
		if b == nil {
			continue // no mask, or no far corners (read by average only)
		}
		if ptr[i], err = r.put(b); err != nil {
			return first, err
		}
	}
	n := dst.Plane.Pixels()
	for lo := 0; lo < n; lo += warpLaunchPixels {
		count := min(warpLaunchPixels, n-lo)
		args := []any{ptr[0], ptr[1], dPlane, dFilled, ptr[2], ptr[3], ptr[4], ptr[5],
			uint32(src.Plane.Width), uint32(src.Plane.Height), uint32(plan.Dst.Width), uint32(lo), uint32(count),
			uint32(plan.XRadius), uint32(plan.YRadius), src.NoData, dst.NoData, plan.XScale, plan.YScale}
		if err := dev.launch(spec, (count+residentBlock-1)/residentBlock, args); err != nil {
			return first, err
		}
	}
	return first, nil
}

// prepareWarp compiles (unless cached) the warp kernel of plan, src and
// dst and returns it.
func (r *warpJob) prepareWarp(plan *warp.Plan, src *warp.Source, dst *warp.Target) (*kernelSpec, error) {
	sh := warpShape{Type: src.Plane.Type, Resampling: int(plan.Resampling), Use4: plan.Use4,
		Mask: src.Mask != nil, NoData: src.HasNoData, DstNoData: dst.HasNoData && src.Plane.Type != compute.F32}
	spec := genWarp(sh, r.dev.target())
	return spec, r.prepare(spec)
}

// prepare compiles spec's kernel unless it is cached, the compilation's
// time counted as set-up.
func (r *warpJob) prepare(spec *kernelSpec) error {
	t0 := time.Now()
	jitted, err := r.dev.prepare(spec)
	if jitted {
		r.jit += time.Since(t0)
	}
	return err
}

// runWarp warps on dev (entered here): the target's plane and filled map
// up, each source's band, mask and plan up and its kernel run, the plane
// and filled map down. It returns the time spent compiling kernels.
func runWarp(dev residentDev, plans []*warp.Plan, srcs []*warp.Source, dst *warp.Target) (jit time.Duration, err error) {
	leave, err := dev.enter()
	if err != nil {
		return 0, err
	}
	defer leave()
	r := &warpJob{dev: dev}
	defer func() {
		if err != nil {
			dev.sync()
		}
		r.freeFrom(0)
	}()
	filled := dst.Filled
	if filled == nil {
		filled = make([]uint8, dst.Plane.Pixels())
	}
	dPlane, err := r.put(dst.Plane.Data)
	if err != nil {
		return r.jit, err
	}
	dFilled, err := r.put(filled)
	if err != nil {
		return r.jit, err
	}
	for k, plan := range plans {
		first, err := r.input(plan, srcs[k], 0, dPlane, dFilled, dst)
		if err != nil {
			return r.jit, err
		}
		// The source's buffers go once its kernel is done.
		if err := dev.sync(); err != nil {
			return r.jit, err
		}
		r.freeFrom(first)
	}
	if err := dev.download(dst.Plane.Data, dPlane); err != nil {
		return r.jit, err
	}
	if dst.Filled != nil {
		if err := dev.download(dst.Filled, dFilled); err != nil {
			return r.jit, err
		}
	}
	return r.jit, dev.sync()
}

// filler is a device that sets memory itself (cuMemset*): count
// elements of size bytes (1, 2 or 4) to value's low bytes.
type filler interface {
	fill(p cuda.DevicePtr, value uint32, size, count int) error
}

func (d *cudaDev) fill(p cuda.DevicePtr, value uint32, size, count int) error {
	return d.s.drv.MemsetAsync(p, value, size, count, d.stream)
}

// WarpStream implements warp.Streamer: the inputs warped as they arrive
// into targets made on the device (the plane set to the fill value, the
// filled map to zero, neither uploaded), each input's band going up and
// its kernel running while the next input is read; the targets come down
// once, after the last.
func (w *WarpBackend) WarpStream(n int, arrived func(i int) ([]*warp.Source, error), next func(i int) (*warp.Plan, []*warp.Source, error)) ([]*warp.Target, error) {
	dev, setup, err := w.backend().newDev()
	w.addSetup(setup)
	if err != nil {
		return nil, fmt.Errorf("cuda warp: %w", err)
	}
	r := &warpJob{dev: dev, start: time.Now()}
	out, err := runStream(r, n, arrived, next)
	mark := time.Now()
	if leave, err := dev.enter(); err == nil {
		dev.close()
		leave()
	}
	r.part("the session closed", &mark)
	w.addSetup(r.jit)
	w.mu.Lock()
	w.parts, w.events = r.parts, r.events
	w.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("cuda warp: %w", err)
	}
	return out, nil
}

// TakeEvents implements warp.EventReporter: the last WarpStream's steps
// (each input's arrival, its inflation queued and done, its plan, its
// warp queued), each at its time since the stream began.
func (w *WarpBackend) TakeEvents() []warp.StreamPart {
	w.mu.Lock()
	defer w.mu.Unlock()
	e := w.events
	w.events = nil
	return e
}

// TakesStored implements warp.StoredTaker: a DEFLATE band comes up as
// its file stores it (about two thirds of its decoded size for a
// Sentinel-2-like tile) and is inflated on the device (inflate.go).
func (*WarpBackend) TakesStored() bool { return true }

// TakeParts implements warp.PartReporter: where the last WarpStream's
// time after the last input's arrival went.
func (w *WarpBackend) TakeParts() []warp.StreamPart {
	w.mu.Lock()
	defer w.mu.Unlock()
	p := w.parts
	w.parts = nil
	return p
}

// runStream is WarpStream on r's device: entered while it queues work,
// left while it waits for the next input. A band that arrives as stored
// is inflated on the device as soon as it arrives, while its plan is
// still being made. The host targets' pages are mapped on every core
// while the inputs are read, so that the download at the end only copies
// into them: in huge pages where the system gives them (AdviseHuge), so
// that the mapping's faults are few and the driver calls beside them do
// not wait on the memory map.
func runStream(r *warpJob, n int, arrived func(i int) ([]*warp.Source, error), next func(i int) (*warp.Plan, []*warp.Source, error)) (out []*warp.Target, err error) {
	dev := r.dev
	entered := func(f func() error) error {
		leave, err := dev.enter()
		if err != nil {
			return err
		}
		defer leave()
		return f()
	}
	// loose are the stored bands started and not yet released (their
	// inputs' warps not yet queued), planes those inflated and not yet
	// handed to their input's buffers.
	var loose []*storedBand
	var planes []cuda.DevicePtr
	release := func() {
		r.freeFrom(0)
		for _, sb := range loose {
			sb.abandon(dev)
		}
		for _, p := range planes {
			dev.free(p)
		}
		loose, planes = nil, nil
	}
	defer func() {
		entered(func() error {
			if err != nil {
				dev.sync()
			}
			release()
			return nil
		})
	}()
	type onDev struct{ plane, filled cuda.DevicePtr }
	var targets []onDev
	var pages sync.WaitGroup
	defer pages.Wait()
	// pending is the first buffer of the input whose kernels may still
	// run: freed once the next input has arrived and they are done.
	pending := -1
	var mark time.Time
	// Each input's stored bands start inflating on the device as soon as
	// it has arrived: input i+1's are queued before input i's plan is
	// waited for, so that the device inflates while the host plans. The
	// inflate kernel is compiled first, while the first input is read.
	if err := entered(func() error { return r.prepare(genInflate(dev.target())) }); err != nil {
		return nil, err
	}
	arrivals := make([][]*warp.Source, n)
	starts := make([][]*storedBand, n)
	start := func(i int) error {
		early, err := arrived(i)
		if err != nil {
			return err
		}
		r.event("input %d arrived", i)
		arrivals[i], starts[i] = early, make([]*storedBand, len(early))
		return entered(func() error {
			for b, s := range early {
				if s.Stored == nil || s.Plane.Data != nil {
					continue
				}
				sb, err := r.startStored(s.Stored)
				if err != nil {
					return err
				}
				if sb != nil {
					starts[i][b] = sb
					loose = append(loose, sb)
					r.event("input %d band %d: inflation queued", i, b+1)
				}
			}
			return nil
		})
	}
	if n > 0 {
		if err := start(0); err != nil {
			return nil, err
		}
	}
	for i := range n {
		if i+1 < n {
			if err := start(i + 1); err != nil {
				return nil, err
			}
		}
		early, started := arrivals[i], starts[i]
		plan, srcs, err := next(i)
		if err != nil {
			return nil, err
		}
		if len(srcs) != len(early) {
			return nil, fmt.Errorf("input %d: %d bands arrived, %d planned", i, len(early), len(srcs))
		}
		mark = time.Now()
		r.event("input %d planned", i)
		stored := make([]cuda.DevicePtr, len(early))
		err = entered(func() error {
			if pending >= 0 {
				if err := dev.sync(); err != nil {
					return err
				}
				r.freeFrom(pending)
				pending = -1
			}
			if i == 0 {
				for _, s := range srcs {
					t, fill, err := warp.EmptyTarget(plan, s.Plane.Type, s.NoData, s.HasNoData)
					if err != nil {
						return err
					}
					if err := checkWarp([]*warp.Plan{plan}, []*warp.Source{s}, t); err != nil {
						return err
					}
					var d onDev
					if d.plane, d.filled, err = r.target(plan, t, fill); err != nil {
						return err
					}
					out = append(out, t)
					targets = append(targets, d)
				}
				var host [][]byte
				for _, t := range out {
					host = append(host, t.Plane.Data, t.Filled)
				}
				pages.Go(func() {
					for _, b := range host {
						compute.AdviseHuge(b)
						touch(b)
					}
				})
			}
			// The warp kernels are compiled before the inflations are
			// waited for (the driver's loading of one may itself wait for
			// the work on the device).
			for b, s := range srcs {
				if _, err := r.prepareWarp(plan, s, out[b]); err != nil {
					return err
				}
			}
			for b, s := range srcs {
				if s.Stored == nil || s.Plane.Data != nil {
					continue
				}
				var err error
				if stored[b], err = r.finishStored(s, started[b]); err != nil {
					return err
				}
				if stored[b] != 0 {
					planes = append(planes, stored[b])
				}
				r.event("input %d band %d: inflated (on the device: %v)", i, b+1, stored[b] != 0)
			}
			for b, s := range srcs {
				if err := checkWarp([]*warp.Plan{plan}, []*warp.Source{s}, out[b]); err != nil {
					return err
				}
				planes = slices.DeleteFunc(planes, func(p cuda.DevicePtr) bool { return p == stored[b] }) // r's now
				first, err := r.input(plan, s, stored[b], targets[b].plane, targets[b].filled, out[b])
				if err != nil {
					return err
				}
				if pending < 0 {
					pending = first
				}
				r.event("input %d band %d: warp queued", i, b+1)
			}
			// What the inflations read goes once the warps are queued.
			for _, sb := range started {
				if sb != nil {
					sb.release()
					loose = slices.DeleteFunc(loose, func(l *storedBand) bool { return l == sb })
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	r.part("the last input up, its kernels queued", &mark)
	if err := entered(dev.sync); err != nil {
		return nil, err
	}
	r.part("the kernels done", &mark)
	pages.Wait()
	r.part("the host pages ready", &mark)
	// A filled map that the plane says itself (an integer target whose
	// nodata no valid pixel holds) is not downloaded but read off the
	// plane: a third of the bytes fewer over the bus. Where the download
	// is staged, each piece of the plane is read as it lands, while the
	// next pieces come down.
	derive := make([]bool, len(out))
	err = entered(func() error {
		for b, t := range out {
			derive[b] = filledFromPlane(t, nil)
			handed := false
			var err error
			if pw, ok := dev.(piecewise); ok && derive[b] {
				size := t.Plane.Type.Size()
				handed, err = pw.downloadThen(t.Plane.Data, targets[b].plane, func(lo, hi int) {
					markRange(t, t.Filled, lo/size, hi/size)
				})
			} else {
				err = dev.download(t.Plane.Data, targets[b].plane)
			}
			if err != nil {
				return err
			}
			if !derive[b] {
				if err := dev.download(t.Filled, targets[b].filled); err != nil {
					return err
				}
			}
			derive[b] = derive[b] && !handed
		}
		return dev.sync()
	})
	if err != nil {
		return nil, err
	}
	for b, t := range out {
		if derive[b] {
			filledFromPlane(t, t.Filled)
		}
	}
	r.part("the targets down", &mark)
	if err := entered(func() error { release(); return nil }); err != nil {
		return nil, err
	}
	r.part("the device memory released", &mark)
	return out, nil
}

// filledFromPlane reports whether t's filled map follows from its plane:
// an integer target with a nodata value of its type, which the warp
// fills where no input is valid and moves every valid result off (as
// GDAL does). With filled not nil it sets the map (markRange) on every
// core.
func filledFromPlane(t *warp.Target, filled []uint8) bool {
	nd := t.NoData
	var lo, hi float64
	switch t.Plane.Type {
	case compute.U8:
		lo, hi = 0, math.MaxUint8
	case compute.U16:
		lo, hi = 0, math.MaxUint16
	case compute.I16:
		lo, hi = math.MinInt16, math.MaxInt16
	case compute.U32:
		lo, hi = 0, math.MaxUint32
	case compute.I32:
		lo, hi = math.MinInt32, math.MaxInt32
	default:
		return false
	}
	if !t.HasNoData || nd != math.Trunc(nd) || nd < lo || nd > hi {
		return false
	}
	if filled != nil {
		par.Blocks(t.Plane.Pixels(), 1<<16, func(a, b int) { markRange(t, filled, a, b) })
	}
	return true
}

// markRange sets filled[a:b] off t's plane (one filledFromPlane accepts):
// 1 where the plane does not hold the nodata value, 0 where it does.
func markRange(t *warp.Target, filled []uint8, a, b int) {
	switch p, nd := t.Plane, t.NoData; p.Type {
	case compute.U8:
		markFilled(p.U8()[a:b], uint8(nd), filled[a:b])
	case compute.U16:
		markFilled(p.U16()[a:b], uint16(nd), filled[a:b])
	case compute.I16:
		markFilled(p.I16()[a:b], int16(nd), filled[a:b])
	case compute.U32:
		markFilled(p.U32()[a:b], uint32(nd), filled[a:b])
	case compute.I32:
		markFilled(p.I32()[a:b], int32(nd), filled[a:b])
	}
}

// markFilled sets filled[i] to 1 where v[i] is not nd, 0 where it is.
func markFilled[T uint8 | uint16 | int16 | uint32 | int32](v []T, nd T, filled []uint8) {
	for i, x := range v {
		var f uint8
		if x != nd {
			f = 1
		}
		filled[i] = f
	}
}

// touch writes a zero to every page of b (new memory, all zero), on
// every core: the pages are mapped then rather than one by one while a
// download copies into them.
func touch(b []byte) {
	page := os.Getpagesize()
	par.Blocks(len(b), 1<<22, func(lo, hi int) {
		for i := lo; i < hi; i += page {
			b[i] = 0
		}
	})
}

// target allocates t's plane and filled map (plan's) on the device, the
// plane set to fill's value and the map to zero: with cuMemset where the
// device has it, else uploaded from a target NewTarget made.
func (r *warpJob) target(plan *warp.Plan, t *warp.Target, fill compute.Plane) (plane, filled cuda.DevicePtr, err error) {
	f, ok := r.dev.(filler)
	if !ok {
		nt, err := warp.NewTarget(plan, t.Plane.Type, t.NoData, t.HasNoData)
		if err != nil {
			return 0, 0, err
		}
		if plane, err = r.put(nt.Plane.Data); err != nil {
			return 0, 0, err
		}
		filled, err = r.put(nt.Filled)
		return plane, filled, err
	}
	size := fill.Type.Size()
	var v uint32
	switch size {
	case 1:
		v = uint32(fill.Data[0])
	case 2:
		v = uint32(binary.NativeEndian.Uint16(fill.Data))
	case 4:
		v = binary.NativeEndian.Uint32(fill.Data)
	}
	if plane, err = r.alloc(len(t.Plane.Data)); err != nil {
		return 0, 0, err
	}
	if err := f.fill(plane, v, size, t.Plane.Pixels()); err != nil {
		return 0, 0, err
	}
	if filled, err = r.alloc(len(t.Filled)); err != nil {
		return 0, 0, err
	}
	return plane, filled, f.fill(filled, 0, 1, len(t.Filled))
}

// alloc allocates a device buffer of the run.
func (r *warpJob) alloc(bytes int) (cuda.DevicePtr, error) {
	p, err := r.dev.alloc(max(bytes, 8))
	if err != nil {
		return 0, err
	}
	r.bufs = append(r.bufs, p)
	return p, nil
}
