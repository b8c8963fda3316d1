package cudaback

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"canopy/compute"
	"canopy/compute/computetest"
	"canopy/compute/fake"
	"canopy/compute/index"
)

// Run with: go test -run '^$' -bench Job -benchtime 10x ./compute/cudaback

// eviScene is an EVI job over the 10980² noise scene in float32: red and
// NIR from fake.RedNIR, blue derived from red; 16 bytes a pixel.
var eviScene = sync.OnceValues(func() (*compute.Job, error) {
	const size = 10980
	r, n, err := fake.RedNIR(fake.Noise, size, size, 1)
	if err != nil {
		return nil, err
	}
	blue := make([]float32, size*size)
	for i, v := range r.Data {
		blue[i] = 0.5*v + 0.01
	}
	bands := []compute.BandInput{
		{Role: "blue", Plane: compute.PlaneOf(size, size, blue), Radiometry: compute.Identity()},
		{Role: "red", Plane: compute.PlaneOf(size, size, r.Data), Radiometry: compute.Identity()},
		{Role: "nir", Plane: compute.PlaneOf(size, size, n.Data), Radiometry: compute.Identity()},
	}
	return compute.NewJob(bands, nil, []string{"evi"}, []*index.Expr{index.MustParse(eviFormula)})
})

// spotCheck compares k random pixels of every output with the float32
// definition (computetest.Eval32Job), which the generated kernels equal
// bit for bit.
func spotCheck(b *testing.B, j *compute.Job, k int) {
	g := rand.New(rand.NewPCG(1, 1))
	in := make([]float32, len(j.Bands))
	regs := make([]float32, j.Program.NumRegs)
	want := make([]float32, len(j.Out))
	for range k {
		i := g.IntN(j.Pixels())
		computetest.Eval32Job(j, i, in, regs, want)
		for o, w := range want {
			if got := j.Out[o][i]; got != w && (got == got || w == w) {
				b.Fatalf("%s pixel %d: got %g, want %g (truth %g)", j.Names[o], i, got, w, j.Reference64(o, i))
			}
		}
	}
}

// runJobBench times b.N runs of j after a warm-up run that sets up
// (compiles, allocates, registers) and reports the medians, the kernel's
// bandwidth against the device copy ceiling, and the set-up.
func runJobBench(b *testing.B, be *Backend, j *compute.Job) JobStats {
	warm, err := compute.RunJob(be, j)
	if err != nil {
		b.Fatal(err)
	}
	first := be.LastJob()
	ts := make([]compute.Timings, 0, b.N)
	b.ResetTimer()
	for range b.N {
		t, err := compute.RunJob(be, j)
		if err != nil {
			b.Fatal(err)
		}
		if t.Setup != 0 {
			b.Fatalf("a repeated run set up for %v", t.Setup)
		}
		ts = append(ts, t)
	}
	b.StopTimer()
	report(b, ts, warm.Setup, 1, j.Bytes())
	b.ReportMetric(ceil.DeviceCopy, "copy-GB/s")
	st := be.LastJob()
	b.ReportMetric(float64(st.Chunks), "chunks")
	b.ReportMetric(float64(first.Registers), "registers")
	b.ReportMetric(float64(first.Compile)/1e6, "jit-ms")
	b.ReportMetric(float64(st.UploadBytes)/1e6, "up-MB")
	b.ReportMetric(float64(st.DownloadBytes)/1e6, "down-MB")
	return st
}

// BenchmarkJobEVI runs EVI over three float32 bands of 10980² (16 bytes a
// pixel): sequential, whose kernel is timed alone (kernel-GB/s against the
// device copy ceiling of the same run, kernel-%copy), with grids capped at
// 8 and 32 blocks per SM for the grid-stride loop, and overlapped.
func BenchmarkJobEVI(b *testing.B) {
	be := benchGPU(b)
	be.SetPipeline(DefaultChunkPixels, DefaultStreams)
	configure(b, be, ModeSequential, HostRegister)
	j, err := eviScene()
	if err != nil {
		b.Fatal(err)
	}
	sms := be.s.dev.SMs
	for _, c := range []struct {
		name, mode string
		grid       int
	}{
		{"sequential", ModeSequential, 0},
		{"sequential/grid-8-per-SM", ModeSequential, 8 * sms},
		{"sequential/grid-32-per-SM", ModeSequential, 32 * sms},
		{"overlapped", ModeOverlapped, 0},
	} {
		b.Run(c.name, func(b *testing.B) {
			be.s.gridCap = c.grid
			defer func() { be.s.gridCap = 0 }()
			j.Mode = c.mode
			runJobBench(b, be, j)
		})
	}
	verifyJob(b, j)
}

