package ui

import (
	"fmt"
	"image"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"canopy/compute"
	"canopy/compute/change"
	"canopy/compute/fake"
	"canopy/compute/geotiff"
	"canopy/compute/stats"
	"canopy/ui/render/colormap"
	"canopy/ui/swipe"
)

// utmGeo is a north-up 10 m grid in EPSG code with its top-left corner at
// (x, y).
func utmGeo(code uint16, x, y float64) *compute.GeoRef {
	return &compute.GeoRef{
		PixelScale:      []float64{10, 10, 0},
		Tiepoints:       []float64{0, 0, 0, x, y, 0},
		GeoKeyDirectory: []uint16{1, 1, 0, 3, 1024, 0, 1, 1, 1025, 0, 1, 1, 3072, 0, 1, code},
	}
}

// afterDate writes a w×h red+NIR GeoTIFF (bands described, so that it
// opens as a scene) on geo: the fake landscape of seed, red NaN (no
// value) in the block of columns and rows [8, 16). It returns the path
// and the NDVI of every pixel, computed here in float32 as the formula
// reads, NaN where red is.
func afterDate(t *testing.T, name string, w, h int, seed uint64, geo *compute.GeoRef) (string, []float32) {
	t.Helper()
	red, nir, err := fake.RedNIR(fake.Landscape, w, h, seed)
	if err != nil {
		t.Fatal(err)
	}
	r, n := append([]float32(nil), red.Data...), append([]float32(nil), nir.Data...)
	ndvi := make([]float32, w*h)
	for i := range r {
		x, y := i%w, i/w
		if x >= 8 && x < 16 && y >= 8 && y < 16 {
			r[i] = float32(math.NaN())
		}
		ndvi[i] = (n[i] - r[i]) / (n[i] + r[i])
	}
	path := filepath.Join(t.TempDir(), name)
	if err := geotiff.WriteBands(path, w, h, [][]float32{r, n}, geo, geotiff.WriteOptions{Descriptions: []string{"red", "nir"}}); err != nil {
		t.Fatal(err)
	}
	return path, ndvi
}

// openAfterTyped opens the after date by typing its path in the two-date
// card, as a user does.
func openAfterTyped(w *window, path string) {
	w.two.source.Path.SetText("")
	test.Type(w.two.source.Path, path)
	test.Tap(w.two.source.OpenPath)
	w.Wait()
}

// mapPixel is the colour the map view draws at the centre of image pixel
// (col, row).
func mapPixel(w *window, img image.Image, col, row int) color.NRGBA {
	z, x0, y0 := w.Map.View()
	c := img.At(int((float64(col)+0.5-x0)*z), int((float64(row)+0.5-y0)*z))
	return color.NRGBAModel.Convert(c).(color.NRGBA)
}

func renderMap(w *window) image.Image {
	s := w.Map.Size()
	sc := w.Win.Canvas().Scale()
	return w.Map.Draw(int(s.Width*sc), int(s.Height*sc))
}

