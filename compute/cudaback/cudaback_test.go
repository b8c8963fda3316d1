package cudaback

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"unsafe"

	"canopy/compute"
	"canopy/compute/computetest"
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

// sameAsPixel checks got bit for bit against compute.Pixel (NaN payloads
// aside) and against the float64 reference.
func sameAsPixel(t testing.TB, in compute.Input, got []float32) {
	t.Helper()
	if rep := compute.Verify(in, got); !rep.OK() {
		i := max(rep.Worst, 0)
		t.Fatalf("%s: pixel %d red %g nir %g got %g", rep, i, in.Red[i], in.NIR[i], got[i])
	}
	for i := range got {
		want := compute.Pixel(in.Red[i], in.NIR[i], in.Nodata)
		g := got[i]
		if want != want || g != g {
			if (want != want) != (g != g) {
				t.Fatalf("pixel %d red %g nir %g: got %g, Go kernel %g", i, in.Red[i], in.NIR[i], g, want)
			}
			continue
		}
		if math.Float32bits(g) != math.Float32bits(want) {
			t.Fatalf("pixel %d red %g nir %g: got %g (%#08x), Go kernel %g (%#08x)", i, in.Red[i], in.NIR[i], g, math.Float32bits(g), want, math.Float32bits(want))
		}
	}
}

func poisoned(n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = 12345
	}
	return out
}

