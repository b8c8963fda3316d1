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
	"canopy/compute/index"
	"canopy/native/cuda"
)

// StreamJobs implements compute.JobStreamer: a stream of up to depth jobs
// in flight (2 to 8), each on a slot of its own (a CUDA stream, device
// buffers, a page-locked staging area and four events), so that the upload
// of block k+1, the kernel of block k and the download of block k-1 run at
// once, as the copy engines and the SMs allow. Host buffers of 1 MiB or
// more are page-locked in place the first time the stream sees them and
// stay so until Close (the block pipeline recycles a few blocks' memory,
// so each is registered once); smaller ones and the mask (a slice of the
// whole image's) go through the slot's staging area. The stream shares the
// backend's context, kernel cache and lock with its other runs.
func (b *Backend) StreamJobs(depth int) (compute.JobStream, error) {
	if depth < 2 || depth > 8 {
		return nil, fmt.Errorf("cuda: a stream of %d jobs in flight: give 2 to 8", depth)
	}
	s := b.s
	s.mu.Lock()
	defer s.mu.Unlock()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	t0 := time.Now()
	if err := s.open(); err != nil {
		return nil, fmt.Errorf("cuda: set up: %w", err)
	}
	if err := s.ctx.SetCurrent(); err != nil {
		return nil, fmt.Errorf("cuda: set up: %w", err)
	}
	js := &jobStream{s: s, gen: s.generation, pins: map[uintptr]*pinnedRange{}}
	for range depth {
		sl := &streamSlot{}
		st, err := s.drv.StreamCreate(cuda.StreamNonBlocking)
		if err != nil {
			js.freeSlots()
			return nil, fmt.Errorf("cuda: stream: %w", err)
		}
		sl.stream = st
		js.slots = append(js.slots, sl)
		for e := range sl.ev {
			ev, err := s.drv.EventCreate(0)
			if err != nil {
				js.freeSlots()
				return nil, fmt.Errorf("cuda: event: %w", err)
			}
			sl.ev[e] = ev
		}
	}
	js.setup = time.Since(t0) + s.pending
	s.pending = 0
	return js, nil
}

var _ compute.JobStreamer = (*Backend)(nil)

// streamRegisterMin is the smallest host buffer a stream page-locks in
// place rather than staging it.
const streamRegisterMin = 1 << 20

// jobStream is an open compute.JobStream on the cuda backend.
type jobStream struct {
	s     *state
	gen   int
	slots []*streamSlot
	// head is the slot of the oldest job in flight, n how many are.
	head, n int
	// pins are the host ranges this stream page-locked, by their start.
	pins map[uintptr]*pinnedRange
	// spec is the kernel generated for prog over shape, the last job's.
	spec  *kernelSpec
	prog  *index.Program
	shape kernelShape
	// setup is set-up time not yet reported (the stream's creation).
	setup  time.Duration
	failed error
	closed bool
}

// streamSlot is one job in flight: its stream, events (before the upload,
// after it, after the kernel, after the download), device buffers, staging
// area and the job's buffers.
type streamSlot struct {
	stream cuda.Stream
	ev     [4]cuda.Event
	dev    []cuda.DevicePtr
	devSz  []int

	stage      unsafe.Pointer
	stageBytes int

	k      *jitKernel
	jb     jobBufs
	direct []bool
	dma    [][]byte
	t0     time.Time
	host   time.Duration // staging copies in (and out, after Wait)
	setup  time.Duration
}

// enter takes the backend's lock, locks the thread and makes the context
// current; the function it returns undoes that.
func (js *jobStream) enter() (func(), error) {
	if js.closed {
		return nil, errors.New("cuda: the job stream is closed")
	}
	if js.failed != nil {
		return nil, fmt.Errorf("cuda: the job stream failed earlier: %w", js.failed)
	}
	s := js.s
	s.mu.Lock()
	runtime.LockOSThread()
	leave := func() {
		runtime.UnlockOSThread()
		s.mu.Unlock()
	}
	if !s.live || s.generation != js.gen {
		leave()
		return nil, errBackendClosed
	}
	if err := s.ctx.SetCurrent(); err != nil {
		leave()
		return nil, fmt.Errorf("cuda: %w", err)
	}
	return leave, nil
}

