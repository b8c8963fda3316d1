package ui

import (
	"math"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"canopy/ui/mapview"
	"canopy/ui/render/colormap"
)

// patternMap shows a w×h synthetic NDVI plane that depends on nothing but
// this test: a left-to-right ramp over [-1, 1], a diagonal of dense
// vegetation and a no-data block.
func patternMap(w, h int, size fyne.Size) *mapview.View {
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
	m := mapview.New()
	m.Resize(size)
	m.SetData(ndvi, w, h, lut)
	return m
}

func TestLegendGolden(t *testing.T) {
	w := newTestWindow(t, options{})
	test.AssertObjectRendersToImage(t, "legend_rdylgn.png", w.colour.box)
	w.colour.SetRamp(colormap.RampClasses)
	test.AssertObjectRendersToImage(t, "legend_classes.png", w.colour.box)
}