// TestTwoDatesDifference: an after date on the same grid, typed in the
// two-date card, gives the difference view: its values are
// compute/change's before − after of the two NDVI planes (NaN where the
// after date has no value), the map draws them in the change ramp, the
// status says the grid is the same, and the statistics panel lists the
// change classes with their hectares as stats.ClassesOf counts them over
// change.ClassesFor's classes (canopy change's).
func TestTwoDatesDifference(t *testing.T) {
	w := newTestWindow(t, options{})
	before, _, bw, bh := w.Plane()
	path, afterNDVI := afterDate(t, "after.tif", bw, bh, 7, fake.GeoRef())
	openAfterTyped(w, path)

	if v := w.DateView(); v != viewDifference {
		t.Fatalf("after opening the after date the view is %q (status %q)", v, w.Status.Text)
	}
	if !strings.Contains(w.Status.Text, "same grid") || strings.Contains(w.Status.Text, "\n") {
		t.Errorf("status %q: want one line saying the grid is the same", w.Status.Text)
	}
	want := make([]float32, len(before))
	if err := change.Difference(want, before, afterNDVI); err != nil {
		t.Fatal(err)
	}
	diff, dw, dh := w.Difference()
	if dw != bw || dh != bh {
		t.Fatalf("difference %d×%d, want %d×%d", dw, dh, bw, bh)
	}
	for i := range want {
		if math.Float32bits(diff[i]) != math.Float32bits(want[i]) && !(diff[i] != diff[i] && want[i] != want[i]) {
			t.Fatalf("pixel %d: difference %v, want %v", i, diff[i], want[i])
		}
	}
	if d := diff[10*bw+10]; d == d {
		t.Errorf("a pixel with no after value has difference %v, want NaN", d)
	}

	// What the map draws: the change ramp over [−1, 1] of the expected
	// values, transparent where there is none.
	img := renderMap(w)
	lut, _ := colormap.New(colormap.RampChange, -1, 1)
	for _, p := range [][2]int{{3, 3}, {40, 20}, {60, 60}, {20, 50}} {
		if got, exp := mapPixel(w, img, p[0], p[1]), lut.Color(want[p[1]*bw+p[0]]); got != exp {
			t.Errorf("pixel %v drawn %v, want %v (difference %v)", p, got, exp, want[p[1]*bw+p[0]])
		}
	}
	if got := mapPixel(w, img, 12, 12); got.A != 0 {
		t.Errorf("a pixel with no value drawn %v, want transparent", got)
	}

	// The statistics panel: the change classes and their hectares.
	text := labelsText(w.stats.content)
	area, _ := fake.GeoRef().PixelArea()
	for _, c := range stats.ClassesOf(change.ClassesFor("ndvi"), want, area) {
		if !strings.Contains(text, c.Class.Name) {
			t.Errorf("the statistics do not list the class %q:\n%s", c.Class.Name, text)
		}
		if c.Hectares > 0 && !strings.Contains(text, thousandsF(c.Hectares)+" ha") {
			t.Errorf("class %q: %s ha not shown:\n%s", c.Class.Name, thousandsF(c.Hectares), text)
		}
	}

	// The before and after views show each date in the index's colours.
	_ = w.SetDateView(viewAfter)
	img = renderMap(w)
	if got, exp := mapPixel(w, img, 40, 20), w.lut.Color(afterNDVI[20*bw+40]); got != exp {
		t.Errorf("after view: pixel drawn %v, want %v", got, exp)
	}
	_ = w.SetDateView(viewBefore)
	img = renderMap(w)
	if got, exp := mapPixel(w, img, 40, 20), w.lut.Color(before[20*bw+40]); got != exp {
		t.Errorf("before view: pixel drawn %v, want %v", got, exp)
	}

	// Hovering reads both dates and the difference.
	w.probe(40, 20, true, false)
	if !strings.Contains(w.Probe.Text, fmt.Sprintf("after %.4f", afterNDVI[20*bw+40])) || !strings.Contains(w.Probe.Text, "dNDVI") {
		t.Errorf("probe %q: want the after value and the difference", w.Probe.Text)
	}

	// The difference as GeoTIFF: the values shown, NaN where none, the
	// before grid; never over the after date.
	out := filepath.Join(t.TempDir(), "dndvi.tif")
	if err := w.ExportDifference(out); err != nil {
		t.Fatal(err)
	}
	f, err := geotiff.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	bands, err := f.ReadBands(1)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range bands[0].Data {
		if math.Float32bits(v) != math.Float32bits(want[i]) && !(v != v && want[i] != want[i]) {
			t.Fatalf("GeoTIFF pixel %d: %v, want %v", i, v, want[i])
		}
	}
	if !f.Geo().SameGrid(fake.GeoRef()) {
		t.Error("the GeoTIFF is not on the before grid")
	}
	if err := w.ExportDifference(path); err == nil {
		t.Error("the difference was written over the after date")
	}

	// Closing the after date leaves the before map alone.
	test.Tap(w.two.Close)
	w.Wait()
	if w.DateView() != viewBefore || w.two.bar.Visible() {
		t.Errorf("after closing: view %q, bar shown %v", w.DateView(), w.two.bar.Visible())
	}
}

