package ui

import (
	"image"
	"image/color"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"canopy/compute/fake"
	"canopy/compute/geotiff"
	"canopy/compute/pyramid"
	"canopy/ui/mapview"
)

// writeMaskedOrtho writes a w×h float orthomosaic (blue, green, red, nir,
// alpha): alpha 0 (masked) on the first cols columns, no value (a NaN
// red) in the block [nx0, nx0+10) × [ny0, ny0+10), the rest valid.
func writeMaskedOrtho(t *testing.T, w, h, cols, nx0, ny0 int) string {
	t.Helper()
	desc := []string{"blue", "green", "red", "nir", "alpha"}
	bands := make([][]float32, len(desc))
	for b := range bands {
		bands[b] = make([]float32, w*h)
		for i := range bands[b] {
			x, y := i%w, i/w
			switch {
			case desc[b] == "alpha" && x < cols:
				bands[b][i] = 0
			case desc[b] == "alpha":
				bands[b][i] = 255
			case desc[b] == "red" && x >= nx0 && x < nx0+10 && y >= ny0 && y < ny0+10:
				bands[b][i] = float32(math.NaN())
			default:
				bands[b][i] = 0.05*float32(b+1) + 0.002*float32(x) + 0.001*float32(y%7)
			}
		}
	}
	path := filepath.Join(t.TempDir(), "ortho.tif")
	if err := geotiff.WriteBands(path, w, h, bands, fake.GeoRef(), geotiff.WriteOptions{Descriptions: desc}); err != nil {
		t.Fatal(err)
	}
	return path
}

// openLargeWindow opens path in a test window with the size limit below
// it (until the test ends), so that it is read by views; it fails unless
// it is, with a mask.
func openLargeWindow(t *testing.T, path string) *window {
	t.Helper()
	b := largeBytes
	t.Cleanup(func() { largeBytes = b })
	largeBytes = 1000
	w := newTestWindow(t, options{Product: path})
	s := w.shown
	if s == nil || s.large == nil || s.plane != nil {
		t.Fatalf("not read by views: status %q, dialog %q", w.Status.Text, dialogText(w))
	}
	if v := s.large.current(); v == nil || v.Mask == nil {
		t.Fatalf("no first view with a mask (status %q)", w.Status.Text)
	}
	return w
}

// TestLargeMaskedNoDataOutside: on an image read by views (an
// orthomosaic past the lowered size limit) the map draws the pixels its
// mask removes (alpha 0) in the masked stripes, as the whole image's map
// does, different from a pixel with no value and from the space outside
// the image (both the no-data checkerboard under the map) and from the
// valid pixels; the legend has the masked row; after a zoom, the new
// view's mask is drawn; with the mask off, nothing is hatched.
func TestLargeMaskedNoDataOutside(t *testing.T) {
	const w0, h0, cols, nx0, ny0 = 120, 80, 20, 60, 30
	w := openLargeWindow(t, writeMaskedOrtho(t, w0, h0, cols, nx0, ny0))
	w.Map.ZoomBy(0.8) // some of the outside in view
	renderMap(w)      // asks for the view of this viewport
	w.Wait()
	img := renderMap(w)
	at := func(col, row int) color.NRGBA { return mapPixel(w, img, col, row) }
	masked, noValue, valid := at(5, 40), at(nx0+5, ny0+5), at(100, 60)
	if !isOneOf(masked, mapview.MaskedColors[:]) {
		t.Errorf("a masked pixel is drawn %v, want the masked stripes %v", masked, mapview.MaskedColors)
	}
	if noValue.A != 0 {
		t.Errorf("a pixel with no value is drawn %v, want it to show the no-data pattern under the map", noValue)
	}
	if valid.A != 255 || isOneOf(valid, mapview.MaskedColors[:]) || isOneOf(valid, mapview.NoDataColors[:]) {
		t.Errorf("a valid pixel is drawn %v: want the ramp's colour, neither masked nor no data", valid)
	}
	// On screen: the no-value pixel and the outside show the
	// checkerboard, the masked pixel the stripes.
	for _, p := range [][2]int{{nx0 + 5, ny0 + 5}, {-2, 5}, {w0 + 1, 20}} {
		if got := onScreen(w, p[0], p[1]); !isOneOf(got, mapview.NoDataColors[:]) {
			t.Errorf("pixel %v shows %v on screen, want the no-data pattern %v", p, got, mapview.NoDataColors)
		}
	}
	if got := onScreen(w, 5, 40); !isOneOf(got, mapview.MaskedColors[:]) {
		t.Errorf("the masked pixel shows %v on screen, want the stripes", got)
	}
	if !w.colour.maskRow.Visible() {
		t.Error("the legend has no row for the masked pattern")
	}
	// Every masked pixel in view is hatched, no other is.
	for row := 0; row < h0; row += 3 {
		for col := 0; col < w0; col += 3 {
			got := at(col, row)
			if hatched := isOneOf(got, mapview.MaskedColors[:]); hatched != (col < cols) {
				t.Fatalf("pixel (%d, %d) drawn %v: hatched %v, masked %v", col, row, got, hatched, col < cols)
			}
		}
	}

	// Zoomed in on the mask's edge: a new view, its mask drawn.
	w.Map.ActualPixels()
	w.Map.ZoomBy(4)
	renderMap(w)
	w.Wait()
	img = renderMap(w)
	z, x0, y0 := w.Map.View()
	sz := w.Map.Size()
	sc := w.Win.Canvas().Scale()
	c0, r0 := int(math.Ceil(x0)), int(math.Ceil(y0))
	c1, r1 := int(x0+float64(sz.Width*sc)/z)-1, int(y0+float64(sz.Height*sc)/z)-1
	if c0 >= cols || c1 < cols {
		t.Fatalf("the zoomed view (columns %d to %d) does not hold the mask's edge at %d", c0, c1, cols)
	}
	for _, col := range []int{max(c0, 0), cols - 1, cols, c1} {
		got := mapPixel(w, img, col, (r0+r1)/2)
		if hatched := isOneOf(got, mapview.MaskedColors[:]); hatched != (col < cols) {
			t.Errorf("zoomed in, pixel %d drawn %v: hatched %v, masked %v", col, got, hatched, col < cols)
		}
	}

	// The mask off: nothing hatched, the masked pixels computed.
	test.Tap(w.source.Mask)
	w.Wait()
	renderMap(w)
	w.Wait()
	if s := w.shown; s.large == nil || s.large.current() == nil || s.large.current().Mask != nil {
		t.Fatalf("mask off: not by views, or still masked (status %q)", w.Status.Text)
	}
	img = renderMap(w)
	if got := mapPixel(w, img, cols-1, (r0+r1)/2); got.A != 255 || isOneOf(got, mapview.MaskedColors[:]) {
		t.Errorf("mask off: pixel %d drawn %v, want the index's colour", cols-1, got)
	}
	if w.colour.maskRow.Visible() {
		t.Error("mask off: the legend still has the masked row")
	}
}

