package ui

import (
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"canopy/compute"
	"canopy/compute/fake"
	"canopy/compute/geotiff"
	"canopy/compute/scene"
	"canopy/ui/render/composite"
	"canopy/ui/render/layout"

	"canopy/ui/mapview"
)

// sortedPercentile is NumPy's linear percentile of vs, by sorting.
func sortedPercentile(vs []float64, q float64) float64 {
	s := slices.Clone(vs)
	slices.Sort(s)
	pos := q / 100 * float64(len(s)-1)
	k := int(math.Floor(pos))
	if k+1 >= len(s) {
		return s[k]
	}
	return s[k] + (pos-float64(k))*(s[k+1]-s[k])
}

// stretched is the byte a reflectance shows as on a channel stretched
// over [lo, hi].
func stretched(v, lo, hi float64) uint8 {
	return uint8(math.Max(0, math.Min(255, math.Floor(255*(v-lo)/(hi-lo)+0.5))))
}

// colourValue is band b's value (blue, green, red, NIR: 0-based) at (x,
// y) of writeColourOrtho's orthomosaic: each band varies its own way, so
// that each view has its own colours.
func colourValue(b, x, y int) float32 {
	switch b {
	case 0:
		return 0.02 + 0.003*float32(y)
	case 1:
		return 0.04 + 0.002*float32(x)
	case 2:
		return 0.03 + 0.0001*float32(x*x)
	}
	return 0.30 - 0.004*float32(x) + 0.002*float32(y)
}

// writeColourOrtho writes a w×h float32 orthomosaic of the bands desc
// names (of blue, green, red, nir, in that order, "" for one left
// undescribed) valued by colourValue, and an alpha band 0 on the first
// cols columns. It returns the path.
func writeColourOrtho(t *testing.T, name string, w, h, cols int, desc []string) string {
	t.Helper()
	bands := make([][]float32, len(desc)+1)
	for b := range bands {
		bands[b] = make([]float32, w*h)
		for i := range bands[b] {
			x, y := i%w, i/w
			switch {
			case b < len(desc):
				bands[b][i] = colourValue(b, x, y)
			case x >= cols:
				bands[b][i] = 255
			}
		}
	}
	path := filepath.Join(t.TempDir(), name)
	if err := geotiff.WriteBands(path, w, h, bands, fake.GeoRef(), geotiff.WriteOptions{Descriptions: append(slices.Clone(desc), "alpha")}); err != nil {
		t.Fatal(err)
	}
	return path
}

// orthoExpected is the colour writeColourOrtho's w×h orthomosaic (its
// first cols columns masked) shows at (x, y) in a composite of bands
// (0-based, red, green and blue channel), with the stretch computed here
// from the values the fixture was written with.
func orthoExpected(w, h, cols, x, y int, bands [3]int) color.NRGBA {
	var out [3]uint8
	for c, b := range bands {
		var vs []float64
		for yy := range h {
			for xx := cols; xx < w; xx++ {
				vs = append(vs, float64(colourValue(b, xx, yy)))
			}
		}
		lo, hi := sortedPercentile(vs, 2), sortedPercentile(vs, 98)
		out[c] = stretched(float64(colourValue(b, x, y)), lo, hi)
	}
	return color.NRGBA{out[0], out[1], out[2], 255}
}

// seen is the colour the window shows at image pixel (col, row) of the
// map: the window's canvas captured, read at the pixel's centre.
func seen(t *testing.T, w *window, col, row int) color.NRGBA {
	t.Helper()
	img := w.Win.Canvas().Capture()
	zoom, x0, y0 := w.Map.View()
	pos := fyne.CurrentApp().Driver().AbsolutePositionForObject(w.Map)
	scale := w.Win.Canvas().Scale()
	sx := int(pos.X*scale) + int(math.Floor((float64(col)+0.5-x0)*zoom))
	sy := int(pos.Y*scale) + int(math.Floor((float64(row)+0.5-y0)*zoom))
	if sz := w.Map.Size(); sx < int(pos.X*scale) || sy < int(pos.Y*scale) || sx >= int((pos.X+sz.Width)*scale) || sy >= int((pos.Y+sz.Height)*scale) {
		t.Fatalf("pixel (%d,%d) is outside the map's view", col, row)
	}
	if c, r, in := w.Map.PixelAt(fyne.NewPos(float32(sx)/scale-pos.X, float32(sy)/scale-pos.Y)); !in || c != col || r != row {
		t.Fatalf("screen (%d,%d) shows pixel (%d,%d), not (%d,%d)", sx, sy, c, r, col, row)
	}
	return color.NRGBAModel.Convert(img.At(sx, sy)).(color.NRGBA)
}