// edgeInput is a w×h image of awkward pixels: 0/0, sums of exactly zero,
// NaN, ±Inf, negatives, nodata values, and random reflectances.
func edgeInput(w, h int, seed uint64, nodata bool) compute.Input {
	g := rand.New(rand.NewPCG(seed, 5))
	special := []float32{0, float32(math.Copysign(0, -1)), 1, -1, 0.5, -0.5, 1e-3, 1e-40, 1e4, -9999,
		float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 65535, 3e38, -3e38}
	in := compute.Input{Width: w, Height: h, Red: make([]float32, w*h), NIR: make([]float32, w*h)}
	for i := range in.Red {
		switch k := g.IntN(10); {
		case k < 3:
			in.Red[i], in.NIR[i] = special[g.IntN(len(special))], special[g.IntN(len(special))]
		case k == 3:
			v := float32(g.Float64())
			in.Red[i], in.NIR[i] = v, -v
		default:
			in.Red[i], in.NIR[i] = float32(g.Float64()*1.2-0.1), float32(g.Float64()*1.2-0.1)
		}
	}
	if nodata {
		in.Nodata = compute.Nodata{Red: -9999, NIR: 0, HasRed: true, HasNIR: true}
	}
	return in
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
	if _, err := b.Setup(64, 64); err == nil {
		t.Error("Setup succeeded without a driver")
	}
	in := edgeInput(8, 8, 1, false)
	if _, err := b.Run(in, make([]float32, 64)); err == nil {
		t.Error("Run succeeded without a driver")
	}
	if _, err := b.RunUint16(make([]uint16, 64), make([]uint16, 64), 8, 8, compute.Nodata{}, make([]float32, 64)); err == nil {
		t.Error("RunUint16 succeeded without a driver")
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
	in := edgeInput(4, 4, 1, false)
	if _, err := b.Run(in, make([]float32, 15)); err == nil || !strings.Contains(err.Error(), "output") {
		t.Errorf("short output: %v", err)
	}
	in.NIR = in.NIR[:15]
	if _, err := b.Run(in, make([]float32, 16)); err == nil {
		t.Error("short nir band accepted")
	}
	if _, err := b.RunUint16(make([]uint16, 16), make([]uint16, 15), 4, 4, compute.Nodata{}, make([]float32, 16)); err == nil {
		t.Error("short uint16 nir band accepted")
	}
	if _, err := b.RunUint16(nil, nil, 0, 4, compute.Nodata{}, nil); err == nil {
		t.Error("zero width accepted")
	}
	if _, err := b.Setup(-1, 4); err == nil {
		t.Error("negative size accepted by Setup")
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
func TestGrid(t *testing.T) {
	for _, u16 := range []bool{false, true} {
		vec, perBlock := 4, 256*8
		for cnt := 1; cnt < 20000; cnt += 1 + cnt/7 {
			g := int(grid(cnt, u16))
			whole := cnt - cnt%vec
			if u16 {
				whole = cnt - cnt%8
			}
			if g < 1 || g*perBlock < whole || (g > 1 && (g-1)*perBlock >= whole) {
				t.Fatalf("grid(%d, u16 %v) = %d", cnt, u16, g)
			}
		}
	}
}

// Every mode and host memory strategy gives the Go kernel's bits on the
// conformance cases and on awkward pixels, including chunk and vector
// tails and buffers large enough to be page-locked in place.
func TestMatchesGoKernel(t *testing.T) {
	b := gpu(t)
	cases := computetest.Cases(testing.Short())
	cases = append(cases,
		computetest.Case{Name: "edges 7x3", In: edgeInput(7, 3, 1, true)},
		computetest.Case{Name: "edges 1031x1033 nodata (in place)", In: edgeInput(1031, 1033, 2, true)},
		computetest.Case{Name: "edges 2053x1 (chunk tail)", In: edgeInput(2053, 1, 3, false)},
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
					out := poisoned(c.In.Pixels())
					tm, err := b.Run(c.In, out)
					if err != nil {
						t.Fatalf("%s: %v", c.Name, err)
					}
					sameAsPixel(t, c.In, out)
					st := b.LastRun()
					if st.Chunks < 1 || (cfg.mode == ModeSequential && st.Chunks != 1) {
						t.Errorf("%s: %d chunks in %s mode", c.Name, st.Chunks, cfg.mode)
					}
					big := c.In.Pixels()*4 >= RegisterMin
					if want := cfg.host == HostRegister && big; st.Direct != [3]bool{want, want, want} && st.RegisterError == "" {
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

// u16Input returns random sensor counts with zeros (0/0) and a nodata value
// sprinkled in, and the same bands as float32.
func u16Input(w, h int, seed uint64, nd compute.Nodata) (red, nir []uint16, in compute.Input) {
	g := rand.New(rand.NewPCG(seed, 16))
	n := w * h
	red, nir = make([]uint16, n), make([]uint16, n)
	in = compute.Input{Width: w, Height: h, Red: make([]float32, n), NIR: make([]float32, n), Nodata: nd}
	for i := range red {
		switch g.IntN(12) {
		case 0:
			red[i], nir[i] = 0, 0
		case 1:
			red[i], nir[i] = 65535, uint16(g.IntN(65536))
		case 2:
			red[i], nir[i] = uint16(g.IntN(65536)), 0
		default:
			red[i], nir[i] = uint16(300+g.IntN(3000)), uint16(1500+g.IntN(5000))
		}
		in.Red[i], in.NIR[i] = float32(red[i]), float32(nir[i])
	}
	return red, nir, in
}

// uint16 bands converted on the GPU give exactly Run's result on the
// float32 bands.
func TestUint16(t *testing.T) {
	b := gpu(t)
	sizes := [][2]int{{1, 1}, {7, 3}, {1, 9}, {257, 255}, {1031, 1033}, {4099, 1025}}
	if !testing.Short() {
		sizes = append(sizes, [2]int{10980, 10980})
	}
	nds := []compute.Nodata{{}, {Red: 65535, HasRed: true}, {NIR: 0, HasNIR: true}, {Red: 0, NIR: 65535, HasRed: true, HasNIR: true}}
	for _, cfg := range configs {
		for _, chunkPx := range []int{DefaultChunkPixels, 4 * ChunkAlign} {
			if chunkPx != DefaultChunkPixels && cfg.mode != ModeOverlapped {
				continue
			}
			t.Run(fmt.Sprintf("%s/%s/chunk%d", cfg.mode, cfg.host, chunkPx), func(t *testing.T) {
				configure(t, b, cfg.mode, cfg.host)
				if err := b.SetPipeline(chunkPx, DefaultStreams); err != nil {
					t.Fatal(err)
				}
				sz := sizes
				if chunkPx != DefaultChunkPixels {
					sz = sizes[:6] // a tile in 1024-pixel chunks would be 117,000 of them
				}
				uint16Sizes(t, b, sz, nds)
			})
		}
	}
}

// uint16Sizes runs every size with a nodata setting from nds in turn.
func uint16Sizes(t *testing.T, b *Backend, sizes [][2]int, nds []compute.Nodata) {
	t.Helper()
	for k, sz := range sizes {
		nd := nds[k%len(nds)]
		red, nir, in := u16Input(sz[0], sz[1], uint64(k), nd)
		out := poisoned(in.Pixels())
		if _, err := b.RunUint16(red, nir, sz[0], sz[1], nd, out); err != nil {
			t.Fatalf("%dx%d: %v", sz[0], sz[1], err)
		}
		sameAsPixel(t, in, out)
		if st := b.LastRun(); st.Input != "uint16" || st.UploadBytes != 4*in.Pixels() {
			t.Errorf("%dx%d: stats %+v", sz[0], sz[1], st)
		}
	}
}

// A Sentinel-2 tile, 10980², in both modes.
func TestSentinelTile(t *testing.T) {
	if testing.Short() {
		t.Skip("10980x10980 skipped in -short mode")
	}
	b := gpu(t)
	r, n, err := compute.Fake(compute.SceneLandscape, 10980, 10980, 7)
	if err != nil {
		t.Fatal(err)
	}
	in, err := compute.PairInput(r, n)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(in.Red); i += 9973 {
		in.Red[i], in.NIR[i] = 0, 0
	}
	out := make([]float32, in.Pixels())
	for _, cfg := range configs {
		configure(t, b, cfg.mode, cfg.host)
		for i := range out {
			out[i] = 12345
		}
		tm, err := b.Run(in, out)
		if err != nil {
			t.Fatalf("%s/%s: %v", cfg.mode, cfg.host, err)
		}
		if rep := compute.Verify(in, out); !rep.OK() {
			t.Fatalf("%s/%s: %s", cfg.mode, cfg.host, rep)
		}
		t.Logf("%s/%s: setup %v upload %v kernel %v download %v total %v (%+v)", cfg.mode, cfg.host, tm.Setup, tm.Upload, tm.Kernel, tm.Download, tm.Total, b.LastRun().Direct)
	}
}

// Red and nir as halves of one slice (as a two-band file reads) share a
// page: they are registered together, and the result is right.
func TestSharedAllocation(t *testing.T) {
	b := gpu(t)
	const w, h = 1500, 1000
	n := w * h
	in := edgeInput(w, h, 9, true)
	both := make([]float32, 2*n+3)
	copy(both[3:], in.Red)
	copy(both[3+n:], in.NIR)
	shared := compute.Input{Width: w, Height: h, Red: both[3 : 3+n], NIR: both[3+n : 3+2*n], Nodata: in.Nodata}
	for _, mode := range []string{ModeOverlapped, ModeSequential} {
		configure(t, b, mode, HostRegister)
		out := poisoned(n)
		if _, err := b.Run(shared, out); err != nil {
			t.Fatal(err)
		}
		sameAsPixel(t, shared, out)
		if st := b.LastRun(); st.Direct != [3]bool{true, true, true} {
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
	in := edgeInput(1200, 1000, 11, false)
	out := poisoned(in.Pixels())
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
	if _, err := b.Run(in, out); err != nil {
		t.Fatal(err)
	}
	sameAsPixel(t, in, out)
	st := b.LastRun()
	if st.Direct != [3]bool{true, true, false} || st.RegisterError == "" {
		t.Errorf("direct %v, register error %q: want the output staged with a reason", st.Direct, st.RegisterError)
	}
	if !strings.Contains(st.RegisterError, "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED") {
		t.Errorf("register error %q does not name the driver's code", st.RegisterError)
	}
}

// Sizes grow and shrink, float32 and uint16 alternate, modes switch, the
// backend is closed and used again: every result is right and set-up time
// is reported exactly when something had to be set up.
func TestReuse(t *testing.T) {
	b := gpu(t)
	sizes := [][2]int{{64, 64}, {2000, 1100}, {1, 1}, {513, 257}, {2000, 1100}, {64, 64}}
	for k, sz := range sizes {
		for _, mode := range []string{ModeOverlapped, ModeSequential} {
			configure(t, b, mode, HostRegister)
			in := edgeInput(sz[0], sz[1], uint64(k), k%2 == 0)
			out := poisoned(in.Pixels())
			if _, err := b.Run(in, out); err != nil {
				t.Fatalf("%dx%d %s: %v", sz[0], sz[1], mode, err)
			}
			sameAsPixel(t, in, out)
			// Same buffers again: nothing to set up.
			tm, err := b.Run(in, out)
			if err != nil {
				t.Fatal(err)
			}
			if tm.Setup != 0 {
				t.Errorf("%dx%d %s: second run on the same buffers reports setup %v", sz[0], sz[1], mode, tm.Setup)
			}
			red, nir, in16 := u16Input(sz[0], sz[1], uint64(k), compute.Nodata{})
			out16 := poisoned(in16.Pixels())
			if _, err := b.RunUint16(red, nir, sz[0], sz[1], compute.Nodata{}, out16); err != nil {
				t.Fatal(err)
			}
			sameAsPixel(t, in16, out16)
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
	in := edgeInput(300, 300, 99, false)
	b.Close()
	tm, err := b.Run(in, poisoned(in.Pixels()))
	if err != nil || tm.Setup <= 0 {
		t.Errorf("run after Close: setup %v, %v", tm.Setup, err)
	}
}

// In sequential mode the phases are consecutive, so together they fit in
// the total; in overlapped mode they overlap.
func TestTimingsAddUp(t *testing.T) {
	b := gpu(t)
	r, n, err := compute.Fake(compute.SceneNoise, 4096, 4096, 3)
	if err != nil {
		t.Fatal(err)
	}
	in, _ := compute.PairInput(r, n)
	out := make([]float32, in.Pixels())
	configure(t, b, ModeSequential, HostRegister)
	if _, err := b.Run(in, out); err != nil {
		t.Fatal(err)
	}
	tm, err := b.Run(in, out)
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
	if _, err := b.Run(in, out); err != nil {
		t.Fatal(err)
	}
	tm2, err := b.Run(in, out)
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

// A kernel file named by FatbinEnv that does not exist is a reason, not a
// crash.
func TestFatbinOverrideMissing(t *testing.T) {
	info := New().Info()
	computetest.SkipUnlessGPU(t, info.Available, "cuda: "+info.Reason)
	t.Setenv(FatbinEnv, "/nonexistent/ndvi.fatbin")
	info = New().Info()
	if info.Available || !strings.Contains(info.Reason, FatbinEnv) {
		t.Errorf("with a missing %s file: %+v", FatbinEnv, info)
	}
}

// Two backends given the same slices (the command line's benchmark makes
// one per mode) share the registration: both read them in place, and
// closing one leaves the other working.
func TestTwoBackendsShareBuffers(t *testing.T) {
	a := gpu(t)
	b := gpu(t)
	configure(t, b, ModeSequential, HostRegister)
	in := edgeInput(1100, 1000, 31, true)
	out := poisoned(in.Pixels())
	for k, be := range []*Backend{a, b, a} {
		if _, err := be.Run(in, out); err != nil {
			t.Fatal(err)
		}
		sameAsPixel(t, in, out)
		if st := be.LastRun(); st.Direct != [3]bool{true, true, true} {
			t.Errorf("run %d: direct %v (%s), want the shared registration used", k, st.Direct, st.RegisterError)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	for i := range out {
		out[i] = 12345
	}
	if _, err := b.Run(in, out); err != nil {
		t.Fatal(err)
	}
	sameAsPixel(t, in, out)
	if st := b.LastRun(); st.Direct != [3]bool{true, true, true} {
		t.Errorf("after the other backend closed: direct %v (%s)", st.Direct, st.RegisterError)
	}
}
