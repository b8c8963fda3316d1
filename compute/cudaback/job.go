package cudaback

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"time"
	"unsafe"

	"canopy/compute"
	"canopy/native/cuda"
)

// JobStats describes how the last index job went through the machine.
type JobStats struct {
	Mode       string `json:"mode"`
	HostMemory string `json:"host_memory"`
	Pixels     int    `json:"pixels"`
	Bands      int    `json:"bands"`
	Indices    int    `json:"indices"`
	Mask       bool   `json:"mask"`
	// Target is the PTX version and architecture the kernel was generated
	// for ("PTX 7.8 for sm_90").
	Target string `json:"target"`
	// JIT says whether this run generated and compiled its kernel (false:
	// it came from the cache). Compile is the host time of the driver's
	// JIT (cuModuleLoadDataEx) and JITWall the compiler's own, both of
	// the run that compiled the kernel; Registers is what ptxas reported
	// per thread (0 if it did not say).
	JIT       bool          `json:"jit"`
	Generate  time.Duration `json:"generate_ns"`
	Compile   time.Duration `json:"compile_ns"`
	JITWall   time.Duration `json:"jit_wall_ns"`
	Registers int           `json:"registers"`
	PTXBytes  int           `json:"ptx_bytes"`
	// Grid is the largest launch's blocks of KernelBlock threads.
	Grid    int `json:"grid"`
	Chunks  int `json:"chunks"`
	Streams int `json:"streams"`
	// Direct says, for each band, the mask (if any) and each output, in
	// that order, whether the GPU reached the caller's slice in place.
	Direct        []bool `json:"direct"`
	RegisterError string `json:"register_error,omitempty"`
	UploadBytes   int    `json:"upload_bytes"`
	DownloadBytes int    `json:"download_bytes"`
	// StageIn and StageOut are host time spent copying through the
	// staging buffers.
	StageIn  time.Duration   `json:"stage_in_ns"`
	StageOut time.Duration   `json:"stage_out_ns"`
	Timings  compute.Timings `json:"timings"`
}

// LastJob describes how the last successful RunJob went.
func (b *Backend) LastJob() JobStats {
	b.s.mu.Lock()
	defer b.s.mu.Unlock()
	return b.s.lastJob
}

// RunJob implements compute.Backend: it runs any index job on the GPU in
// one kernel launch per chunk that computes every index of the job. The
// kernel is generated from the job's program as PTX and compiled by the
// driver on first use, then cached per program, band types, nodata and
// radiometry presence, and mask (the values themselves are kernel
// parameters); a run that compiles reports the time as Setup. Bands are
// uploaded as stored (integer bands as integers) and converted on the GPU.
// The job's Mode is "sequential" or "overlapped" ("" for the backend's
// mode): overlapped cuts the image into chunks pipelined over the streams
// as Run does, so that uploads, kernels and downloads of different chunks
// run at once.
func (b *Backend) RunJob(j *compute.Job) (compute.Timings, error) {
	if err := j.Check(); err != nil {
		return compute.Timings{}, err
	}
	return b.s.runJob(j)
}

// jobBufs are a job's host buffers in kernel order: bands, the mask, then
// the outputs; elem is each one's bytes per pixel and up how many of them
// (bands and mask) go to the device.
type jobBufs struct {
	host [][]byte
	elem []int
	up   int
}

func bufsOf(j *compute.Job) jobBufs {
	var jb jobBufs
	for _, b := range j.Bands {
		jb.host = append(jb.host, b.Plane.Data)
		jb.elem = append(jb.elem, b.Plane.Type.Size())
	}
	if j.Mask != nil {
		jb.host = append(jb.host, j.Mask)
		jb.elem = append(jb.elem, 1)
	}
	jb.up = len(jb.host)
	for _, o := range j.Out {
		jb.host = append(jb.host, bytesOf(o))
		jb.elem = append(jb.elem, 4)
	}
	return jb
}

// bytesPerPixel is what one pixel moves over the bus, up and down.
func (jb *jobBufs) bytesPerPixel() (up, down int) {
	for i, e := range jb.elem {
		if i < jb.up {
			up += e
		} else {
			down += e
		}
	}
	return up, down
}