// TestLargeMaskedGolden: the map of an image read by views, in a golden
// image: the masked columns hatched, the block with no value and the
// outside the checkerboard, the rest the index.
func TestLargeMaskedGolden(t *testing.T) {
	w := openLargeWindow(t, writeMaskedOrtho(t, 48, 32, 8, 30, 10))
	s := w.shown
	// A view of its own, outside the window's: reads in the background,
	// waited for here.
	lg, err := openLarge(s.src, s.idx.roles(), s.idx, s.large.run)
	if err != nil {
		t.Fatal(err)
	}
	defer lg.close()
	var wg sync.WaitGroup
	lg.do = func(f func()) { f() }
	lg.bg = func(f func()) {
		wg.Add(1)
		go func() { defer wg.Done(); f() }()
	}
	lg.redraw = func() {}
	lg.viewDone = func(*pyramid.View, time.Duration, error) {}
	m := mapview.New()
	m.Resize(fyne.NewSize(240, 160))
	m.SetRenderer(lg.render)
	m.SetMaskView(lg.markMask)
	m.SetData(largeMapPlane, s.w, s.h, w.lut)
	m.ZoomBy(0.8)
	m.Draw(240, 160)
	wg.Wait()
	if lg.current() == nil {
		t.Fatal("no view read")
	}
	test.AssertObjectRendersToImage(t, "map_large_masked.png", m)
}

// TestLargeMaskedRenderTime: what drawing the mask costs a map render
// of an image read by views (a 1280×800 viewport of a 1600×1000
// orthomosaic whose left fifth is masked), logged: the median of the
// map's renders with the views' mask hatched and without it (as before
// the mask was drawn), taken in turns.
func TestLargeMaskedRenderTime(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 1600×1000 orthomosaic")
	}
	w := openLargeWindow(t, writeMaskedOrtho(t, 1600, 1000, 320, 800, 500))
	const vw, vh, n = 1280, 800, 31
	w.Map.Draw(vw, vh) // asks for this viewport's view
	w.Wait()
	img := w.Map.Draw(vw, vh).(*image.NRGBA)
	hatched := 0
	for i := 0; i < len(img.Pix); i += 4 {
		if isOneOf(color.NRGBA{img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3]}, mapview.MaskedColors[:]) {
			hatched++
		}
	}
	if hatched == 0 {
		t.Fatal("no pixel of the viewport hatched")
	}
	lg := w.shown.large
	var with, without []float64
	for range n {
		for _, mark := range []bool{true, false} {
			if mark {
				w.Map.SetMaskView(lg.markMask)
			} else {
				w.Map.SetMaskView(nil)
			}
			w.Map.Draw(vw, vh)
			d, _ := w.Map.LastRender()
			ms := float64(d.Microseconds()) / 1000
			if mark {
				with = append(with, ms)
			} else {
				without = append(without, ms)
			}
		}
	}
	slices.Sort(with)
	slices.Sort(without)
	t.Logf("%d×%d viewport of a 1600×1000 image by views (view %d×%d samples): median render %.2f ms with the mask hatched (%d pixels), %.2f ms without",
		vw, vh, lg.current().Width, lg.current().Height, with[n/2], hatched, without[n/2])
}

