package ui

import (
	"image/color"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"canopy/compute/fake"
	"canopy/compute/geotiff"
	"canopy/ui/mapview"
	"canopy/ui/render/colormap"
)

// TestMaskedOutsideNoChange: in the difference view of two dates, the
// pixels the before date's mask removed (its alpha band), those the after
// date has no value for, the space outside the image and the pixels that
// did not change are four different things on the map, each drawn as the
// legend beside it says: the masked stripes, the no-data checkerboard
// (both for no value and outside), and the change ramp's white.
func TestMaskedOutsideNoChange(t *testing.T) {
	const w0, h0, cols = 40, 30, 7
	before := writeOrtho(t, "before.tif", w0, h0, cols, []string{"blue", "green", "red", "nir", "alpha"})
	// The after date: the same red and NIR (no change), no value in a
	// block.
	red, nir := make([]float32, w0*h0), make([]float32, w0*h0)
	for i := range red {
		x, y := i%w0, i/w0
		red[i], nir[i] = 0.15+0.002*float32(x), 0.2+0.002*float32(x)
		if x >= 20 && x < 26 && y >= 10 && y < 16 {
			red[i] = float32(math.NaN())
		}
	}
	after := filepath.Join(t.TempDir(), "after.tif")
	if err := geotiff.WriteBands(after, w0, h0, [][]float32{red, nir}, fake.GeoRef(), geotiff.WriteOptions{Descriptions: []string{"red", "nir"}}); err != nil {
		t.Fatal(err)
	}
	w := newTestWindow(t, options{})
	openTyped(w, before)
	openAfterTyped(w, after)
	if err := w.SetDateView(viewDifference); err != nil {
		t.Fatal(err)
	}
	w.Map.ZoomBy(0.7) // some of the outside in view
	img := renderMap(w)
	at := func(col, row int) color.NRGBA { return mapPixel(w, img, col, row) }
	masked, noValue, same := at(3, 20), at(22, 12), at(32, 25)
	if !isOneOf(masked, mapview.MaskedColors[:]) {
		t.Errorf("a masked pixel is drawn %v, want the masked stripes %v", masked, mapview.MaskedColors)
	}
	if noValue.A != 0 {
		t.Errorf("a pixel the after date has no value for is drawn %v, want it to show the no-data pattern under the map", noValue)
	}
	lut, _ := colormap.New(colormap.RampChange, -1, 1)
	if want := lut.Color(0); same != want {
		t.Errorf("a pixel with no change is drawn %v, want the change ramp's %v", same, want)
	}
	if isOneOf(same, mapview.NoDataColors[:]) || isOneOf(same, mapview.MaskedColors[:]) {
		t.Errorf("no change (%v) looks like no data or masked", same)
	}
	// On screen: the no-value pixel and the outside show the checkerboard.
	for _, p := range [][2]int{{22, 12}, {-2, 5}} {
		if got := onScreen(w, p[0], p[1]); !isOneOf(got, mapview.NoDataColors[:]) {
			t.Errorf("pixel %v shows %v on screen, want the no-data pattern %v", p, got, mapview.NoDataColors)
		}
	}
	// The legend says so: the no-data swatch and the masked row.
	if !w.colour.maskRow.Visible() {
		t.Error("the legend has no row for the masked pattern")
	}
	if text := labelsText(w.colour.legend); !strings.Contains(text, maskedText) {
		t.Errorf("legend %q", text)
	}
	// The after date's own view draws no mask of the before date.
	if err := w.SetDateView(viewAfter); err != nil {
		t.Fatal(err)
	}
	if got := mapPixel(w, renderMap(w), 3, 20); isOneOf(got, mapview.MaskedColors[:]) {
		t.Error("the after date's view is hatched with the before date's mask")
	}
}

