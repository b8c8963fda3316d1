package glback

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"canopy/compute"
	"canopy/native/egl"
)

func init() {
	compute.Register(compute.NameGL, func() compute.Backend { return New() })
}

// Transfer modes (compute.Moder).
const (
	// ModeMapped moves data through persistently mapped staging rings,
	// overlapping the host's copies with the GPU's. The default on GPUs.
	ModeMapped = "mapped"
	// ModeSubData uses glBufferSubData and glGetBufferSubData on the device
	// buffers directly and leaves the staging to the driver. The default on
	// software renderers (llvmpipe), whose device memory is host memory.
	ModeSubData = "subdata"
)

// EnvDisplay names the environment variable that restricts which EGL
// display the backend may use: any (default), hardware, software or
// surfaceless.
const EnvDisplay = "CANOPY_EGL"

// Backend is the gl backend. Its methods are safe for concurrent use: all
// GL work runs, one job at a time, on the goroutine that owns the context.
type Backend struct {
	mu       sync.Mutex
	w        *worker
	info     *compute.Info
	startErr error
	pending  time.Duration // context + compile time not yet reported as setup
	// mode is the transfer mode chosen by SetMode, the one a job that
	// names none gets ("" for the device's default), and soft whether the
	// renderer is a CPU rasteriser: atomics, so that Mode never waits for
	// the lock a run holds.
	mode   atomic.Pointer[string]
	soft   atomic.Bool
	limits string        // the dispatch limits, for logs
	timer  time.Duration // last kernel by GL_TIMESTAMP
	wall   time.Duration // last kernel by the wall clock around glFinish

	memcpyUp   time.Duration // host copies inside the last upload
	memcpyDown time.Duration // and download (mapped mode)
	copies     copyRates     // both device copies of the last Ceilings

	tu tuning // fixed before the context starts
}

// DefaultVec4s is the number of vec4s (four pixels each) one shader
// invocation computes.
const DefaultVec4s = 2

// DefaultIters is the number of consecutive spans of 256 × DefaultVec4s
// vec4s one work group walks.
const DefaultIters = 1

// DefaultLocal is the number of invocations in a work group.
const DefaultLocal = 256

// New returns a gl backend. Nothing touches EGL until Info or a job.
func New() *Backend {
	return &Backend{tu: tuning{vec4s: DefaultVec4s}}
}

// Name implements compute.Backend.
func (*Backend) Name() string { return compute.NameGL }

// start brings the worker up if it is not running. b.mu must be held.
func (b *Backend) start() error {
	if b.w != nil {
		return nil
	}
	if b.startErr != nil {
		return b.startErr
	}
	kind := egl.Any
	if s := os.Getenv(EnvDisplay); s != "" {
		k, err := egl.ParseKind(strings.ToLower(s))
		if err != nil {
			b.startErr = fmt.Errorf("gl: %s=%s: %w", EnvDisplay, s, err)
			b.info = &compute.Info{Name: compute.NameGL, GPU: true, Reason: b.startErr.Error()}
			return b.startErr
		}
		kind = k
	}
	tu := b.tu
	if s := os.Getenv(EnvPartMB); s != "" && tu.part == 0 {
		mb, err := strconv.Atoi(s)
		if err != nil || mb < 0 {
			b.startErr = fmt.Errorf("gl: %s=%s: want a whole number of MiB (0: one buffer per plane)", EnvPartMB, s)
			b.info = &compute.Info{Name: compute.NameGL, GPU: true, Reason: b.startErr.Error()}
			return b.startErr
		}
		tu.part = mb << 18
		if mb == 0 {
			tu.part = 1 << 30
		}
	}
	if s := os.Getenv(EnvMemory); s != "" && tu.memory == "" {
		tu.memory = strings.ToLower(s)
	}
	w, s := startWorker(kind, tu)
	b.limits = s.limits
	b.soft.Store(s.soft)
	if s.err != nil {
		b.startErr = fmt.Errorf("gl: %w", s.err)
		b.info = &compute.Info{Name: compute.NameGL, GPU: true, Reason: s.err.Error()}
		return b.startErr
	}
	b.w = w
	b.pending += s.setup
	if b.info == nil {
		where := s.display
		if s.cudaMemory {
			where += "; planes in CUDA memory"
		}
		b.info = &compute.Info{
			Name: compute.NameGL, Available: true, GPU: true,
			Device: fmt.Sprintf("%s, OpenGL %s (%s)", s.renderer, s.version, where),
		}
	}
	return nil
}