// TestLargeNaturalColourUnderTheMask: an image read by views has its
// natural-colour view too, read by views: where the view holds the whole
// image it is the whole image's composite pixel for pixel (masked pixels
// hatched, no value the checkerboard, the rest the bands' colours);
// "Show under the mask" draws the picture under the mask and unticking it
// brings the stripes back; the index view after it hatches the mask again.
func TestLargeNaturalColourUnderTheMask(t *testing.T) {
	const w0, h0, cols, nx0, ny0 = 120, 80, 20, 60, 30
	path := writeMaskedOrtho(t, w0, h0, cols, nx0, ny0)
	whole := newTestWindow(t, options{Product: path})
	if whole.shown == nil || whole.shown.large != nil {
		t.Fatal("the orthomosaic did not load whole")
	}
	test.Tap(whole.view.Buttons[viewNatural])
	whole.Wait()
	w := openLargeWindow(t, path)
	test.Tap(w.view.Buttons[viewNatural])
	w.Wait()
	if w.view.Mode() != viewNatural || w.shownLargeColour() == nil {
		t.Fatalf("no natural colour by views: mode %v, status %q, dialog %q", w.view.Mode(), w.Status.Text, dialogText(w))
	}
	if !w.view.Unmasked.Visible() {
		t.Error("no \"Show under the mask\" in the natural-colour view of a masked image read by views")
	}
	if w.SceneLabel.Text == "" || w.SceneLabel.Text[:len("Natural colour")] != "Natural colour" {
		t.Errorf("header %q", w.SceneLabel.Text)
	}
	img, wimg := renderMap(w), renderMap(whole)
	for _, p := range [][2]int{{5, 40}, {cols - 1, 3}, {cols, 3}, {nx0 + 5, ny0 + 5}, {100, 60}, {40, 10}} {
		if a, b := mapPixel(w, img, p[0], p[1]), mapPixel(whole, wimg, p[0], p[1]); a != b {
			t.Errorf("pixel %v: %v by views, %v whole", p, a, b)
		}
	}
	if got := mapPixel(w, img, 5, 40); !isOneOf(got, mapview.MaskedColors[:]) {
		t.Errorf("a masked pixel is drawn %v, want the stripes", got)
	}
	if got := mapPixel(w, img, nx0+5, ny0+5); got.A != 0 {
		t.Errorf("a pixel with no value is drawn %v, want the checkerboard under the map", got)
	}
	if got := mapPixel(w, img, 100, 60); got.A != 255 || isOneOf(got, mapview.MaskedColors[:]) || isOneOf(got, mapview.NoDataColors[:]) {
		t.Errorf("a valid pixel is drawn %v", got)
	}

	test.Tap(w.view.Unmasked)
	w.Wait()
	got := mapPixel(w, renderMap(w), 5, 40)
	if got.A != 255 || isOneOf(got, mapview.MaskedColors[:]) {
		t.Errorf("under the mask the pixel is drawn %v, want the bands' colour", got)
	}
	if !strings.Contains(w.Status.Text, "under the mask") {
		t.Errorf("status %q does not say the mask is off", w.Status.Text)
	}
	test.Tap(w.view.Unmasked)
	w.Wait()
	if got := mapPixel(w, renderMap(w), 5, 40); !isOneOf(got, mapview.MaskedColors[:]) {
		t.Errorf("the mask back: pixel %v", got)
	}

	// Zoomed in: the view on screen is read again, its mask drawn.
	w.Map.ActualPixels()
	w.Map.ZoomBy(4)
	renderMap(w)
	w.Wait()
	z, _, y0 := w.Map.View()
	sz := w.Map.Size()
	row := int(y0 + float64(sz.Height*w.Win.Canvas().Scale())/z/2)
	img = renderMap(w)
	if a := mapPixel(w, img, cols-1, row); !isOneOf(a, mapview.MaskedColors[:]) {
		t.Errorf("zoomed in, the masked pixel (%d, %d) is drawn %v", cols-1, row, a)
	}
	if a := mapPixel(w, img, cols+1, row); a.A != 255 || isOneOf(a, mapview.MaskedColors[:]) {
		t.Errorf("zoomed in, the valid pixel (%d, %d) is drawn %v", cols+1, row, a)
	}

	// The index again: the index's views, their mask hatched.
	test.Tap(w.view.Buttons[viewIndex])
	w.Wait()
	renderMap(w)
	w.Wait()
	img = renderMap(w)
	if w.view.Mode() != viewIndex || w.shownLargeColour() != nil {
		t.Fatalf("mode %v after the index button", w.view.Mode())
	}
	if a := mapPixel(w, img, cols-1, row); !isOneOf(a, mapview.MaskedColors[:]) {
		t.Errorf("the index again: masked pixel drawn %v", a)
	}
	if a := mapPixel(w, img, cols+1, row); a.A != 255 || isOneOf(a, mapview.MaskedColors[:]) {
		t.Errorf("the index again: valid pixel drawn %v", a)
	}
}
