package glback

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"canopy/compute"
)

// BenchmarkRun times whole runs at the design's sizes (2048² and a
// Sentinel-2 tile, 10980²) in both transfer modes and reports each phase's
// median, the kernel's bandwidth (12 bytes a pixel) and the transfers'
// rates against the ceilings measured on the same device right after.
func BenchmarkRun(b *testing.B) {
	for _, side := range []int{2048, 10980} {
		red, nir, err := compute.Fake(compute.SceneNoise, side, side, 1)
		if err != nil {
			b.Fatal(err)
		}
		in := compute.Input{Width: side, Height: side, Red: red.Data, NIR: nir.Data}
		out := make([]float32, in.Pixels())
		for _, mode := range []string{ModeMapped, ModeSubData} {
			b.Run(fmt.Sprintf("size=%d/mode=%s", side, mode), func(b *testing.B) {
				g := New()
				defer g.Close()
				need(b, g)
				if err := g.SetMode(mode); err != nil {
					b.Fatal(err)
				}
				if _, err := g.Run(in, out); err != nil { // setup and warm-up
					b.Fatal(err)
				}
				b.SetBytes(int64(in.Pixels()) * compute.BytesPerPixel)
				var up, k, down []time.Duration
				b.ResetTimer()
				for b.Loop() {
					t, err := g.Run(in, out)
					if err != nil {
						b.Fatal(err)
					}
					up, k, down = append(up, t.Upload), append(k, t.Kernel), append(down, t.Download)
				}
				b.StopTimer()
				c, err := g.Ceilings(min(in.Pixels()*4, 1<<30))
				if err != nil {
					b.Fatal(err)
				}
				if rep := compute.Verify(in, out); !rep.OK() {
					b.Fatal(rep)
				}
				report(b, in.Pixels(), median(up), median(k), median(down), c)
			})
		}
	}
}

func report(b *testing.B, px int, up, k, down time.Duration, c compute.Ceilings) {
	gbps := func(bytes int, d time.Duration) float64 { return float64(bytes) / d.Seconds() / 1e9 }
	kg, ug, dg := gbps(px*12, k), gbps(px*8, up), gbps(px*4, down)
	b.ReportMetric(float64(up)/1e6, "upload-ms")
	b.ReportMetric(float64(k)/1e6, "kernel-ms")
	b.ReportMetric(float64(down)/1e6, "download-ms")
	b.ReportMetric(kg, "kernel-GB/s")
	b.ReportMetric(100*kg/c.DeviceCopy, "kernel-%copy")
	b.ReportMetric(c.DeviceCopy, "copy-GB/s")
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
	b.ReportMetric(c.H2D, "h2d-GB/s")
	b.ReportMetric(c.D2H, "d2h-GB/s")
}