// Submit implements compute.JobStream: it queues j's staging copies in,
// uploads, kernel and downloads on the next slot's stream and returns.
func (js *jobStream) Submit(j *compute.Job) error {
	if err := j.Check(); err != nil {
		return err
	}
	leave, err := js.enter()
	if err != nil {
		return err
	}
	defer leave()
	if js.n == len(js.slots) {
		return fmt.Errorf("cuda: %d jobs already in flight: wait for one first", js.n)
	}
	if err := js.submit(j, js.slots[(js.head+js.n)%len(js.slots)]); err != nil {
		js.failed = err
		return fmt.Errorf("cuda: %d pixels, %d indices, streamed: %w", j.Pixels(), len(j.Out), err)
	}
	js.n++
	return nil
}

func (js *jobStream) submit(j *compute.Job, sl *streamSlot) error {
	s, d := js.s, js.s.drv
	t0 := time.Now()
	setup := js.setup
	js.setup = 0
	didSetup := false
	tgt, err := s.target()
	if err != nil {
		return err
	}
	// The blocks of an image share their program and shape: the kernel's
	// source is generated once per stream.
	sh := shapeOf(j)
	spec := js.spec
	if spec == nil || j.Program != js.prog || sh.Mask != js.shape.Mask || !slices.Equal(sh.Bands, js.shape.Bands) {
		if spec, err = generate(j.Program, sh, tgt); err != nil {
			return err
		}
		js.spec, js.prog, js.shape = spec, j.Program, sh
	}
	k, jitted, err := s.kernel(spec)
	if err != nil {
		return err
	}
	didSetup = jitted
	n := j.Pixels()
	jb := bufsOf(j)

	// Device buffers: kept while large enough.
	if len(sl.dev) != len(jb.elem) {
		js.freeDev(sl)
		sl.dev, sl.devSz = make([]cuda.DevicePtr, len(jb.elem)), make([]int, len(jb.elem))
	}
	for i, e := range jb.elem {
		need := max(n*e, 4)
		if sl.devSz[i] >= need {
			continue
		}
		if sl.dev[i] != 0 {
			d.MemFree(sl.dev[i])
			sl.dev[i], sl.devSz[i] = 0, 0
		}
		p, err := d.MemAlloc(need)
		if err != nil {
			return fmt.Errorf("device buffers for %d pixels: %w", n, err)
		}
		sl.dev[i], sl.devSz[i] = p, need
		didSetup = true
	}

	// Host memory the copy engines reach: page-locked in place, or staged.
	direct := make([]bool, len(jb.host))
	for i, h := range jb.host {
		if j.Mask != nil && i == len(j.Bands) {
			continue // the mask: a slice of the whole image's, staged
		}
		ok, registered := js.pin(h)
		direct[i] = ok
		didSetup = didSetup || registered
	}
	const align = 256
	need := 0
	for i, h := range jb.host {
		if !direct[i] {
			need += (len(h) + align - 1) &^ (align - 1)
		}
	}
	if need > sl.stageBytes {
		if sl.stage != nil {
			d.FreeHost(sl.stage)
			sl.stage, sl.stageBytes = nil, 0
		}
		p, err := d.HostAlloc(need, 0)
		if err != nil {
			return fmt.Errorf("staging buffers for %d pixels: %w", n, err)
		}
		sl.stage, sl.stageBytes = p, need
		didSetup = true
	}
	dma := make([][]byte, len(jb.host))
	off := 0
	for i, h := range jb.host {
		if direct[i] {
			dma[i] = h
			continue
		}
		dma[i] = unsafe.Slice((*byte)(unsafe.Add(sl.stage, off)), len(h))
		off += (len(h) + align - 1) &^ (align - 1)
	}
	if didSetup {
		setup += time.Since(t0)
	}

	// The staging copies in, then the work on the slot's stream.
	th := time.Now()
	workers := copyWorkers()
	for i := range jb.up {
		if !direct[i] {
			parallelCopy(dma[i], jb.host[i], workers)
		}
	}
	sl.host = time.Since(th)
	if err := d.EventRecord(sl.ev[0], sl.stream); err != nil {
		return err
	}
	for i := range jb.up {
		if err := d.MemcpyHtoDAsync(sl.dev[i], unsafe.Pointer(unsafe.SliceData(dma[i])), len(dma[i]), sl.stream); err != nil {
			return err
		}
	}
	if err := d.EventRecord(sl.ev[1], sl.stream); err != nil {
		return err
	}
	c := chunk{0, n}
	if err := d.Launch(k.fn, cuda.Dim3{X: uint32(s.jobGrid(n)), Y: 1, Z: 1}, cuda.Dim3{X: KernelBlock, Y: 1, Z: 1}, 0, sl.stream,
		jobArgsOn(sl.dev, j, k.spec, &jb, c)...); err != nil {
		return err
	}
	if err := d.EventRecord(sl.ev[2], sl.stream); err != nil {
		return err
	}
	for i := jb.up; i < len(jb.host); i++ {
		if err := d.MemcpyDtoHAsync(unsafe.Pointer(unsafe.SliceData(dma[i])), sl.dev[i], len(dma[i]), sl.stream); err != nil {
			return err
		}
	}
	if err := d.EventRecord(sl.ev[3], sl.stream); err != nil {
		return err
	}
	k.busy++
	sl.k, sl.jb, sl.direct, sl.dma, sl.t0, sl.setup = k, jb, direct, dma, t0, setup
	return nil
}

