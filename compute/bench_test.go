package compute_test

import (
	"flag"
	"fmt"
	"testing"

	"canopy/compute"
	"canopy/compute/backends"
)

var benchLarge = flag.Bool("large", false, "also benchmark a 10980x10980 Sentinel-2 tile")

// BenchmarkBackends times every available backend's full run (upload,
// kernel, download) with the output buffer reused; MB/s counts 12 bytes per
// pixel. `canopy bench` gives the per-phase view with ceilings.
func BenchmarkBackends(b *testing.B) {
	sizes := []int{256, 2048}
	if *benchLarge {
		sizes = append(sizes, 10980)
	}
	for _, n := range sizes {
		r, nir, _ := compute.Fake(compute.SceneNoise, n, n, 1)
		in := compute.Input{Width: n, Height: n, Red: r.Data, NIR: nir.Data}
		out := make([]float32, in.Pixels())
		for _, be := range backends.All() {
			if !be.Info().Available {
				continue
			}
			b.Run(fmt.Sprintf("%s/%d", be.Name(), n), func(b *testing.B) {
				if _, err := be.Run(in, out); err != nil {
					b.Fatal(err)
				}
				b.SetBytes(compute.BytesPerPixel * int64(in.Pixels()))
				for b.Loop() {
					be.Run(in, out)
				}
			})
			be.Close()
		}
	}
}

// BenchmarkHostCopy is the ceiling the CPU backends are measured against.
func BenchmarkHostCopy(b *testing.B) {
	for b.Loop() {
		b.ReportMetric(compute.HostCopyCeiling(256<<20), "GB/s")
	}
}