// jobChunkTop is the overlapped mode's largest chunk, in pixels, for a
// job moving up and down bytes a pixel each way: jobChunkBytes bytes (both
// ways) when set (benchmarks), else as many bytes as DefaultChunkPixels of
// NDVI over float32 bands move (12 a pixel: 192 MiB by default) when one
// direction carries at least 1.5 times the other, and a third of that (64
// MiB) when the two are balanced, so that both copy engines stay busy
// together (BenchmarkJobChunks; docs/BENCHMARKS.md has the H200's sweep).
func (s *state) jobChunkTop(up, down int) int {
	bytes := s.chunkPixels * 12
	if 2*up < 3*down && 2*down < 3*up {
		bytes /= 3
	}
	if s.jobChunkBytes > 0 {
		bytes = s.jobChunkBytes
	}
	top := bytes / max(1, up+down)
	return max(ChunkAlign, top/ChunkAlign*ChunkAlign)
}

func (s *state) runJob(j *compute.Job) (compute.Timings, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()

	mode := j.Mode
	if mode == "" {
		mode = s.mode
	}
	if mode != ModeOverlapped && mode != ModeSequential {
		return compute.Timings{}, fmt.Errorf("unknown mode %q (known: %s, %s)", mode, ModeOverlapped, ModeSequential)
	}
	t0 := time.Now()
	s.didSetup = !s.live
	if err := s.open(); err != nil {
		return compute.Timings{}, fmt.Errorf("set up: %w", err)
	}
	if err := s.ctx.SetCurrent(); err != nil {
		return compute.Timings{}, fmt.Errorf("set up: %w", err)
	}
	tgt, err := s.target()
	if err != nil {
		return compute.Timings{}, err
	}
	tg := time.Now()
	spec, err := generate(j.Program, shapeOf(j), tgt)
	if err != nil {
		return compute.Timings{}, err
	}
	gen := time.Since(tg)
	k, jitted, err := s.kernel(spec)
	if err != nil {
		return compute.Timings{}, err
	}
	if jitted {
		s.didSetup = true
	}
	n := j.Pixels()
	jb := bufsOf(j)
	if err := s.ensureJobDev(n, jb.elem); err != nil {
		return compute.Timings{}, fmt.Errorf("device buffers for %d pixels: %w", n, err)
	}
	direct, regErr := s.pinHost(jb.host)
	dma, err := s.jobStaging(jb, direct)
	if err != nil {
		return compute.Timings{}, fmt.Errorf("staging buffers for %d pixels: %w", n, err)
	}
	top := 0
	if mode == ModeOverlapped {
		top = s.jobChunkTop(jb.bytesPerPixel())
	}
	chunks := plan(n, min(s.firstPixels, max(top, ChunkAlign)), top)
	if err := s.ensureEvents(len(chunks)); err != nil {
		return compute.Timings{}, fmt.Errorf("events: %w", err)
	}
	var setup time.Duration
	if s.didSetup || s.pending > 0 {
		setup = time.Since(t0) + s.pending
	}
	s.pending = 0

	st := JobStats{Mode: mode, HostMemory: s.host, Pixels: n, Bands: len(j.Bands), Indices: len(j.Out), Mask: j.Mask != nil,
		Target: tgt.String(), JIT: jitted, Generate: gen, Compile: k.compile, JITWall: k.wall, Registers: k.registers,
		PTXBytes: len(spec.PTX), Chunks: len(chunks), Streams: min(len(chunks), len(s.streams)),
		Direct: direct, RegisterError: regErr}
	for i, e := range jb.elem {
		if i < jb.up {
			st.UploadBytes += n * e
		} else {
			st.DownloadBytes += n * e
		}
	}
	if err := s.executeJob(j, k, &jb, chunks, direct, dma, &st); err != nil {
		s.drv.Synchronize()
		return compute.Timings{Setup: setup}, fmt.Errorf("%d pixels, %d indices, %s: %w", n, len(j.Out), mode, err)
	}
	st.Timings.Setup = setup
	s.lastJob = st
	return st.Timings, nil
}

