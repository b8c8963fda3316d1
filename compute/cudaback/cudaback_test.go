package cudaback

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"canopy/compute"
	"canopy/compute/computetest"
	"canopy/compute/fake"
	"canopy/compute/index"
)

// gpu returns a fresh backend, or skips the test where CUDA cannot run.
func gpu(t testing.TB) *Backend {
	t.Helper()
	b := New()
	info := b.Info()
	computetest.SkipUnlessGPU(t, info.Available, "cuda: "+info.Reason)
	t.Cleanup(func() { b.Close() })
	return b
}

// configs are every mode × host memory combination.
var configs = []struct{ mode, host string }{
	{ModeOverlapped, HostRegister}, {ModeOverlapped, HostStaging},
	{ModeSequential, HostRegister}, {ModeSequential, HostStaging},
}

func configure(t testing.TB, b *Backend, mode, host string) {
	t.Helper()
	if err := b.SetMode(mode); err != nil {
		t.Fatal(err)
	}
	if err := b.SetHostMemory(host); err != nil {
		t.Fatal(err)
	}
}

// sameAsDefinition checks every output of j bit for bit against the
// float32 definition (NaN payloads aside): the generated kernels use only
// correctly rounded operations.
func sameAsDefinition(t testing.TB, j *compute.Job) {
	t.Helper()
	in := make([]float32, len(j.Bands))
	regs := make([]float32, j.Program.NumRegs)
	want := make([]float32, len(j.Out))
	for i := range j.Pixels() {
		computetest.Eval32Job(j, i, in, regs, want)
		for o, w := range want {
			g := j.Out[o][i]
			if w != w || g != g {
				if (w != w) != (g != g) {
					t.Fatalf("%s pixel %d (inputs %v): got %g, definition %g", j.Names[o], i, in, g, w)
				}
				continue
			}
			if math.Float32bits(g) != math.Float32bits(w) {
				t.Fatalf("%s pixel %d (inputs %v): got %g (%#08x), definition %g (%#08x)", j.Names[o], i, in, g, math.Float32bits(g), w, math.Float32bits(w))
			}
		}
	}
}

// poison fills j's outputs with a value no kernel writes, so that an
// unwritten pixel shows.
func poison(j *compute.Job) {
	for _, o := range j.Out {
		for i := range o {
			o[i] = 12345
		}
	}
}

// run runs j on b, poisoned first, and checks it against the definition.
func run(t testing.TB, b *Backend, j *compute.Job) compute.Timings {
	t.Helper()
	poison(j)
	tm, err := compute.RunJob(b, j)
	if err != nil {
		t.Fatal(err)
	}
	sameAsDefinition(t, j)
	return tm
}

// allDirect is a job's Direct when every band and output was reached in
// place.
func allDirect(j *compute.Job) []bool {
	d := make([]bool, len(j.Bands)+len(j.Out))
	for i := range d {
		d[i] = true
	}
	return d
}

// Without a driver the backend is unavailable with a reason a user reads,
// and every entry point returns an error instead of crashing.
func TestMissingDriverIsAReason(t *testing.T) {
	const lib = "libcanopy-no-such-cuda.so.1"
	b := newBackend([]string{lib})
	defer b.Close()
	info := b.Info()
	if info.Available || !info.GPU || info.Name != compute.NameCUDA {
		t.Fatalf("Info with a missing driver: %+v", info)
	}
	if !strings.Contains(info.Reason, "no NVIDIA CUDA driver") || !strings.Contains(info.Reason, lib) {
		t.Errorf("reason %q does not say the driver library %s is missing", info.Reason, lib)
	}
	if _, err := compute.RunJob(b, computetest.EdgeJob(8, 8, 1, false)); err == nil {
		t.Error("RunJob succeeded without a driver")
	}
	if _, err := b.Ceilings(1 << 20); err == nil {
		t.Error("Ceilings succeeded without a driver")
	}
	if _, err := b.Device(); err == nil {
		t.Error("Device succeeded without a driver")
	}
}