// Info implements compute.Backend. The first call creates the GL context
// and compiles the shader, so that Device names the real GL_RENDERER and
// GL_VERSION and Reason carries the real failure (no libEGL, no 4.3
// context, the driver's compile log). The time it takes is reported by the
// next Setup.
func (b *Backend) Info() compute.Info {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.info == nil {
		b.start()
	}
	return *b.info
}

func (b *Backend) takePending() time.Duration {
	d := b.pending
	b.pending = 0
	return d
}

// LastKernelClocks returns the two clocks of the last job's kernel: the
// GL_TIMESTAMP query pair around the dispatch (0 when the driver has no
// timer) and the wall clock from before the dispatch to the end of
// glFinish. Timings.Kernel is the timer when it is non-zero and within the
// wall clock, else the wall clock.
func (b *Backend) LastKernelClocks() (timer, wall time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.timer, b.wall
}

// Ceilings implements compute.DeviceCeilings for buffers of the given
// size: the device-to-device copy (bytes read plus written), the faster of
// a compute shader that walks memory as the NDVI shader does
// (shaders/copy.comp) and glCopyBufferSubData, which may run on a slower
// copy engine; and the staging path's host-to-device and device-to-host
// copies. Each is timed like the kernel, best of several after a warm-up.
func (b *Backend) Ceilings(bytes int) (compute.Ceilings, error) {
	if bytes <= 0 {
		return compute.Ceilings{}, fmt.Errorf("gl: ceilings of %d bytes: the size must be positive", bytes)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.start(); err != nil {
		return compute.Ceilings{}, err
	}
	var c compute.Ceilings
	err := b.w.do(func(st *glState) error {
		var err error
		c, b.copies, err = st.ceilings(bytes)
		return err
	})
	if err != nil {
		return c, fmt.Errorf("gl: ceilings for %.1f MB on %s: %w", float64(bytes)/1e6, b.info.Device, err)
	}
	return c, nil
}

// shaderCopy times the copy shader alone on a plane of the given size in
// device buffers of at most part pixels (0: the backend's part size).
func (b *Backend) shaderCopy(bytes, part int) (float64, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.start(); err != nil {
		return 0, err
	}
	var rate float64
	err := b.w.do(func(st *glState) error {
		var err error
		rate, err = st.shaderCopy(bytes, part)
		return err
	})
	return rate, err
}

// Modes implements compute.Moder.
func (*Backend) Modes() []string { return []string{ModeMapped, ModeSubData} }

// Mode implements compute.Moder: the mode SetMode chose, else the
// device's default (subdata on a software renderer, mapped on a GPU or
// before the backend has started).
// It takes no lock: the window reads it while a run may be going on.
func (b *Backend) Mode() string { return b.modeLocked() }

func (b *Backend) modeLocked() string {
	if m := b.mode.Load(); m != nil && *m != "" {
		return *m
	}
	if b.soft.Load() {
		return ModeSubData
	}
	return ModeMapped
}

// SetMode implements compute.Moder; "" returns to the device's default.
func (b *Backend) SetMode(m string) error {
	if m != "" && m != ModeMapped && m != ModeSubData {
		return fmt.Errorf("gl: unknown transfer mode %q (want %s or %s)", m, ModeMapped, ModeSubData)
	}
	b.mode.Store(&m)
	return nil
}

// Close implements compute.Backend: it frees the buffers, destroys the
// context and ends its thread. The backend starts again when used.
func (b *Backend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.w != nil {
		b.w.stop()
		b.w = nil
	}
	b.pending = 0
	return nil
}
