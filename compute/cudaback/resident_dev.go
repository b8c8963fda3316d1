package cudaback

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"time"
	"unsafe"

	"canopy/compute"
	"canopy/compute/par"
	"canopy/native/cuda"
)

// OpenResident implements compute.Resident: it opens the device if
// needed and returns a session holding the bands (as stored) and the mask
// in device memory. The bands are page-locked in place for the upload
// (Setup) and released after it, or staged through pinned buffers where
// the driver refuses; the session reads them no more. Sessions share the
// backend's context, kernel cache and lock: their calls and the
// backend's runs take turns. Closing the backend invalidates its
// sessions (their calls then fail, their Close does nothing).
func (b *Backend) OpenResident(bands []compute.BandInput, mask []uint8) (compute.ResidentSession, compute.Timings, error) {
	dev, setup, err := b.newDev()
	if err != nil {
		return nil, compute.Timings{Setup: setup}, fmt.Errorf("cuda: %w", err)
	}
	sess, t, err := openSession(dev, bands, mask)
	t.Setup += setup
	if err != nil {
		return nil, t, fmt.Errorf("cuda: %w", err)
	}
	return sess, t, nil
}

var _ compute.Resident = (*Backend)(nil)

// newDev opens the device if needed and returns a residentDev with a
// stream of its own on the backend's context, and the set-up time spent.
func (b *Backend) newDev() (*cudaDev, time.Duration, error) {
	s := b.s
	s.mu.Lock()
	defer s.mu.Unlock()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	t0 := time.Now()
	if err := s.open(); err != nil {
		return nil, 0, err
	}
	if err := s.ctx.SetCurrent(); err != nil {
		return nil, 0, err
	}
	st, err := s.drv.StreamCreate(cuda.StreamNonBlocking)
	if err != nil {
		return nil, 0, err
	}
	setup := time.Since(t0) + s.pending
	s.pending = 0
	return &cudaDev{s: s, gen: s.generation, stream: st, pins: map[*byte]*pinnedRange{}}, setup, nil
}

// fork returns a second session on d's context with a stream of its own:
// what is queued there runs beside d's stream, and the host orders the
// two by waiting for one (its sync) before it queues on the other. It
// shares d's lock (enter d, not the fork) and kernel cache; close it
// after its last sync.
func (d *cudaDev) fork() (residentDev, error) {
	st, err := d.s.drv.StreamCreate(cuda.StreamNonBlocking)
	if err != nil {
		return nil, err
	}
	return &cudaDev{s: d.s, gen: d.gen, stream: st, pins: map[*byte]*pinnedRange{}}, nil
}

// residentStageBytes is each of a session's two staging buffers, through
// which host memory that is not page-locked moves.
const residentStageBytes = 16 << 20

// cudaDev is residentDev on the backend's context: one stream per
// session, events for its marks, two staging buffers.
type cudaDev struct {
	s      *state
	gen    int
	stream cuda.Stream

	events  []cuda.Event
	next    int
	restart bool

	stage   [2]unsafe.Pointer
	stageEv [2]cuda.Event
	// stageOut is the host memory a staged download's chunk goes to
	// once its event has passed; slot is the staging buffer next used.
	stageOut [2][]byte
	stageSet [2]bool
	// stageThen, when set, is handed each piece of stageOut once it is
	// copied out, as byte offsets into the whole download (stageOff is
	// the chunk's).
	stageThen [2]func(lo, hi int)
	stageOff  [2]int
	slot      int

	pins map[*byte]*pinnedRange
	// host is the page-locked memory hostAlloc gave: [start, end).
	host [][2]uintptr
	dead bool
}

var errBackendClosed = errors.New("the cuda backend was closed: open a new session")

func (d *cudaDev) enter() (func(), error) {
	s := d.s
	s.mu.Lock()
	runtime.LockOSThread()
	leave := func() {
		runtime.UnlockOSThread()
		s.mu.Unlock()
	}
	if d.dead || !s.live || s.generation != d.gen {
		d.dead = true
		leave()
		return nil, errBackendClosed
	}
	if err := s.ctx.SetCurrent(); err != nil {
		leave()
		return nil, err
	}
	return leave, nil
}

func (d *cudaDev) target() ptxTarget {
	t, _ := d.s.target() // the context is open: its target was found
	return t
}