func nearColour(a, b color.NRGBA, tol int) bool {
	d := func(x, y uint8) bool { return int(x)-int(y) <= tol && int(y)-int(x) <= tol }
	return d(a.R, b.R) && d(a.G, b.G) && d(a.B, b.B) && d(a.A, b.A)
}

// TestContextViews: on an orthomosaic with blue, green, red and NIR, the
// user switches the map to natural colour and to false colour: a known
// pixel shows the colour of its bands stretched between their 2nd and
// 98th percentiles, a masked pixel shows the masked pattern, the legend
// gives the band combination, the zoom, pan and pins stay; switching back
// shows the index map in its ramp again.
func TestContextViews(t *testing.T) {
	const w0, h0, cols = 40, 30, 7
	path := writeColourOrtho(t, "ortho.tif", w0, h0, cols, []string{"blue", "green", "red", "nir"})
	w := newTestWindow(t, options{})
	openTyped(w, path)
	if msg := dialogText(w); msg != "" {
		t.Fatal(msg)
	}
	for i, b := range w.view.Buttons {
		if b.Disabled() {
			t.Fatalf("view %q is disabled on a scene with every band: %q", b.Text, w.view.Note.Text)
		}
		if i > 0 && w.shown.set.masked() == 0 {
			t.Fatal("nothing masked")
		}
	}
	// Loading is on demand: the index's bands alone are held until asked.
	if _, ok := w.shown.set.band("blue"); ok {
		t.Fatal("blue was read for NDVI")
	}
	w.Map.ZoomBy(1.5)
	zoom, x0, y0 := w.Map.View()
	const px, py = 20, 12
	test.Tap(w.Map) // the identify pin at the centre
	pins := len(w.identify.pins)

	test.Tap(w.view.Buttons[viewNatural])
	w.Wait()
	if w.view.Mode() != viewNatural {
		t.Fatalf("mode %v after tapping Natural colour; status %q", w.view.Mode(), w.Status.Text)
	}
	if !strings.HasPrefix(w.SceneLabel.Text, "Natural colour — ") {
		t.Errorf("header %q", w.SceneLabel.Text)
	}
	if got := strings.Join(w.view.LegendLines, "\n"); !strings.Contains(got, "R=band 3 G=band 2 B=band 1, 2–98 % stretch") || !strings.Contains(got, "R  band 3 (red)") {
		t.Errorf("legend %q", got)
	}
	if z, x, y := w.Map.View(); z != zoom || x != x0 || y != y0 {
		t.Errorf("view moved: %v %v %v, was %v %v %v", z, x, y, zoom, x0, y0)
	}
	if len(w.identify.pins) != pins || pins != 1 {
		t.Errorf("%d pins, had %d", len(w.identify.pins), pins)
	}
	if got, want := seen(t, w, px, py), orthoExpected(w0, h0, cols, px, py, [3]int{2, 1, 0}); !nearColour(got, want, 1) {
		t.Errorf("natural colour of pixel (%d,%d): %v, want %v", px, py, got, want)
	}
	w.Map.Fit() // the masked columns, left of the zoomed view
	if got := seen(t, w, 2, py); !nearColour(got, mapview.MaskedColors[0], 1) && !nearColour(got, mapview.MaskedColors[1], 1) {
		t.Errorf("masked pixel shows %v, want the masked pattern %v", got, mapview.MaskedColors)
	}

	test.Tap(w.view.Buttons[viewFalse])
	w.Wait()
	if w.view.Mode() != viewFalse {
		t.Fatalf("mode %v after tapping False colour", w.view.Mode())
	}
	if got, want := seen(t, w, px, py), orthoExpected(w0, h0, cols, px, py, [3]int{3, 2, 1}); !nearColour(got, want, 1) {
		t.Errorf("false colour of pixel (%d,%d): %v, want %v", px, py, got, want)
	}
	if got := strings.Join(w.view.LegendLines, "\n"); !strings.Contains(got, "R=band 4 G=band 3 B=band 2") {
		t.Errorf("false-colour legend %q", got)
	}

	// Another index of the same scene keeps the composite.
	w.index.Index.SetSelected("EVI")
	w.Wait()
	if w.view.Mode() != viewFalse || w.shownComposite() == nil {
		t.Errorf("after EVI the mode is %v", w.view.Mode())
	}

	test.Tap(w.view.Buttons[viewIndex])
	w.Wait()
	if w.view.Mode() != viewIndex || w.view.LegendLines != nil {
		t.Fatalf("mode %v, legend %q after tapping Index", w.view.Mode(), w.view.LegendLines)
	}
	plane, name, _, _ := w.Plane()
	if want := w.lut.Color(plane[py*w0+px]); !nearColour(seen(t, w, px, py), want, 1) || name != "evi" {
		t.Errorf("index view: pixel %v, the ramp's %v (%s)", seen(t, w, px, py), want, name)
	}
	if !strings.HasPrefix(w.SceneLabel.Text, "EVI") {
		t.Errorf("header %q", w.SceneLabel.Text)
	}
}

