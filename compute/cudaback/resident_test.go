package cudaback

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"canopy/compute"
	"canopy/compute/residenttest"
	"canopy/native/cuda"
)

// simDev is residentDev on the PTX interpreter: device memory is
// simMemory, kernels run in the simulator, copies happen at once and
// time is not measured.
type simDev struct {
	t        *testing.T
	mem      *simMemory
	kernels  map[string]*simKernel
	nsm      int
	launches map[string]int
	live     int // device buffers allocated and not freed
}

func newSimDev(t *testing.T) *simDev {
	return &simDev{t: t, mem: &simMemory{}, kernels: map[string]*simKernel{}, nsm: 2, launches: map[string]int{}}
}

func (d *simDev) enter() (func(), error) { return func() {}, nil }
func (d *simDev) target() ptxTarget      { return testTarget }
func (d *simDev) sms() int               { return d.nsm }

func (d *simDev) alloc(bytes int) (cuda.DevicePtr, error) {
	d.live++
	b := make([]byte, bytes)
	for i := range b {
		b[i] = 0xC3 // device memory is not zeroed
	}
	return d.mem.alloc(b), nil
}

func (d *simDev) free(p cuda.DevicePtr) {
	if d.mem.bytes(p) == nil {
		d.t.Errorf("free of %#x, which is not allocated", p)
		return
	}
	d.live--
	d.mem.free(p)
}

func (d *simDev) hostAlloc(bytes int) ([]byte, error) { return make([]byte, bytes), nil }
func (d *simDev) hostFree([]byte)                     {}
func (d *simDev) pin([]byte) bool                     { return true }
func (d *simDev) unpin([]byte)                        {}

func (d *simDev) prepare(spec *kernelSpec) (bool, error) {
	if _, ok := d.kernels[spec.PTX]; ok {
		return false, nil
	}
	for _, bad := range []string{"fma", "mad.", ".ftz", ".approx", ".full", "rcp", "ex2", "lg2"} {
		// The season kernels are bounded by float32's error, not bit
		// for bit: they fuse and take a base-2 logarithm.
		if spec.Entry != seasonEntry && strings.Contains(spec.PTX, bad) {
			return false, fmt.Errorf("PTX of %s contains %q", spec.Entry, bad)
		}
	}
	k, err := parsePTX(spec.PTX)
	if err != nil {
		return false, fmt.Errorf("%s: %w", spec.Entry, err)
	}
	d.kernels[spec.PTX] = k
	return true, nil
}

func (d *simDev) launch(spec *kernelSpec, grid int, args []any) error {
	k, ok := d.kernels[spec.PTX]
	if !ok {
		return fmt.Errorf("launch of %s before prepare", spec.Entry)
	}
	e := spec.Entry
	if e == "" {
		e = KernelName
	}
	d.launches[e]++
	return k.run(d.mem, grid, spec.block(), args)
}

// span is the memory at device address p, n bytes.
func (d *simDev) span(p cuda.DevicePtr, n int) ([]byte, error) {
	for _, b := range d.mem.bufs {
		if uint64(p) >= b.base && uint64(p)+uint64(n) <= b.base+uint64(len(b.data)) {
			return b.data[uint64(p)-b.base:][:n], nil
		}
	}
	return nil, fmt.Errorf("copy of %d bytes at %#x outside every buffer", n, p)
}

func (d *simDev) upload(dst cuda.DevicePtr, src []byte) error {
	b, err := d.span(dst, len(src))
	if err == nil {
		copy(b, src)
	}
	return err
}

func (d *simDev) download(dst []byte, src cuda.DevicePtr) error {
	b, err := d.span(src, len(dst))
	if err == nil {
		copy(dst, b)
	}
	return err
}

func (d *simDev) mark() (int, error)                      { return 0, nil }
func (d *simDev) sync() error                             { return nil }
func (d *simDev) elapsed(a, b int) (time.Duration, error) { return 0, nil }
func (d *simDev) close()                                  {}

