package goback

import (
	"fmt"
	"os"
	"testing"
	"time"

	"canopy/compute"
	"canopy/compute/fake"
	"canopy/compute/index"
)

// scalarNDVI is the loop the go backend ran for NDVI before it ran the
// block program (compute/goback/kernel.go's ndviSpanScalar, without
// nodata): the yardstick the block program must not fall behind.
func scalarNDVI(out, red, nir []float32) {
	red = red[:len(out)]
	nir = nir[:len(out)]
	for i := range out {
		r, n := red[i], nir[i]
		s := n + r
		q := (n - r) / s
		if s == 0 {
			q = compute.NaN32
		}
		out[i] = q
	}
}

// BenchmarkPlainNDVI times the go backend's NDVI job and the old scalar
// loop in the same run, in turn and apart, in ns per pixel (-bench PlainNDVI; the 10980²
// sizes only with -benchtime set and enough memory:
// CANOPY_BENCH_LARGE=1).
func BenchmarkPlainNDVI(b *testing.B) {
	sizes := []int{2048}
	if testing.Short() {
		sizes = []int{512}
	}
	if largeBench() {
		sizes = append(sizes, 10980)
	}
	for _, n := range sizes {
		bands, _, err := fake.Bands(fake.Noise, n, n, 1, []string{"red", "nir"})
		if err != nil {
			b.Fatal(err)
		}
		name, e, err := index.Resolve("ndvi")
		if err != nil {
			b.Fatal(err)
		}
		j, err := compute.NewJob(bands, nil, []string{name}, []*index.Expr{e})
		if err != nil {
			b.Fatal(err)
		}
		g := &goBackend{}
		// Both in turn, one run each per iteration, so that a machine
		// shared with other work slows both alike.
		b.Run(fmt.Sprintf("interleaved/%d", n), func(b *testing.B) {
			r, ni, out := bands[0].Plane.F32(), bands[1].Plane.F32(), j.Out[0]
			if _, err := g.RunJob(j); err != nil { // its register file
				b.Fatal(err)
			}
			var old, job time.Duration
			for b.Loop() {
				t0 := time.Now()
				scalarNDVI(out, r, ni)
				t1 := time.Now()
				if _, err := g.RunJob(j); err != nil {
					b.Fatal(err)
				}
				old, job = old+t1.Sub(t0), job+time.Since(t1)
			}
			px := float64(b.N) * float64(n*n)
			b.ReportMetric(float64(old.Nanoseconds())/px, "old-ns/pixel")
			b.ReportMetric(float64(job.Nanoseconds())/px, "go-ns/pixel")
			b.ReportMetric(float64(job)/float64(old), "go/old")
		})
		b.Run(fmt.Sprintf("old-scalar-loop/%d", n), func(b *testing.B) {
			r, ni, out := bands[0].Plane.F32(), bands[1].Plane.F32(), j.Out[0]
			for b.Loop() {
				scalarNDVI(out, r, ni)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n*n), "ns/pixel")
		})
		b.Run(fmt.Sprintf("go-job/%d", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := g.RunJob(j); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n*n), "ns/pixel")
		})
	}
}

func largeBench() bool { return os.Getenv("CANOPY_BENCH_LARGE") == "1" }
