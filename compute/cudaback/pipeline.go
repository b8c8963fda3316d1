package cudaback

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"canopy/compute"
	"canopy/native/cuda"
	"canopy/shaders"
)

// job is one NDVI computation: host[0] and host[1] are the red and NIR
// bands (inSize bytes a pixel), host[2] the float32 result.
type job struct {
	n      int
	inSize int
	u16    bool
	nd     compute.Nodata
	host   [3][]byte
}

// RunStats describes how one run went through the machine.
type RunStats struct {
	Mode       string `json:"mode"`
	HostMemory string `json:"host_memory"`
	// Input is "float32" or "uint16".
	Input   string `json:"input"`
	Pixels  int    `json:"pixels"`
	Chunks  int    `json:"chunks"`
	Streams int    `json:"streams"`
	// Direct says, for red, nir and the output, whether the GPU reached the
	// caller's slice in place (page-locked); the others went through the
	// staging buffers.
	Direct [3]bool `json:"direct"`
	// RegisterError is why the driver refused to page-lock a buffer, if it
	// did.
	RegisterError string `json:"register_error,omitempty"`
	// UploadBytes and DownloadBytes crossed the bus.
	UploadBytes   int `json:"upload_bytes"`
	DownloadBytes int `json:"download_bytes"`
	// StageIn and StageOut are the host time spent copying into and out of
	// the staging buffers; in overlapped mode they overlap the transfers.
	StageIn  time.Duration   `json:"stage_in_ns"`
	StageOut time.Duration   `json:"stage_out_ns"`
	Timings  compute.Timings `json:"timings"`
}

// chunk is a range of pixels [lo, hi).
type chunk struct{ lo, hi int }

// plan cuts n pixels into the overlapped pipeline's chunks. Sizes double
// from first up to max and halve again towards the end: the first download
// can start after a small upload and the last one, which nothing overlaps,
// is small, while the middle chunks are big enough that the copy engines'
// cost per transfer (some microseconds) stays a small part of the time.
// Every chunk but the last starts and ends on a multiple of ChunkAlign.
// With max 0 the image is one chunk (sequential mode).
func plan(n, first, max int) []chunk {
	if max <= 0 || n <= first {
		return []chunk{{0, n}}
	}
	units := (n + ChunkAlign - 1) / ChunkAlign
	size, top := first/ChunkAlign, max/ChunkAlign
	var front, back []int // sizes in units, back in reverse order
	for left := units; left > 0; {
		if left <= 2*size {
			if left <= size {
				front = append(front, left)
			} else {
				half := (left + 1) / 2
				front = append(front, half)
				back = append(back, left-half)
			}
			break
		}
		front = append(front, size)
		back = append(back, size)
		left -= 2 * size
		size = min(2*size, top)
	}
	cs := make([]chunk, 0, len(front)+len(back))
	lo := 0
	add := func(u int) {
		hi := lo + u*ChunkAlign
		cs = append(cs, chunk{lo, min(hi, n)})
		lo = hi
	}
	for _, u := range front {
		add(u)
	}
	for i := len(back) - 1; i >= 0; i-- {
		add(back[i])
	}
	return cs
}

// grid is the number of blocks the kernel needs for cnt pixels.
func grid(cnt int, u16 bool) uint32 {
	vec, per := 4, shaders.CUDAPixelsPerThreadF32
	if u16 {
		vec, per = 8, shaders.CUDAPixelsPerThreadU16
	}
	whole := cnt - cnt%vec
	pixPerBlock := shaders.CUDABlock * per
	return uint32(max(1, (whole+pixPerBlock-1)/pixPerBlock))
}