// TestContextViewNeedsBands: an orthomosaic without a blue band offers no
// natural colour, says why, and a tap on it does nothing; false colour
// works.
func TestContextViewNeedsBands(t *testing.T) {
	path := writeOrtho(t, "nb.tif", 24, 16, 0, []string{"", "green", "red", "nir"})
	w := newTestWindow(t, options{})
	openTyped(w, path)
	nat := w.view.Buttons[viewNatural]
	if !nat.Disabled() {
		t.Fatal("Natural colour is enabled without a blue band")
	}
	if got := w.view.Note.Text; !strings.Contains(got, "Natural colour needs the blue band") {
		t.Errorf("note %q", got)
	}
	test.Tap(nat)
	w.Wait()
	if w.view.Mode() != viewIndex {
		t.Errorf("mode %v after tapping a disabled view", w.view.Mode())
	}
	if w.view.Buttons[viewFalse].Disabled() {
		t.Fatal("False colour is disabled though NIR, red and green are there")
	}
	test.Tap(w.view.Buttons[viewFalse])
	w.Wait()
	if w.view.Mode() != viewFalse {
		t.Errorf("mode %v after tapping False colour; %q", w.view.Mode(), w.Status.Text)
	}
	// Another scene without the bands: back to the index.
	openTyped(w, writeOrtho(t, "rn.tif", 24, 16, 0, []string{"", "", "red", "nir"}))
	if w.view.Mode() != viewIndex || !w.view.Buttons[viewFalse].Disabled() {
		t.Errorf("on a red+NIR scene: mode %v, false colour disabled %v", w.view.Mode(), w.view.Buttons[viewFalse].Disabled())
	}
}