// TestMaskedGolden: the map's three kinds of missing pixel, in a golden
// image: a difference with a block of no change (white), a masked block
// (stripes), a block with no value and the outside (checkerboard).
func TestMaskedGolden(t *testing.T) {
	test.NewTempApp(t)
	const w, h = 48, 32
	diff := make([]float32, w*h)
	mask := make([]uint8, w*h)
	for y := range h {
		for x := range w {
			v := float32(x-24) / 24
			switch {
			case x >= 4 && x < 14 && y >= 4 && y < 14:
				v = 0 // no change
			case x >= 18 && x < 30 && y >= 18 && y < 28:
				v = float32(math.NaN())
				mask[y*w+x] = 1 // masked
			case x >= 34 && x < 44 && y >= 4 && y < 14:
				v = float32(math.NaN()) // no value
			}
			diff[y*w+x] = v
		}
	}
	lut, _ := colormap.New(colormap.RampChange, -1, 1)
	m := mapview.New()
	m.Resize(fyne.NewSize(240, 160))
	m.SetData(diff, w, h, lut)
	m.SetMask(mask)
	m.ZoomBy(0.8)
	test.AssertObjectRendersToImage(t, "map_masked.png", m)
}

// TestNaturalColourUnderTheMask: in a composite view of a masked scene,
// "Show under the mask" draws the picture the mask hides (the bands'
// colours, no stripes), and unticking it brings the mask back.
func TestNaturalColourUnderTheMask(t *testing.T) {
	const w0, h0, cols = 40, 30, 7
	path := writeColourOrtho(t, "ortho.tif", w0, h0, cols, []string{"blue", "green", "red", "nir"})
	w := newTestWindow(t, options{})
	openTyped(w, path)
	if w.view.Unmasked.Visible() {
		t.Error("the toggle is shown in the index view")
	}
	test.Tap(w.view.Buttons[viewNatural])
	w.Wait()
	if !w.view.Unmasked.Visible() {
		t.Fatal("no toggle in the natural-colour view of a masked scene")
	}
	if got := mapPixel(w, renderMap(w), 2, 12); !isOneOf(got, mapview.MaskedColors[:]) {
		t.Fatalf("masked pixel %v before the toggle", got)
	}
	test.Tap(w.view.Unmasked)
	w.Wait()
	got := mapPixel(w, renderMap(w), 2, 12)
	if got.A != 255 || isOneOf(got, mapview.MaskedColors[:]) {
		t.Errorf("under the mask the pixel is drawn %v, want the bands' colour", got)
	}
	if !strings.Contains(w.Status.Text, "under the mask") {
		t.Errorf("status %q does not say the mask is off", w.Status.Text)
	}
	test.Tap(w.view.Unmasked)
	w.Wait()
	if got := mapPixel(w, renderMap(w), 2, 12); !isOneOf(got, mapview.MaskedColors[:]) {
		t.Errorf("the mask back: pixel %v", got)
	}
}

func isOneOf(c color.NRGBA, cs []color.NRGBA) bool {
	for _, x := range cs {
		if nearColour(c, x, 1) {
			return true
		}
	}
	return false
}

// onScreen is the colour the window shows at image pixel (col, row),
// which may be outside the image but must be inside the map widget.
func onScreen(w *window, col, row int) color.NRGBA {
	img := w.Win.Canvas().Capture()
	zoom, x0, y0 := w.Map.View()
	pos := fyne.CurrentApp().Driver().AbsolutePositionForObject(w.Map)
	scale := w.Win.Canvas().Scale()
	sx := int(pos.X*scale) + int(math.Floor((float64(col)+0.5-x0)*zoom))
	sy := int(pos.Y*scale) + int(math.Floor((float64(row)+0.5-y0)*zoom))
	sz := w.Map.Size()
	if sx < int(pos.X*scale) || sy < int(pos.Y*scale) || sx >= int((pos.X+sz.Width)*scale) || sy >= int((pos.Y+sz.Height)*scale) {
		return color.NRGBA{}
	}
	return color.NRGBAModel.Convert(img.At(sx, sy)).(color.NRGBA)
}