func (d *cudaDev) sms() int { return max(1, d.s.dev.SMs) }

func (d *cudaDev) alloc(bytes int) (cuda.DevicePtr, error) { return d.s.drv.MemAlloc(max(bytes, 4)) }

func (d *cudaDev) free(p cuda.DevicePtr) { d.s.drv.MemFree(p) }

func (d *cudaDev) hostAlloc(bytes int) ([]byte, error) {
	p, err := d.s.drv.HostAlloc(bytes, 0)
	if err != nil {
		return nil, err
	}
	lo := uintptr(p)
	d.host = append(d.host, [2]uintptr{lo, lo + uintptr(bytes)})
	return unsafe.Slice((*byte)(p), bytes), nil
}

func (d *cudaDev) hostFree(b []byte) {
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	d.host = slices.DeleteFunc(d.host, func(r [2]uintptr) bool { return r[0] == lo })
	d.s.drv.FreeHost(unsafe.Pointer(unsafe.SliceData(b)))
}

func (d *cudaDev) pin(b []byte) bool {
	if len(b) < RegisterMin || d.reachable(b) {
		return d.reachable(b)
	}
	w := cuda.PageSpans([][]byte{b}, []int{0}, uintptr(os.Getpagesize()))[0]
	p, _, err := acquire(d.s.drv, [][]byte{b}, w)
	if err != nil {
		return false
	}
	d.pins[unsafe.SliceData(b)] = p
	return true
}

func (d *cudaDev) unpin(b []byte) {
	if p, ok := d.pins[unsafe.SliceData(b)]; ok {
		releaseRange(p)
		delete(d.pins, unsafe.SliceData(b))
	}
}

// reachable reports whether b lies in host memory the copy engines reach:
// the session's hostAlloc memory, or a range some backend of the process
// has page-locked.
func (d *cudaDev) reachable(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	hi := lo + uintptr(len(b))
	for _, r := range d.host {
		if lo >= r[0] && hi <= r[1] {
			return true
		}
	}
	registry.Lock()
	defer registry.Unlock()
	for _, p := range registry.ranges {
		if p.drv == d.s.drv && lo >= p.lo && hi <= p.hi {
			return true
		}
	}
	return false
}

func (d *cudaDev) prepare(spec *kernelSpec) (bool, error) {
	_, jitted, err := d.s.kernel(spec)
	return jitted, err
}

func (d *cudaDev) launch(spec *kernelSpec, grid int, args []any) error {
	k, _, err := d.s.kernel(spec)
	if err != nil {
		return err
	}
	return d.s.drv.Launch(k.fn, cuda.Dim3{X: uint32(grid), Y: 1, Z: 1}, cuda.Dim3{X: uint32(spec.block()), Y: 1, Z: 1}, 0, d.stream, args...)
}

// takeSlot returns the next staging buffer once the copy that used it
// last has finished (and a staged download from it has reached the
// host), allocating the buffers on first use.
func (d *cudaDev) takeSlot() (int, error) {
	drv := d.s.drv
	if d.stage[0] == nil {
		for i := range d.stage {
			p, err := drv.HostAlloc(residentStageBytes, 0)
			if err != nil {
				return 0, err
			}
			d.stage[i] = p
			if d.stageEv[i], err = drv.EventCreate(cuda.EventDefault); err != nil {
				return 0, err
			}
		}
	}
	i := d.slot
	d.slot = 1 - d.slot
	if d.stageSet[i] {
		if err := drv.EventSynchronize(d.stageEv[i]); err != nil {
			return 0, err
		}
		d.stageSet[i] = false
		if out := d.stageOut[i]; out != nil {
			src := unsafe.Slice((*byte)(d.stage[i]), len(out))
			if then, off := d.stageThen[i], d.stageOff[i]; then != nil {
				par.Blocks(len(out), stagePiece, func(lo, hi int) {
					copy(out[lo:hi], src[lo:hi])
					then(off+lo, off+hi)
				})
			} else {
				parallelCopy(out, src, copyWorkers())
			}
			d.stageOut[i], d.stageThen[i] = nil, nil
		}
	}
	return i, nil
}

