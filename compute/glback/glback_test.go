package glback

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"canopy/compute"
	"canopy/compute/computetest"
	"canopy/native/egl"
)

// need returns a started backend, or skips when this machine truly has no
// EGL or no OpenGL 4.3: the only reason these tests may not run. With
// CANOPY_EXPECT_GPU set (the GPU check script sets it) a software renderer
// is a failure.
func need(t testing.TB, b *Backend) compute.Info {
	t.Helper()
	if err := egl.Load(); err != nil {
		t.Skipf("gl backend cannot run here: %v", err)
	}
	info := b.Info()
	if !info.Available {
		if strings.Contains(info.Reason, "no OpenGL 4.3 core context") {
			t.Skipf("gl backend cannot run here: %s", info.Reason)
		}
		t.Fatalf("gl backend unavailable though EGL loads: %s", info.Reason)
	}
	if os.Getenv("CANOPY_EXPECT_GPU") != "" && strings.Contains(strings.ToLower(info.Device), "llvmpipe") {
		t.Fatalf("CANOPY_EXPECT_GPU is set but gl runs on %s", info.Device)
	}
	return info
}

func newBackend(t testing.TB) *Backend {
	b := New()
	t.Cleanup(func() { b.Close() })
	need(t, b)
	return b
}

// noise is NDVI over w×h random reflectances.
func noise(w, h int, seed uint64) *compute.Job {
	g := rand.New(rand.NewPCG(seed, 7))
	red, nir := make([]float32, w*h), make([]float32, w*h)
	for i := range red {
		red[i] = 0.05 + 0.35*g.Float32()
		nir[i] = 0.20 + 0.40*g.Float32()
	}
	return computetest.NDVIOf(w, h, red, nir)
}

// check runs j on b (its outputs poisoned first, so that an unwritten
// pixel shows) and verifies it against the float64 truth.
func check(t *testing.T, b *Backend, j *compute.Job) compute.Timings {
	t.Helper()
	for _, o := range j.Out {
		for i := range o {
			o[i] = 12345
		}
	}
	tm, err := compute.RunJob(b, j)
	if err != nil {
		t.Fatal(err)
	}
	for o, rep := range compute.VerifyJob(j) {
		if !rep.OK() {
			t.Fatalf("%dx%d %s: %s", j.Width, j.Height, j.Names[o], rep)
		}
	}
	return tm
}

func TestInfo(t *testing.T) {
	b := New()
	defer b.Close()
	info := need(t, b)
	t.Logf("gl: %s", info.Device)
	t.Logf("gl: %s", b.limits)
	if info.Name != compute.NameGL || !info.GPU || info.Device == "" || info.Reason != "" {
		t.Errorf("Info = %+v", info)
	}
	if !strings.Contains(info.Device, "OpenGL 4.") {
		t.Errorf("Device %q does not carry GL_VERSION", info.Device)
	}
	if b.Name() != compute.NameGL {
		t.Errorf("Name() = %q", b.Name())
	}
	// Registered under its name.
	r, err := compute.New(compute.NameGL)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r.(*Backend); !ok {
		t.Errorf("compute.New(gl) gave %T", r)
	}
}

// TestConformance runs the engine's NDVI suite: random scenes, 0/0,
// nodata on either band, negatives, NaN/Inf inputs, 1×1, 1×N, odd sizes.
func TestConformance(t *testing.T) {
	computetest.Run(t, newBackend(t))
}

func TestReuse(t *testing.T) {
	computetest.Reuse(t, newBackend(t))
}

// TestBothModes checks each transfer mode, as the default a job gets, on
// an image larger than several staging slots, so that the ring wraps round
// in both directions.
func TestBothModes(t *testing.T) {
	b := newBackend(t)
	in := noise(3001, 3001, 1) // 36 MB a band: two slots, the second partial
	for _, m := range b.Modes() {
		if err := b.SetMode(m); err != nil {
			t.Fatal(err)
		}
		if b.Mode() != m {
			t.Fatalf("Mode() = %q after SetMode(%q)", b.Mode(), m)
		}
		tm := check(t, b, in)
		t.Logf("%s: upload %v kernel %v download %v", m, tm.Upload, tm.Kernel, tm.Download)
	}
	if err := b.SetMode("zero-copy"); err == nil {
		t.Error("SetMode accepted an unknown mode")
	}
	// Back to the device's default: staging only pays where device memory
	// is not host memory.
	if err := b.SetMode(""); err != nil {
		t.Fatal(err)
	}
	soft := strings.Contains(strings.ToLower(b.Info().Device), "llvmpipe")
	if want := map[bool]string{true: ModeSubData, false: ModeMapped}[soft]; b.Mode() != want {
		t.Errorf("default mode on %s is %q, want %q", b.Info().Device, b.Mode(), want)
	}
}

