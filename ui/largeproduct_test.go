package ui

import (
	"image"
	"image/color"
	"math"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"canopy/compute/fake"
	"canopy/compute/geotiff"
	"canopy/ui/mapview"
)

// screenAt is the map's screen pixel at the centre of image pixel (col,
// row) in img, the map drawn at the window's viewport.
func screenAt(w *window, img *image.NRGBA, col, row int) []uint8 {
	z, x0, y0 := w.Map.View()
	x, y := int((float64(col)+0.5-x0)*z), int((float64(row)+0.5-y0)*z)
	i := img.PixOffset(x, y)
	return img.Pix[i : i+4]
}

// TestLargeProductByViews: products of GeoTIFFs (Landsat C2 L2 as a folder
// and as a tar, its QA_PIXEL and QA_RADSAT masking; an orthomosaic of
// float reflectance with an alpha band) past the (lowered) size limit are
// read by views with their radiometry and mask: the map shows the view
// (the index bit for bit the whole-image path's, masked pixels hatched
// and the others coloured as on the whole image's map), pins read
// the values the whole-image path's pins read (a masked pixel says so),
// and the statistics streamed over the blocks, the masked count with
// them, equal the whole image's.
func TestLargeProductByViews(t *testing.T) {
	const ls = "LC08_L2SP_044034_20200827_20200906_02_T1"
	fixture := func(name string) func(t *testing.T) string {
		return func(t *testing.T) string { return productFixture(t, name) }
	}
	for _, c := range []struct {
		name   string
		path   func(t *testing.T) string
		masked [][2]int // (col, row) the product masks
		clear  [][2]int // and pixels it does not
		step   int      // the first view's
	}{
		{ls, fixture(ls), [][2]int{{31, 11}, {20, 20}, {6, 40}}, [][2]int{{21, 21}, {40, 30}}, 1}, // cloud, red saturated, shadow; blue saturated, clear
		{ls + ".tar", fixture(ls + ".tar"), [][2]int{{31, 11}, {20, 20}}, [][2]int{{21, 21}, {50, 5}}, 1},
		{"ortho_ms.tif", fixture("ortho_ms.tif"), [][2]int{{2, 10}, {30, 62}}, [][2]int{{10, 10}, {20, 40}}, 1}, // alpha 0 on the first 6 columns and the last 4 rows
		// A larger orthomosaic: the first view decimated (a tap at a
		// third of a pixel a screen pixel lands within a few pixels of
		// the one aimed at: the cases are far from the mask's edges).
		{"decimated", func(t *testing.T) string {
			return writeOrtho(t, "wide.tif", 3000, 1100, 37, []string{"blue", "green", "red", "nir", "alpha"})
		}, [][2]int{{10, 500}, {36, 1099}}, [][2]int{{200, 300}, {2500, 1000}}, 3},
	} {
		if testing.Short() && (c.step != 1 || strings.HasSuffix(c.name, ".tar")) {
			// -short is the race detector's run in make test: the
			// product and the orthomosaic; the tar (the same product
			// through another container) and the decimated view (the
			// largest image) run without it.
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			// The whole-image path first (the size limit as it is): its
			// map, and its pins at the case's pixels.
			path := c.path(t)
			whole := newTestWindow(t, options{Product: path})
			ws := whole.shown
			if ws == nil || ws.large != nil || ws.plane == nil {
				t.Fatalf("%s did not load whole: status %q, dialog %q", path, whole.Status.Text, dialogText(whole))
			}
			_, _, _, vw, vh := whole.Map.Viewport()
			wimg := whole.Map.Draw(vw, vh).(*image.NRGBA)
			pixels := append(slices.Clone(c.masked), c.clear...)
			for _, px := range pixels {
				test.TapCanvas(whole.Win.Canvas(), mapPos(whole, px[0], px[1]))
			}
			wp := whole.identify.texts()

			// By views: the size limit below the product's.
			defer func(b int64) { largeBytes = b }(largeBytes)
			largeBytes = 1000
			large := newTestWindow(t, options{Product: path})
			s := large.shown
			if s == nil || s.large == nil || s.plane != nil {
				t.Fatalf("not read by views: status %q, dialog %q", large.Status.Text, dialogText(large))
			}
			v := s.large.current()
			if v == nil || v.Level != 0 || v.Step != c.step || v.Mask == nil {
				if v != nil {
					t.Fatalf("first view %+v, mask %v, want step %d (status %q)", v.Plan, v.Mask != nil, c.step, large.Status.Text)
				}
				t.Fatalf("no first view (status %q)", large.Status.Text)
			}
			if s.w != ws.w || s.h != ws.h || s.label != ws.label {
				t.Errorf("large %d×%d %q, whole %d×%d %q", s.w, s.h, s.label, ws.w, ws.h, ws.label)
			}
			// The view's index is the whole image's, bit for bit.
			ox, oy := v.Origin()
			nan := 0
			for k, x := range v.Out[0] {
				i := (int(oy)+k/v.Width*v.Step)*ws.w + int(ox) + k%v.Width*v.Step
				if y := ws.plane[i]; math.Float32bits(x) != math.Float32bits(y) && !(x != x && y != y) {
					t.Fatalf("view sample %d (pixel %d): %v, whole image %v", k, i, x, y)
				}
				if x != x {
					nan++
				}
			}
			if nan < 30 {
				t.Errorf("the view has %d NaN samples: the fixture's mask is not in it", nan)
			}

			// The map: masked pixels hatched as the whole image's map
			// hatches them, the others as it colours them.
			if _, _, _, lw, lh := large.Map.Viewport(); lw != vw || lh != vh {
				t.Fatalf("viewport %d×%d by views, %d×%d whole", lw, lh, vw, vh)
			}
			limg := large.Map.Draw(vw, vh).(*image.NRGBA)
			for _, px := range c.masked {
				if ws.set.mask[px[1]*ws.w+px[0]] == 0 {
					t.Fatalf("pixel %v is not masked in the whole image: the case is wrong", px)
				}
				a := screenAt(large, limg, px[0], px[1])
				if !isOneOf(color.NRGBA{a[0], a[1], a[2], a[3]}, mapview.MaskedColors[:]) || (c.step == 1 && !slices.Equal(a, screenAt(whole, wimg, px[0], px[1]))) {
					t.Errorf("masked pixel %v drawn %v by views, %v whole: want the masked stripes", px, a, screenAt(whole, wimg, px[0], px[1]))
				}
			}
			for _, px := range c.clear {
				if ws.set.mask[px[1]*ws.w+px[0]] != 0 {
					t.Fatalf("pixel %v is masked in the whole image: the case is wrong", px)
				}
			}
			for _, px := range c.clear {
				a, b := screenAt(large, limg, px[0], px[1]), screenAt(whole, wimg, px[0], px[1])
				if a[3] == 0 || (c.step == 1 && !slices.Equal(a, b)) {
					t.Errorf("pixel %v drawn %v by views, %v whole", px, a, b)
				}
			}

			// Pins read what the whole image's pins read.
			for _, px := range pixels {
				test.TapCanvas(large.Win.Canvas(), mapPos(large, px[0], px[1]))
			}
			lp := large.identify.texts()
			if len(lp) != len(c.masked)+len(c.clear) || !slices.Equal(wp, lp) {
				t.Errorf("pins by views:\n%s\nwhole image:\n%s", strings.Join(lp, "\n"), strings.Join(wp, "\n"))
			}
			for k := range c.masked {
				if !strings.Contains(lp[k], "masked") {
					t.Errorf("pin of masked pixel %v: %q", c.masked[k], lp[k])
				}
			}

			// The statistics streamed over the blocks.
			if s.summary == nil || ws.summary == nil {
				t.Fatalf("statistics: by views %v, whole %v (%q)", s.summary, ws.summary, large.stats.Numbers.Text)
			}
			g, x := s.summary.summary, ws.summary.summary
			if g.Valid != x.Valid || g.Total != x.Total || g.Min != x.Min || g.Max != x.Max || math.Abs(g.Mean-x.Mean) > 1e-12 ||
				s.summary.lo != ws.summary.lo || s.summary.hi != ws.summary.hi || !slices.Equal(s.summary.hist, ws.summary.hist) {
				t.Errorf("streamed statistics %+v, whole image %+v", g, x)
			}
			for i := range ws.summary.classes {
				if s.summary.classes[i].Pixels != ws.summary.classes[i].Pixels {
					t.Errorf("class %d: streamed %d pixels, whole %d", i, s.summary.classes[i].Pixels, ws.summary.classes[i].Pixels)
				}
			}
			if large.Masked() != whole.Masked() || whole.Masked() < 30 {
				t.Errorf("masked: %d by views, %d whole", large.Masked(), whole.Masked())
			}
			if large.stats.Numbers.Text != whole.stats.Numbers.Text {
				t.Errorf("statistics panel by views %q, whole %q", large.stats.Numbers.Text, whole.stats.Numbers.Text)
			}

			// Compare all runs every backend over the masked product in
			// blocks, each verified against the float64 truth.
			large.compareAll()
			large.Wait()
			if rs := large.Results(); len(rs) < 2 || !allVerified(rs) {
				t.Errorf("Compare all on the product by views: %+v (status %q)", rs, large.Status.Text)
			}

			// No mask: nothing masked, the pixels computed.
			test.Tap(large.source.Mask)
			large.Wait()
			if s := large.shown; s.large == nil || s.large.current() == nil || s.large.current().Mask != nil {
				t.Fatalf("mask off: not by views, or still masked (status %q)", large.Status.Text)
			}
			px := c.masked[0]
			test.TapCanvas(large.Win.Canvas(), mapPos(large, px[0], px[1]))
			if p := large.identify.texts(); strings.Contains(p[len(p)-1], "masked") {
				t.Errorf("mask off: pin %q", p[len(p)-1])
			}
		})
	}
}

