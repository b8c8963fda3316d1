package colormap

import (
	"image"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// S2 is the side of a Sentinel-2 10 m tile.
const S2 = 10980

var bigPlane = sync.OnceValue(func() []float32 {
	p := make([]float32, S2*S2)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range p {
		p[i] = float32(rng.Float64()*2 - 1)
	}
	return p
})

// BenchmarkRenderView renders a 1920×1080 viewport of a 10980² plane: the
// whole tile fitted to the screen (zoom 1080/10980, 3×3 supersampling), 1:1
// and 4× magnified.
func BenchmarkRenderView(b *testing.B) {
	ndvi := bigPlane()
	dst := image.NewNRGBA(image.Rect(0, 0, 1920, 1080))
	for _, c := range []struct {
		name         string
		x0, y0, zoom float64
	}{
		{"fit", -(1920*S2/1080.0 - S2) / 2, 0, 1080.0 / S2},
		{"zoom1", 4000, 4000, 1},
		{"zoom4", 5000, 5000, 4},
	} {
		for _, ramp := range []string{RampRdYlGn, RampClasses} {
			l, err := New(ramp, -1, 1)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(c.name+"/"+ramp, func(b *testing.B) {
				for b.Loop() {
					l.RenderView(dst, ndvi, S2, S2, c.x0, c.y0, c.zoom)
				}
			})
		}
	}
}

// BenchmarkImage builds the full-resolution paletted map of a 10980² plane.
func BenchmarkImage(b *testing.B) {
	ndvi := bigPlane()
	l, err := New(RampRdYlGn, -1, 1)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(ndvi)) * 4)
	for b.Loop() {
		l.Image(ndvi, S2, S2)
	}
}

// BenchmarkWritePNG exports the full 10980² map with its legend, and
// reports the memory allocated per export (MB) next to the 482 MB an NRGBA
// copy would take.
func BenchmarkWritePNG(b *testing.B) {
	ndvi := bigPlane()
	path := filepath.Join(b.TempDir(), "tile.png")
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for b.Loop() {
		if err := WritePNG(path, ndvi, S2, S2, PNGOptions{Legend: true, Title: "T32TQM"}); err != nil {
			b.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/(1<<20), "MB/export")
}