// awkward returns values that trip GPUs: denormals (flushed to zero by
// many), sums beyond 2^126 (where GLSL division has no precision promise),
// exact ±1 and 0 results, signed zeros and non-finite inputs.
func awkward() *compute.Job {
	den := math.Float32frombits(0x00000003)
	big := float32(3e38)
	pairs := [][2]float32{
		{0, 0.5}, {0.5, 0}, {0.3, 0.3}, {0, 0}, {-0.0, 0}, {0, float32(math.Copysign(0, -1))},
		{den, 0}, {0, den}, {den, den * 3}, {-den, den * 2}, {1e-39, 3e-39}, {1e-30, -3e-30},
		{big, big}, {big, -1e38}, {2e38, 3e38}, {-3e38, 1}, {1e-40, 0.5},
		{float32(math.NaN()), 0.5}, {0.5, float32(math.Inf(1))}, {float32(math.Inf(-1)), float32(math.Inf(1))},
		{1, float32(-1) + 1.0/(1<<23)}, {1e-3, 1e4}, {-0.25, 0.75},
	}
	var red, nir []float32
	for _, p := range pairs {
		red = append(red, p[0])
		nir = append(nir, p[1])
	}
	return computetest.NDVIOf(len(pairs), 1, red, nir)
}

// TestAwkwardValues checks values beyond the conformance suite against the
// float64 reference, and the exact results foresters see most: bare red
// (-1), pure NIR (+1), equal bands (0).
func TestAwkwardValues(t *testing.T) {
	b := newBackend(t)
	j := awkward()
	check(t, b, j)
	red, nir := j.Bands[0].Plane.F32(), j.Bands[1].Plane.F32()
	for i, want := range map[int]float32{0: 1, 1: -1, 2: 0} {
		if got := j.Out[0][i]; got != want {
			t.Errorf("red %g nir %g: got %.9g, want exactly %g", red[i], nir[i], got, want)
		}
	}
	// Nodata 0 on red matches -0 too, as float equality does.
	nd := computetest.NDVIOf(2, 1, []float32{float32(math.Copysign(0, -1)), 0.1}, []float32{0.5, 0.5})
	nd.Bands[0].NoData, nd.Bands[0].HasNoData = 0, true
	check(t, b, nd)
	if v := nd.Out[0][0]; v == v {
		t.Errorf("red -0 with nodata 0: got %g, want NaN", v)
	}
}

// TestManyChunks caps the grid at 3×2 work groups so that one image takes
// many dispatches, each a 2-D grid, with sizes that fit no group.
func TestManyChunks(t *testing.T) {
	b := New()
	b.tu.groupsX, b.tu.groupsY = 3, 2
	defer b.Close()
	need(t, b)
	for _, sz := range [][2]int{{1, 1}, {4095, 1}, {4096, 1}, {4097, 1}, {101, 103}, {1000, 77}} {
		check(t, b, noise(sz[0], sz[1], uint64(sz[0])))
	}
	check(t, b, awkward())
}

