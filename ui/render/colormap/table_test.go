package colormap

import (
	"bytes"
	"image"
	"math"
	"math/rand/v2"
	"testing"

	"canopy/compute"
)

// TestTableRendersAsRenderView: compute.RenderView with the LUT's Table
// draws byte for byte what RenderView draws, for every ramp, zoomed in and
// out (1, 2 and 3 samples per axis), panned past every edge, with NaN
// pixels and values beyond the stretch.
func TestTableRendersAsRenderView(t *testing.T) {
	g := rand.New(rand.NewPCG(7, 16))
	const w, h = 211, 97
	plane := make([]float32, w*h)
	for i := range plane {
		switch g.IntN(12) {
		case 0:
			plane[i] = float32(math.NaN())
		case 1:
			plane[i] = float32(g.NormFloat64() * 3) // beyond the stretch
		case 2:
			plane[i] = []float32{0, 0.2, 0.4, 0.6, -1, 1}[g.IntN(6)] // on class bounds
		default:
			plane[i] = float32(2*g.Float64() - 1)
		}
	}
	views := []struct{ x0, y0, zoom float64 }{
		{0, 0, 1}, {0, 0, 2.5}, {-10.3, -7.9, 3}, {150.5, 60.25, 1.7},
		{0, 0, 0.9}, {-20, 5, 0.5}, {3.3, -4.1, 0.4}, {0, 0, 0.2}, {-100, -50, 0.33},
		{0, 0, 0.05}, {190, 80, 0.7}, {0, 0, math.NaN()}, {0, 0, -1}, {0, 0, 0}, {math.NaN(), 0, 1},
	}
	for _, ramp := range Ramps() {
		for _, st := range []Stretch{Full, {-0.2, 0.9}, {0.1, 0.11}} {
			l, err := New(ramp, st.Lo, st.Hi)
			if err != nil {
				t.Fatal(err)
			}
			tab := l.Table()
			for _, v := range views {
				for _, size := range [][2]int{{64, 48}, {301, 123}, {1, 1}} {
					want := image.NewNRGBA(image.Rect(0, 0, size[0], size[1]))
					l.RenderView(want, plane, w, h, v.x0, v.y0, v.zoom)
					got := make([]byte, 4*size[0]*size[1])
					for i := range got {
						got[i] = 0xA5 // poison: every byte must be written
					}
					cv := compute.View{Table: tab, X0: v.x0, Y0: v.y0, Zoom: v.zoom, Width: size[0], Height: size[1]}
					if err := compute.RenderView(got, plane, w, h, cv); err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(got, want.Pix) {
						i := 0
						for got[i] == want.Pix[i] {
							i++
						}
						t.Fatalf("%s %v, view %+v %v: byte %d (screen %d,%d) is %d, RenderView %d",
							ramp, st, v, size, i, i/4%size[0], i/4/size[0], got[i], want.Pix[i])
					}
				}
			}
		}
	}
}
