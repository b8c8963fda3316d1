package ui

import (
	"image/color"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"canopy/compute/fake"
	"canopy/compute/geotiff"
	"canopy/ui/render/colormap"
)

// classRows returns the class rows of the statistics as the user reads
// them: the swatch's colour, the name and the share.
type classRow struct {
	colour color.Color
	name   string
	share  string
}

func classRows(w *window) []classRow {
	var out []classRow
	for _, o := range w.stats.classes.Objects {
		c, ok := o.(*fyne.Container)
		if !ok {
			continue
		}
		var r classRow
		for _, x := range test.LaidOutObjects(c) {
			switch v := x.(type) {
			case *canvas.Rectangle:
				if r.colour == nil {
					r.colour = v.FillColor
				}
			case *widget.Label:
				switch {
				case v.TextStyle.Bold:
					r.name = v.Text
				case v.Alignment == fyne.TextAlignTrailing:
					r.share = v.Text
				}
			}
		}
		if r.name != "" {
			out = append(out, r)
		}
	}
	return out
}

func sameColour(a, b color.Color) bool {
	r1, g1, b1, a1 := a.RGBA()
	r2, g2, b2, a2 := b.RGBA()
	return r1 == r2 && g1 == g2 && b1 == b2 && a1 == a2
}

// TestEditClasses: the NDVI classes are drawn in the same colours in the
// map, the legend and the statistics; the user edits a bound, a name and
// a colour, and all three follow, with the share counted again; a bad
// bound is said in words and changes nothing.
func TestEditClasses(t *testing.T) {
	w := newTestWindow(t, options{})
	w.colour.SetRamp(colormap.RampClasses)
	w.Wait()
	table := w.lut.Classes()
	rows := classRows(w)
	if len(rows) != len(table) || len(table) != 5 {
		t.Fatalf("%d class rows, %d classes in the legend's table", len(rows), len(table))
	}
	for i, r := range rows { // highest class first, as the legend
		c := table[len(table)-1-i]
		if r.name != c.Name || !sameColour(r.colour, c.Color) {
			t.Errorf("row %d: %q in %v, the legend has %q in %v", i, r.name, r.colour, c.Name, c.Color)
		}
	}
	if rows[len(rows)-1].name != "no vegetation" {
		t.Errorf("the lowest class is %q", rows[len(rows)-1].name)
	}

	test.Tap(w.stats.EditClasses)
	ed := w.stats.editor
	if !ed.box.Visible() || len(ed.Names) != 5 {
		t.Fatalf("editor visible %v with %d classes", ed.box.Visible(), len(ed.Names))
	}
	// A bound that is not a number.
	ed.From[4].SetText("")
	test.Type(ed.From[4], "dense")
	test.Tap(ed.Apply)
	if !ed.Error.Visible() || !strings.Contains(ed.Error.Text, "not a number") {
		t.Errorf("a bad bound says %q (visible %v)", ed.Error.Text, ed.Error.Visible())
	}
	if got := w.lut.Classes()[4].Lo; got != 0.6 {
		t.Errorf("a bad bound changed the table: dense from %v", got)
	}

	ed.From[4].SetText("")
	test.Type(ed.From[4], "0.5")
	ed.Names[4].SetText("")
	test.Type(ed.Names[4], "closed canopy")
	ed.Colours[4].SetText("#003300")
	test.Tap(ed.Apply)
	w.Wait()
	if ed.Error.Visible() {
		t.Fatalf("Apply failed: %s", ed.Error.Text)
	}
	top := w.lut.Classes()[4]
	dark := color.NRGBA{0, 0x33, 0, 255}
	if top.Name != "closed canopy" || top.Lo != 0.5 || top.Color != dark || w.lut.Classes()[3].Hi != 0.5 {
		t.Fatalf("the legend's table after Apply: %+v", w.lut.Classes())
	}
	rows = classRows(w)
	if rows[0].name != "closed canopy" || !sameColour(rows[0].colour, dark) {
		t.Errorf("statistics after Apply: %+v", rows[0])
	}
	// Its share, counted here.
	plane, _, _, _ := w.Plane()
	n, valid := 0, 0
	for _, v := range plane {
		if v == v {
			valid++
			if v >= 0.5 {
				n++
			}
		}
	}
	if want := strings.ReplaceAll(strings.TrimSpace(strings.Split(rows[0].share, "%")[0]), " ", ""); math.Abs(atof(t, want)-100*float64(n)/float64(valid)) > 0.051 {
		t.Errorf("closed canopy share %s, counted %.2f %%", rows[0].share, 100*float64(n)/float64(valid))
	}
	// The map draws a pixel ≥ 0.5 in the new colour.
	if got := w.lut.Color(0.55); got != dark {
		t.Errorf("the map's colour of 0.55 is %v", got)
	}
	// The user's table stays with NDVI when another index comes and goes.
	w.index.Index.SetSelected("EVI")
	w.Wait()
	w.index.Index.SetSelected("NDVI")
	w.Wait()
	if w.idx.classes[4].Name != "closed canopy" {
		t.Errorf("NDVI's classes after EVI: %+v", w.idx.classes)
	}
	test.Tap(ed.Reset)
	w.Wait()
	if w.idx.classes[4].Name != "dense" || w.idx.classes[4].Lo != 0.6 {
		t.Errorf("Preset gave %+v", w.idx.classes[4])
	}
}

