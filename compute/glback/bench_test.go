package glback

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"canopy/compute"
	"canopy/compute/computetest"
	"canopy/compute/fake"
	"canopy/compute/par"
	"canopy/native/cpu"
)

// benchJobs are NDVI jobs over the noise scene at side², made once per
// process.
var benchJobs = sync.OnceValue(func() map[int]*compute.Job {
	m := map[int]*compute.Job{}
	for _, side := range []int{2048, 10980} {
		m[side] = computetest.NDVIJob(fake.Noise, side, side, 1)
	}
	return m
})

func ndviJob(side int) *compute.Job { return benchJobs()[side] }

// BenchmarkRun times NDVI jobs at the design's sizes (2048² and a
// Sentinel-2 tile, 10980²) in both transfer modes, and reports each
// phase's median, the kernel's bandwidth (the bytes the job reads and
// writes) and the transfers' rates against the ceilings measured on the
// same device right after.
func BenchmarkRun(b *testing.B) {
	for _, side := range []int{2048, 10980} {
		for _, mode := range []string{ModeMapped, ModeSubData} {
			b.Run(fmt.Sprintf("size=%d/mode=%s", side, mode), func(b *testing.B) {
				g := New()
				defer g.Close()
				need(b, g)
				runBench(b, g, ndviJob(side), mode)
			})
		}
	}
}

// BenchmarkVec4s compares the vec4s each invocation of a job's shader
// computes, NDVI at 10980² in mapped mode.
func BenchmarkVec4s(b *testing.B) {
	for _, v := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("vec4s=%d", v), func(b *testing.B) {
			g := New()
			g.tu.jobVec4s = v
			defer g.Close()
			need(b, g)
			runBench(b, g, ndviJob(10980), ModeMapped)
		})
	}
}

// BenchmarkIters compares how many consecutive spans each work group
// walks (ITERS) and the work-group size (LOCAL), NDVI at 10980² in mapped
// mode, with the copy shader compiled the same way as the ceiling: one
// span per group spreads each 64 KiB of memory over eight groups (and
// SMs), many give each group its own contiguous stretch.
func BenchmarkIters(b *testing.B) {
	for _, local := range []int{128, 256, 1024} {
		for _, it := range []int{1, 16} {
			b.Run(fmt.Sprintf("local=%d/iters=%d", local, it), func(b *testing.B) {
				g := New()
				g.tu.iters, g.tu.local = it, local
				defer g.Close()
				need(b, g)
				runBench(b, g, ndviJob(10980), ModeMapped)
			})
		}
	}
}

// BenchmarkMemory compares device planes in GL memory with planes in CUDA
// memory imported into GL, NDVI at 10980² in mapped mode, one and sixteen
// spans per work group; the copy shader (the ceiling) runs on the same
// memory.
func BenchmarkMemory(b *testing.B) {
	for _, mem := range []string{MemoryGL, MemoryCUDA} {
		for _, it := range []int{1, 16} {
			b.Run(fmt.Sprintf("memory=%s/iters=%d", mem, it), func(b *testing.B) {
				g := New()
				g.tu.memory, g.tu.iters = mem, it
				defer g.Close()
				if info := g.Info(); !info.Available {
					b.Skipf("%s memory: %s", mem, info.Reason)
				}
				runBench(b, g, ndviJob(10980), ModeMapped)
			})
		}
	}
}

// BenchmarkCopyWorkers compares the copies that fill and empty the
// staging rings (one 10980² float32 plane, host memory to host memory):
// par.Copy on 4, 8 or 16 goroutines with Go's copy or with AVX2 loads and
// streaming stores (native/cpu, what the rings use).
func BenchmarkCopyWorkers(b *testing.B) {
	src := make([]float32, 10980*10980)
	dst := make([]float32, len(src))
	for _, c := range []string{"stream", "go"} {
		var fn func(dst, src []float32)
		if c == "stream" {
			fn = cpu.Copy
		}
		for _, w := range []int{4, 8, 16} {
			b.Run(fmt.Sprintf("copy=%s/workers=%d", c, w), func(b *testing.B) {
				b.SetBytes(int64(8 * len(src)))
				for b.Loop() {
					par.Copy(dst, src, w, fn)
				}
			})
		}
	}
}