// The backend as registered says something useful either way.
func TestInfo(t *testing.T) {
	info := New().Info()
	if !info.GPU || info.Name != compute.NameCUDA {
		t.Fatalf("Info: %+v", info)
	}
	if !info.Available {
		if info.Reason == "" {
			t.Fatal("unavailable without a reason")
		}
		computetest.SkipUnlessGPU(t, false, "cuda: "+info.Reason)
	}
	b := gpu(t)
	d, err := b.Device()
	if err != nil {
		t.Fatal(err)
	}
	if d.Name == "" || d.Major < 7 || d.Memory < 1<<30 || d.Driver < 11000 || d.SMs < 1 {
		t.Errorf("implausible device: %+v", d)
	}
	for _, s := range []string{d.Name, fmt.Sprintf("compute %d.%d", d.Major, d.Minor), "GiB", "driver"} {
		if !strings.Contains(info.Device, s) {
			t.Errorf("Info.Device %q lacks %q", info.Device, s)
		}
	}
	t.Logf("%s; kernel: %s", info.Device, d.Kernel)
}

func TestInputChecks(t *testing.T) {
	b := New()
	defer b.Close()
	j := computetest.EdgeJob(4, 4, 1, false)
	j.Out[0] = j.Out[0][:15]
	if _, err := b.RunJob(j); err == nil || !strings.Contains(err.Error(), "output") {
		t.Errorf("short output: %v", err)
	}
	j = computetest.EdgeJob(4, 4, 1, false)
	j.Bands[1].Plane.Data = j.Bands[1].Plane.Data[:60]
	if _, err := b.RunJob(j); err == nil {
		t.Error("short nir band accepted")
	}
}

func TestModesAndPipeline(t *testing.T) {
	b := New()
	defer b.Close()
	if b.Mode() != ModeOverlapped || b.HostMemory() != HostRegister {
		t.Errorf("defaults: mode %q, host memory %q", b.Mode(), b.HostMemory())
	}
	if err := b.SetMode("parallel"); err == nil {
		t.Error("unknown mode accepted")
	}
	if err := b.SetMode(ModeSequential); err != nil || b.Mode() != ModeSequential {
		t.Errorf("SetMode(sequential): %v, mode %q", err, b.Mode())
	}
	if err := b.SetHostMemory("mmap"); err == nil {
		t.Error("unknown host memory accepted")
	}
	if err := b.SetPipeline(ChunkAlign-1, 4); err == nil {
		t.Error("chunk under ChunkAlign accepted")
	}
	if err := b.SetPipeline(ChunkAlign, 1); err == nil {
		t.Error("one stream accepted for overlapping")
	}
	if err := b.SetPipeline(5000, 3); err != nil {
		t.Fatal(err)
	}
	if c, s := b.Pipeline(); c != 5*ChunkAlign || s != 3 {
		t.Errorf("Pipeline = %d, %d; want %d, 3", c, s, 5*ChunkAlign)
	}
	var _ compute.Moder = b
	var _ compute.DeviceCeilings = b
}

func TestPlan(t *testing.T) {
	g := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		n := 1 + g.IntN(1<<24)
		top := ChunkAlign << g.IntN(14)
		first := min(FirstChunkPixels, top)
		cs := plan(n, first, top)
		next := 0
		for _, c := range cs {
			if c.lo != next || c.hi <= c.lo || c.hi-c.lo > top || c.lo%ChunkAlign != 0 {
				t.Fatalf("plan(%d, %d, %d): bad chunk %+v after %d", n, first, top, c, next)
			}
			next = c.hi
		}
		if next != n {
			t.Fatalf("plan(%d, %d, %d) ends at %d", n, first, top, next)
		}
		if n > first {
			if f, l := cs[0].hi-cs[0].lo, cs[len(cs)-1].hi-cs[len(cs)-1].lo; f > first || l > first {
				t.Fatalf("plan(%d, %d, %d): first chunk %d, last %d, want at most %d", n, first, top, f, l, first)
			}
		}
		ramp := 0
		for s := first; s < top; s *= 2 {
			ramp++
		}
		if limit := 2*ramp + 2 + n/top; len(cs) > limit {
			t.Fatalf("plan(%d, %d, %d): %d chunks, more than %d", n, first, top, len(cs), limit)
		}
	}
	if cs := plan(12345, FirstChunkPixels, 0); len(cs) != 1 || cs[0] != (chunk{0, 12345}) {
		t.Errorf("plan without chunking: %v", cs)
	}
	// A Sentinel-2 tile with the defaults: a short ramp each end, 16 Mi
	// chunks in the middle.
	cs := plan(10980*10980, FirstChunkPixels, DefaultChunkPixels)
	if len(cs) < 8 || len(cs) > 24 {
		t.Errorf("10980²: %d chunks: %v", len(cs), cs)
	}
}