// labelsText is the text of every label under o, one a line.
func labelsText(o fyne.CanvasObject) string {
	var b strings.Builder
	for _, c := range test.LaidOutObjects(o) {
		if l, ok := c.(*widget.Label); ok && l.Visible() {
			b.WriteString(l.Text + "\n")
		}
	}
	return b.String()
}

// TestTwoDatesResampled: an after date on a shifted, smaller grid in the
// same CRS is resampled nearest onto the before grid: the status says so
// with the share it covers (59 × 60 of 64 × 64 pixels), a before pixel
// takes the after pixel under its centre, and pixels it does not cover
// have no value.
func TestTwoDatesResampled(t *testing.T) {
	w := newTestWindow(t, options{})
	_, _, bw, _ := w.Plane()
	// 5 columns right of and 3 rows below the before grid's corner.
	path, afterNDVI := afterDate(t, "shifted.tif", 60, 60, 3, utmGeo(32632, 600050, 5299970))
	openAfterTyped(w, path)
	if !strings.Contains(w.Status.Text, "resampled (nearest)") || !strings.Contains(w.Status.Text, "86.4 %") {
		t.Errorf("status %q: want resampled (nearest) covering 86.4 %%", w.Status.Text)
	}
	after := w.AfterPlane()
	if got, exp := after[20*bw+30], afterNDVI[(20-3)*60+30-5]; got != exp {
		t.Errorf("before pixel (30, 20) took %v, want the after pixel (25, 17) %v", got, exp)
	}
	if v := after[1*bw+2]; v == v {
		t.Errorf("a pixel the after date does not cover has %v, want no value", v)
	}
}

// TestTwoDatesMismatchedCRS: an after date in another CRS is refused with
// one line in the status bar that says so and what to do; the map stays
// the before date.
func TestTwoDatesMismatchedCRS(t *testing.T) {
	w := newTestWindow(t, options{})
	_, _, bw, bh := w.Plane()
	path, _ := afterDate(t, "utm33.tif", bw, bh, 7, utmGeo(32633, 600000, 5300000))
	openAfterTyped(w, path)
	st := w.Status.Text
	if !strings.Contains(st, "different coordinate reference systems") || !strings.Contains(st, "gdalwarp") || strings.Contains(st, "\n") {
		t.Errorf("status %q: want one line on the different CRS", st)
	}
	if w.DateView() != viewBefore || w.Status.Importance != widget.DangerImportance {
		t.Errorf("view %q, status importance %v", w.DateView(), w.Status.Importance)
	}
	if w.two.Info.Text != st {
		t.Errorf("the card says %q, the status %q", w.two.Info.Text, st)
	}
}