// BenchmarkJobJIT is the set-up of a new expression: each iteration runs a
// formula never seen before (its constant carries the iteration and the
// time, so that neither the backend's cache nor the driver's disk cache
// has it) on a small image whose buffers are already allocated, so that
// setup-ms is generation plus the driver's JIT; cached-setup-ms is the
// same job run again.
func BenchmarkJobJIT(b *testing.B) {
	be := benchGPU(b)
	configure(b, be, ModeSequential, HostRegister)
	salt := float64(time.Now().UnixNano()%1_000_000) / 1e7
	var fresh atomic.Int64 // every formula new, across the benchmark's reruns
	for _, c := range []struct {
		name    string
		formula func(k float64) []string
	}{
		{"ndvi-like", func(k float64) []string { return []string{fmt.Sprintf("(nir - red) / (nir + red + %g)", k)} }},
		{"evi-like", func(k float64) []string {
			return []string{fmt.Sprintf("2.5 * (nir - red) / (nir + 6 * red - 7.5 * blue + %g)", k)}
		}},
		{"10-indices", func(k float64) []string {
			fs := []string{fmt.Sprintf("(nir - red) / (nir + red + %g)", k)}
			for _, c := range index.Catalogue()[1:10] {
				fs = append(fs, c.Formula)
			}
			return fs
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			bands := jitBands(256)
			var setups, compiles, walls, cached []time.Duration
			regs := 0
			for i := range b.N + 1 {
				fs := c.formula(1 + salt + float64(fresh.Add(1))/1e3)
				var exprs []*index.Expr
				for _, f := range fs {
					exprs = append(exprs, index.MustParse(f))
				}
				j, err := compute.NewJob(bands, nil, fs, exprs)
				if err != nil {
					b.Fatal(err)
				}
				t, err := compute.RunJob(be, j)
				if err != nil {
					b.Fatal(err)
				}
				st := be.LastJob()
				if !st.JIT {
					b.Fatal("a new formula was not compiled")
				}
				again, err := compute.RunJob(be, j)
				if err != nil {
					b.Fatal(err)
				}
				if i == 0 { // the first sizes the buffers too
					continue
				}
				setups, compiles, walls, cached = append(setups, t.Setup), append(compiles, st.Compile), append(walls, st.JITWall), append(cached, again.Setup)
				regs = st.Registers
			}
			ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
			b.ReportMetric(ms(median(setups)), "setup-ms")
			b.ReportMetric(ms(slicesMax(setups)), "max-setup-ms")
			b.ReportMetric(ms(median(compiles)), "jit-ms")
			b.ReportMetric(ms(median(walls)), "jit-wall-ms")
			b.ReportMetric(ms(slicesMax(cached)), "cached-setup-ms")
			b.ReportMetric(float64(regs), "registers")
		})
	}
}

func slicesMax(ds []time.Duration) time.Duration {
	m := time.Duration(0)
	for _, d := range ds {
		m = max(m, d)
	}
	return m
}

// jitBands are size² float32 bands of every role.
func jitBands(size int) []compute.BandInput {
	g := rand.New(rand.NewPCG(5, 5))
	var bands []compute.BandInput
	for _, role := range index.Roles {
		p := compute.NewPlane(compute.F32, size, size)
		for i, s := 0, p.F32(); i < len(s); i++ {
			s[i] = float32(g.Float64())
		}
		bands = append(bands, compute.BandInput{Role: role, Plane: p, Radiometry: compute.Identity()})
	}
	return bands
}

