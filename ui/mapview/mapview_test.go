package mapview

import (
	"image"
	"image/color"
	"math"
	"slices"
	"sync"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"canopy/compute"
	_ "canopy/compute/backends" // the backends a job runs on
	"canopy/compute/computetest"
	"canopy/compute/fake"
	"canopy/ui/render/colormap"
)

// smallMap returns a map view of a w×h fake landscape, laid out at size.
func smallMap(t testing.TB, w, h int, size fyne.Size) *View {
	t.Helper()
	j := computetest.NDVIJob(fake.Landscape, w, h, 1)
	if _, err := compute.RunJob(engine(), j); err != nil {
		t.Fatal(err)
	}
	ndvi := j.Out[0]
	lut, err := colormap.New(colormap.RampRdYlGn, -1, 1)
	if err != nil {
		t.Fatal(err)
	}
	m := New()
	m.Resize(size)
	m.SetData(ndvi, w, h, lut)
	return m
}

// patternMap shows a w×h synthetic NDVI plane that depends on nothing but
// this test: a left-to-right ramp over [-1, 1], a diagonal of dense
// vegetation and a no-data block.
func patternMap(w, h int, size fyne.Size) *View {
	ndvi := make([]float32, w*h)
	for y := range h {
		for x := range w {
			v := float32(2*x)/float32(w-1) - 1
			if x == y || x == y+1 {
				v = 0.9
			}
			if x >= w-8 && x < w-2 && y >= 2 && y < 8 {
				v = float32(math.NaN())
			}
			ndvi[y*w+x] = v
		}
	}
	lut, _ := colormap.New(colormap.RampRdYlGn, -1, 1)
	m := New()
	m.Resize(size)
	m.SetData(ndvi, w, h, lut)
	return m
}

func TestMapGolden(t *testing.T) {
	test.NewTempApp(t)
	m := patternMap(48, 32, fyne.NewSize(192, 128))
	if z, _, _ := m.View(); z != 4 {
		t.Errorf("fit zoom %v, want 4", z)
	}
	test.AssertObjectRendersToImage(t, "map_small.png", m)
	m.ZoomBy(2)
	test.AssertObjectRendersToImage(t, "map_small_zoom2.png", m)
}

func TestMapZoomAroundCursor(t *testing.T) {
	test.NewTempApp(t)
	m := smallMap(t, 200, 100, fyne.NewSize(400, 400))
	z0, _, _ := m.View()
	if z0 != 2 {
		t.Fatalf("fit zoom %v, want 2", z0)
	}
	at := fyne.NewPos(150, 210)
	c0, r0, in := m.PixelAt(at)
	if !in {
		t.Fatal("cursor off the image")
	}
	m.Scrolled(&fyne.ScrollEvent{PointEvent: fyne.PointEvent{Position: at}, Scrolled: fyne.NewDelta(0, 3*wheelNotch)})
	z1, _, _ := m.View()
	if want := 2 * math.Pow(wheelStep, 3); math.Abs(z1-want) > 1e-9 {
		t.Errorf("three notches: zoom %v, want %v", z1, want)
	}
	if c, r, _ := m.PixelAt(at); c != c0 || r != r0 {
		t.Errorf("pixel under the cursor moved from (%d,%d) to (%d,%d)", c0, r0, c, r)
	}
	// Zooming out is bounded.
	m.Scrolled(&fyne.ScrollEvent{PointEvent: fyne.PointEvent{Position: at}, Scrolled: fyne.NewDelta(0, -100*wheelNotch)})
	if z, _, _ := m.View(); z < 2*minZoomOfFit-1e-9 {
		t.Errorf("zoomed out to %v", z)
	}
	m.Scrolled(&fyne.ScrollEvent{PointEvent: fyne.PointEvent{Position: at}, Scrolled: fyne.NewDelta(0, 100*wheelNotch)})
	if z, _, _ := m.View(); z != maxZoom {
		t.Errorf("zoomed in to %v, want the limit %v", z, float64(maxZoom))
	}
	m.Fit()
	if z, _, _ := m.View(); z != 2 {
		t.Errorf("Fit gives %v", z)
	}
}

func TestMapDragPans(t *testing.T) {
	test.NewTempApp(t)
	m := smallMap(t, 200, 100, fyne.NewSize(400, 400))
	m.ZoomBy(4) // zoom 8
	_, x0, y0 := m.View()
	m.Dragged(&fyne.DragEvent{Dragged: fyne.NewDelta(40, -16)})
	m.DragEnd()
	_, x1, y1 := m.View()
	if math.Abs((x0-x1)-5) > 1e-9 || math.Abs((y0-y1)+2) > 1e-9 {
		t.Errorf("drag by (40,-16) at zoom 8 moved the view by (%v,%v), want (5,-2) image pixels", x0-x1, y0-y1)
	}
	// The image cannot be dragged out of sight.
	for range 100 {
		m.Dragged(&fyne.DragEvent{Dragged: fyne.NewDelta(-400, -400)})
	}
	_, x, y := m.View()
	if x > 200 || y > 100 {
		t.Errorf("dragged out of sight: view at (%v,%v)", x, y)
	}
}

func TestMapProbeOffImage(t *testing.T) {
	test.NewTempApp(t)
	m := smallMap(t, 200, 100, fyne.NewSize(400, 400)) // letterboxed: rows 0..100 at y 100..300
	if _, _, in := m.PixelAt(fyne.NewPos(200, 50)); in {
		t.Error("the band above the image is on it")
	}
	var got [3]int
	m.OnProbe = func(c, r int, in, pinned bool) {
		got = [3]int{c, r, map[bool]int{true: 1}[in]}
	}
	m.Tapped(&fyne.PointEvent{Position: fyne.NewPos(1, 101)})
	if got != [3]int{0, 0, 1} {
		t.Errorf("probe at the top-left corner: %v", got)
	}
}