// TestSwipe: in the swipe view the map shows the before date left of
// the divider and the after date right of it; dragging the divider moves
// the boundary; after a zoom the divider stays on the screen and both
// sides follow the zoom.
func TestSwipe(t *testing.T) {
	w := newTestWindow(t, options{})
	before, _, bw, _ := w.Plane()
	path, afterNDVI := afterDate(t, "after.tif", bw, bh(w), 11, fake.GeoRef())
	openAfterTyped(w, path)
	test.Tap(tappableRadio(t, w.two.View, viewSwipe))
	if w.DateView() != viewSwipe || !w.two.swipe.Layer.Visible() {
		t.Fatalf("view %q after tapping Swipe", w.DateView())
	}
	d := w.two.swipe.Divider
	c := w.Win.Canvas()
	drag := func(dx float32) {
		pos := fyne.CurrentApp().Driver().AbsolutePositionForObject(d).Add(fyne.NewPos(d.Size().Width/2, d.Size().Height/2))
		test.Drag(c, pos, dx, 0)
	}
	f0 := d.Fraction()
	drag(-w.Map.Size().Width / 4)
	if f := d.Fraction(); math.Abs(f-(f0-0.25)) > 1e-3 {
		t.Fatalf("dragging the divider a quarter of the map left: %v, want %v", f, f0-0.25)
	}
	check := func(what string) {
		t.Helper()
		img := renderMap(w)
		cut := w.two.swipe.Cut(img.Bounds().Dx())
		z, x0, y0 := w.Map.View()
		sides := 0
		for row := 0; row < bw; row += 5 {
			for col := 0; col < bw; col += 3 {
				sx := int((float64(col) + 0.5 - x0) * z)
				sy := int((float64(row) + 0.5 - y0) * z)
				if sx < 0 || sy < 0 || sx >= img.Bounds().Dx() || sy >= img.Bounds().Dy() || abs(sx-cut) < 2 {
					continue
				}
				i := row*bw + col
				want, side := w.lut.Color(before[i]), "before"
				if sx >= cut {
					want, side = w.lut.Color(afterNDVI[i]), "after"
					sides |= 2
				} else {
					sides |= 1
				}
				if got := color.NRGBAModel.Convert(img.At(sx, sy)).(color.NRGBA); got != want {
					t.Fatalf("%s: pixel (%d, %d) at view x %d (divider at %d): %v, want the %s date's %v", what, col, row, sx, cut, got, side, want)
				}
			}
		}
		if sides != 3 {
			t.Errorf("%s: pixels checked on sides %b, want both", what, sides)
		}
	}
	check("after the drag")
	drag(w.Map.Size().Width / 2)
	if f := d.Fraction(); math.Abs(f-(f0+0.25)) > 1e-3 {
		t.Fatalf("dragging back right: %v, want %v", f, f0+0.25)
	}
	check("after dragging right")
	w.Map.ZoomBy(2)
	check("zoomed in")
	test.Drag(c, mapPos(w, 5, 5), 30, 10) // a drag off the divider pans the map
	if f := d.Fraction(); math.Abs(f-(f0+0.25)) > 1e-3 {
		t.Errorf("panning moved the divider to %v", f)
	}
	check("panned")
}

func bh(w *window) int { _, _, _, h := w.Plane(); return h }

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// tappableRadio is the radio item of option opt (the group's items are
// laid out in the order of its options).
func tappableRadio(t *testing.T, g *widget.RadioGroup, opt string) fyne.Tappable {
	t.Helper()
	var items []fyne.Tappable
	for _, o := range test.LaidOutObjects(g) {
		if tp, ok := o.(fyne.Tappable); ok && o != g {
			items = append(items, tp)
		}
	}
	for i, o := range g.Options {
		if o == opt && i < len(items) && len(items) == len(g.Options) {
			return items[i]
		}
	}
	t.Fatalf("no radio item %q among %d", opt, len(items))
	return nil
}

// TestSwipeGolden: the swipe view of two synthetic planes (a ramp left
// to right before, right to left after) with the divider at 40 %.
func TestSwipeGolden(t *testing.T) {
	test.NewTempApp(t)
	m := patternMap(48, 32, fyne.NewSize(192, 128))
	after := make([]float32, 48*32)
	for y := range 32 {
		for x := range 48 {
			after[y*48+x] = 1 - float32(2*x)/47
		}
	}
	sw := swipe.New(m)
	m.SetOverlay(sw.Draw)
	lut, _ := colormap.New(colormap.RampRdYlGn, -1, 1)
	sw.Set(after, 48, 32, lut)
	sw.Show(true)
	view := container.NewStack(m, sw.Layer)
	view.Resize(fyne.NewSize(192, 128))
	sw.Divider.SetFraction(0.4)
	test.AssertObjectRendersToImage(t, "swipe.png", view)
}

