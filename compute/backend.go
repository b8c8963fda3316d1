package compute

import (
	"canopy/compute/par"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// Backend names, as used by the CLI, JSON output and the GUI.
const (
	NameGo         = "go"
	NameGoParallel = "go-parallel"
	NameC          = "c"
	NameGL         = "gl"
	NameCUDA       = "cuda"
)

// Info describes a backend on this machine.
type Info struct {
	Name string `json:"name"`
	// Available is false when the backend cannot run here; Reason says why in
	// one sentence a user understands.
	Available bool   `json:"available"`
	Device    string `json:"device"`
	Reason    string `json:"reason,omitempty"`
	// GPU is true for backends that move data to a device and back.
	GPU bool `json:"gpu"`
}

// Timings are the phases of one run. Setup is one-time work (context, module,
// shader compile, buffer allocation) and is not part of Total.
type Timings struct {
	Setup    time.Duration
	Upload   time.Duration
	Kernel   time.Duration
	Download time.Duration
	// Total is upload + kernel + download measured end to end.
	Total time.Duration
}

// Add adds o's phases to t's (the runs of an image's blocks, one after
// the other).
func (t *Timings) Add(o Timings) {
	t.Setup += o.Setup
	t.Upload += o.Upload
	t.Kernel += o.Kernel
	t.Download += o.Download
	t.Total += o.Total
}

// Backend is what runs index jobs: a backend is its RunJob. NDVI is one
// job like any other. Implementations reuse their buffers, programs and
// contexts from one job to the next (a run that had to set up reports it
// as Timings.Setup) and serialise their jobs themselves.
//
// Optional interfaces add what some backends offer: JobStreamer (jobs in
// flight on several buffers, for the block pipeline), Moder (transfer
// modes), DeviceCeilings (the device's bandwidths), Resident (a scene kept
// on the device).
type Backend interface {
	// Name is one of go, go-parallel, c, gl, cuda.
	Name() string
	// Info reports availability and the device. It may initialise a driver
	// the first time and caches the answer.
	Info() Info
	// RunJob runs j (checked: compute.RunJob calls it) and reports its
	// phases; Timings.Setup is set when the run had to set up, for
	// example to compile the job's program for the device.
	RunJob(j *Job) (Timings, error)
	// Close releases buffers and contexts. The backend may be used again.
	Close() error
}

// Ceilings are the best bandwidths measured on the device a backend runs on,
// in GB/s (1e9 bytes per second), counting bytes read plus bytes written for
// copies, and bytes moved for transfers.
type Ceilings struct {
	DeviceCopy float64 `json:"device_copy_gbps"`
	H2D        float64 `json:"h2d_gbps"`
	D2H        float64 `json:"d2h_gbps"`
	// Duplex is H2D and D2H at once on two streams, bytes moved both ways
	// together per second; 0 when not measured.
	Duplex float64 `json:"duplex_gbps,omitempty"`
}

// DeviceCeilings is implemented by GPU backends: it measures the device copy
// and pinned transfer bandwidths for a buffer of the given size in bytes.
type DeviceCeilings interface {
	Ceilings(bytes int) (Ceilings, error)
}

// Moder is implemented by backends with user-selectable modes (cuda's
// sequential and overlapped transfers, gl's mapped and subdata). A mode is
// a per-run argument (Job.Mode), never state of the backend: Mode is only
// the default a run gets when it names none, and reading it never waits
// for a run.
type Moder interface {
	Modes() []string
	Mode() string
}

var (
	regMu    sync.Mutex
	registry = map[string]func() Backend{}
	order    = map[string]int{NameGo: 0, NameGoParallel: 1, NameC: 2, NameGL: 3, NameCUDA: 4}
)

// Register makes a backend constructor known under name. Backends in
// sub-packages call it from init; importing them is enough to enable them.
func Register(name string, newBackend func() Backend) {
	regMu.Lock()
	defer regMu.Unlock()
	registry[name] = newBackend
}

// Names lists the registered backends in canonical order.
func Names() []string {
	regMu.Lock()
	defer regMu.Unlock()
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		if oi, oj := Rank(names[i]), Rank(names[j]); oi != oj {
			return oi < oj
		}
		return names[i] < names[j]
	})
	return names
}