// BenchmarkMapRedraw10980 times the viewport render of a 10980² map (what
// a pan or a zoom costs) for a 1280×800 view at fit, 1:1 and 8× zoom. The
// target is 30 ms a redraw: `go test -run XXX -bench MapRedraw ./ui`.
func BenchmarkMapRedraw10980(b *testing.B) {
	test.NewTempApp(b)
	const n = 10980
	ndvi := make([]float32, n*n)
	for i := range ndvi {
		ndvi[i] = float32(i%977)/488 - 1
	}
	lut, _ := colormap.New(colormap.RampRdYlGn, -1, 1)
	m := New()
	m.Resize(fyne.NewSize(1280, 800))
	m.SetData(ndvi, n, n, lut)
	for _, v := range []struct {
		name string
		set  func()
	}{{"fit", m.Fit}, {"1:1", m.ActualPixels}, {"zoom8", func() { m.ActualPixels(); m.ZoomBy(8) }}} {
		b.Run(v.name, func(b *testing.B) {
			v.set()
			for b.Loop() {
				m.generate(1280, 800)
			}
		})
	}
}

// engine computes the test maps' jobs: go-parallel's block program.
var engine = sync.OnceValue(func() compute.Backend {
	b, err := compute.New(compute.NameGoParallel)
	if err != nil {
		panic(err)
	}
	return b
})

// TestMaskViewAsWholeMask: a mask given per render (SetMaskView, the
// marks made by MarkMask from the mask) is hatched pixel for pixel as the
// same mask of the whole image (SetMask), at fit, zoomed in and out and
// panned off the image; marking from the first rows only leaves the rows
// below unmarked.
func TestMaskViewAsWholeMask(t *testing.T) {
	test.NewTempApp(t)
	const w, h = 37, 23
	mask := make([]uint8, w*h)
	for i := range mask {
		if x, y := i%w, i/w; (x-10)*(x-10)+(y-12)*(y-12) < 40 || x > 30 {
			mask[i] = 1
		}
	}
	m := patternMap(w, h, fyne.NewSize(150, 100))
	draw := func(whole bool, rows int) []uint8 {
		if whole {
			m.SetMask(mask)
			m.SetMaskView(nil)
		} else {
			m.SetMask(nil)
			m.SetMaskView(func(dst []uint8, dw, dh int, x0, y0, zoom float64) {
				MarkMask(dst, dw, dh, mask, w, rows, x0, y0, zoom)
			})
		}
		img := m.Draw(150, 100).(*image.NRGBA)
		return slices.Clone(img.Pix)
	}
	for _, set := range []func(){m.Fit, func() { m.ZoomBy(3) }, func() { m.ZoomBy(0.2) }, func() { m.PanBy(-120, 70) }} {
		set()
		a, b := draw(true, h), draw(false, h)
		if !slices.Equal(a, b) {
			t.Fatalf("the mask per render is drawn otherwise than the whole mask (zoom %v)", m.zoom)
		}
	}
	m.Fit()
	m.SetMaskView(func(dst []uint8, dw, dh int, x0, y0, zoom float64) {
		MarkMask(dst, dw, dh, mask, w, 10, x0, y0, zoom)
	})
	img := m.Draw(150, 100).(*image.NRGBA)
	m.mu.Lock()
	z, x0, y0 := m.zoom, m.x0, m.y0
	m.mu.Unlock()
	at := func(col, row int) color.NRGBA {
		c := img.At(int((float64(col)+0.5-x0)*z), int((float64(row)+0.5-y0)*z))
		return c.(color.NRGBA)
	}
	if c := at(33, 5); c != MaskedColors[0] && c != MaskedColors[1] {
		t.Errorf("a masked pixel of the rows marked is drawn %v", c)
	}
	if c := at(33, 15); c == MaskedColors[0] || c == MaskedColors[1] {
		t.Errorf("a pixel below the rows marked is hatched (%v)", c)
	}
}

// BenchmarkMaskView times a 1280×800 render of a 1600×1000 plane whose
// left fifth is masked, with the mask given per render (an image read by
// views: SetMaskView and MarkMask) and without a mask:
// `go test -run XXX -bench MaskView ./ui/mapview`.
func BenchmarkMaskView(b *testing.B) {
	test.NewTempApp(b)
	const w, h = 1600, 1000
	ndvi := make([]float32, w*h)
	mask := make([]uint8, w*h)
	for i := range ndvi {
		ndvi[i] = float32(i%977)/488 - 1
		if i%w < w/5 {
			mask[i] = 1
		}
	}
	lut, _ := colormap.New(colormap.RampRdYlGn, -1, 1)
	m := New()
	m.Resize(fyne.NewSize(1280, 800))
	m.SetData(ndvi, w, h, lut)
	for _, v := range []struct {
		name string
		mark func(dst []uint8, dw, dh int, x0, y0, zoom float64)
	}{{"none", nil}, {"per-view", func(dst []uint8, dw, dh int, x0, y0, zoom float64) {
		MarkMask(dst, dw, dh, mask, w, h, x0, y0, zoom)
	}}} {
		b.Run(v.name, func(b *testing.B) {
			m.SetMaskView(v.mark)
			for b.Loop() {
				m.generate(1280, 800)
			}
		})
	}
}