// TestDropAfterDate: a file dropped on the two-date card opens as the
// after date; dropped elsewhere it opens as the before date.
func TestDropAfterDate(t *testing.T) {
	w := newTestWindow(t, options{})
	_, _, bw, bhh := w.Plane()
	path, _ := afterDate(t, "dropped.tif", bw, bhh, 5, fake.GeoRef())
	pos := fyne.CurrentApp().Driver().AbsolutePositionForObject(w.two.card).Add(fyne.NewPos(20, 20))
	w.dropped(pos, []fyne.URI{storage.NewFileURI(path)})
	w.Wait()
	if w.DateView() != viewDifference || w.two.source.Path.Text != path {
		t.Errorf("dropped on the card: view %q, after path %q", w.DateView(), w.two.source.Path.Text)
	}
	if w.source.Path.Text == path {
		t.Error("the file dropped on the two-date card opened as the before date")
	}
}

// TestStandsTwoDates: with stands open, the after date adds the change
// columns to the stands table; a stand's change mean is the mean of the
// difference over its pixels that have a value on both dates; the stands
// opened while two dates are shown get them too.
func TestStandsTwoDates(t *testing.T) {
	w := newTestWindow(t, options{})
	rects := [][4]int{{2, 2, 20, 30}, {30, 35, 60, 60}}
	if err := w.OpenStands(writeStands(t, rects)); err != nil {
		t.Fatal(err)
	}
	w.Wait()
	if cols := w.standsP.columns(); len(cols) != len(standColumns)+1 {
		t.Errorf("one date: columns %v", cols)
	}
	before, _, bw, bh := w.Plane()
	path, afterNDVI := afterDate(t, "after.tif", bw, bh, 9, fake.GeoRef())
	openAfterTyped(w, path)
	cols := w.standsP.columns()
	if len(cols) != len(standColumns)+len(changeColumns)+1 || cols[9] != "Δ mean NDVI" || cols[11] != "main change" || cols[12] != "name" {
		t.Fatalf("two dates: columns %v", cols)
	}
	check := func(what string) {
		t.Helper()
		ch := w.standsP.changes()
		if len(ch) != len(rects) {
			t.Fatalf("%s: %d change results", what, len(ch))
		}
		for k, r := range rects {
			var sum float64
			var n int
			for row := r[1]; row < r[3]; row++ {
				for col := r[0]; col < r[2]; col++ {
					d := float64(before[row*bw+col]) - float64(afterNDVI[row*bw+col])
					if !math.IsNaN(d) {
						sum += float64(before[row*bw+col] - afterNDVI[row*bw+col])
						n++
					}
				}
			}
			if math.Abs(ch[k].Mean-sum/float64(n)) > 1e-6 || ch[k].ValidPixels != float64(n) {
				t.Errorf("%s: stand %d change mean %v over %v pixels, want %v over %d", what, k, ch[k].Mean, ch[k].ValidPixels, sum/float64(n), n)
			}
			if row := w.standsP.rows()[k]; row[9] != fmtStat(ch[k].Mean, 4) || row[11] == "" {
				t.Errorf("%s: table row %v", what, row)
			}
		}
	}
	check("stands, then the after date")
	if !w.standsP.ChangeCSV.Visible() {
		t.Error("no Change CSV… button in two-date mode")
	}
	out := filepath.Join(t.TempDir(), "changes.csv")
	if err := w.standsP.exportChanges(out); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "id,pixels,valid_pixels,area_ha,valid_ha,mean,") || !strings.HasSuffix(lines[0], "ha_strong_loss,name") ||
		!strings.HasPrefix(lines[1], "s0,") {
		t.Errorf("change CSV:\n%s", b)
	}
	if err := w.standsP.exportChanges(path); err == nil {
		t.Error("the change CSV was written over the after date's file")
	}
	if err := w.OpenStands(writeStands(t, rects)); err != nil {
		t.Fatal(err)
	}
	w.Wait()
	check("the after date, then stands")
}

