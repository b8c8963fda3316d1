package cudaback

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"
	"unsafe"

	"canopy/compute"
	"canopy/native/cuda"
	"canopy/shaders"
)

func init() {
	compute.Register(compute.NameCUDA, func() compute.Backend { return New() })
}

// Transfer modes (compute.Moder).
const (
	// ModeOverlapped pipelines chunks of the image over several streams so
	// that uploads, kernels and downloads of different chunks run at once.
	ModeOverlapped = "overlapped"
	// ModeSequential uploads both bands, runs the kernel and downloads the
	// result, one after the other (the textbook way, from pinned memory).
	ModeSequential = "sequential"
)

// Host memory strategies (SetHostMemory).
const (
	// HostRegister page-locks the caller's slices in place
	// (cuMemHostRegister) so that the GPU reads and writes them directly.
	HostRegister = "register"
	// HostStaging copies through page-locked staging buffers
	// (cuMemHostAlloc) on all cores.
	HostStaging = "staging"
)

// Pipeline defaults and limits.
const (
	// DefaultChunkPixels is the overlapped mode's largest chunk for
	// float32 bands: 16 Mi pixels, 128 MiB up and 64 MiB down, about 2.3
	// ms on PCIe 5. uint16 bands use a quarter of it: their upload and
	// download are the same size, and smaller chunks keep the two copy
	// directions in step (BenchmarkChunks measured both on an H200).
	DefaultChunkPixels = 16 << 20
	// DefaultStreams is the number of streams the chunks rotate over.
	DefaultStreams = 8
	// FirstChunkPixels is the first (and last) chunk, from which sizes
	// double up to the largest: 1 Mi pixels, 8 MiB up in float32.
	FirstChunkPixels = 1 << 20
	// Lookahead is how many chunks' uploads are queued before a chunk's
	// download (0: upload, kernel and download of one chunk, then the
	// next).
	Lookahead = 1
	// ChunkAlign is the granularity of chunks, in pixels: it keeps every
	// chunk's device pointers 16-byte aligned for the vector loads.
	ChunkAlign = 1024
	// RegisterMin is the smallest buffer, in bytes, that HostRegister mode
	// page-locks in place; smaller ones are staged, which costs less.
	RegisterMin = 4 << 20
)

// Backend is the cuda backend. Like every compute.Backend it is not safe
// for concurrent use. Resources are released by Close, or when the Backend
// is garbage collected.
type Backend struct {
	s *state
}

// New returns the cuda backend in overlapped mode with host memory
// "register". It touches no driver until Info, Setup or Run.
func New() *Backend { return newBackend(nil) }

// newBackend loads the driver from libs (nil: the system's).
func newBackend(libs []string) *Backend {
	s := &state{libs: libs, mode: ModeOverlapped, host: HostRegister,
		chunkPixels: DefaultChunkPixels, nstreams: DefaultStreams,
		firstPixels: FirstChunkPixels, lookahead: Lookahead}
	b := &Backend{s: s}
	// The state holds the context, device memory and the pins on the
	// caller's buffers; release them if the Backend is dropped unclosed.
	runtime.AddCleanup(b, func(s *state) { s.close() }, s)
	return b
}

// state is everything the Backend owns; it must not point back at the
// Backend (see the cleanup in newBackend).
type state struct {
	mu   sync.Mutex
	libs []string

	mode, host  string
	chunkPixels int
	nstreams    int
	// firstPixels is the ramp's first chunk (FirstChunkPixels); lookahead
	// how many uploads are queued before a chunk's download (Lookahead).
	// Benchmarks tune them.
	firstPixels int
	lookahead   int

	infoDone bool
	info     compute.Info
	dev      Device
	openErr  error
	// pending is set-up time spent outside Setup (in Info), reported by
	// the next Setup or Run so that no one-time cost goes unreported.
	pending time.Duration

	live    bool
	drv     *cuda.Driver
	ctx     *cuda.Context
	mod     *cuda.Module
	fnF32   cuda.Function
	fnU16   cuda.Function
	streams []cuda.Stream
	events  [][4]cuda.Event

	// didSetup is set by every step that allocates, registers or
	// creates something, so that Run reports Setup only then.
	didSetup bool

	n     int // pixels the device buffers hold
	dIn   [2]cuda.DevicePtr
	dOut  cuda.DevicePtr
	stage [3]unsafe.Pointer // pinned staging for red, nir, out: 4n bytes each

	pins []*pinnedRange
	// kept are the ranges closed job streams page-locked, kept for the
	// next stream (the block pipeline reuses its blocks from run to run),
	// oldest first, up to keptMax bytes.
	kept []*pinnedRange
	last RunStats

	// Index jobs (RunJob): the generated kernels, the run counter their
	// eviction goes by, the device buffers of the last job's shape (bands,
	// mask, outputs), its staging area, and how the last job went.
	kernels       map[string]*jitKernel
	runs          uint64
	jobDev        []cuda.DevicePtr
	jobSizes      []int
	jobStage      unsafe.Pointer
	jobStageBytes int
	lastJob       JobStats
	// gridCap caps a job kernel's grid (0: one thread per vector), and
	// jobChunkBytes sets the bytes of a job's largest overlapped chunk (0:
	// jobChunkTop's rule); benchmarks tune them.
	gridCap       int
	jobChunkBytes int
	// generation counts releases of the context, so that a resident
	// session opened before one knows its device memory is gone.
	generation int
}