// run sets up for j (device buffers, registration or staging), then
// computes it in the current mode.
func (s *state) run(j job) (compute.Timings, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()

	t0 := time.Now()
	s.didSetup = false
	if err := s.ensure(j.n); err != nil {
		return compute.Timings{}, fmt.Errorf("cuda: set up for %d pixels: %w", j.n, err)
	}
	var direct [3]bool
	d, regErr := s.pinHost(j.host[:])
	copy(direct[:], d)
	for i, d := range direct {
		if !d {
			if err := s.ensureStaging(i); err != nil {
				return compute.Timings{}, fmt.Errorf("cuda: staging buffers for %d pixels: %w", j.n, err)
			}
		}
	}
	top := 0
	if s.mode == ModeOverlapped {
		top = s.chunkPixels
		if j.u16 {
			top = max(ChunkAlign, top/4/ChunkAlign*ChunkAlign)
		}
	}
	chunks := plan(j.n, min(s.firstPixels, s.chunkPixels), top)
	if err := s.ensureEvents(len(chunks)); err != nil {
		return compute.Timings{}, fmt.Errorf("cuda: events: %w", err)
	}
	// Setup is reported only when something had to be set up.
	var setup time.Duration
	if s.didSetup || s.pending > 0 {
		setup = time.Since(t0) + s.pending
	}
	s.pending = 0

	st := RunStats{Mode: s.mode, HostMemory: s.host, Input: "float32", Pixels: j.n, Chunks: len(chunks),
		Streams: min(len(chunks), len(s.streams)), Direct: direct, RegisterError: regErr,
		UploadBytes: 2 * j.n * j.inSize, DownloadBytes: 4 * j.n}
	if j.u16 {
		st.Input = "uint16"
	}
	if err := s.execute(&j, chunks, direct, &st); err != nil {
		// Nothing may still be moving into the caller's memory.
		s.drv.Synchronize()
		return compute.Timings{Setup: setup}, fmt.Errorf("cuda: %d %s pixels, %s: %w", j.n, st.Input, s.mode, err)
	}
	st.Timings.Setup = setup
	s.last = st
	return st.Timings, nil
}

// execute runs the chunks: staging copies in (a goroutine running ahead),
// uploads, kernels and downloads queued on the streams in rotation, staging
// copies out (a goroutine following the downloads' events). One chunk is
// the sequential mode.
func (s *state) execute(j *job, chunks []chunk, direct [3]bool, st *RunStats) error {
	fn := s.fnF32
	if j.u16 {
		fn = s.fnU16
	}
	var flags int32
	if j.nd.HasRed {
		flags |= 1
	}
	if j.nd.HasNIR {
		flags |= 2
	}
	// dma[i] is the host memory the copy engines use for buffer i.
	var dma [3][]byte
	for i := range dma {
		dma[i] = j.host[i]
		if !direct[i] {
			dma[i] = unsafe.Slice((*byte)(s.stage[i]), len(j.host[i]))
		}
	}
	workers := copyWorkers()
	t0 := time.Now()

	stageIn := !direct[0] || !direct[1]
	var ready chan int
	var stop atomic.Bool
	var inWG sync.WaitGroup
	if stageIn {
		ready = make(chan int, len(chunks))
		inWG.Go(func() {
			defer close(ready)
			t := time.Now()
			for i, c := range chunks {
				if stop.Load() {
					break
				}
				lo, hi := c.lo*j.inSize, c.hi*j.inSize
				for b := range 2 {
					if !direct[b] {
						parallelCopy(dma[b][lo:hi], j.host[b][lo:hi], workers)
					}
				}
				ready <- i
			}
			st.StageIn = time.Since(t)
		})
	}

	stageOut := !direct[2]
	var outQ chan int
	outErr := make(chan error, 1)
	if stageOut {
		outQ = make(chan int, len(chunks))
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			err := s.ctx.SetCurrent()
			var busy time.Duration
			for i := range outQ {
				if err != nil {
					continue
				}
				if err = s.drv.EventSynchronize(s.events[i][3]); err != nil {
					continue
				}
				t := time.Now()
				lo, hi := chunks[i].lo*4, chunks[i].hi*4
				parallelCopy(j.host[2][lo:hi], dma[2][lo:hi], workers)
				busy += time.Since(t)
			}
			st.StageOut = busy
			outErr <- err
		}()
	}

	err := func() error {
		// Chunk i's download is queued after the upload of chunk
		// i+lookahead, so that the copy engines see the next upload first.
		down := 0
		queueDown := func(k int) error {
			if err := s.enqueueDown(&dma, k, chunks[k]); err != nil {
				return fmt.Errorf("chunk %d of %d: %w", k+1, len(chunks), err)
			}
			if stageOut {
				outQ <- k
			}
			return nil
		}
		for i, c := range chunks {
			if stageIn {
				if _, ok := <-ready; !ok {
					return errors.New("staging copy stopped")
				}
			}
			if err := s.enqueueUp(j, fn, flags, &dma, i, c); err != nil {
				return fmt.Errorf("chunk %d of %d: %w", i+1, len(chunks), err)
			}
			for ; down <= i-s.lookahead; down++ {
				if err := queueDown(down); err != nil {
					return err
				}
			}
		}
		for ; down < len(chunks); down++ {
			if err := queueDown(down); err != nil {
				return err
			}
		}
		return nil
	}()
	if err != nil {
		stop.Store(true)
	}
	if stageIn {
		for range ready {
		}
		inWG.Wait()
	}
	if stageOut {
		close(outQ)
		if e := <-outErr; e != nil && err == nil {
			err = fmt.Errorf("staging copy out: %w", e)
		}
	}
	if err != nil {
		return err
	}
	for i := range chunks {
		if err := s.drv.EventSynchronize(s.events[i][3]); err != nil {
			return fmt.Errorf("chunk %d of %d: %w", i+1, len(chunks), err)
		}
	}
	st.Timings.Total = time.Since(t0)
	return s.phases(len(chunks), &st.Timings)
}