// pin page-locks h in place unless it is small or already reachable; ok
// says whether the copy engines reach it, registered whether this call
// registered it.
func (js *jobStream) pin(h []byte) (ok, registered bool) {
	if len(h) == 0 {
		return false, false
	}
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(h)))
	hi := lo + uintptr(len(h))
	for i, p := range js.s.kept {
		if lo >= p.lo && hi <= p.hi {
			// Kept from an earlier stream: this one's now.
			js.s.kept = append(js.s.kept[:i], js.s.kept[i+1:]...)
			js.pins[p.lo] = p
			return true, false
		}
	}
	registry.Lock()
	for _, p := range registry.ranges {
		if p.drv == js.s.drv && lo >= p.lo && hi <= p.hi {
			registry.Unlock()
			return true, false
		}
	}
	registry.Unlock()
	if len(h) < streamRegisterMin {
		return false, false
	}
	w := cuda.PageSpans([][]byte{h}, []int{0}, uintptr(os.Getpagesize()))[0]
	p, reg, err := acquire(js.s.drv, [][]byte{h}, w)
	if err != nil {
		// Overlapping another registration, or refused: staged.
		return false, false
	}
	js.pins[w.Lo] = p
	return true, reg
}

// Wait implements compute.JobStream: it waits for the oldest job's
// download, copies staged outputs out and returns its phases (measured by
// the slot's events: Upload, Kernel and Download of that job alone;
// Total from its first copy to its last, plus the staging copies).
func (js *jobStream) Wait() (compute.Timings, error) {
	if js.n == 0 && js.failed == nil && !js.closed {
		return compute.Timings{}, errors.New("cuda: no job in flight to wait for")
	}
	leave, err := js.enter()
	if err != nil {
		return compute.Timings{}, err
	}
	defer leave()
	sl := js.slots[js.head]
	t, err := js.wait(sl)
	if err != nil {
		js.failed = err
		return t, fmt.Errorf("cuda: streamed job: %w", err)
	}
	js.head = (js.head + 1) % len(js.slots)
	js.n--
	return t, nil
}