// Name implements compute.Backend.
func (*Backend) Name() string { return compute.NameCUDA }

// Info implements compute.Backend: the device (name, compute capability,
// memory, driver) or why CUDA cannot run here. The first call opens the
// driver, the context and the kernel module, and caches the answer.
func (b *Backend) Info() compute.Info {
	s := b.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.infoDone {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		t0 := time.Now()
		s.open()
		s.pending += time.Since(t0)
	}
	return s.info
}

// Device opens the GPU if needed and describes it.
func (b *Backend) Device() (Device, error) {
	info := b.Info()
	if !info.Available {
		return Device{}, fmt.Errorf("cuda: %s", info.Reason)
	}
	return b.s.dev, nil
}

// Modes implements compute.Moder.
func (*Backend) Modes() []string { return []string{ModeOverlapped, ModeSequential} }

// Mode implements compute.Moder.
func (b *Backend) Mode() string { return b.s.mode }

// SetMode implements compute.Moder.
func (b *Backend) SetMode(m string) error {
	if !slices.Contains(b.Modes(), m) {
		return fmt.Errorf("cuda: unknown mode %q (known: %s, %s)", m, ModeOverlapped, ModeSequential)
	}
	b.s.mu.Lock()
	b.s.mode = m
	b.s.mu.Unlock()
	return nil
}

// HostMemory is the host memory strategy, HostRegister or HostStaging.
func (b *Backend) HostMemory() string { return b.s.host }

// SetHostMemory chooses how the GPU reaches the caller's slices:
// HostRegister (page-lock them in place, the default) or HostStaging (copy
// through pinned buffers). Switching to staging releases any registration.
func (b *Backend) SetHostMemory(h string) error {
	if h != HostRegister && h != HostStaging {
		return fmt.Errorf("cuda: unknown host memory strategy %q (known: %s, %s)", h, HostRegister, HostStaging)
	}
	b.s.mu.Lock()
	b.s.host = h
	b.s.mu.Unlock()
	return nil
}

// SetPipeline sets the overlapped mode's largest chunk for float32 bands in
// pixels (rounded up to ChunkAlign; uint16 bands use a quarter) and the
// number of streams the chunks rotate over (2 to 16).
func (b *Backend) SetPipeline(chunkPixels, streams int) error {
	if chunkPixels < ChunkAlign || streams < 2 || streams > 16 {
		return fmt.Errorf("cuda: pipeline of %d-pixel chunks over %d streams: chunks need at least %d pixels and streams 2 to 16", chunkPixels, streams, ChunkAlign)
	}
	s := b.s
	s.mu.Lock()
	defer s.mu.Unlock()
	s.chunkPixels = (chunkPixels + ChunkAlign - 1) / ChunkAlign * ChunkAlign
	if streams != s.nstreams && s.live {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := s.ctx.SetCurrent(); err != nil {
			return fmt.Errorf("cuda: %w", err)
		}
		if err := s.drv.Synchronize(); err != nil {
			return fmt.Errorf("cuda: %w", err)
		}
		if err := s.makeStreams(streams); err != nil {
			return fmt.Errorf("cuda: %w", err)
		}
	}
	s.nstreams = streams
	return nil
}

// Pipeline returns the chunk size in pixels and the number of streams.
func (b *Backend) Pipeline() (chunkPixels, streams int) { return b.s.chunkPixels, b.s.nstreams }

// LastRun describes how the last successful run went.
func (b *Backend) LastRun() RunStats {
	b.s.mu.Lock()
	defer b.s.mu.Unlock()
	return b.s.last
}