// TestParts keeps each plane in many small device buffers (parts of 4,
// 1024 and 4096 pixels, smaller and larger than one dispatch chunk) and
// runs the conformance suite in both modes, so that every transfer piece
// and dispatch crosses part boundaries; and checks
// that a bad CANOPY_GL_PART_MB makes gl unavailable with the reason.
func TestParts(t *testing.T) {
	for _, part := range []int{4, 1024, 4096} {
		t.Run(fmt.Sprintf("part=%d", part), func(t *testing.T) {
			b := New()
			b.tu.part = part
			b.tu.memory = MemoryGL // parts in CUDA memory are whole granules (2 MiB)
			if part == 4096 {
				b.tu.groupsX, b.tu.groupsY = 3, 2 // chunks of 6144 pixels > parts
			}
			defer b.Close()
			need(t, b)
			if !strings.Contains(b.limits, fmt.Sprintf("device buffers of %d pixels", part)) {
				t.Errorf("limits do not show the part size: %s", b.limits)
			}
			for _, m := range b.Modes() {
				b.SetMode(m)
				if part == 1024 {
					computetest.RunShort(t, b) // parts of 1024 pixels: every job crosses many
				}
				for _, sz := range [][2]int{{1, 1}, {3, 1}, {1023, 1}, {1024, 1}, {1025, 3}, {101, 103}} {
					check(t, b, noise(sz[0], sz[1], uint64(sz[1])))
				}
				check(t, b, awkward())
			}
			c, err := b.Ceilings(100003 * 4)
			if err != nil || c.DeviceCopy <= 0 || c.H2D <= 0 || c.D2H <= 0 {
				t.Errorf("Ceilings on parts: %+v, %v", c, err)
			}
		})
	}
	t.Run("env", func(t *testing.T) {
		t.Setenv(EnvPartMB, "lots")
		if info := New().Info(); info.Available || !strings.Contains(info.Reason, EnvPartMB) {
			t.Errorf("bad %s: %+v", EnvPartMB, info)
		}
		t.Setenv(EnvPartMB, "0")
		b := New()
		defer b.Close()
		need(t, b)
		check(t, b, noise(64, 64, 3))
		if !strings.Contains(b.limits, "device buffers of 1073741824 pixels") {
			t.Errorf("%s=0: %s", EnvPartMB, b.limits)
		}
	})
}

// TestMemory: CANOPY_GL_MEMORY picks where the device planes live. A bad
// value, or cuda where the GL device is no CUDA GPU, makes gl unavailable
// with the reason; gl always works. On a GPU (CANOPY_EXPECT_GPU) the
// default must put the planes in CUDA memory, and the conformance suite
// must pass there in both modes and on parts.
func TestMemory(t *testing.T) {
	if err := egl.Load(); err != nil {
		t.Skipf("gl backend cannot run here: %v", err)
	}
	t.Setenv(EnvMemory, "vram")
	if info := New().Info(); info.Available || !strings.Contains(info.Reason, EnvMemory) {
		t.Errorf("bad %s: %+v", EnvMemory, info)
	}
	t.Setenv(EnvMemory, MemoryGL)
	b := New()
	info := need(t, b)
	check(t, b, noise(65, 3, 1))
	if !strings.Contains(b.limits, "planes in GL memory") || strings.Contains(info.Device, "CUDA memory") {
		t.Errorf("%s=gl: %s; %s", EnvMemory, b.limits, info.Device)
	}
	b.Close()

	t.Setenv(EnvMemory, MemoryCUDA)
	c := New()
	defer c.Close()
	ci := c.Info()
	gpu := os.Getenv("CANOPY_EXPECT_GPU") != ""
	if !ci.Available {
		if gpu {
			t.Fatalf("%s=cuda on the GPU: %s", EnvMemory, ci.Reason)
		}
		if !strings.Contains(ci.Reason, "CUDA memory") {
			t.Errorf("%s=cuda unavailable without saying why: %s", EnvMemory, ci.Reason)
		}
		t.Logf("%s=cuda here: %s", EnvMemory, ci.Reason)
		return
	}
	t.Logf("%s=cuda: %s", EnvMemory, c.limits)
	c.tu.part = 1 << 20 // several parts at 2000²
	c.Close()
	for _, m := range c.Modes() {
		c.SetMode(m)
		computetest.Run(t, c)
		check(t, c, awkward())
		check(t, c, noise(2000, 1001, 4))
	}
	if gpu {
		t.Setenv(EnvMemory, "")
		d := New()
		defer d.Close()
		if di := need(t, d); !strings.Contains(di.Device, "planes in CUDA memory") {
			t.Errorf("default memory on the GPU: %s (%s)", di.Device, d.limits)
		}
	}
}

// TestBeyond65535Groups runs an image that needs more than 65535 work
// groups (256 invocations of 4 pixels each): 8193×8193 pixels. Each band
// (268 MB) also wraps the 128 MiB staging rings twice in both directions.
func TestBeyond65535Groups(t *testing.T) {
	if testing.Short() {
		t.Skip("67 Mpixels; a dispatch's size, not concurrency: it runs without -short (make test's run after the race detector's)")
	}
	b := newBackend(t)
	if err := b.SetMode(ModeMapped); err != nil {
		t.Fatal(err)
	}
	j := noise(8193, 8193, 3)
	if groups := (j.Pixels() + 1023) / 1024; groups <= 65535 {
		t.Fatalf("test image needs only %d groups", groups)
	}
	check(t, b, j)
}

