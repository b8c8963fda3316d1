package stats

import (
	"math/rand/v2"
	"sync"
	"testing"
)

// tile is a 10980×10980 Sentinel-2 tile of random NDVI, 1 % NaN.
var tile = sync.OnceValue(func() []float32 {
	const n = 10980 * 10980
	p := make([]float32, n)
	rng := rand.New(rand.NewPCG(1, 1))
	for i := range p {
		p[i] = float32(rng.Float64()*2 - 1)
		if i%100 == 0 {
			p[i] = nan
		}
	}
	return p
})

func BenchmarkSummarize(b *testing.B) {
	p := tile()
	b.SetBytes(int64(len(p)) * 4)
	for b.Loop() {
		Summarize(p)
	}
}

func BenchmarkHistogram(b *testing.B) {
	p := tile()
	b.SetBytes(int64(len(p)) * 4)
	for b.Loop() {
		Histogram(p, 200, -1, 1)
	}
}

func BenchmarkClasses(b *testing.B) {
	p := tile()
	b.SetBytes(int64(len(p)) * 4)
	for b.Loop() {
		Classes(p, 100)
	}
}