// The grid covers every whole vector with the fewest blocks.
// Every mode and host memory strategy gives the definition's bits on the
// NDVI conformance cases and on awkward pixels, including chunk and vector
// tails and buffers large enough to be page-locked in place.
func TestNDVI(t *testing.T) {
	b := gpu(t)
	cases := computetest.Cases(testing.Short())
	cases = append(cases,
		computetest.JobCase{Name: "edges 7x3", Job: computetest.EdgeJob(7, 3, 1, true)},
		computetest.JobCase{Name: "edges 1031x1033 nodata (in place)", Job: computetest.EdgeJob(1031, 1033, 2, true)},
		computetest.JobCase{Name: "edges 2053x1 (chunk tail)", Job: computetest.EdgeJob(2053, 1, 3, false)},
	)
	for _, cfg := range configs {
		for _, chunkPx := range []int{DefaultChunkPixels, ChunkAlign, 4 * ChunkAlign} {
			if chunkPx != DefaultChunkPixels && cfg.mode != ModeOverlapped {
				continue
			}
			t.Run(fmt.Sprintf("%s/%s/chunk%d", cfg.mode, cfg.host, chunkPx), func(t *testing.T) {
				configure(t, b, cfg.mode, cfg.host)
				if err := b.SetPipeline(chunkPx, 3); err != nil {
					t.Fatal(err)
				}
				for _, c := range cases {
					tm := run(t, b, c.Job)
					st := b.LastJob()
					if st.Chunks < 1 || (cfg.mode == ModeSequential && st.Chunks != 1) {
						t.Errorf("%s: %d chunks in %s mode", c.Name, st.Chunks, cfg.mode)
					}
					big := c.Job.Pixels()*4 >= RegisterMin
					if want := cfg.host == HostRegister && big; st.RegisterError == "" && !slices.Equal(st.Direct, []bool{want, want, want}) {
						t.Errorf("%s: direct %v, want all %v", c.Name, st.Direct, want)
					}
					if tm.Total <= 0 || tm.Kernel <= 0 || tm.Upload <= 0 || tm.Download <= 0 {
						t.Errorf("%s: timings %+v", c.Name, tm)
					}
				}
			})
		}
	}
	if err := b.SetPipeline(DefaultChunkPixels, DefaultStreams); err != nil {
		t.Fatal(err)
	}
	configure(t, b, ModeOverlapped, HostRegister)
	computetest.Run(t, b)
	computetest.Reuse(t, b)
}

// NDVI of a Sentinel-2 tile, 10980², in every mode.
func TestSentinelTile(t *testing.T) {
	if testing.Short() {
		t.Skip("10980x10980 skipped in -short mode")
	}
	b := gpu(t)
	j := computetest.NDVIJob(fake.Landscape, 10980, 10980, 7)
	red, nir := j.Bands[0].Plane.F32(), j.Bands[1].Plane.F32()
	for i := 0; i < len(red); i += 9973 {
		red[i], nir[i] = 0, 0
	}
	for _, cfg := range configs {
		configure(t, b, cfg.mode, cfg.host)
		poison(j)
		tm, err := compute.RunJob(b, j)
		if err != nil {
			t.Fatalf("%s/%s: %v", cfg.mode, cfg.host, err)
		}
		if rep := compute.VerifyJob(j)[0]; !rep.OK() {
			t.Fatalf("%s/%s: %s", cfg.mode, cfg.host, rep)
		}
		t.Logf("%s/%s: setup %v upload %v kernel %v download %v total %v (%+v)", cfg.mode, cfg.host, tm.Setup, tm.Upload, tm.Kernel, tm.Download, tm.Total, b.LastJob().Direct)
	}
}