// Setup implements compute.Backend: it opens the device if needed and
// allocates the device buffers for w×h pixels. Staging buffers and the
// registration of the caller's slices wait for Run, which knows them.
func (b *Backend) Setup(w, h int) (time.Duration, error) {
	if w <= 0 || h <= 0 {
		return 0, fmt.Errorf("cuda: image size %dx%d: both sides must be positive", w, h)
	}
	s := b.s
	s.mu.Lock()
	defer s.mu.Unlock()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	t0 := time.Now()
	err := s.ensure(w * h)
	d := time.Since(t0) + s.pending
	s.pending = 0
	if err != nil {
		return d, fmt.Errorf("cuda: set up for %dx%d: %w", w, h, err)
	}
	return d, nil
}

// Close implements compute.Backend: it frees the device and staging
// buffers, unregisters the caller's buffers, and releases the context. The
// backend may be used again.
func (b *Backend) Close() error {
	return b.s.close()
}

// Run implements compute.Backend.
func (b *Backend) Run(in compute.Input, out []float32) (compute.Timings, error) {
	if err := in.Check(); err != nil {
		return compute.Timings{}, fmt.Errorf("cuda: %w", err)
	}
	if len(out) != in.Pixels() {
		return compute.Timings{}, fmt.Errorf("cuda: output holds %d pixels, image %dx%d has %d", len(out), in.Width, in.Height, in.Pixels())
	}
	return b.s.run(job{
		n: in.Pixels(), inSize: 4, u16: false, nd: in.Nodata,
		host: [3][]byte{bytesOf(in.Red), bytesOf(in.NIR), bytesOf(out)},
	})
}

// RunUint16 computes the NDVI of uint16 bands (sensor counts, w×h pixels,
// row-major) into out. The bands are uploaded as uint16, half the bytes of
// float32, and converted on the GPU; nodata values are compared after the
// exact conversion to float32, so the result equals Run on the converted
// bands.
func (b *Backend) RunUint16(red, nir []uint16, w, h int, nd compute.Nodata, out []float32) (compute.Timings, error) {
	if w <= 0 || h <= 0 {
		return compute.Timings{}, fmt.Errorf("cuda: image size %dx%d: both sides must be positive", w, h)
	}
	n := w * h
	if len(red) != n || len(nir) != n || len(out) != n {
		return compute.Timings{}, fmt.Errorf("cuda: image %dx%d needs %d pixels per band and output, got red %d, nir %d, output %d", w, h, n, len(red), len(nir), len(out))
	}
	return b.s.run(job{
		n: n, inSize: 2, u16: true, nd: nd,
		host: [3][]byte{bytesOf16(red), bytesOf16(nir), bytesOf(out)},
	})
}

func bytesOf(p []float32) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(p))), 4*len(p))
}

func bytesOf16(p []uint16) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(p))), 2*len(p))
}

// open loads the driver, describes device 0, makes its primary context
// current, loads the kernels and creates the streams. It fills s.info; the
// calling goroutine must be locked to its thread.
func (s *state) open() error {
	if s.live {
		return nil
	}
	if s.infoDone && s.openErr != nil {
		return s.openErr
	}
	err := s.openDevice()
	if !s.infoDone {
		s.infoDone = true
		s.info = compute.Info{Name: compute.NameCUDA, GPU: true, Available: err == nil}
		if err != nil {
			var dev *Device
			if s.dev.Name != "" {
				dev = &s.dev
			}
			s.info.Reason = reason(err, dev)
			s.openErr = err
		} else {
			s.info.Device = s.dev.String()
		}
	}
	return err
}

func (s *state) openDevice() (err error) {
	d, err := openDriver(s.libs)
	if err != nil {
		return err
	}
	s.drv = d
	dev := Device{Library: d.Library(), DriverRelease: driverRelease()}
	if dev.Driver, err = d.Version(); err != nil {
		return err
	}
	count, err := d.DeviceCount()
	if err != nil {
		return err
	}
	if count == 0 {
		return &cuda.Error{Func: "cuDeviceGetCount", Code: cuda.ErrNoDevice}
	}
	cd, err := d.Device(0)
	if err != nil {
		return err
	}
	if dev.Name, err = cd.Name(); err != nil {
		return err
	}
	for _, a := range []struct {
		attr cuda.Attribute
		dst  *int
	}{
		{cuda.AttrComputeCapabilityMajor, &dev.Major},
		{cuda.AttrComputeCapabilityMinor, &dev.Minor},
		{cuda.AttrMultiprocessorCount, &dev.SMs},
		{cuda.AttrAsyncEngineCount, &dev.CopyEngines},
	} {
		if *a.dst, err = cd.Attribute(a.attr); err != nil {
			return err
		}
	}
	if dev.Memory, err = cd.TotalMem(); err != nil {
		return err
	}
	s.dev = dev

	img, what, err := kernelImage()
	if err != nil {
		return err
	}
	s.dev.Kernel = what
	ctx, err := cd.RetainPrimaryContext()
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			s.release()
		}
	}()
	s.ctx = ctx
	if err = ctx.SetCurrent(); err != nil {
		return err
	}
	if s.mod, err = d.LoadModule(img); err != nil {
		return err
	}
	if s.fnF32, err = s.mod.Function(shaders.CUDAKernelF32); err != nil {
		return err
	}
	if s.fnU16, err = s.mod.Function(shaders.CUDAKernelU16); err != nil {
		return err
	}
	if err = s.makeStreams(s.nstreams); err != nil {
		return err
	}
	s.live = true
	return nil
}