// s2Bands are the roles of the first 10 catalogue indices over 10980², as
// Sentinel-2 L2A stores them: uint16 counts 1000 to 7999 ((DN - 1000) /
// 10000 is reflectance), nodata 0.
var s2Bands = sync.OnceValue(func() []compute.BandInput {
	const size = 10980
	used := map[string]bool{}
	for _, c := range index.Catalogue()[:10] {
		for _, r := range c.Expr.Roles() {
			used[r] = true
		}
	}
	var bands []compute.BandInput
	var wg sync.WaitGroup
	for r, role := range index.Roles {
		if !used[role] {
			continue
		}
		p := compute.NewPlane(compute.U16, size, size)
		bands = append(bands, compute.BandInput{Role: role, Plane: p, Radiometry: compute.Radiometry{Add: -1000, Scale: 1e-4}, HasNoData: true})
		s := p.U16()
		for lo := 0; lo < len(s); lo += 1 << 22 {
			wg.Go(func() {
				for i := lo; i < min(lo+1<<22, len(s)); i++ {
					h := uint32(i)*2654435761 ^ uint32(r+1)*0x9e3779b9
					h ^= h >> 15
					h *= 0x85ebca6b
					h ^= h >> 13
					s[i] = uint16(1000 + h%7000)
				}
			})
		}
	}
	wg.Wait()
	return bands
})

// benchOuts are 10 output planes of 10980², shared by the benchmarks.
var benchOuts = sync.OnceValue(func() [][]float32 {
	outs := make([][]float32, 10)
	for i := range outs {
		outs[i] = compute.NewOutput(10980 * 10980)
	}
	return outs
})

// BenchmarkJobIndicesPerUpload is the chapter's sweep from the GPU side:
// 1, 2, 5 and 10 catalogue indices (the first of the catalogue) in one job
// over Sentinel-2-like uint16 bands of 10980², each band uploaded once
// whatever the number of indices, with transfers (total-ms, overlapped
// and sequential) and without (kernel-ms).
func BenchmarkJobIndicesPerUpload(b *testing.B) {
	be := benchGPU(b)
	be.SetPipeline(DefaultChunkPixels, DefaultStreams)
	configure(b, be, ModeOverlapped, HostRegister)
	bands := s2Bands()
	cat := index.Catalogue()
	outs := benchOuts()
	for _, k := range []int{1, 2, 5, 10} {
		var names []string
		var exprs []*index.Expr
		for _, c := range cat[:k] {
			names, exprs = append(names, c.Name), append(exprs, c.Expr)
		}
		j, err := compute.PlanJob(bands, nil, names, exprs)
		if err != nil {
			b.Fatal(err)
		}
		j.Out = outs[:k]
		for _, mode := range []string{ModeOverlapped, ModeSequential} {
			b.Run(fmt.Sprintf("indices-%d/bands-%d/%s", k, len(j.Bands), mode), func(b *testing.B) {
				j.Mode = mode
				runJobBench(b, be, j)
				spotCheck(b, j, 4096)
			})
		}
	}
}

// BenchmarkJobChunks sweeps the overlapped mode's chunk size, in bytes
// moved a chunk (both ways), on three jobs of 10980² from the caller's
// page-locked slices: EVI over float32 bands (12 bytes up, 4 down a
// pixel), NDVI over uint16 (4 up, 4 down) and 10 indices over 7 uint16
// bands (14 up, 40 down).
func BenchmarkJobChunks(b *testing.B) {
	be := benchGPU(b)
	be.SetPipeline(DefaultChunkPixels, DefaultStreams)
	configure(b, be, ModeOverlapped, HostRegister)
	defer func() { be.s.jobChunkBytes = 0 }()
	evi, err := eviScene()
	if err != nil {
		b.Fatal(err)
	}
	bands := s2Bands()
	cat := index.Catalogue()
	jobs := []*compute.Job{evi}
	for _, k := range []int{1, 10} {
		var names []string
		var exprs []*index.Expr
		for _, c := range cat[:k] {
			names, exprs = append(names, c.Name), append(exprs, c.Expr)
		}
		j, err := compute.PlanJob(bands, nil, names, exprs)
		if err != nil {
			b.Fatal(err)
		}
		j.Out = benchOuts()[:k]
		jobs = append(jobs, j)
	}
	for _, j := range jobs {
		j.Mode = ModeOverlapped
		for _, mib := range []int{16, 32, 64, 128, 192} {
			b.Run(fmt.Sprintf("%s/%s/chunk-%dMiB", strings.Join(j.Names[:min(2, len(j.Names))], "+"), j.Bands[0].Plane.Type, mib), func(b *testing.B) {
				be.s.jobChunkBytes = mib << 20
				runJobBench(b, be, j)
			})
		}
	}
}
