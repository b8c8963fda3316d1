package glback

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unsafe"

	"canopy/compute"
	"canopy/native/egl/gl"
)

// StreamJobs implements compute.JobStreamer: a stream of up to depth jobs
// (2 to 8) in flight, each on a slot of its own: device buffers for its
// bands, mask and outputs, a persistently mapped buffer its outputs are
// copied back into, four GL_TIMESTAMP queries and a fence. GL has one
// command queue per context, so what overlaps is the host's work with the
// GPU's: Submit copies block k+1's bands into the write ring (mapped) or
// the device buffers (subdata) and queues its upload, shader and
// download behind block k's, and returns; Wait waits for the oldest
// block's fence and copies its outputs out. The stream shares the
// backend's context, worker, shader cache and write ring.
func (b *Backend) StreamJobs(depth int) (compute.JobStream, error) {
	if depth < 2 || depth > 8 {
		return nil, fmt.Errorf("gl: a stream of %d jobs in flight: give 2 to 8", depth)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.start(); err != nil {
		return nil, err
	}
	js := &jobStream{b: b, w: b.w, slots: make([]*streamSlot, depth)}
	err := b.w.do(func(st *glState) error {
		for i := range js.slots {
			js.slots[i] = st.takeSlot()
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("gl: %w", err)
	}
	js.setup = b.takePending()
	return js, nil
}

// maxKeptSlotBytes bounds the device and mapped memory of the slots the
// backend keeps from closed streams for the next one (the block pipeline
// opens a stream per run, with blocks of the same shape).
const maxKeptSlotBytes = 512 << 20

// takeSlot returns a slot kept from a closed stream, or a new one.
func (st *glState) takeSlot() *streamSlot {
	if n := len(st.keptSlots); n > 0 {
		sl := st.keptSlots[n-1]
		st.keptSlots = st.keptSlots[:n-1]
		return sl
	}
	return &streamSlot{}
}

// keepSlot keeps an idle slot's buffers for the next stream while they
// fit maxKeptSlotBytes, and frees them otherwise.
func (st *glState) keepSlot(sl *streamSlot) {
	kept := 0
	for _, k := range st.keptSlots {
		kept += k.bytes()
	}
	if kept+sl.bytes() <= maxKeptSlotBytes && len(st.keptSlots) < 8 {
		st.keptSlots = append(st.keptSlots, sl)
		return
	}
	st.freeSlot(sl)
}

// freeSlots frees the slots kept from closed streams.
func (st *glState) freeSlots() {
	for _, sl := range st.keptSlots {
		st.freeSlot(sl)
	}
	st.keptSlots = nil
}

func (st *glState) freeSlot(sl *streamSlot) {
	if sl.jb != nil {
		st.deleteBuffers(sl.jb.all)
		sl.jb = nil
	}
	unmap(&sl.down)
	sl.mem = nil
	if sl.q[0] != 0 {
		gl.DeleteQueries(int32(len(sl.q)), &sl.q[0])
		sl.q = [4]uint32{}
	}
}

// bytes is the device and mapped memory a slot holds.
func (sl *streamSlot) bytes() int {
	n := len(sl.mem)
	if jb := sl.jb; jb != nil {
		l := jb.layout
		per := 4 * l.outs
		for _, d := range jb.bands {
			per += d.size
		}
		if l.mask {
			per++
		}
		n += per * l.pixels
	}
	return n
}

var _ compute.JobStreamer = (*Backend)(nil)

// StreamDepthHint implements compute.StreamDepthHinter: two blocks in
// flight. GL runs a context's commands in turn, so a third block only
// waits in memory (docs/BENCHMARKS.md has the measurements).
func (b *Backend) StreamDepthHint() int { return 2 }

// errStreamBackendClosed is a job stream's error once its backend was
// closed: the context that held the stream's buffers is gone.
var errStreamBackendClosed = errors.New("gl: the backend was closed while the job stream was open: open a new stream")

// jobStream is an open compute.JobStream on the gl backend.
type jobStream struct {
	b *Backend
	// w is the worker whose context holds the slots' GL objects: once the
	// backend has another (or none), they are gone.
	w     *worker
	slots []*streamSlot
	// head is the slot of the oldest job in flight, n how many are.
	head, n int
	// setup is set-up time not yet reported (the context's start).
	setup  time.Duration
	failed error
	closed bool
}

// streamSlot is one job in flight on a jobStream.
type streamSlot struct {
	jb   *jobBuffers
	down uint32 // mapped read buffer the outputs come back to (mapped)
	mem  []byte // its memory
	q    [4]uint32
	// fence follows the job's last command: its download into down
	// (mapped) or its shader (subdata).
	fence uintptr

	j      *compute.Job
	mode   string
	timed  bool          // q holds the job's timestamps
	host   time.Duration // host time of the upload (copies, calls)
	setup  time.Duration
	issued time.Time
}

// enter takes the backend's lock and checks that the stream can go on;
// the function it returns releases the lock.
func (js *jobStream) enter() (func(), error) {
	if js.closed {
		return nil, errors.New("gl: the job stream is closed")
	}
	if js.failed != nil {
		return nil, fmt.Errorf("gl: the job stream failed earlier: %w", js.failed)
	}
	js.b.mu.Lock()
	if js.b.w != js.w {
		js.b.mu.Unlock()
		return nil, errStreamBackendClosed
	}
	return js.b.mu.Unlock, nil
}

// Submit implements compute.JobStream: it queues j's upload, shader and
// download on the next slot and returns without waiting for the GPU.
func (js *jobStream) Submit(j *compute.Job) error {
	if err := checkJob(j); err != nil {
		return err
	}
	leave, err := js.enter()
	if err != nil {
		return err
	}
	defer leave()
	if js.n == len(js.slots) {
		return fmt.Errorf("gl: %d jobs already in flight: wait for one first", js.n)
	}
	mode, err := js.b.jobMode(j.Mode)
	if err != nil {
		return err
	}
	sl := js.slots[(js.head+js.n)%len(js.slots)]
	hook := js.b.tu.jobHook
	err = js.w.do(func(st *glState) error { return js.submit(st, sl, j, mode, hook) })
	if err != nil {
		js.failed = err
		return fmt.Errorf("gl: %s %d×%d, streamed on %s: %w", strings.Join(j.Names, ","), j.Width, j.Height, js.b.info.Device, err)
	}
	js.n++
	return nil
}

func (js *jobStream) submit(st *glState, sl *streamSlot, j *compute.Job, mode string, hook func(string) string) error {
	setup := js.setup
	js.setup = 0
	l, types, err := st.layoutOf(j)
	if err != nil {
		return err
	}
	t0 := time.Now()
	fresh := !sl.jb.fits(l)
	if fresh {
		if sl.jb != nil {
			st.deleteBuffers(sl.jb.all)
			sl.jb = nil
		}
		jb, err := st.newJobBuffers(l, types)
		if err != nil {
			return err
		}
		sl.jb = jb
	}
	if mode == ModeMapped {
		// The write ring only: outputs come back to the slot's own buffer.
		if _, err := st.ensureUpRing(); err != nil {
			return err
		}
		if need := 4 * l.outs * l.pixels; len(sl.mem) < need {
			unmap(&sl.down)
			sl.mem = nil
			buf, p, err := mapPersistent(need, gl.MAP_READ_BIT)
			if err != nil {
				return err
			}
			sl.down, sl.mem = buf, unsafe.Slice((*byte)(p), need)
			clear(sl.mem) // commit the pages now
		}
	}
	setup += time.Since(t0)
	p, d, compiled, err := st.program(j, hook)
	setup += d
	if err != nil {
		return err
	}
	if compiled || fresh {
		d, err := st.warmUp(sl.jb, p, j)
		setup += d
		if err != nil {
			return err
		}
	}
	if st.timerBits > 0 && sl.q[0] == 0 {
		gl.GenQueries(int32(len(sl.q)), &sl.q[0])
	}
	sl.timed = st.timerBits > 0
	stamp := func(i int) {
		if sl.timed {
			gl.QueryCounter(sl.q[i], gl.TIMESTAMP)
		}
	}

	t2 := time.Now()
	sl.issued = t2
	stamp(0)
	dst, src := jobInputs(sl.jb, j)
	if err := st.issueUpload(l.part, dst, src, mode); err != nil {
		return err
	}
	stamp(1)
	sl.host = time.Since(t2)
	st.jobDispatch(sl.jb, p, j, 0)
	stamp(2)
	if mode == ModeMapped {
		px := j.Pixels()
		for o := range j.Out {
			fromPlane(l.part, &sl.jb.outs[o], 0, px, sl.down, 4*o*px)
		}
		unbindCopy()
	}
	stamp(3)
	sl.fence = gl.FenceSync(gl.SYNC_GPU_COMMANDS_COMPLETE, 0)
	gl.Flush()
	if err := glError("queueing a streamed job"); err != nil {
		return err
	}
	sl.j, sl.mode, sl.setup = j, mode, setup
	return nil
}

// Wait implements compute.JobStream: it waits for the oldest job, copies
// its outputs into its Out and returns its phases: Upload, Kernel and
// Download by the GPU's clock (GL_TIMESTAMP) where it has one, and the
// host's copies (the staging copies in and out, and in subdata mode the
// reads) in Total besides, or as Upload and Download in subdata mode.
func (js *jobStream) Wait() (compute.Timings, error) {
	if js.n == 0 && js.failed == nil && !js.closed {
		return compute.Timings{}, errors.New("gl: no job in flight to wait for")
	}
	leave, err := js.enter()
	if err != nil {
		return compute.Timings{}, err
	}
	defer leave()
	sl := js.slots[js.head]
	var t compute.Timings
	err = js.w.do(func(st *glState) error {
		var err error
		t, err = sl.finish(st)
		return err
	})
	if err != nil {
		js.failed = err
		return t, fmt.Errorf("gl: streamed job on %s: %w", js.b.info.Device, err)
	}
	js.head = (js.head + 1) % len(js.slots)
	js.n--
	return t, nil
}

// finish waits for the slot's job and copies its outputs out.
func (sl *streamSlot) finish(st *glState) (compute.Timings, error) {
	var t compute.Timings
	j := sl.j
	sl.j = nil
	tw := time.Now()
	f := sl.fence
	sl.fence = 0
	err := waitFence(f)
	gl.DeleteSync(f)
	if err != nil {
		return t, err
	}
	waited := time.Since(tw)
	var up, kernel, down time.Duration
	if sl.timed {
		var s [4]uint64
		for i := range s {
			gl.GetQueryObjectui64v(sl.q[i], gl.QUERY_RESULT, &s[i])
		}
		span := func(a, b uint64) time.Duration {
			if b > a {
				return time.Duration(b - a)
			}
			return 0
		}
		up, kernel, down = span(s[0], s[1]), span(s[1], s[2]), span(s[2], s[3])
	}
	if kernel <= 0 {
		// No timer, or one that did not advance: the wall clock from the
		// upload's end to the fence, an upper bound.
		kernel = max(time.Since(sl.issued)-sl.host, waited, time.Nanosecond)
	}
	th := time.Now()
	px := j.Pixels()
	if sl.mode == ModeSubData {
		var src []*devPlane
		var dst [][]byte
		for o := range j.Out {
			src, dst = append(src, &sl.jb.outs[o]), append(dst, bytesOf(j.Out[o]))
		}
		if err := st.downloadPlanes(sl.jb.layout.part, src, dst, ModeSubData); err != nil {
			return t, err
		}
	} else {
		for o := range j.Out {
			copyBytes(bytesOf(j.Out[o]), sl.mem[4*o*px:4*(o+1)*px])
		}
	}
	hostDown := time.Since(th)
	if err := glError("downloading a streamed job's outputs"); err != nil {
		return t, err
	}
	t.Setup = sl.setup
	if sl.mode == ModeSubData {
		t.Upload, t.Kernel, t.Download = sl.host+up, kernel, hostDown
		t.Total = t.Upload + t.Kernel + t.Download
	} else {
		t.Upload, t.Kernel, t.Download = max(up, time.Nanosecond), kernel, max(down, time.Nanosecond)
		t.Total = t.Upload + t.Kernel + t.Download + sl.host + hostDown
	}
	return t, nil
}

// Close implements compute.JobStream: it waits for the jobs in flight and
// copies their outputs out; the slots' buffers stay with the backend for
// its next stream, up to maxKeptSlotBytes, and are freed beyond that. Closing twice, or after the backend was
// closed, does no harm.
func (js *jobStream) Close() error {
	if js.closed {
		return nil
	}
	js.closed = true
	js.b.mu.Lock()
	defer js.b.mu.Unlock()
	if js.b.w != js.w {
		return nil // the context, and every buffer in it, is gone
	}
	return js.w.do(func(st *glState) error {
		var errs []error
		// The jobs in flight finish, in order, their outputs copied out.
		for ; js.n > 0; js.n-- {
			sl := js.slots[js.head]
			if js.failed == nil {
				if _, err := sl.finish(st); err != nil {
					errs = append(errs, err)
					js.failed = err
				}
			}
			js.head = (js.head + 1) % len(js.slots)
		}
		for _, sl := range js.slots {
			if sl.fence != 0 {
				if err := waitFence(sl.fence); err != nil {
					errs = append(errs, err)
				}
				gl.DeleteSync(sl.fence)
				sl.fence = 0
			}
			sl.j = nil
			if js.failed != nil {
				st.freeSlot(sl)
			} else {
				st.keepSlot(sl)
			}
		}
		js.slots = nil
		if err := glError("closing a job stream"); err != nil {
			errs = append(errs, err)
		}
		return errors.Join(errs...)
	})
}