// enqueueUp queues chunk i's upload of both bands and its kernel on the
// chunk's stream, with events before, between and after.
func (s *state) enqueueUp(j *job, fn cuda.Function, flags int32, dma *[3][]byte, i int, c chunk) error {
	stream := s.streams[i%len(s.streams)]
	ev := s.events[i]
	cnt := c.hi - c.lo
	inLo, inBytes, outLo := c.lo*j.inSize, cnt*j.inSize, c.lo*4
	d := s.drv
	if err := d.EventRecord(ev[0], stream); err != nil {
		return err
	}
	for b := range 2 {
		if err := d.MemcpyHtoDAsync(s.dIn[b].Add(inLo), unsafe.Pointer(&dma[b][inLo]), inBytes, stream); err != nil {
			return err
		}
	}
	if err := d.EventRecord(ev[1], stream); err != nil {
		return err
	}
	if err := d.Launch(fn, cuda.Dim3{X: grid(cnt, j.u16), Y: 1, Z: 1}, cuda.Dim3{X: shaders.CUDABlock, Y: 1, Z: 1}, 0, stream,
		s.dIn[0].Add(inLo), s.dIn[1].Add(inLo), s.dOut.Add(outLo), uint64(cnt), j.nd.Red, j.nd.NIR, flags); err != nil {
		return err
	}
	return d.EventRecord(ev[2], stream)
}

// enqueueDown queues chunk i's download and the event after it.
func (s *state) enqueueDown(dma *[3][]byte, i int, c chunk) error {
	stream := s.streams[i%len(s.streams)]
	outLo := c.lo * 4
	if err := s.drv.MemcpyDtoHAsync(unsafe.Pointer(&dma[2][outLo]), s.dOut.Add(outLo), (c.hi-c.lo)*4, stream); err != nil {
		return err
	}
	return s.drv.EventRecord(s.events[i][3], stream)
}

// phases reads the event times of k chunks: upload and download are the
// spans from the first chunk's start to the latest end, kernel the sum of
// the chunks' kernels. With one chunk they are three consecutive intervals.
func (s *state) phases(k int, t *compute.Timings) error {
	first := s.events[0]
	for i := range k {
		ev := s.events[i]
		up, err := s.drv.EventElapsed(first[0], ev[1])
		if err != nil {
			return err
		}
		kern, err := s.drv.EventElapsed(ev[1], ev[2])
		if err != nil {
			return err
		}
		down, err := s.drv.EventElapsed(first[2], ev[3])
		if err != nil {
			return err
		}
		t.Upload = max(t.Upload, up)
		t.Kernel += kern
		t.Download = max(t.Download, down)
	}
	return nil
}