// TestTwoDatesNBR: for NBR the difference is dNBR and the statistics list
// the USGS burn severity classes with the hectares stats.ClassesOf counts
// over change.DNBRClasses (canopy change's classes for nbr).
func TestTwoDatesNBR(t *testing.T) {
	w := newTestWindow(t, options{Index: "nbr"})
	before, name, bw, bh := w.Plane()
	if name != "nbr" {
		t.Fatalf("the map shows %s", name)
	}
	// The after date: NIR and SWIR2 of a burnt landscape (NIR down by
	// a third, SWIR2 up by half).
	bands, _, err := fake.Bands(fake.Landscape, bw, bh, 4, []string{"nir", "swir2"})
	if err != nil {
		t.Fatal(err)
	}
	nir, swir := append([]float32(nil), bands[0].Plane.F32()...), append([]float32(nil), bands[1].Plane.F32()...)
	after := make([]float32, len(nir))
	for i := range nir {
		nir[i] *= 0.66
		swir[i] *= 1.5
		after[i] = (nir[i] - swir[i]) / (nir[i] + swir[i])
	}
	path := filepath.Join(t.TempDir(), "burnt.tif")
	if err := geotiff.WriteBands(path, bw, bh, [][]float32{nir, swir}, fake.GeoRef(), geotiff.WriteOptions{Descriptions: []string{"nir", "swir2"}}); err != nil {
		t.Fatal(err)
	}
	openAfterTyped(w, path)
	if w.DateView() != viewDifference {
		t.Fatalf("view %q, status %q", w.DateView(), w.Status.Text)
	}
	want := make([]float32, len(before))
	if err := change.Difference(want, before, after); err != nil {
		t.Fatal(err)
	}
	text := labelsText(w.stats.content)
	area, _ := fake.GeoRef().PixelArea()
	burnt := 0.0
	for _, c := range stats.ClassesOf(change.DNBRClasses(), want, area) {
		if !strings.Contains(text, c.Class.Name) {
			t.Errorf("the statistics do not list %q:\n%s", c.Class.Name, text)
		}
		if c.Hectares > 0 && !strings.Contains(text, thousandsF(c.Hectares)+" ha") {
			t.Errorf("%q: %s ha not shown:\n%s", c.Class.Name, thousandsF(c.Hectares), text)
		}
		if strings.HasSuffix(c.Class.Name, "severity") {
			burnt += c.Hectares
		}
	}
	if burnt == 0 {
		t.Error("the burnt landscape has no burnt hectares")
	}
	if !strings.Contains(text, "dNBR") {
		t.Errorf("the statistics are not titled dNBR:\n%s", text)
	}
}

// TestTwoDatesSession: a saved session keeps the after date and its view;
// opening it in another window shows the same difference in that view.
func TestTwoDatesSession(t *testing.T) {
	w := newTestWindow(t, options{})
	_, _, bw, bh := w.Plane()
	path, _ := afterDate(t, "after.tif", bw, bh, 6, fake.GeoRef())
	openAfterTyped(w, path)
	if err := w.SetDateView(viewSwipe); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "two.json")
	if err := w.SaveSession(file); err != nil {
		t.Fatal(err)
	}
	s, err := readSession(file)
	if err != nil {
		t.Fatal(err)
	}
	if s.After == nil || s.After.Product != path || s.DateView != viewSwipe {
		t.Fatalf("session after %+v, view %q", s.After, s.DateView)
	}
	want, _, _ := w.Difference()

	w2 := newTestWindow(t, options{})
	w2.OpenSession(file)
	w2.Wait()
	got, _, _ := w2.Difference()
	if w2.DateView() != viewSwipe || len(got) != len(want) {
		t.Fatalf("the opened session shows view %q, %d pixels of difference (status %q)", w2.DateView(), len(got), w2.Status.Text)
	}
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("pixel %d: %v, the saved window had %v", i, got[i], want[i])
		}
	}
}