// TestTimings checks the phase model: all phases measured, the total
// covering them, the kernel's timer within its wall clock.
func TestTimings(t *testing.T) {
	b := newBackend(t)
	j := noise(2048, 1024, 6)
	check(t, b, j)
	tm := check(t, b, j)
	if tm.Upload <= 0 || tm.Kernel <= 0 || tm.Download <= 0 {
		t.Errorf("a phase was not measured: %+v", tm)
	}
	if tm.Total < tm.Upload+tm.Kernel+tm.Download {
		t.Errorf("total %v < upload %v + kernel %v + download %v", tm.Total, tm.Upload, tm.Kernel, tm.Download)
	}
	timer, wall := b.LastKernelClocks()
	t.Logf("kernel: timer %v, wall %v, used %v", timer, wall, tm.Kernel)
	if wall <= 0 || tm.Kernel > wall {
		t.Errorf("kernel %v outside its wall clock %v", tm.Kernel, wall)
	}
	if timer > 0 && timer <= wall && tm.Kernel != timer {
		t.Errorf("plausible timer %v not used (kernel %v)", timer, tm.Kernel)
	}
}

// TestConcurrentCallers runs one backend from several goroutines at once,
// each with its own size; every result must be right.
func TestConcurrentCallers(t *testing.T) {
	b := newBackend(t)
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			j := noise(100+g*37, 50+g, uint64(g))
			for r := 0; r < 5; r++ {
				if _, err := compute.RunJob(b, j); err != nil {
					t.Error(err)
					return
				}
				if rep := compute.VerifyJob(j)[0]; !rep.OK() {
					t.Errorf("goroutine %d run %d: %s", g, r, rep)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestTwoBackends runs two backends, two contexts on two threads, side by
// side, as the GUI's backend does beside another; closing one leaves the
// other working.
func TestTwoBackends(t *testing.T) {
	a, b := newBackend(t), newBackend(t)
	var wg sync.WaitGroup
	for i, x := range []*Backend{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			j := noise(513, 257, uint64(10+i))
			for r := 0; r < 3; r++ {
				if _, err := compute.RunJob(x, j); err != nil {
					t.Error(err)
					return
				}
				if rep := compute.VerifyJob(j)[0]; !rep.OK() {
					t.Errorf("backend %d: %s", i, rep)
				}
			}
		}()
	}
	wg.Wait()
	a.Close()
	check(t, b, noise(99, 99, 12))
	// And the closed one starts again on demand.
	check(t, a, noise(77, 3, 13))
}

func TestCeilings(t *testing.T) {
	b := newBackend(t)
	c, err := b.Ceilings(64 << 20)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("device copy %.1f GB/s (shader %.1f, glCopyBufferSubData %.1f), h2d %.1f GB/s, d2h %.1f GB/s",
		c.DeviceCopy, b.copies.shader, b.copies.api, c.H2D, c.D2H)
	if c.DeviceCopy != max(b.copies.shader, b.copies.api) || b.copies.shader <= 0 || b.copies.api <= 0 {
		t.Errorf("device copy %v is not the better of shader %v and glCopyBufferSubData %v", c.DeviceCopy, b.copies.shader, b.copies.api)
	}
	for name, v := range map[string]float64{"device copy": c.DeviceCopy, "h2d": c.H2D, "d2h": c.D2H} {
		if !(v > 0) || math.IsInf(v, 0) {
			t.Errorf("%s ceiling %v", name, v)
		}
	}
	if _, err := b.Ceilings(0); err == nil {
		t.Error("Ceilings(0) succeeded")
	}
}

// TestWorkPerInvocation runs the conformance suite with other numbers of
// vec4s per invocation and spans per work group than the defaults, also on
// a grid capped at 3×2 groups, so that any of them can be the default.
func TestWorkPerInvocation(t *testing.T) {
	n := 0
	for _, v := range [][3]int{{1, 1, 256}, {2, 1, 256}, {4, 1, 256}, {2, 3, 256}, {1, 16, 64}, {2, 4, 1024}} {
		for _, capped := range []bool{false, true} {
			if v == [3]int{DefaultVec4s, DefaultIters, DefaultLocal} {
				continue // TestConformance, TestManyChunks
			}
			n++
			if testing.Short() && n%3 != 1 {
				// -short is the race detector's run in make test, where
				// the host side is the same for every variant: one in
				// three (uncapped and capped among them); all in the full
				// run.
				continue
			}
			t.Run(fmt.Sprintf("vec4s=%d/iters=%d/local=%d/capped=%v", v[0], v[1], v[2], capped), func(t *testing.T) {
				b := New()
				b.tu.vec4s, b.tu.iters, b.tu.local = v[0], v[1], v[2]
				if capped {
					b.tu.groupsX, b.tu.groupsY = 3, 2
				}
				defer b.Close()
				need(t, b)
				// The short sizes: 65537×1 and 257×257 already take
				// several groups and the capped grid's stride loop in
				// every variant; TestConformance runs the large ones.
				computetest.RunShort(t, b)
				check(t, b, awkward())
			})
		}
	}
}

func TestBadInput(t *testing.T) {
	b := newBackend(t)
	j := noise(4, 4, 1)
	j.Out[0] = j.Out[0][:15]
	if _, err := b.RunJob(j); err == nil || !strings.Contains(err.Error(), "output") {
		t.Errorf("short output: %v", err)
	}
	j = noise(4, 4, 1)
	j.Bands[1].Plane.Data = j.Bands[1].Plane.Data[:40]
	if _, err := b.RunJob(j); err == nil {
		t.Error("short NIR band accepted")
	}
}

// TestDisplayChoice restricts the display through CANOPY_EGL: a bad value
// is reported as such, software gives llvmpipe, hardware anything but
// llvmpipe, and surfaceless whatever driver implements that platform (Mesa
// and the NVIDIA driver both do).
func TestDisplayChoice(t *testing.T) {
	if err := egl.Load(); err != nil {
		t.Skipf("gl backend cannot run here: %v", err)
	}
	t.Setenv(EnvDisplay, "window")
	if info := New().Info(); info.Available || !strings.Contains(info.Reason, EnvDisplay) {
		t.Errorf("bad %s value: %+v", EnvDisplay, info)
	}
	for _, k := range []string{"hardware", "software", "surfaceless"} {
		t.Setenv(EnvDisplay, k)
		b := New()
		info := b.Info()
		if !info.Available {
			t.Logf("%s: unavailable: %s", k, info.Reason)
			continue
		}
		sw := strings.Contains(strings.ToLower(info.Device), "llvmpipe")
		if (k == "hardware" && sw) || (k == "software" && !sw) {
			t.Errorf("%s display gave %s", k, info.Device)
		}
		check(t, b, noise(31, 9, 1))
		b.Close()
		t.Logf("%s: %s", k, info.Device)
	}
}

// TestCloseIdempotent closes twice and uses the backend afterwards.
func TestCloseIdempotent(t *testing.T) {
	b := newBackend(t)
	check(t, b, noise(8, 8, 1))
	b.Close()
	b.Close()
	start := time.Now()
	tm := check(t, b, noise(8, 8, 2))
	if tm.Setup <= 0 || tm.Setup > time.Since(start) {
		t.Errorf("restart setup %v not within the call", tm.Setup)
	}
}

// TestNoLibEGL runs this test binary again with a libEGL that does not
// exist: the backend must say so in Info, fail a job with that reason,
// and leave the process running.
func TestNoLibEGL(t *testing.T) {
	if os.Getenv("CANOPY_GLBACK_CHILD") == "1" {
		b := New()
		info := b.Info()
		if info.Available || !strings.Contains(info.Reason, "libEGL-missing.so.1 not found") {
			t.Fatalf("Info without libEGL = %+v", info)
		}
		if _, err := b.RunJob(noise(2, 2, 1)); err == nil || !strings.Contains(err.Error(), "not found") {
			t.Fatalf("a job without libEGL: %v", err)
		}
		return
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestNoLibEGL$", "-test.count=1")
	cmd.Env = append(os.Environ(), "CANOPY_GLBACK_CHILD=1", "CANOPY_LIBEGL=libEGL-missing.so.1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
}
