package glback

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"canopy/compute"
	"canopy/compute/par"
	"canopy/native/cpu"
)

// benchInput returns the noise scene at side², made once per process.
var benchInput = sync.OnceValues(func() (map[int]compute.Input, error) {
	m := map[int]compute.Input{}
	for _, side := range []int{2048, 10980} {
		red, nir, err := compute.Fake(compute.SceneNoise, side, side, 1)
		if err != nil {
			return nil, err
		}
		m[side] = compute.Input{Width: side, Height: side, Red: red.Data, NIR: nir.Data}
	}
	return m, nil
})

func input(b *testing.B, side int) compute.Input {
	m, err := benchInput()
	if err != nil {
		b.Fatal(err)
	}
	return m[side]
}

// BenchmarkRun times whole runs at the design's sizes (2048² and a
// Sentinel-2 tile, 10980²) in both transfer modes, and with the bands in
// the backend's host buffers (host=mapped: no host copy at all), and
// reports each phase's median, the kernel's bandwidth (12 bytes a pixel)
// and the transfers' rates against the ceilings measured on the same
// device right after.
func BenchmarkRun(b *testing.B) {
	for _, side := range []int{2048, 10980} {
		for _, mode := range []string{ModeMapped, ModeSubData, compute.ModeHost} {
			b.Run(fmt.Sprintf("size=%d/mode=%s", side, mode), func(b *testing.B) {
				g := New()
				defer g.Close()
				need(b, g)
				if mode == compute.ModeHost {
					benchHost(b, g, side)
					return
				}
				if err := g.SetMode(mode); err != nil {
					b.Fatal(err)
				}
				in := input(b, side)
				runBench(b, g, in, make([]float32, in.Pixels()))
			})
		}
	}
}

// benchHost runs runBench on the noise scene at side², bands and output in
// g's host buffers.
func benchHost(b *testing.B, g *Backend, side int) {
	in := input(b, side)
	red, nir, out, err := g.HostBuffers(in.Width, in.Height)
	if err != nil {
		b.Fatal(err)
	}
	copy(red, in.Red)
	copy(nir, in.NIR)
	runBench(b, g, compute.Input{Width: in.Width, Height: in.Height, Red: red, NIR: nir}, out)
}

// BenchmarkVec4s compares the vec4s each invocation computes, at 10980²,
// with the copy shader compiled the same way as the ceiling.
func BenchmarkVec4s(b *testing.B) {
	for _, v := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("vec4s=%d", v), func(b *testing.B) {
			g := New()
			g.tu.vec4s = v
			defer g.Close()
			need(b, g)
			benchHost(b, g, 10980)
		})
	}
}

// BenchmarkIters compares how many consecutive spans each work group
// walks (ITERS) and the work-group size (LOCAL) at 10980², bands in host
// buffers, with the copy shader compiled the same way as the ceiling: one
// span per group spreads each 64 KiB of memory over eight groups (and SMs),
// many give each group its own contiguous stretch.
func BenchmarkIters(b *testing.B) {
	for _, local := range []int{128, 256, 1024} {
		for _, it := range []int{1, 16} {
			b.Run(fmt.Sprintf("local=%d/iters=%d", local, it), func(b *testing.B) {
				g := New()
				g.tu.iters, g.tu.local = it, local
				defer g.Close()
				need(b, g)
				benchHost(b, g, 10980)
			})
		}
	}
}

// BenchmarkMemory compares device planes in GL memory with planes in CUDA
// memory imported into GL, at 10980² with bands in host buffers, one and
// sixteen spans per work group; the copy shader (the ceiling) runs on the
// same memory.
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
				benchHost(b, g, 10980)
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
	in := input(b, 10980)
	dst := make([]float32, in.Pixels())
	parallelCopy(dst, in.Red)
	b.SetBytes(int64(2 * 4 * in.Pixels()))
	for b.Loop() {
		parallelCopy(dst, in.Red)
	}
}

func runBench(b *testing.B, g *Backend, in compute.Input, out []float32) {
	if _, err := g.Run(in, out); err != nil { // setup and warm-up
		b.Fatal(err)
	}
	b.SetBytes(int64(in.Pixels()) * compute.BytesPerPixel)
	var up, k, down, mcUp, mcDown []time.Duration
	for b.Loop() {
		t, err := g.Run(in, out)
		if err != nil {
			b.Fatal(err)
		}
		up, k, down = append(up, t.Upload), append(k, t.Kernel), append(down, t.Download)
		mcUp, mcDown = append(mcUp, g.memcpyUp), append(mcDown, g.memcpyDown)
	}
	b.StopTimer()
	c, err := g.Ceilings(min(in.Pixels()*4, 1<<30))
	if err != nil {
		b.Fatal(err)
	}
	if rep := compute.Verify(in, out); !rep.OK() {
		b.Fatal(rep)
	}
	px := in.Pixels()
	gbps := func(bytes int, d time.Duration) float64 { return float64(bytes) / d.Seconds() / 1e9 }
	kg, ug, dg := gbps(px*12, median(k)), gbps(px*8, median(up)), gbps(px*4, median(down))
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
