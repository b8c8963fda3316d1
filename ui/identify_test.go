package ui

import (
	"encoding/csv"
	"fmt"
	"image"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// mapPos returns the window position of the centre of image pixel
// (col, row) of the map.
func mapPos(w *window, col, row int) fyne.Position {
	z, x0, y0 := w.Map.View()
	s := w.Win.Canvas().Scale()
	p := fyne.CurrentApp().Driver().AbsolutePositionForObject(w.Map)
	return p.Add(fyne.NewPos(float32((float64(col)+0.5-x0)*z)/s, float32((float64(row)+0.5-y0)*z)/s))
}

// TestIdentify: hovering reads a pixel in one line with fixed decimals,
// the reading stays when the pointer leaves the map; clicks pin pixels,
// each a row with every band, the index, row and column, map
// coordinates, the CRS and latitude/longitude (checked against
// gdaltransform), marked on the map; pins are removed, cleared and
// exported as CSV.
func TestIdentify(t *testing.T) {
	w := newTestWindow(t, options{})
	c := w.Win.Canvas()
	test.MoveMouse(c, mapPos(w, 31, 32))
	probe := regexp.MustCompile(`^NDVI -?\d\.\d{4}  ·  row 32, col 31  ·  x 600315\.00, y 5299675\.00  ·  47\.\d{6}°N 10\.\d{6}°E  ·  red \S+  nir \S+$`)
	if !probe.MatchString(w.Probe.Text) {
		t.Errorf("probe at (31, 32) says %q", w.Probe.Text)
	}
	before := w.Probe.Text
	test.MoveMouse(c, fyne.NewPos(2, 2)) // off the map
	if w.Probe.Text != before {
		t.Errorf("leaving the map changed the probe to %q", w.Probe.Text)
	}

	test.TapCanvas(c, mapPos(w, 10, 10))
	test.TapCanvas(c, mapPos(w, 20, 5))
	pins := w.identify.texts()
	if len(pins) != 2 {
		t.Fatalf("%d pins after two clicks, want 2: %q", len(pins), pins)
	}
	// gdaltransform -s_srs EPSG:32632 -t_srs EPSG:4326 of the centre of
	// pixel (10, 10), x 600105 y 5299895: lon 10.3379697069156, lat
	// 47.8446004349717.
	for _, want := range []string{"row 10, col 10", "x 600105.00, y 5299895.00",
		"EPSG:32632 · WGS 84 / UTM zone 32N", "47.844600°N 10.337970°E"} {
		if !strings.Contains(pins[0], want) {
			t.Errorf("pin 1 lacks %q:\n%s", want, pins[0])
		}
	}
	// The index is the NDVI of the band values shown.
	m := regexp.MustCompile(`NDVI (-?\d\.\d{4})[\s\S]*red (\S+)  nir (\S+)`).FindStringSubmatch(pins[0])
	if m == nil {
		t.Fatalf("pin 1 has no NDVI and bands:\n%s", pins[0])
	}
	ndvi, red, nir := atof(t, m[1]), atof(t, m[2]), atof(t, m[3])
	if want := (nir - red) / (nir + red); math.Abs(ndvi-want) > 2e-3 {
		t.Errorf("pin 1: NDVI %v, but (nir-red)/(nir+red) of its bands is %v", ndvi, want)
	}

	// Both pins are marked on the map: a black dot on a white ring.
	img := w.Map.Draw(int(w.Map.Size().Width), int(w.Map.Size().Height)).(*image.NRGBA)
	z, x0, y0 := w.Map.View()
	for _, p := range []image.Point{{10, 10}, {20, 5}} {
		cx, cy := int((float64(p.X)+0.5-x0)*z), int((float64(p.Y)+0.5-y0)*z)
		if got := img.NRGBAAt(cx, cy); got.R != 0 || got.G != 0 || got.B != 0 {
			t.Errorf("pin at %v: the map shows %v at its centre, want black", p, got)
		}
		if got := img.NRGBAAt(cx+6, cy); got.R != 255 || got.G != 255 || got.B != 255 {
			t.Errorf("pin at %v: the map shows %v on its ring, want white", p, got)
		}
	}

	path := filepath.Join(t.TempDir(), "pins.csv")
	if err := w.identify.export(path); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || strings.Join(rows[0], ",") != "pin,row,col,x,y,crs,lat,lon,red,nir,index,value,state" {
		t.Fatalf("CSV %q", rows)
	}
	if lat, lon := atof(t, rows[1][6]), atof(t, rows[1][7]); math.Abs(lat-47.8446004349717) > 1e-8 || math.Abs(lon-10.3379697069156) > 1e-8 {
		t.Errorf("CSV pin 1 at lat %v lon %v", lat, lon)
	}
	if v := atof(t, rows[1][11]); math.Abs(v-ndvi) > 5e-5 || rows[1][10] != "ndvi" {
		t.Errorf("CSV pin 1 value %v (%s), the panel says %v", v, rows[1][10], ndvi)
	}

	// A new index on the same grid reads the pins again.
	w.index.Index.SetSelected("SAVI")
	w.Wait()
	if pins := w.identify.texts(); len(pins) != 2 || !strings.Contains(pins[0], "SAVI ") {
		t.Errorf("after picking SAVI the pins say %q", pins)
	}

	// The first pin's remove button, then Clear.
	test.Tap(tappable(t, w.identify.rows.Objects[0]))
	if pins := w.identify.texts(); len(pins) != 1 || !strings.Contains(pins[0], "row 5, col 20") {
		t.Errorf("after removing pin 1: %q", pins)
	}
	test.Tap(w.identify.Clear)
	if len(w.identify.texts()) != 0 || !w.identify.Export.Disabled() {
		t.Error("Clear left pins or an enabled Export")
	}
	if err := w.identify.export(path); err == nil || !strings.Contains(err.Error(), "no pin") {
		t.Errorf("exporting no pins: %v", err)
	}
}

// TestMapPinsGolden: pins as the map draws them, on a pattern that
// depends on nothing but the test.
func TestMapPinsGolden(t *testing.T) {
	test.NewTempApp(t)
	m := patternMap(48, 32, fyne.NewSize(192, 128))
	m.SetPins([]image.Point{{5, 5}, {40, 25}})
	test.AssertObjectRendersToImage(t, "map_pins.png", m)
}

func atof(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(strings.ReplaceAll(strings.ReplaceAll(s, "−", "-"), " ", ""), 64)
	if err != nil {
		t.Fatalf("%q is not a number", s)
	}
	return v
}

// TestIdentifyFitsWindow: at 1440×900, 1600×1000 and 1920×1080, with
// three pins, the identify panel's buttons (CSV…, Clear and each pin's
// remove button) and its pin rows lie wholly inside the column beside the
// map, clear of the column's scroll bar, and inside the window, each
// button at least its natural size.
func TestIdentifyFitsWindow(t *testing.T) {
	for _, size := range []fyne.Size{{Width: 1440, Height: 900}, {Width: 1600, Height: 1000}, {Width: 1920, Height: 1080}} {
		w := newTestWindow(t, options{})
		w.Win.Resize(size)
		c := w.Win.Canvas()
		for _, p := range []image.Point{{10, 10}, {20, 5}, {40, 50}} {
			test.TapCanvas(c, mapPos(w, p.X, p.Y))
		}
		if len(w.identify.texts()) != 3 {
			t.Fatalf("%v: %d pins, want 3", size, len(w.identify.texts()))
		}
		// The desktop driver lays a container out again when its content's
		// minimum size changes; the test canvas only on a resize.
		w.Win.Resize(size.AddWidthHeight(1, 1))
		w.Win.Resize(size)
		if got := c.Size(); got != size {
			t.Fatalf("canvas %v, want %v", got, size)
		}
		d := fyne.CurrentApp().Driver()
		col := w.stats.content
		colPos := d.AbsolutePositionForObject(col)
		// The column's visible area, less the scroll bar drawn over its
		// right edge.
		area := fyne.NewSize(col.Size().Width-theme.ScrollBarSize(), col.Size().Height)
		inside := func(what string, o fyne.CanvasObject) {
			t.Helper()
			p, s := d.AbsolutePositionForObject(o), o.Size()
			const eps = 0.01
			if p.X < colPos.X-eps || p.Y < colPos.Y-eps || p.X+s.Width > colPos.X+area.Width+eps || p.Y+s.Height > colPos.Y+area.Height+eps {
				t.Errorf("%v: %s at %v size %v leaves the identify column at %v size %v", size, what, p, s, colPos, area)
			}
			if p.X < 0 || p.Y < 0 || p.X+s.Width > size.Width || p.Y+s.Height > size.Height {
				t.Errorf("%v: %s at %v size %v leaves the window", size, what, p, s)
			}
			if m := o.MinSize(); s.Width < m.Width-eps || s.Height < m.Height-eps {
				t.Errorf("%v: %s is %v, smaller than its %v", size, what, s, m)
			}
			if !o.Visible() {
				t.Errorf("%v: %s is hidden", size, what)
			}
		}
		inside("CSV…", w.identify.Export)
		inside("Clear", w.identify.Clear)
		for i, row := range w.identify.rows.Objects {
			inside(fmt.Sprintf("pin row %d", i+1), row)
			n := 0
			for _, o := range test.LaidOutObjects(row) {
				if b, ok := o.(*widget.Button); ok {
					inside(fmt.Sprintf("pin %d's remove button", i+1), b)
					n++
				}
			}
			if n != 1 {
				t.Errorf("%v: pin row %d has %d buttons, want 1", size, i+1, n)
			}
		}
	}
}
