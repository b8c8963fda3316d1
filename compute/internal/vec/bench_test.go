package vec

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// Block sizes: 16 K floats (a block that stays in L1/L2) and a 64th of a
// Sentinel-2 10 m tile (10980² / 64 pixels, memory-bound).
var benchSizes = []int{16 << 10, 10980 * 10980 / 64}

// benchKernels runs f under each implementation this build has, n elements,
// bytes read and written per element.
func benchKernels(b *testing.B, bytesPer int, f func(n int) func()) {
	for _, n := range benchSizes {
		run := f(n)
		for _, kernel := range []string{"avx2", "scalar"} {
			if kernel == "avx2" && !haveAVX2() {
				continue
			}
			b.Run(fmt.Sprintf("n=%d/%s", n, kernel), func(b *testing.B) {
				saved := useAVX2
				useAVX2 = kernel == "avx2"
				defer func() { useAVX2 = saved }()
				b.SetBytes(int64(n * bytesPer))
				for b.Loop() {
					run()
				}
			})
		}
	}
}

func benchFloats(n int, lo, hi float32) []float32 {
	r := rand.New(rand.NewPCG(7, uint64(n)))
	s := make([]float32, n)
	for i := range s {
		s[i] = lo + (hi-lo)*r.Float32()
	}
	return s
}

func BenchmarkAdd(b *testing.B) {
	benchKernels(b, 12, func(n int) func() {
		x, y, d := benchFloats(n, 0.05, 0.4), benchFloats(n, 0.2, 0.6), make([]float32, n)
		return func() { Add(d, x, y) }
	})
}

func BenchmarkDiv(b *testing.B) {
	benchKernels(b, 12, func(n int) func() {
		x, y, d := benchFloats(n, 0.05, 0.4), benchFloats(n, 0.2, 0.6), make([]float32, n)
		return func() { Div(d, x, y) }
	})
}

func BenchmarkLoadU16(b *testing.B) {
	benchKernels(b, 6, func(n int) func() {
		r := rand.New(rand.NewPCG(8, uint64(n)))
		src, d := make([]uint16, n), make([]float32, n)
		for i := range src {
			src[i] = uint16(r.IntN(12000))
		}
		c := Conv{Add: -1000, Scale: 1e-4, HasNoData: true} // Sentinel-2 L2A, DN 0 nodata
		return func() { LoadU16(d, src, c) }
	})
}

func BenchmarkNDVI(b *testing.B) {
	benchKernels(b, 12, func(n int) func() {
		red, nir, d := benchFloats(n, 0.05, 0.4), benchFloats(n, 0.2, 0.6), make([]float32, n)
		return func() { NDVI(d, red, nir) }
	})
}