// TestDigitalNumbersFlagged: integer bands from plain files (no scale or
// offset) are flagged in the statistics and the status bar.
func TestDigitalNumbersFlagged(t *testing.T) {
	dir := t.TempDir()
	const wd, ht = 16, 8
	red, nir := make([]uint16, wd*ht), make([]uint16, wd*ht)
	for i := range red {
		red[i], nir[i] = 800, 3000
	}
	rp, np := filepath.Join(dir, "red.tif"), filepath.Join(dir, "nir.tif")
	for p, b := range map[string][]uint16{rp: red, np: nir} {
		if err := geotiff.WriteBands(p, wd, ht, [][]uint16{b}, fake.GeoRef(), geotiff.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	w := newTestWindow(t, options{Bands: map[string]string{"red": rp, "nir": np}})
	if !w.stats.Raw.Visible() || !strings.Contains(w.stats.Raw.Text, "digital numbers") {
		t.Errorf("no digital-number warning in the statistics: %q", w.stats.Raw.Text)
	}
	if !strings.Contains(w.Status.Text, "raw digital numbers") {
		t.Errorf("status %q", w.Status.Text)
	}
	// A generated scene is reflectance: no warning.
	w2 := newTestWindow(t, options{})
	if w2.stats.Raw.Visible() {
		t.Errorf("a generated scene is flagged: %q", w2.stats.Raw.Text)
	}
}

// TestDigitalNumbersFlaggedProduct: the same digital numbers opened as a
// product (canopy gui --scene FILE --bands red=1,nir=2) are flagged the
// same way as through --band: one radiometry rule on every path.
func TestDigitalNumbersFlaggedProduct(t *testing.T) {
	const wd, ht = 16, 8
	red, nir := make([]uint16, wd*ht), make([]uint16, wd*ht)
	for i := range red {
		red[i], nir[i] = 800, 3000
	}
	p := filepath.Join(t.TempDir(), "cam.tif")
	if err := geotiff.WriteBands(p, wd, ht, [][]uint16{red, nir}, fake.GeoRef(), geotiff.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	w := newTestWindow(t, options{Product: p, Assign: map[string]int{"red": 1, "nir": 2}})
	if !w.stats.Raw.Visible() || !strings.Contains(w.stats.Raw.Text, "digital numbers") {
		t.Errorf("no digital-number warning in the statistics: %q", w.stats.Raw.Text)
	}
	if !strings.Contains(w.Status.Text, "raw digital numbers") {
		t.Errorf("status %q", w.Status.Text)
	}
}