// Rank is a backend's place in the canonical order (go, go-parallel, c,
// gl, cuda), the order every list and chart shows them in; a backend
// outside it ranks after them.
func Rank(name string) int {
	if o, ok := order[name]; ok {
		return o
	}
	return len(order)
}

// New returns a fresh instance of the named backend.
func New(name string) (Backend, error) {
	regMu.Lock()
	f, ok := registry[name]
	regMu.Unlock()
	if !ok {
		return nil, fmt.Errorf("unknown backend %q (known: %s)", name, strings.Join(Names(), ", "))
	}
	return f(), nil
}

// AutoOrder is the order `--backend auto` tries: the fastest way to an
// index for an image that starts and ends in host memory. CUDA with
// overlapped transfers runs at the bus's speed, the C kernel at the host
// memory's; which is faster depends on the machine (AutoWhy measures both); a
// GL device is only preferred to the CPU when it is real hardware.
var AutoOrder = []string{NameCUDA, NameC, NameGoParallel, NameGo}

// CKernelShare is the share of the host's copy bandwidth (HostCopyCeiling)
// the C kernels reach over bands in host memory, as measured on a 2-core
// VM and on the H200 host (docs/BENCHMARKS.md, "Numbers behind the
// constants").
const CKernelShare = 0.8

// autoProbeBytes is the buffer AutoWhy measures the host copy and a GPU's bus
// with: past the caches, a few milliseconds each.
const autoProbeBytes = 64 << 20

// AutoWhy returns a fresh instance of the first available backend of
// AutoOrder, with the reason for its choice in words, except that a GPU whose bus is slower than the host's memory
// is passed over for the C kernels: when a GPU backend comes first and c is
// available, AutoWhy measures the host copy (HostCopyPeak) and the bus both
// ways at once (DeviceCeilings' Duplex) and keeps the GPU only when the bus
// beats CKernelShare of the host copy (PreferCPU): a host with many cores
// and fast memory in front of a GPU on PCIe computes on the CPU, a few
// cores in front of the same GPU keep it (docs/BENCHMARKS.md has the H200
// host's figures). Where the C kernels beat any PCIe bus (PCIeBusMax), or
// the bus measured at an earlier start on the same GPUs and driver (kept
// in the user's cache folder, buscache.go), the GPU is not opened at all:
// a context made only to be dropped costs every start a noticeable pause.
func AutoWhy() (Backend, string, error) {
	host := 0.0 // the host copy, GB/s, once measured
	measureHost := func() float64 {
		if host == 0 {
			host = hostCopy(autoProbeBytes)
			// The probe's two buffers go back to the system before the
			// run allocates its own.
			debug.FreeOSMemory()
		}
		return host
	}
	for i, n := range AutoOrder {
		b, err := New(n)
		if err != nil {
			continue
		}
		dc, gpu := b.(DeviceCeilings)
		cAfter := slices.Contains(AutoOrder[i+1:], NameC)
		if gpu && cAfter && gpuDevicePresent() {
			// No PCIe bus can beat this host, or this GPU's bus, measured
			// at an earlier start, did not: the C kernels, without opening
			// the GPU (its context alone takes a few tenths of a second at
			// every start).
			why := ""
			if PreferCPU(measureHost(), PCIeBusMax) {
				why = fmt.Sprintf("more than any PCIe bus moves (%.0f GB/s both ways)", PCIeBusMax)
			} else if r, ok := cachedBus(n); ok && PreferCPU(host, r.Duplex) {
				why = fmt.Sprintf("more than %s's bus moved both ways when measured on %s (%.0f GB/s)", n, r.Measured.Local().Format("2006-01-02"), r.Duplex)
			}
			if why != "" {
				if c, err := New(NameC); err == nil && c.Info().Available {
					b.Close()
					return c, fmt.Sprintf("%s: the host copies %.0f GB/s (the C kernels reach about %.0f), %s; %s was not opened",
						NameC, host, CKernelShare*host, why, n), nil
				} else if c != nil {
					c.Close()
				}
			}
		}
		if !b.Info().Available {
			b.Close()
			continue
		}
		if !gpu || !cAfter {
			return b, n + ": the first of " + strings.Join(AutoOrder, ", ") + " available here", nil
		}
		c, err := New(NameC)
		if err != nil || !c.Info().Available {
			if c != nil {
				c.Close()
			}
			return b, n + ": available, and the C kernels are not", nil
		}
		bus, err := dc.Ceilings(autoProbeBytes)
		if err != nil {
			c.Close()
			return b, n + ": available (its bus could not be measured: " + err.Error() + ")", nil
		}
		measureHost()
		rate := busRate(bus)
		storeBus(n, rate)
		why := fmt.Sprintf("the host copies %.0f GB/s (the C kernels reach about %.0f) and %s's bus moves %.0f GB/s both ways", host, CKernelShare*host, n, rate)
		if PreferCPU(host, rate) {
			b.Close()
			return c, NameC + ": " + why, nil
		}
		c.Close()
		return b, n + ": " + why, nil
	}
	return nil, "", errors.New("no backend is available")
}

