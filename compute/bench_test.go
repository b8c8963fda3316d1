package compute_test

import (
	"flag"
	"fmt"
	"testing"

	"canopy/compute"
	"canopy/compute/backends"
	"canopy/compute/computetest"
	"canopy/compute/fake"
)

var benchLarge = flag.Bool("large", false, "also benchmark a 10980x10980 Sentinel-2 tile")

// BenchmarkBackends times every available backend's NDVI job (upload,
// kernel, download) with the outputs reused; MB/s counts the bytes the job
// reads and writes. `canopy bench` gives the per-phase view with ceilings.
func BenchmarkBackends(b *testing.B) {
	sizes := []int{256, 2048}
	if *benchLarge {
		sizes = append(sizes, 10980)
	}
	for _, n := range sizes {
		j := computetest.NDVIJob(fake.Noise, n, n, 1)
		for _, be := range backends.All() {
			if !be.Info().Available {
				continue
			}
			b.Run(fmt.Sprintf("%s/%d", be.Name(), n), func(b *testing.B) {
				if _, err := compute.RunJob(be, j); err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(j.Bytes()))
				for b.Loop() {
					compute.RunJob(be, j)
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