// The session, its kernels and its host-side merging pass the resident
// conformance suite through the PTX interpreter: planes exactly the
// engine's, statistics package stats's, views compute.RenderView's. The
// statistics grid is forced to several blocks, so that the merge of block
// records is tested on small images too. Every kind of statistics request
// and view runs on one plane of each scene and the default request on the
// others (Light): a kernel's shape follows the request, not the plane, and
// the interpreter takes seconds of CPU per request; TestResidentGPU runs
// every request on every plane on a card.
func TestResidentSimulated(t *testing.T) {
	var devs []*simDev
	open := func(bands []compute.BandInput, mask []uint8) (compute.ResidentSession, compute.Timings, error) {
		d := newSimDev(t)
		devs = append(devs, d)
		s, tm, err := openSession(d, bands, mask)
		if err != nil {
			return nil, tm, err
		}
		s.statsMin = 3
		return s, tm, nil
	}
	// -short is the race detector's run in make test: the tiny scenes
	// run the session's whole host side; the run without it does the rest.
	residenttest.Check(t, open, residenttest.Options{Exact: true, Short: true, Light: true, Tiny: testing.Short()})
	total := map[string]int{}
	for _, d := range devs {
		if d.live != 0 {
			t.Errorf("a closed session left %d device buffers", d.live)
		}
		for k, v := range d.launches {
			total[k] += v
		}
	}
	for _, e := range []string{KernelName, fillEntry, statsEntry, viewEntry} {
		if total[e] == 0 {
			t.Errorf("no %s kernel ran", e)
		}
	}
}

// The statistics kernel's shapes: histogram copies in shared memory for
// up to 8192 bins, a power of two of them, within the shared budget; the
// global histogram beyond; records 8-byte aligned.
func TestStatsShape(t *testing.T) {
	for _, c := range []struct{ bins, reps int }{{0, 0}, {1, 8}, {256, 8}, {1024, 8}, {2048, 4}, {3000, 2}, {8192, 1}, {8193, 0}, {1 << 20, 0}} {
		sh := statsShapeFor(c.bins, 5)
		if sh.Replicas != c.reps {
			t.Errorf("%d bins: %d copies, want %d", c.bins, sh.Replicas, c.reps)
		}
		if _, _, _, _, _, _, _, total := sh.layout(); total > 48<<10 {
			t.Errorf("%d bins: %d bytes of shared memory", c.bins, total)
		}
	}
	for c := range compute.MaxResidentClasses + 1 {
		if r := (statsShape{Classes: c}).record(); r%8 != 0 || r < 32+4*max(0, c-1) {
			t.Errorf("%d classes: record of %d bytes", c, r)
		}
	}
}

// The resident kernels' PTX uses no register it does not declare and is
// accepted by the interpreter in every shape.
func TestResidentKernelsParse(t *testing.T) {
	specs := []*kernelSpec{genFill(testTarget)}
	for _, bins := range []int{0, 7, 10000} {
		for _, cls := range []int{0, 1, 5, compute.MaxResidentClasses} {
			specs = append(specs, genStats(statsShapeFor(bins, cls), testTarget))
		}
	}
	for s := 1; s <= compute.MaxViewSamples; s++ {
		for _, disc := range []bool{false, true} {
			specs = append(specs, genView(viewShape{Samples: s, Discrete: disc}, testTarget))
		}
	}
	for _, sp := range specs {
		if _, err := parsePTX(sp.PTX); err != nil {
			t.Errorf("%s: %v", sp.Entry, err)
		}
		if !strings.Contains(sp.PTX, ".visible .entry "+sp.Entry+"(") {
			t.Errorf("%s: no entry of that name", sp.Entry)
		}
	}
}

// The resident session on the GPU passes the conformance suite (skipped
// without one, failed with CANOPY_EXPECT_GPU set).
func TestResidentGPU(t *testing.T) {
	b := gpu(t)
	residenttest.Check(t, b.OpenResident, residenttest.Options{Exact: true, Short: testing.Short()})
	// A session of a closed backend refuses calls; its Close is quiet.
	sc := residenttest.Scenes(true)[1]
	s, _, err := b.OpenResident(sc.Bands, nil)
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
	if _, _, err := s.Stats(0, compute.StatsRequest{}); err == nil {
		t.Error("a session of a closed backend answered")
	}
	if err := s.Close(); err != nil {
		t.Error(err)
	}
}
