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
)

func init() {
	compute.Register(compute.NameCUDA, func() compute.Backend { return New() })
}

// Transfer modes (compute.Moder).
const (
	// ModeOverlapped pipelines chunks of the image over several streams so
	// that uploads, kernels and downloads of different chunks run at once.
	ModeOverlapped = "overlapped"
	// ModeSequential uploads the bands, runs the kernel and downloads the
	// results, one after the other (the textbook way, from pinned memory).
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
	// DefaultChunkPixels sets the overlapped mode's largest chunk: 16 Mi
	// pixels of NDVI over float32 bands, 128 MiB up and 64 MiB down
	// (jobChunkTop scales it to a job's bytes a pixel).
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
// "register". It touches no driver until Info or a job.
func New() *Backend { return newBackend(nil) }

// newBackend loads the driver from libs (nil: the system's).
func newBackend(libs []string) *Backend { return newBackendOn(libs, 0) }

// newBackendOn is newBackend on the device of the given ordinal.
func newBackendOn(libs []string, ordinal int) *Backend {
	s := &state{libs: libs, ordinal: ordinal, mode: ModeOverlapped, host: HostRegister,
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
	// ordinal is the CUDA device the backend runs on (OnDevice).
	ordinal int

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
	// pending is set-up time spent outside a job (in Info), reported by
	// the next job so that no one-time cost goes unreported.
	pending time.Duration

	live    bool
	drv     *cuda.Driver
	ctx     *cuda.Context
	streams []cuda.Stream
	events  [][4]cuda.Event

	// didSetup is set by every step that allocates, registers or
	// creates something, so that a job reports Setup only then.
	didSetup bool

	pins []*pinnedRange
	// kept are the ranges closed job streams page-locked, kept for the
	// next stream (the block pipeline reuses its blocks from run to run),
	// oldest first, up to keptMax bytes.
	kept []*pinnedRange

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

// DeviceCount implements season.Devices: the CUDA devices the driver
// finds (cuDeviceGetCount), 0 with the reason when it cannot start.
func (b *Backend) DeviceCount() (int, error) {
	d, err := openDriver(b.s.libs)
	if err != nil {
		return 0, fmt.Errorf("cuda: %s", reason(err, nil))
	}
	n, err := d.DeviceCount()
	if b.s.libs != nil {
		d.Close()
	}
	if err != nil {
		return 0, fmt.Errorf("cuda: %s", reason(err, nil))
	}
	return n, nil
}

// OnDevice implements season.Devices: a new cuda backend on device i, with
// b's mode, host memory strategy and pipeline, and a context, streams and
// device memory of its own (the device's primary context: one per device
// in the process). It touches no driver until Info or a job.
func (b *Backend) OnDevice(i int) (compute.Backend, error) {
	n, err := b.DeviceCount()
	if err != nil {
		return nil, err
	}
	if i < 0 || i >= n {
		return nil, fmt.Errorf("cuda: no device %d: the driver finds %d", i, n)
	}
	o := newBackendOn(b.s.libs, i)
	b.s.mu.Lock()
	o.s.mode, o.s.host, o.s.chunkPixels, o.s.nstreams = b.s.mode, b.s.host, b.s.chunkPixels, b.s.nstreams
	o.s.firstPixels, o.s.lookahead, o.s.gridCap, o.s.jobChunkBytes = b.s.firstPixels, b.s.lookahead, b.s.gridCap, b.s.jobChunkBytes
	b.s.mu.Unlock()
	return o, nil
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

// Close implements compute.Backend: it frees the device and staging
// buffers and the kernels, unregisters the caller's buffers, and releases
// the context. The
// backend may be used again.
func (b *Backend) Close() error {
	return b.s.close()
}

func bytesOf(p []float32) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(p))), 4*len(p))
}

// open loads the driver, describes the backend's device, makes its primary context
// current and creates the streams. It fills s.info; the
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
	if s.ordinal >= count {
		return fmt.Errorf("no CUDA device %d: the driver finds %d", s.ordinal, count)
	}
	cd, err := d.Device(s.ordinal)
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

	s.dev.Kernel = "PTX generated per job, compiled by the driver"
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

// release frees everything the device holds (context current, thread
// locked) and keeps the cached Info.
func (s *state) release() {
	if s.ctx != nil {
		s.ctx.SetCurrent()
		s.drv.Synchronize()
	}
	s.unpinAll()
	if s.ctx != nil {
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