// PCIeBusMax is the most a discrete GPU's host bus moves both ways at
// once, GB/s: PCIe 5.0 ×16, 63 GB/s each way.
// A host whose C kernels beat it computes on the CPU without opening the
// GPU.
const PCIeBusMax = 128.0

// hostCopy is HostCopyPeak (a variable for the tests).
var hostCopy = HostCopyPeak

// gpuDevicePresent reports whether an NVIDIA driver's device is there
// (Linux: /dev/nvidiactl; Windows: a display adapter of NVIDIA's in the
// registry), before anything is loaded; a variable for the tests.
var gpuDevicePresent = nvidiaPresent

// busRate is what a GPU's bus moves both ways at once, bytes each way
// added: the measured duplex rate, or the two directions' slower one twice
// where it was not measured.
func busRate(c Ceilings) float64 {
	if c.Duplex > 0 {
		return c.Duplex
	}
	return 2 * min(c.H2D, c.D2H)
}

// PreferCPU reports whether the C kernels over host memory (host GB/s of
// copy bandwidth, of which they reach CKernelShare) are at least as fast as
// a GPU job whose bands and outputs cross a bus moving bus GB/s both ways.
func PreferCPU(host, bus float64) bool {
	return CKernelShare*host >= bus
}

// NewOutput allocates a plane of n pixels (in huge pages where the system
// offers them) and touches every page of it on all cores, so that the
// operating system's first-touch page faults are paid here, as setup,
// rather than inside the first timed kernel.
func NewOutput(n int) []float32 {
	out := make([]float32, n)
	AdviseHuge(PlaneOf(n, 1, out).Data)
	par.For((n+1<<14-1)>>14, func(blk int) {
		lo := blk << 14
		for i := lo; i < min(lo+1<<14, n); i += 1024 {
			out[i] = 0
		}
	})
	return out
}

// PoolRunner is the worker pool of the CPU backends built on a par.Pool
// (go-parallel and c): it starts the pool on first use (reported as
// setup) and runs a job's task over the image, one span per worker.
// Callers serialise its use.
type PoolRunner struct {
	// Threads is the number of workers (0: GOMAXPROCS).
	Threads int
	pool    *par.Pool
}

// Workers is the number of workers the runner uses.
func (r *PoolRunner) Workers() int {
	if r.pool != nil {
		return r.pool.Threads()
	}
	if r.Threads > 0 {
		return r.Threads
	}
	return par.DefaultThreads()
}

// Start starts the workers if they are not running and returns how long
// that took.
func (r *PoolRunner) Start() time.Duration {
	if r.pool != nil {
		return 0
	}
	t0 := time.Now()
	r.pool = par.NewPool(r.Threads)
	return time.Since(t0)
}

// RunTask runs t over [0, n) on the pool, one span per worker (Start
// first).
func (r *PoolRunner) RunTask(n int, t par.Task) { r.pool.Run(n, t) }

// Close stops the workers; the runner may be started again.
func (r *PoolRunner) Close() {
	if r.pool != nil {
		r.pool.Close()
		r.pool = nil
	}
}