func (d *cudaDev) upload(dst cuda.DevicePtr, src []byte) error {
	drv := d.s.drv
	if d.reachable(src) || len(src) < RegisterMin {
		// Small pageable copies (a colour table) go through the driver's
		// own staging: it returns once src is copied out, and the
		// session's staging buffers, allocated on first use, would cost
		// far more than the copy.
		return drv.MemcpyHtoDAsync(dst, unsafe.Pointer(unsafe.SliceData(src)), len(src), d.stream)
	}
	for off := 0; off < len(src); off += residentStageBytes {
		chunk := src[off:min(off+residentStageBytes, len(src))]
		i, err := d.takeSlot()
		if err != nil {
			return err
		}
		parallelCopy(unsafe.Slice((*byte)(d.stage[i]), len(chunk)), chunk, copyWorkers())
		if err := drv.MemcpyHtoDAsync(dst.Add(off), d.stage[i], len(chunk), d.stream); err != nil {
			return err
		}
		if err := drv.EventRecord(d.stageEv[i], d.stream); err != nil {
			return err
		}
		d.stageSet[i] = true
	}
	return nil
}

func (d *cudaDev) download(dst []byte, src cuda.DevicePtr) error {
	_, err := d.downloadThen(dst, src, nil)
	return err
}

// stagePiece is the part of a staged chunk that one worker copies out
// and hands on (downloadThen): a multiple of every sample's size.
const stagePiece = 1 << 20

// downloadThen is download with then (when not nil) called on every core
// for each piece of dst as soon as it is on the host, [lo, hi) in bytes,
// each bound a multiple of 8 but the last, while the copy of the next
// pieces goes on. It reports whether it will call then: not where dst is
// page-locked or small (the device writes it directly, and the caller
// works on it after sync).
func (d *cudaDev) downloadThen(dst []byte, src cuda.DevicePtr, then func(lo, hi int)) (bool, error) {
	drv := d.s.drv
	if d.reachable(dst) || len(dst) < RegisterMin {
		// A small pageable destination (a view too small to page-lock):
		// the driver copies it before it returns.
		return false, drv.MemcpyDtoHAsync(unsafe.Pointer(unsafe.SliceData(dst)), src, len(dst), d.stream)
	}
	for off := 0; off < len(dst); off += residentStageBytes {
		chunk := dst[off:min(off+residentStageBytes, len(dst))]
		i, err := d.takeSlot()
		if err != nil {
			return false, err
		}
		if err := drv.MemcpyDtoHAsync(d.stage[i], src.Add(off), len(chunk), d.stream); err != nil {
			return false, err
		}
		if err := drv.EventRecord(d.stageEv[i], d.stream); err != nil {
			return false, err
		}
		d.stageSet[i], d.stageOut[i], d.stageThen[i], d.stageOff[i] = true, chunk, then, off
	}
	return then != nil, nil
}

func (d *cudaDev) mark() (int, error) {
	if d.restart {
		d.next, d.restart = 0, false
	}
	if d.next == len(d.events) {
		e, err := d.s.drv.EventCreate(cuda.EventDefault)
		if err != nil {
			return 0, err
		}
		d.events = append(d.events, e)
	}
	if err := d.s.drv.EventRecord(d.events[d.next], d.stream); err != nil {
		return 0, err
	}
	d.next++
	return d.next - 1, nil
}

func (d *cudaDev) sync() error {
	d.restart = true
	if err := d.s.drv.StreamSynchronize(d.stream); err != nil {
		return err
	}
	if d.stage[0] == nil {
		return nil
	}
	for range d.stage {
		if _, err := d.takeSlot(); err != nil { // drains staged downloads
			return err
		}
	}
	return nil
}

func (d *cudaDev) elapsed(a, b int) (time.Duration, error) {
	return d.s.drv.EventElapsed(d.events[a], d.events[b])
}

func (d *cudaDev) close() {
	drv := d.s.drv
	drv.StreamSynchronize(d.stream)
	for b, p := range d.pins {
		releaseRange(p)
		delete(d.pins, b)
	}
	for _, e := range d.events {
		drv.EventDestroy(e)
	}
	d.events = nil
	for i, p := range d.stage {
		if p != nil {
			drv.FreeHost(p)
			drv.EventDestroy(d.stageEv[i])
			d.stage[i] = nil
		}
	}
	drv.StreamDestroy(d.stream)
	d.dead = true
}