// TestContextViewExports: in a composite view the map-only PNG (with its
// world file) and the layout export the composite.
func TestContextViewExports(t *testing.T) {
	const w0, h0, cols = 30, 20, 5
	path := writeColourOrtho(t, "ex.tif", w0, h0, cols, []string{"blue", "green", "red", "nir"})
	w := newTestWindow(t, options{Product: path})
	test.Tap(w.view.Buttons[viewNatural])
	w.Wait()
	dir := t.TempDir()
	out := filepath.Join(dir, "nat.png")
	paths, err := w.ExportMap(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) < 2 {
		t.Errorf("wrote %q: no world file", paths)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []int{0, cols, 12, w0 - 1} {
		got := color.NRGBAModel.Convert(img.At(x, 3)).(color.NRGBA)
		want := color.NRGBA{}
		if x >= cols {
			want = orthoExpected(w0, h0, cols, x, 3, [3]int{2, 1, 0})
		}
		if !nearColour(got, want, 1) {
			t.Errorf("exported pixel (%d,3) %v, want %v", x, got, want)
		}
	}
	g, err := w.ExportLayout(filepath.Join(dir, "nat-layout.png"), layout.Options{Width: 800, Height: 600})
	if err != nil {
		t.Fatal(err)
	}
	if g.Legend.Empty() {
		t.Error("the layout has no legend")
	}
}

// TestContextViewSentinel2: on the Sentinel-2 fixture the natural colour
// is B04, B03, B02 with their radiometry: the stretch is the percentiles
// of the reflectances (DN − 1000) / 10000 of the pixels the index map
// does not mask, and the SCL-masked pixels are transparent.
func TestContextViewSentinel2(t *testing.T) {
	safe := productFixture(t, s2New+".SAFE")
	w := newTestWindow(t, options{})
	openTyped(w, safe)
	test.Tap(w.view.Buttons[viewNatural])
	w.Wait()
	c := w.shownComposite()
	if c == nil {
		t.Fatalf("no composite: %q", w.Status.Text)
	}
	if got := c.Describe(); got != "R=B04 G=B03 B=B02, 2–98 % stretch" {
		t.Errorf("combination %q", got)
	}
	sc, err := scene.Open(safe)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	bands, mask, err := sc.Load([]string{"red", "green", "blue"}, scene.LoadOptions{Mask: "auto"})
	if err != nil {
		t.Fatal(err)
	}
	shownMask := w.shown.set.mask
	var refl [3][]float64
	n := bands[0].Plane.Pixels()
	for i := range n {
		if mask[i] != 0 || shownMask[i] != 0 {
			continue
		}
		var r [3]float64
		for k := range 3 {
			dn := bands[k].Plane.U16()[i]
			r[k] = (float64(dn) - 1000) / 10000
			if dn == 0 {
				r[k] = math.NaN()
			}
		}
		if math.IsNaN(r[0] + r[1] + r[2]) {
			continue
		}
		for k := range 3 {
			refl[k] = append(refl[k], r[k])
		}
	}
	for k, ch := range c.Channels() {
		lo, hi := sortedPercentile(refl[k], 2), sortedPercentile(refl[k], 98)
		if math.Abs(ch.Lo-lo) > 1e-9 || math.Abs(ch.Hi-hi) > 1e-9 {
			t.Errorf("channel %s: %v … %v, want %v … %v", ch.Name, ch.Lo, ch.Hi, lo, hi)
		}
	}
	wd, _ := c.Size()
	masked := 0
	for i := range n {
		if shownMask[i] != 0 {
			masked++
			if got := c.Color(i%wd, i/wd); got.A != 0 {
				t.Fatalf("masked pixel %d drawn %v", i, got)
			}
		}
	}
	if masked == 0 {
		t.Error("the fixture has no masked pixel")
	}
}

// TestCompositeMapGolden: a map view of a small composite (a masked block
// transparent over the map's background).
func TestCompositeMapGolden(t *testing.T) {
	test.NewTempApp(t)
	const w, h = 48, 32
	band := func(role string, f func(x, y int) float32) compute.BandInput {
		s := make([]float32, w*h)
		for y := range h {
			for x := range w {
				s[y*w+x] = f(x, y)
			}
		}
		return compute.BandInput{Role: role, Plane: compute.PlaneOf(w, h, s), Radiometry: compute.Identity()}
	}
	mask := make([]uint8, w*h)
	for y := 4; y < 12; y++ {
		for x := 30; x < 42; x++ {
			mask[y*w+x] = 1
		}
	}
	c, err := composite.New([3]compute.BandInput{
		band("red", func(x, y int) float32 { return 0.02 + 0.004*float32(x) }),
		band("green", func(x, y int) float32 { return 0.03 + 0.005*float32(y) }),
		band("blue", func(x, y int) float32 { return 0.01 + 0.002*float32((x+y)%16) }),
	}, mask, composite.Options{Title: "Natural colour"})
	if err != nil {
		t.Fatal(err)
	}
	m := patternMap(w, h, fyne.NewSize(192, 128))
	m.SetComposite(c)
	test.AssertObjectRendersToImage(t, "map_natural.png", m)
	m.SetComposite(nil)
	test.AssertObjectRendersToImage(t, "map_small.png", m)
}

// TestContextViewLandsat: a Landsat 8 product's views are SR_B4, SR_B3,
// SR_B2 and SR_B5, SR_B4, SR_B3, in reflectance (DN × 2.75e-5 − 0.2).
func TestContextViewLandsat(t *testing.T) {
	dir := productFixture(t, "LC08_L2SP_044034_20200827_20200906_02_T1")
	w := newTestWindow(t, options{})
	openTyped(w, dir)
	for m, want := range map[viewMode]string{viewNatural: "R=SR_B4 G=SR_B3 B=SR_B2", viewFalse: "R=SR_B5 G=SR_B4 B=SR_B3"} {
		test.Tap(w.view.Buttons[m])
		w.Wait()
		c := w.shownComposite()
		if c == nil || !strings.HasPrefix(c.Describe(), want+",") {
			t.Fatalf("%s: %v (status %q)", viewSpecs[m].label, c, w.Status.Text)
		}
		for _, ch := range c.Channels() {
			// Surface reflectance of land: well inside [−0.2, 1.6], never DNs.
			if ch.Lo < -0.2 || ch.Hi > 1.6 || ch.Hi <= ch.Lo {
				t.Errorf("%s %s stretch %v … %v is not reflectance", viewSpecs[m].label, ch.Name, ch.Lo, ch.Hi)
			}
		}
	}
}

// TestContextViewSession: a session saved in a composite view opens in it.
func TestContextViewSession(t *testing.T) {
	w := newTestWindow(t, options{Seed: 2})
	if w.view.Buttons[viewFalse].Disabled() {
		t.Fatalf("the generated scene offers no false colour: %q", w.view.Note.Text)
	}
	test.Tap(w.view.Buttons[viewFalse])
	w.Wait()
	path := filepath.Join(t.TempDir(), "s.json")
	if err := w.SaveSession(path); err != nil {
		t.Fatal(err)
	}
	s, err := readSession(path)
	if err != nil || s.View != "false-colour" {
		t.Fatalf("session view %q (%v)", s.View, err)
	}
	w2 := newTestWindow(t, s.options(options{}))
	w2.ApplySession(s)
	w2.Wait()
	if w2.view.Mode() != viewFalse || w2.shownComposite() == nil {
		t.Fatalf("reopened in mode %v", w2.view.Mode())
	}
	if a, b := w.shownComposite().Color(5, 7), w2.shownComposite().Color(5, 7); a != b || a.A != 255 {
		t.Errorf("reopened composite pixel %v, saved %v", b, a)
	}
}

// TestContextViewWithTwoDates: with an after date open, a composite shows
// the before date's colours; Index goes back to the date view chosen (the
// difference), and choosing a date view leaves the composite.
func TestContextViewWithTwoDates(t *testing.T) {
	const w0, h0 = 40, 30
	path := writeColourOrtho(t, "before.tif", w0, h0, 0, []string{"blue", "green", "red", "nir"})
	w := newTestWindow(t, options{})
	openTyped(w, path)
	after, _ := afterDate(t, "after.tif", w0, h0, 5, fake.GeoRef())
	openAfterTyped(w, after)
	if err := w.SetDateView(viewDifference); err != nil {
		t.Fatal(err)
	}
	diff, _, _ := w.Difference()
	test.Tap(w.view.Buttons[viewNatural])
	w.Wait()
	if got, want := seen(t, w, 20, 12), orthoExpected(w0, h0, 0, 20, 12, [3]int{2, 1, 0}); !nearColour(got, want, 1) {
		t.Errorf("natural colour over two dates: %v, want %v", got, want)
	}
	test.Tap(w.view.Buttons[viewIndex])
	w.Wait()
	if got, want := seen(t, w, 20, 12), w.two.diffLUT(w.twoCurrent()).Color(diff[12*w0+20]); !nearColour(got, want, 1) {
		t.Errorf("back to the index: %v, the difference's %v", got, want)
	}
	test.Tap(w.view.Buttons[viewFalse])
	w.Wait()
	if err := w.SetDateView(viewAfter); err != nil {
		t.Fatal(err)
	}
	if w.view.Mode() != viewIndex || w.shownComposite() != nil {
		t.Errorf("a date view left mode %v", w.view.Mode())
	}
}

// TestShowView: views by name, as a flag or a session gives them.
func TestShowView(t *testing.T) {
	w := newTestWindow(t, options{})
	if err := w.ShowView(viewNameNatural); err != nil {
		t.Fatal(err)
	}
	w.Wait()
	if w.ViewName() != viewNameNatural || w.shownComposite() == nil {
		t.Errorf("view %q", w.ViewName())
	}
	if err := w.ShowView("infrared"); err == nil || !strings.Contains(err.Error(), "natural-colour") {
		t.Errorf("unknown view: %v", err)
	}
	if err := w.ShowView(viewNameIndex); err != nil || w.ViewName() != viewNameIndex {
		t.Errorf("index: %v, %q", err, w.ViewName())
	}
}

// TestViewMenu: the View menu switches the map's view too.
func TestViewMenu(t *testing.T) {
	w := newTestWindow(t, options{})
	var view *fyne.Menu
	for _, m := range w.Win.MainMenu().Items {
		if m.Label == "View" {
			view = m
		}
	}
	if view == nil {
		t.Fatal("no View menu")
	}
	for _, it := range view.Items {
		if it.Label == "Natural colour" {
			it.Action()
		}
	}
	w.Wait()
	if w.ViewName() != viewNameNatural {
		t.Errorf("View › Natural colour shows %q", w.ViewName())
	}
}

// TestNaturalColourRolesSettable: on an orthomosaic whose blue band is
// not described, the bands card lists blue beside the index's roles
// (NDVI reads none of blue and green), and picking its band there makes
// natural colour available and drawn.
func TestNaturalColourRolesSettable(t *testing.T) {
	path := writeOrtho(t, "nb.tif", 24, 16, 0, []string{"", "green", "red", "nir"})
	w := newTestWindow(t, options{})
	openTyped(w, path)
	if !w.view.Buttons[viewNatural].Disabled() || !strings.Contains(w.view.Note.Text, "choose it under Bands") {
		t.Fatalf("natural colour without blue: disabled %v, note %q", w.view.Buttons[viewNatural].Disabled(), w.view.Note.Text)
	}
	blue := w.bands.Row("blue")
	if !slices.Contains(w.bands.list.Objects, blue.box) || !blue.Band.Visible() {
		t.Fatal("the bands card does not offer the blue band of the orthomosaic")
	}
	blue.Band.SetSelected("Band 1")
	w.Wait()
	if w.view.Buttons[viewNatural].Disabled() {
		t.Fatalf("natural colour still disabled after blue was given band 1: %q (status %q)", w.view.Note.Text, w.Status.Text)
	}
	test.Tap(w.view.Buttons[viewNatural])
	w.Wait()
	if w.view.Mode() != viewNatural || !strings.Contains(strings.Join(w.view.LegendLines, " "), "B=band 1") {
		t.Errorf("mode %v, legend %q", w.view.Mode(), w.view.LegendLines)
	}
	if _, name, _, _ := w.Plane(); name != "ndvi" {
		t.Errorf("the index became %s", name)
	}
}
