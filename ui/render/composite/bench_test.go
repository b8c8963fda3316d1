package composite

import (
	"image"
	"math/rand/v2"
	"testing"

	"canopy/compute"
)

// benchSide is the side of the benchmarks' bands (a Sentinel-2 tile is
// 10980: 7.2 times the pixels).
const benchSide = 4096

func benchBands(b *testing.B, n int) [3]compute.BandInput {
	b.Helper()
	rng := rand.New(rand.NewPCG(1, 1))
	var out [3]compute.BandInput
	for c := range out {
		s := make([]uint16, n*n)
		for i := range s {
			s[i] = 1000 + uint16(rng.IntN(3000))
		}
		out[c] = compute.BandInput{Role: channelNames[c], Plane: compute.PlaneOf(n, n, s), Radiometry: compute.Radiometry{Add: -1000, Scale: 1e-4},
			HasNoData: true}
	}
	return out
}

// BenchmarkNew reads the 2–98 % stretch of three uint16 bands (one pass).
func BenchmarkNew(b *testing.B) {
	bands := benchBands(b, benchSide)
	b.SetBytes(int64(3 * 2 * benchSide * benchSide))
	for b.Loop() {
		if _, err := New(bands, nil, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNewFloat32 reads the stretch of three float32 bands (two
// passes).
func BenchmarkNewFloat32(b *testing.B) {
	rng := rand.New(rand.NewPCG(2, 2))
	var bands [3]compute.BandInput
	for c := range bands {
		s := make([]float32, benchSide*benchSide)
		for i := range s {
			s[i] = rng.Float32()
		}
		bands[c] = compute.BandInput{Role: channelNames[c], Plane: compute.PlaneOf(benchSide, benchSide, s), Radiometry: compute.Identity()}
	}
	b.SetBytes(int64(3 * 4 * benchSide * benchSide))
	for b.Loop() {
		if _, err := New(bands, nil, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRenderView renders a 1920×1080 viewport: the whole image
// fitted (3×3 samples a pixel) and 1:1.
func BenchmarkRenderView(b *testing.B) {
	c, err := New(benchBands(b, benchSide), nil, Options{})
	if err != nil {
		b.Fatal(err)
	}
	dst := image.NewNRGBA(image.Rect(0, 0, 1920, 1080))
	fit := 1080.0 / benchSide
	for _, v := range []struct {
		name         string
		x0, y0, zoom float64
	}{{"fit", -(1920/fit - benchSide) / 2, 0, fit}, {"zoom1", 1000, 1000, 1}} {
		b.Run(v.name, func(b *testing.B) {
			for b.Loop() {
				c.RenderView(dst, v.x0, v.y0, v.zoom)
			}
		})
	}
}