func (js *jobStream) wait(sl *streamSlot) (compute.Timings, error) {
	d := js.s.drv
	if err := d.EventSynchronize(sl.ev[3]); err != nil {
		return compute.Timings{}, err
	}
	sl.k.busy--
	th := time.Now()
	workers := copyWorkers()
	for i := sl.jb.up; i < len(sl.jb.host); i++ {
		if !sl.direct[i] {
			parallelCopy(sl.jb.host[i], sl.dma[i], workers)
		}
	}
	host := sl.host + time.Since(th)
	var t compute.Timings
	var err error
	if t.Upload, err = d.EventElapsed(sl.ev[0], sl.ev[1]); err != nil {
		return t, err
	}
	if t.Kernel, err = d.EventElapsed(sl.ev[1], sl.ev[2]); err != nil {
		return t, err
	}
	if t.Download, err = d.EventElapsed(sl.ev[2], sl.ev[3]); err != nil {
		return t, err
	}
	t.Total = t.Upload + t.Kernel + t.Download + host
	t.Setup = sl.setup
	sl.jb, sl.dma, sl.k = jobBufs{}, nil, nil
	return t, nil
}

// Close implements compute.JobStream: it waits for the jobs in flight
// and releases the slots and the stream's page-locked ranges. Closing
// twice, or after the backend was closed, does no harm.
func (js *jobStream) Close() error {
	if js.closed {
		return nil
	}
	s := js.s
	s.mu.Lock()
	defer s.mu.Unlock()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	js.closed = true
	if !s.live || s.generation != js.gen {
		// The context and everything in it is gone; only the Go pins
		// on the host ranges remain to undo.
		for _, p := range js.pins {
			releaseRange(p)
		}
		js.pins = nil
		return nil
	}
	var errs []error
	if err := s.ctx.SetCurrent(); err != nil {
		errs = append(errs, err)
	}
	for ; js.n > 0; js.n-- {
		sl := js.slots[js.head]
		if err := s.drv.EventSynchronize(sl.ev[3]); err != nil {
			errs = append(errs, err)
		}
		if sl.k != nil {
			sl.k.busy--
			sl.k = nil
		}
		js.head = (js.head + 1) % len(js.slots)
	}
	js.freeSlots()
	js.keepPins()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("cuda: closing the job stream: %w", err)
	}
	return nil
}

// keptMax is the most bytes of page-locked ranges a backend keeps from
// closed streams.
const keptMax = 512 << 20

// keepPins hands the stream's page-locked ranges to the backend, so that
// the next stream over the same memory (the pipeline's next run, which
// reuses its blocks) locks nothing, and releases the oldest kept ranges
// past keptMax bytes (context current, s.mu held).
func (js *jobStream) keepPins() {
	s := js.s
	for _, p := range js.pins {
		s.kept = append(s.kept, p)
	}
	js.pins = nil
	total := 0
	for _, p := range s.kept {
		total += int(p.hi - p.lo)
	}
	for len(s.kept) > 0 && total > keptMax {
		total -= int(s.kept[0].hi - s.kept[0].lo)
		releaseRange(s.kept[0])
		s.kept = s.kept[1:]
	}
}

// freeDev frees a slot's device buffers (context current).
func (js *jobStream) freeDev(sl *streamSlot) {
	for _, p := range sl.dev {
		if p != 0 {
			js.s.drv.MemFree(p)
		}
	}
	sl.dev, sl.devSz = nil, nil
}

// freeSlots releases every slot (context current, nothing in flight).
func (js *jobStream) freeSlots() {
	d := js.s.drv
	for _, sl := range js.slots {
		js.freeDev(sl)
		if sl.stage != nil {
			d.FreeHost(sl.stage)
			sl.stage = nil
		}
		for _, e := range sl.ev {
			if e != (cuda.Event{}) {
				d.EventDestroy(e)
			}
		}
		if sl.stream != (cuda.Stream{}) {
			d.StreamDestroy(sl.stream)
		}
	}
	js.slots = nil
}