// Red and nir as halves of one slice (as a two-band file reads) share a
// page: they are registered together, and the result is right.
func TestSharedAllocation(t *testing.T) {
	b := gpu(t)
	const w, h = 1500, 1000
	n := w * h
	j := computetest.EdgeJob(w, h, 9, true)
	both := make([]float32, 2*n+3)
	copy(both[3:], j.Bands[0].Plane.F32())
	copy(both[3+n:], j.Bands[1].Plane.F32())
	j.Bands[0].Plane = compute.PlaneOf(w, h, both[3:3+n])
	j.Bands[1].Plane = compute.PlaneOf(w, h, both[3+n:3+2*n])
	for _, mode := range []string{ModeOverlapped, ModeSequential} {
		configure(t, b, mode, HostRegister)
		run(t, b, j)
		if st := b.LastJob(); !slices.Equal(st.Direct, allDirect(j)) {
			t.Errorf("%s: direct %v (%s), want all in place", mode, st.Direct, st.RegisterError)
		}
		if len(b.s.pins) != 2 {
			t.Errorf("%s: %d registered ranges, want 2 (bands, output)", mode, len(b.s.pins))
		}
	}
}

// A buffer the driver refuses to register (here: already registered by
// someone else) goes through the staging buffers, and the result is right.
func TestRegistrationRefused(t *testing.T) {
	b := gpu(t)
	j := computetest.EdgeJob(1200, 1000, 11, false)
	out := j.Out[0]
	configure(t, b, ModeOverlapped, HostRegister)
	s := b.s
	s.mu.Lock()
	if err := s.ctx.SetCurrent(); err != nil {
		s.mu.Unlock()
		t.Fatal(err)
	}
	err := s.drv.HostRegister(unsafe.Pointer(&out[0]), 4*len(out), 0)
	s.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		s.ctx.SetCurrent()
		s.drv.HostUnregister(unsafe.Pointer(&out[0]))
	}()
	run(t, b, j)
	st := b.LastJob()
	if !slices.Equal(st.Direct, []bool{true, true, false}) || st.RegisterError == "" {
		t.Errorf("direct %v, register error %q: want the output staged with a reason", st.Direct, st.RegisterError)
	}
	if !strings.Contains(st.RegisterError, "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED") {
		t.Errorf("register error %q does not name the driver's code", st.RegisterError)
	}
}

// Sizes grow and shrink, float32 and uint16 bands alternate, modes
// switch, the backend is closed and used again: every result is right and
// set-up time is reported exactly when something had to be set up.
func TestReuse(t *testing.T) {
	b := gpu(t)
	sizes := [][2]int{{64, 64}, {2000, 1100}, {1, 1}, {513, 257}, {2000, 1100}, {64, 64}}
	for k, sz := range sizes {
		for _, mode := range []string{ModeOverlapped, ModeSequential} {
			configure(t, b, mode, HostRegister)
			j := computetest.EdgeJob(sz[0], sz[1], uint64(k), k%2 == 0)
			run(t, b, j)
			// Same buffers again: nothing to set up.
			if tm := run(t, b, j); tm.Setup != 0 {
				t.Errorf("%dx%d %s: second run on the same buffers reports setup %v", sz[0], sz[1], mode, tm.Setup)
			}
			run(t, b, u16NDVI(sz[0], sz[1], uint64(k)))
		}
		if k == 2 {
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			if len(b.s.pins) != 0 || b.s.live {
				t.Error("Close left the device open or buffers registered")
			}
		}
	}
	j := computetest.EdgeJob(300, 300, 99, false)
	b.Close()
	if tm := run(t, b, j); tm.Setup <= 0 {
		t.Errorf("run after Close: setup %v", tm.Setup)
	}
}