// BenchmarkCopyShader times the ceiling's copy shader on planes of 64 MB
// to 482 MB (one 10980² band), kept in one buffer (part=0) or in buffers of
// at most 32, 64, 128 or 256 MB, to show what the size of a GL buffer
// costs.
func BenchmarkCopyShader(b *testing.B) {
	for _, partMB := range []int{0, 32, 64, 128, 256} {
		for _, mb := range []int{64, 128, 256, 482} {
			if partMB >= mb {
				continue
			}
			b.Run(fmt.Sprintf("partMB=%d/MB=%d", partMB, mb), func(b *testing.B) {
				g := New()
				defer g.Close()
				need(b, g)
				part := partMB << 18
				if partMB == 0 {
					part = 1 << 30
				}
				var rate float64
				for b.Loop() {
					var err error
					if rate, err = g.shaderCopy(mb<<20, part); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(rate, "shadercopy-GB/s")
			})
		}
	}
}

// BenchmarkHostCopy measures parallelCopy between two ordinary 482 MB
// slices (one 10980² band), in GB/s read plus written: the host side of
// every staged transfer.
func BenchmarkHostCopy(b *testing.B) {
	src := ndviJob(10980).Bands[0].Plane.F32()
	dst := make([]float32, len(src))
	parallelCopy(dst, src)
	b.SetBytes(int64(2 * 4 * len(src)))
	for b.Loop() {
		parallelCopy(dst, src)
	}
}

// runBench times j on g in mode after a warm-up run (setup) and reports
// the phases' medians with their bandwidths.
func runBench(b *testing.B, g *Backend, j *compute.Job, mode string) {
	j.Mode = mode
	defer func() { j.Mode = "" }()
	if _, err := compute.RunJob(g, j); err != nil { // setup and warm-up
		b.Fatal(err)
	}
	b.SetBytes(int64(j.Bytes()))
	var up, k, down, mcUp, mcDown []time.Duration
	for b.Loop() {
		t, err := compute.RunJob(g, j)
		if err != nil {
			b.Fatal(err)
		}
		up, k, down = append(up, t.Upload), append(k, t.Kernel), append(down, t.Download)
		mcUp, mcDown = append(mcUp, g.memcpyUp), append(mcDown, g.memcpyDown)
	}
	b.StopTimer()
	c, err := g.Ceilings(min(j.Pixels()*4, 1<<30))
	if err != nil {
		b.Fatal(err)
	}
	for _, rep := range compute.VerifyJob(j) {
		if !rep.OK() {
			b.Fatal(rep)
		}
	}
	outBytes := 4 * len(j.Out) * j.Pixels()
	gbps := func(bytes int, d time.Duration) float64 { return float64(bytes) / d.Seconds() / 1e9 }
	kg, ug, dg := gbps(j.Bytes(), median(k)), gbps(j.Bytes()-outBytes, median(up)), gbps(outBytes, median(down))
	b.ReportMetric(float64(median(up))/1e6, "upload-ms")
	b.ReportMetric(float64(median(mcUp))/1e6, "upload-memcpy-ms")
	b.ReportMetric(float64(median(k))/1e6, "kernel-ms")
	b.ReportMetric(float64(median(down))/1e6, "download-ms")
	b.ReportMetric(float64(median(mcDown))/1e6, "download-memcpy-ms")
	b.ReportMetric(kg, "kernel-GB/s")
	b.ReportMetric(100*kg/c.DeviceCopy, "kernel-%copy")
	b.ReportMetric(g.copies.shader, "shadercopy-GB/s")
	b.ReportMetric(g.copies.api, "apicopy-GB/s")
	b.ReportMetric(ug, "upload-GB/s")
	b.ReportMetric(100*ug/c.H2D, "upload-%h2d")
	b.ReportMetric(dg, "download-GB/s")
	b.ReportMetric(100*dg/c.D2H, "download-%d2h")
	b.ReportMetric(c.H2D, "h2d-GB/s")
	b.ReportMetric(c.D2H, "d2h-GB/s")
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkCeilings measures the device copy and the staging path's
// transfers for a 10980² band (482 MB).
func BenchmarkCeilings(b *testing.B) {
	g := New()
	defer g.Close()
	need(b, g)
	var c compute.Ceilings
	for b.Loop() {
		var err error
		if c, err = g.Ceilings(10980 * 10980 * 4); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(c.DeviceCopy, "copy-GB/s")
	b.ReportMetric(g.copies.shader, "shadercopy-GB/s")
	b.ReportMetric(g.copies.api, "apicopy-GB/s")
	b.ReportMetric(c.H2D, "h2d-GB/s")
	b.ReportMetric(c.D2H, "d2h-GB/s")
}
