package ui

import (
	"fmt"
	"image"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"github.com/paulmach/orb"

	"canopy/compute/zonal"
	"canopy/ui/render/colormap"

	"canopy/ui/mapview"
	"canopy/ui/swipe"
)

// BenchmarkSwipeDraw: the after date's half of a 1920×1080 swipe view over
// a 10980² plane (the before half is the map's usual render).
func BenchmarkSwipeDraw(b *testing.B) {
	test.NewTempApp(b)
	const n = 10980
	after := make([]float32, n*n)
	for i := range after {
		after[i] = float32(i%n)/n*2 - 1
	}
	m := mapview.New()
	lut, _ := colormap.New(colormap.RampRdYlGn, -1, 1)
	m.Resize(fyne.NewSize(1920, 1080))
	m.SetData(after, n, n, lut)
	sw := swipe.New(m)
	sw.Set(after, n, n, lut)
	sw.Show(true)
	sw.Divider.SetFraction(0.5)
	img := m.Draw(1920, 1080).(*image.NRGBA)
	z, x0, y0 := m.View()
	b.ResetTimer()
	for range b.N {
		sw.Draw(img, x0, y0, z)
	}
}

// BenchmarkStandLabels10k: placing the labels of 10 000 stands (a
// 100 × 100 tiling of a 10980² grid) in a 1920×1080 view zoomed on a
// tenth of it.
func BenchmarkStandLabels10k(b *testing.B) {
	test.NewTempApp(b)
	m := mapview.New()
	p := &standsPanel{m: m}
	p.labels = newStandLabels(p, m)
	const cell = 109.8
	for r := range 100 {
		for c := range 100 {
			x0, y0 := 600000+10*cell*float64(c), 5300000-10*cell*float64(r)
			x1, y1 := x0+10*cell, y0-10*cell
			p.stands = append(p.stands, zonal.Stand{ID: fmt.Sprintf("stand %d", r*100+c),
				Geom: orb.Polygon{{{x0, y0}, {x1, y0}, {x1, y1}, {x0, y1}, {x0, y0}}}})
			p.ids = append(p.ids, fmt.Sprintf("stand %d", r*100+c))
		}
	}
	p.gt = [6]float64{600000, 10, 0, 5300000, 0, -10}
	p.geometry()
	lut, _ := colormap.New(colormap.RampRdYlGn, -1, 1)
	m.SetData(make([]float32, 10980*10980), 10980, 10980, lut) // pages never touched
	m.SetView(1920/1098.0, 0, 0)
	size := fyne.NewSize(1920, 1080)
	b.ResetTimer()
	var drawn int
	for range b.N {
		t, _, _ := p.labels.place(size)
		drawn = len(t)
	}
	b.ReportMetric(float64(drawn), "labels")
}