// TestLargeProductKeepsWhole: a Sentinel-2 SAFE (JPEG 2000 bands, SCL at
// 20 m) loads whole past the size limit, and its mask applies.
func TestLargeProductKeepsWhole(t *testing.T) {
	path := productFixture(t, s2New+".SAFE")
	defer func(b int64) { largeBytes = b }(largeBytes)
	largeBytes = 1000
	w := newTestWindow(t, options{Product: path})
	if s := w.shown; s == nil || s.large != nil || s.plane == nil || w.Masked() == 0 {
		t.Fatalf("the SAFE did not load whole with its mask: status %q", w.Status.Text)
	}
}

// TestLargeOrthomosaicMemory: a 6000² uint8 orthomosaic (red, NIR, alpha)
// past the (lowered) size limit opens by views, its statistics stream,
// and the heap stays below half the 288 MB its planes, mask and index
// would take loaded whole; a pin on the alpha-0 stripe says masked.
func TestLargeOrthomosaicMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and reads a 6000² orthomosaic")
	}
	const n, cols = 6000, 700
	red, nir, alpha := make([]uint8, n*n), make([]uint8, n*n), make([]uint8, n*n)
	for i := range red {
		x, y := i%n, i/n
		red[i], nir[i], alpha[i] = uint8(40+(x/50+y/70)%60), uint8(120+(x/30+y/90)%100), 255
		if x < cols {
			alpha[i] = 0
		}
	}
	path := filepath.Join(t.TempDir(), "drone.tif")
	if err := geotiff.WriteBands(path, n, n, [][]uint8{red, nir, alpha}, fake.GeoRef(), geotiff.WriteOptions{Descriptions: []string{"red", "nir", "alpha"}}); err != nil {
		t.Fatal(err)
	}
	red, nir, alpha = nil, nil, nil
	defer func(b int64) { largeBytes = b }(largeBytes)
	largeBytes = 64 << 20
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	base := heapInuse()
	hs := sampleHeap()
	w := newTestWindow(t, options{Product: path})
	peak := hs.end()
	s := w.shown
	if s == nil || s.large == nil || s.large.current() == nil || s.summary == nil {
		t.Fatalf("not shown by views with statistics: status %q, dialog %q", w.Status.Text, dialogText(w))
	}
	grew := int64(peak) - int64(base)
	t.Logf("heap grew by at most %d MiB", grew>>20)
	if grew > 140<<20 {
		t.Errorf("the heap grew by %d MiB opening and streaming a 6000² orthomosaic (loaded whole it takes 288 MB)", grew>>20)
	}
	if w.Masked() != cols*n || s.summary.summary.Valid != (n-cols)*n {
		t.Errorf("masked %d, valid %d: want the alpha stripe's %d masked, the rest valid", w.Masked(), s.summary.summary.Valid, cols*n)
	}
	test.TapCanvas(w.Win.Canvas(), mapPos(w, 300, 2000))
	test.TapCanvas(w.Win.Canvas(), mapPos(w, 3000, 2000))
	if p := w.identify.texts(); len(p) != 2 || !strings.Contains(p[0], "NDVI masked") || strings.Contains(p[1], "masked") {
		t.Errorf("pins %q", p)
	}
	// The decimated view's mask is drawn: the stripe hatched, the rest not.
	img := renderMap(w)
	if got := mapPixel(w, img, 300, 2000); !isOneOf(got, mapview.MaskedColors[:]) {
		t.Errorf("a pixel of the alpha-0 stripe is drawn %v, want the masked stripes", got)
	}
	if got := mapPixel(w, img, 3000, 2000); got.A != 255 || isOneOf(got, mapview.MaskedColors[:]) {
		t.Errorf("a valid pixel is drawn %v", got)
	}
}