// ensureJobDev sizes the job's device buffers: one per band, mask and
// output, n*elem[i] bytes each (context current, s.mu held). Buffers of
// the last job whose sizes are needed again are kept, whatever their
// order (switching between indices of one image allocates nothing); the
// others are freed.
func (s *state) ensureJobDev(n int, elem []int) error {
	sizes := make([]int, len(elem))
	for i, e := range elem {
		sizes[i] = n * e
	}
	if slices.Equal(sizes, s.jobSizes) {
		return nil
	}
	dev := make([]cuda.DevicePtr, len(sizes))
	used := make([]bool, len(s.jobDev))
	for i, sz := range sizes {
		for k, p := range s.jobDev {
			if !used[k] && s.jobSizes[k] == sz {
				used[k], dev[i] = true, p
				break
			}
		}
	}
	for k, p := range s.jobDev {
		if !used[k] {
			s.drv.MemFree(p)
		}
	}
	s.jobDev, s.jobSizes = nil, nil
	for i, sz := range sizes {
		if dev[i] != 0 {
			continue
		}
		s.didSetup = true
		p, err := s.drv.MemAlloc(sz)
		if err != nil {
			for _, q := range dev {
				if q != 0 {
					s.drv.MemFree(q)
				}
			}
			return err
		}
		dev[i] = p
	}
	s.jobDev, s.jobSizes = dev, sizes
	return nil
}

// freeJobDev frees the job's device buffers (context current).
func (s *state) freeJobDev() {
	for _, p := range s.jobDev {
		s.drv.MemFree(p)
	}
	s.jobDev, s.jobSizes = nil, nil
}

// jobStaging returns the host memory the copy engines use for each
// buffer: the caller's own where direct, else a part of one page-locked
// staging area, allocated once and grown as needed.
func (s *state) jobStaging(jb jobBufs, direct []bool) ([][]byte, error) {
	const align = 256
	need := 0
	for i, h := range jb.host {
		if !direct[i] {
			need += (len(h) + align - 1) &^ (align - 1)
		}
	}
	if need > s.jobStageBytes {
		s.didSetup = true
		s.freeJobStaging()
		p, err := s.drv.HostAlloc(need, 0)
		if err != nil {
			return nil, err
		}
		s.jobStage, s.jobStageBytes = p, need
	}
	dma := make([][]byte, len(jb.host))
	off := 0
	for i, h := range jb.host {
		if direct[i] {
			dma[i] = h
			continue
		}
		dma[i] = unsafe.Slice((*byte)(unsafe.Add(s.jobStage, off)), len(h))
		off += (len(h) + align - 1) &^ (align - 1)
	}
	return dma, nil
}

// freeJobStaging frees the job's staging area (context current).
func (s *state) freeJobStaging() {
	if s.jobStage != nil {
		s.drv.FreeHost(s.jobStage)
		s.jobStage, s.jobStageBytes = nil, 0
	}
}

// jobGrid is the number of blocks for cnt pixels: one thread per whole
// vector of four pixels, at least one block (the tail), at most gridCap
// when set (the grid-stride loop covers the rest).
func (s *state) jobGrid(cnt int) int {
	g := max(1, (cnt/kernelLanes+KernelBlock-1)/KernelBlock)
	if s.gridCap > 0 {
		g = min(g, s.gridCap)
	}
	return min(g, 1<<31-1)
}

// jobArgs are the kernel's parameters for chunk c of the job's device
// buffers (s.jobDev).
func (s *state) jobArgs(j *compute.Job, spec *kernelSpec, jb *jobBufs, c chunk) []any {
	return jobArgsOn(s.jobDev, j, spec, jb, c)
}

// jobArgsOn are the kernel's parameters for chunk c of the job whose
// bands, mask and outputs are in dev, in jb's order.
func jobArgsOn(dev []cuda.DevicePtr, j *compute.Job, spec *kernelSpec, jb *jobBufs, c chunk) []any {
	args := make([]any, 0, len(spec.Params))
	for _, p := range spec.Params {
		switch p.Kind {
		case parN:
			args = append(args, uint64(c.hi-c.lo))
		case parBand:
			args = append(args, dev[p.Index].Add(c.lo*jb.elem[p.Index]))
		case parNoData:
			_, v := nodataValue(j.Bands[p.Index])
			args = append(args, v)
		case parAdd:
			args = append(args, float32(j.Bands[p.Index].Radiometry.Add))
		case parScale:
			args = append(args, float32(j.Bands[p.Index].Radiometry.Scale))
		case parOffset:
			args = append(args, float32(j.Bands[p.Index].Radiometry.Offset))
		case parMask:
			args = append(args, dev[len(j.Bands)].Add(c.lo))
		case parOut:
			args = append(args, dev[jb.up+p.Index].Add(c.lo*4))
		}
	}
	return args
}