// u16NDVI is NDVI over random uint16 sensor counts with zeros (0/0) and
// 65535 sprinkled in, 0 the nodata value of NIR.
func u16NDVI(w, h int, seed uint64) *compute.Job {
	g := rand.New(rand.NewPCG(seed, 16))
	red, nir := compute.NewPlane(compute.U16, w, h), compute.NewPlane(compute.U16, w, h)
	r, n := red.U16(), nir.U16()
	for i := range r {
		switch g.IntN(12) {
		case 0:
			r[i], n[i] = 0, 0
		case 1:
			r[i], n[i] = 65535, uint16(g.IntN(65536))
		case 2:
			r[i], n[i] = uint16(g.IntN(65536)), 0
		default:
			r[i], n[i] = uint16(300+g.IntN(3000)), uint16(1500+g.IntN(5000))
		}
	}
	bands := []compute.BandInput{
		{Role: "red", Plane: red, Radiometry: compute.Identity(), Source: "test red"},
		{Role: "nir", Plane: nir, Radiometry: compute.Identity(), HasNoData: true, Source: "test nir"},
	}
	_, e, err := index.Resolve("ndvi")
	if err != nil {
		panic(err)
	}
	j, err := compute.NewJob(bands, nil, []string{"ndvi"}, []*index.Expr{e})
	if err != nil {
		panic(err)
	}
	return j
}

// In sequential mode the phases are consecutive, so together they fit in
// the total; in overlapped mode they overlap.
func TestTimingsAddUp(t *testing.T) {
	b := gpu(t)
	j := computetest.NDVIJob(fake.Noise, 4096, 4096, 3)
	configure(t, b, ModeSequential, HostRegister)
	if _, err := compute.RunJob(b, j); err != nil {
		t.Fatal(err)
	}
	tm, err := compute.RunJob(b, j)
	if err != nil {
		t.Fatal(err)
	}
	sum := tm.Upload + tm.Kernel + tm.Download
	if sum > tm.Total || sum < tm.Total/2 {
		t.Errorf("sequential: upload+kernel+download %v against total %v", sum, tm.Total)
	}
	if tm.Kernel >= tm.Upload {
		t.Errorf("sequential: kernel %v not shorter than the upload %v", tm.Kernel, tm.Upload)
	}
	configure(t, b, ModeOverlapped, HostRegister)
	if _, err := compute.RunJob(b, j); err != nil {
		t.Fatal(err)
	}
	tm2, err := compute.RunJob(b, j)
	if err != nil {
		t.Fatal(err)
	}
	if tm2.Upload > tm2.Total || tm2.Download > tm2.Total {
		t.Errorf("overlapped: a phase span is longer than the total: %+v", tm2)
	}
	t.Logf("4096²: sequential %+v; overlapped %+v", tm, tm2)
}

func TestCeilings(t *testing.T) {
	b := gpu(t)
	c, err := b.Ceilings(256 << 20)
	if err != nil {
		t.Fatal(err)
	}
	if c.DeviceCopy <= 0 || c.H2D <= 0 || c.D2H <= 0 || c.Duplex <= 0 {
		t.Fatalf("ceilings %+v", c)
	}
	if c.DeviceCopy < c.H2D || c.DeviceCopy < c.D2H {
		t.Errorf("device copy %.1f GB/s slower than PCIe (%.1f up, %.1f down)", c.DeviceCopy, c.H2D, c.D2H)
	}
	t.Logf("ceilings: device copy %.0f GB/s, H2D %.1f, D2H %.1f, both ways %.1f", c.DeviceCopy, c.H2D, c.D2H, c.Duplex)
}

// Two backends given the same slices (the command line's benchmark makes
// one per mode) share the registration: both read them in place, and
// closing one leaves the other working.
func TestTwoBackendsShareBuffers(t *testing.T) {
	a := gpu(t)
	b := gpu(t)
	configure(t, b, ModeSequential, HostRegister)
	j := computetest.EdgeJob(1100, 1000, 31, true)
	for k, be := range []*Backend{a, b, a} {
		run(t, be, j)
		if st := be.LastJob(); !slices.Equal(st.Direct, allDirect(j)) {
			t.Errorf("run %d: direct %v (%s), want the shared registration used", k, st.Direct, st.RegisterError)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	run(t, b, j)
	if st := b.LastJob(); !slices.Equal(st.Direct, allDirect(j)) {
		t.Errorf("after the other backend closed: direct %v (%s)", st.Direct, st.RegisterError)
	}
}