// makeStreams replaces the streams with k new ones (context current).
func (s *state) makeStreams(k int) error {
	for _, st := range s.streams {
		s.drv.StreamDestroy(st)
	}
	s.streams = s.streams[:0]
	for range k {
		st, err := s.drv.StreamCreate(cuda.StreamNonBlocking)
		if err != nil {
			return err
		}
		s.streams = append(s.streams, st)
	}
	return nil
}

// ensure opens the device and sizes the device buffers for n pixels (the
// context is made current). Thread locked, s.mu held.
func (s *state) ensure(n int) error {
	if !s.live {
		s.didSetup = true
	}
	if err := s.open(); err != nil {
		return err
	}
	if err := s.ctx.SetCurrent(); err != nil {
		return err
	}
	if n == s.n {
		return nil
	}
	s.didSetup = true
	s.freeBuffers()
	for i := range s.dIn {
		p, err := s.drv.MemAlloc(4 * n)
		if err != nil {
			s.freeBuffers()
			return err
		}
		s.dIn[i] = p
	}
	p, err := s.drv.MemAlloc(4 * n)
	if err != nil {
		s.freeBuffers()
		return err
	}
	s.dOut = p
	s.n = n
	return nil
}

// ensureEvents makes sure there are k sets of four timing events.
func (s *state) ensureEvents(k int) error {
	for len(s.events) < k {
		s.didSetup = true
		var set [4]cuda.Event
		for i := range set {
			e, err := s.drv.EventCreate(cuda.EventDefault)
			if err != nil {
				for _, c := range set[:i] {
					s.drv.EventDestroy(c)
				}
				return err
			}
			set[i] = e
		}
		s.events = append(s.events, set)
	}
	return nil
}

// ensureStaging allocates the pinned staging buffer i (0 red, 1 nir, 2
// out) for s.n pixels of float32.
func (s *state) ensureStaging(i int) error {
	if s.stage[i] != nil {
		return nil
	}
	s.didSetup = true
	p, err := s.drv.HostAlloc(4*s.n, 0)
	if err != nil {
		return err
	}
	s.stage[i] = p
	return nil
}

// freeBuffers frees device and staging buffers (context current).
func (s *state) freeBuffers() {
	for i, p := range s.dIn {
		if p != 0 {
			s.drv.MemFree(p)
			s.dIn[i] = 0
		}
	}
	if s.dOut != 0 {
		s.drv.MemFree(s.dOut)
		s.dOut = 0
	}
	for i, p := range s.stage {
		if p != nil {
			s.drv.FreeHost(p)
			s.stage[i] = nil
		}
	}
	s.n = 0
}

// release frees everything the device holds (context current, thread
// locked) and keeps the cached Info.
func (s *state) release() {
	if s.ctx != nil {
		s.ctx.SetCurrent()
		s.drv.Synchronize()
	}
	s.unpinAll()
	if s.ctx != nil {
		s.freeBuffers()
		s.freeJobDev()
		s.freeJobStaging()
		s.unloadKernels()
		for _, set := range s.events {
			for _, e := range set {
				s.drv.EventDestroy(e)
			}
		}
		s.events = nil
		for _, st := range s.streams {
			s.drv.StreamDestroy(st)
		}
		s.streams = nil
		if s.mod != nil {
			s.mod.Unload()
			s.mod = nil
		}
		s.ctx.Release()
		s.ctx = nil
	}
	s.live = false
	s.generation++
}

func (s *state) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.live && len(s.pins) == 0 && len(s.kept) == 0 {
		return nil
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	s.release()
	return nil
}