// executeJob runs the chunks: for each, the staging copies in (on the
// host, while the copy engines move the previous chunk), the uploads of
// every band and the mask, the kernel and, one chunk later, the downloads
// of every output, queued on the streams in rotation; a goroutine copies
// staged outputs out as their downloads finish. One chunk is the
// sequential mode.
func (s *state) executeJob(j *compute.Job, k *jitKernel, jb *jobBufs, chunks []chunk, direct []bool, dma [][]byte, st *JobStats) error {
	workers := copyWorkers()
	t0 := time.Now()
	d := s.drv

	stageOut := false
	for i := jb.up; i < len(jb.host); i++ {
		stageOut = stageOut || !direct[i]
	}
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
				if err = d.EventSynchronize(s.events[i][3]); err != nil {
					continue
				}
				t := time.Now()
				c := chunks[i]
				for b := jb.up; b < len(jb.host); b++ {
					if !direct[b] {
						e := jb.elem[b]
						parallelCopy(jb.host[b][c.lo*e:c.hi*e], dma[b][c.lo*e:c.hi*e], workers)
					}
				}
				busy += time.Since(t)
			}
			st.StageOut = busy
			outErr <- err
		}()
	}

	up := func(i int, c chunk) error {
		stream, ev := s.streams[i%len(s.streams)], s.events[i]
		t := time.Now()
		for b := range jb.up {
			if !direct[b] {
				e := jb.elem[b]
				parallelCopy(dma[b][c.lo*e:c.hi*e], jb.host[b][c.lo*e:c.hi*e], workers)
			}
		}
		st.StageIn += time.Since(t)
		if err := d.EventRecord(ev[0], stream); err != nil {
			return err
		}
		for b := range jb.up {
			e := jb.elem[b]
			if err := d.MemcpyHtoDAsync(s.jobDev[b].Add(c.lo*e), unsafe.Pointer(&dma[b][c.lo*e]), (c.hi-c.lo)*e, stream); err != nil {
				return err
			}
		}
		if err := d.EventRecord(ev[1], stream); err != nil {
			return err
		}
		g := s.jobGrid(c.hi - c.lo)
		st.Grid = max(st.Grid, g)
		if err := d.Launch(k.fn, cuda.Dim3{X: uint32(g), Y: 1, Z: 1}, cuda.Dim3{X: KernelBlock, Y: 1, Z: 1}, 0, stream,
			s.jobArgs(j, k.spec, jb, c)...); err != nil {
			return err
		}
		return d.EventRecord(ev[2], stream)
	}
	down := func(i int, c chunk) error {
		stream := s.streams[i%len(s.streams)]
		for b := jb.up; b < len(jb.host); b++ {
			if err := d.MemcpyDtoHAsync(unsafe.Pointer(&dma[b][c.lo*4]), s.jobDev[b].Add(c.lo*4), (c.hi-c.lo)*4, stream); err != nil {
				return err
			}
		}
		if err := d.EventRecord(s.events[i][3], stream); err != nil {
			return err
		}
		if stageOut {
			outQ <- i
		}
		return nil
	}
	err := func() error {
		next := 0 // the next chunk to download
		for i, c := range chunks {
			if err := up(i, c); err != nil {
				return fmt.Errorf("chunk %d of %d: %w", i+1, len(chunks), err)
			}
			for ; next <= i-s.lookahead; next++ {
				if err := down(next, chunks[next]); err != nil {
					return fmt.Errorf("chunk %d of %d: %w", next+1, len(chunks), err)
				}
			}
		}
		for ; next < len(chunks); next++ {
			if err := down(next, chunks[next]); err != nil {
				return fmt.Errorf("chunk %d of %d: %w", next+1, len(chunks), err)
			}
		}
		return nil
	}()
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
		if err := d.EventSynchronize(s.events[i][3]); err != nil {
			return fmt.Errorf("chunk %d of %d: %w", i+1, len(chunks), err)
		}
	}
	st.Timings.Total = time.Since(t0)
	if err := s.phases(len(chunks), &st.Timings); err != nil {
		return errors.Join(errors.New("reading the timing events"), err)
	}
	return nil
}

var _ compute.Backend = (*Backend)(nil)
