package ui

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"
)

// writeStands writes a GeoJSON of pixel-aligned rectangles (c0, r0, c1,
// r1, in pixels of the fake scene's grid: 10 m from (600000, 5300000))
// with a legacy crs member naming EPSG:32632.
func writeStands(t *testing.T, rects [][4]int) string {
	t.Helper()
	var feats []string
	for i, s := range rects {
		x0, x1 := 600000+10*float64(s[0]), 600000+10*float64(s[2])
		y0, y1 := 5300000-10*float64(s[1]), 5300000-10*float64(s[3])
		ring := fmt.Sprintf("[[[%g,%g],[%g,%g],[%g,%g],[%g,%g],[%g,%g]]]", x0, y0, x1, y0, x1, y1, x0, y1, x0, y0)
		feats = append(feats, fmt.Sprintf(`{"type":"Feature","properties":{"name":"s%d"},"geometry":{"type":"Polygon","coordinates":%s}}`, i, ring))
	}
	gj := `{"type":"FeatureCollection","crs":{"type":"name","properties":{"name":"urn:ogc:def:crs:EPSG::32632"}},"features":[` + strings.Join(feats, ",") + `]}`
	p := filepath.Join(t.TempDir(), "stands.geojson")
	if err := os.WriteFile(p, []byte(gj), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestStands: two pixel-aligned stands give two rows whose means equal
// the mean of their pixels; a click inside one selects it; sorting by
// the mean orders the rows by it; the CSV export has zonal's header and
// one line a stand; outlines are drawn on the map.
func TestStands(t *testing.T) {
	w := newTestWindow(t, Options{})
	rects := [][4]int{{2, 2, 20, 30}, {30, 35, 60, 60}}
	if err := w.OpenStands(writeStands(t, rects)); err != nil {
		t.Fatal(err)
	}
	plane, _, pw, _ := w.Plane()
	res := w.StandResults()
	if len(res) != 2 || len(w.StandRows()) != 2 {
		t.Fatalf("%d results, %d rows, want 2", len(res), len(w.StandRows()))
	}
	means := make([]float64, 2)
	for i, r := range rects {
		var sum float64
		var n int
		for row := r[1]; row < r[3]; row++ {
			for col := r[0]; col < r[2]; col++ {
				if v := plane[row*pw+col]; !math.IsNaN(float64(v)) {
					sum += float64(v)
					n++
				}
			}
		}
		means[i] = sum / float64(n)
		if math.Abs(res[i].Mean-means[i]) > 1e-6 || res[i].ValidPixels != float64(n) {
			t.Errorf("stand %d: mean %v over %v pixels, want %v over %d", i, res[i].Mean, res[i].ValidPixels, means[i], n)
		}
	}

	test.TapCanvas(w.Win.Canvas(), mapPos(w, 40, 50))
	if got := w.SelectedStand(); got != "2" {
		t.Errorf("a click in the second stand selected %q", got)
	}
	test.TapCanvas(w.Win.Canvas(), mapPos(w, 5, 5))
	if got := w.SelectedStand(); got != "1" {
		t.Errorf("a click in the first stand selected %q", got)
	}

	w.SortStands(3) // mean, ascending
	rows := w.StandRows()
	lo := "1"
	if means[1] < means[0] {
		lo = "2"
	}
	if rows[0][0] != lo {
		t.Errorf("sorted by mean, the first row is %q, want %q (means %v)", rows[0][0], lo, means)
	}
	w.SortStands(3) // descending
	if w.StandRows()[0][0] == lo {
		t.Errorf("sorting by mean again did not reverse the rows")
	}

	out := filepath.Join(t.TempDir(), "stands.csv")
	if err := w.ExportStands(out); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if !strings.HasPrefix(lines[0], "id,pixels,valid_pixels,area_ha,mean,") || len(lines) != 3 {
		t.Errorf("CSV:\n%s", b)
	}

	// Outlines: the selected (first) stand's in white on its left edge
	// (x = pixel 2), the other's in black (x = pixel 30).
	img := w.Map.generate(int(w.Map.Size().Width), int(w.Map.Size().Height))
	z, x0, y0 := w.Map.View()
	if c := img.At(int((2-x0)*z), int((10.5-y0)*z)); fmt.Sprint(c) != "{255 255 255 255}" {
		t.Errorf("the selected stand's outline is %v, want white", c)
	}
	if c := img.At(int((30-x0)*z), int((40.5-y0)*z)); !isDark(c) {
		t.Errorf("the other stand's outline is %v, want black", c)
	}
}

func isDark(c interface{ RGBA() (r, g, b, a uint32) }) bool {
	r, g, b, _ := c.RGBA()
	return r == 0 && g == 0 && b == 0
}
