package ui

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
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
	w := newTestWindow(t, options{})
	rects := [][4]int{{2, 2, 20, 30}, {30, 35, 60, 60}}
	if err := w.OpenStands(writeStands(t, rects)); err != nil {
		t.Fatal(err)
	}
	if len(w.standsP.results) != 0 {
		t.Error("the stands' statistics were computed on the event goroutine")
	}
	w.Wait()
	plane, _, pw, _ := w.Plane()
	res := w.standsP.results
	if len(res) != 2 || len(w.standsP.rows()) != 2 {
		t.Fatalf("%d results, %d rows, want 2", len(res), len(w.standsP.rows()))
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
	if got := w.standsP.selectedID(); got != "s1" {
		t.Errorf("a click in the second stand selected %q", got)
	}
	test.TapCanvas(w.Win.Canvas(), mapPos(w, 5, 5))
	if got := w.standsP.selectedID(); got != "s0" {
		t.Errorf("a click in the first stand selected %q", got)
	}

	w.standsP.sortBy(4) // mean, ascending
	rows := w.standsP.rows()
	lo := "s0"
	if means[1] < means[0] {
		lo = "s1"
	}
	if rows[0][0] != lo {
		t.Errorf("sorted by mean, the first row is %q, want %q (means %v)", rows[0][0], lo, means)
	}
	w.standsP.sortBy(4) // descending
	if w.standsP.rows()[0][0] == lo {
		t.Errorf("sorting by mean again did not reverse the rows")
	}

	out := filepath.Join(t.TempDir(), "stands.csv")
	if err := w.standsP.export(out); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if !strings.HasPrefix(lines[0], "id,pixels,valid_pixels,area_ha,valid_ha,mean,") || !strings.HasSuffix(lines[0], ",name") || len(lines) != 3 {
		t.Errorf("CSV:\n%s", b)
	}

	// Outlines: the selected (first) stand's in white on its left edge
	// (x = pixel 2), the other's in black (x = pixel 30).
	img := w.Map.Draw(int(w.Map.Size().Width), int(w.Map.Size().Height))
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

// writeNamedStands writes a GeoJSON of pixel-aligned rectangles with two
// attributes, name ("s0", "s1", …) and code ("A-0", "A-1", …).
func writeNamedStands(t *testing.T, rects [][4]int) string {
	t.Helper()
	var feats []string
	for i, s := range rects {
		x0, x1 := 600000+10*float64(s[0]), 600000+10*float64(s[2])
		y0, y1 := 5300000-10*float64(s[1]), 5300000-10*float64(s[3])
		ring := fmt.Sprintf("[[[%g,%g],[%g,%g],[%g,%g],[%g,%g],[%g,%g]]]", x0, y0, x1, y0, x1, y1, x0, y1, x0, y0)
		feats = append(feats, fmt.Sprintf(`{"type":"Feature","properties":{"code":"A-%d","name":"s%d"},"geometry":{"type":"Polygon","coordinates":%s}}`, i, i, ring))
	}
	gj := `{"type":"FeatureCollection","crs":{"type":"name","properties":{"name":"urn:ogc:def:crs:EPSG::32632"}},"features":[` + strings.Join(feats, ",") + `]}`
	p := filepath.Join(t.TempDir(), "named.geojson")
	if err := os.WriteFile(p, []byte(gj), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestStandIDPicker: stands are named by their name attribute by default
// (the layer has no id); picking code in the picker renames the table's
// id column and the labels over the map; labels are drawn where a stand
// is big enough on the screen to carry its name, not on stands too small
// (until zoomed in), and of two stands on the same place only one label
// is drawn.
func TestStandIDPicker(t *testing.T) {
	w := newTestWindow(t, options{})
	rects := [][4]int{{2, 2, 30, 30}, {34, 34, 62, 62}, {34, 34, 62, 62}, {40, 4, 41, 5}}
	if err := w.OpenStands(writeNamedStands(t, rects)); err != nil {
		t.Fatal(err)
	}
	w.Wait()
	if got := w.standsP.IDField.Selected; got != "name" {
		t.Errorf("the id picker chose %q, want name", got)
	}
	ids := func() []string {
		var out []string
		for _, r := range w.standsP.rows() {
			out = append(out, r[0])
		}
		return out
	}
	if got := strings.Join(ids(), ","); got != "s0,s1,s2,s3" {
		t.Errorf("table ids %s", got)
	}
	labels := strings.Join(w.standsP.labels.names(), ",")
	if !strings.Contains(labels, "s0") || strings.Contains(labels, "s3") || strings.Count(labels, ",") != 1 {
		t.Errorf("labels drawn %q: want s0 and one of s1/s2 (same place), not s3 (one pixel)", labels)
	}
	// The label sits on the stand's centroid, (16, 16) in image pixels,
	// and follows a pan.
	labelAt := func(name string) (fyne.Position, bool) {
		for _, o := range test.LaidOutObjects(w.standsP.labels) {
			if tx, ok := o.(*canvas.Text); ok && tx.Visible() && tx.Text == name {
				return tx.Position().Add(fyne.NewPos(tx.Size().Width/2, tx.Size().Height/2)), true
			}
		}
		return fyne.Position{}, false
	}
	for _, pan := range []float64{0, 40} {
		w.Map.PanBy(pan, pan/2)
		z, x0, y0 := w.Map.View()
		sc := float64(w.Win.Canvas().Scale())
		want := fyne.NewPos(float32((16-x0)*z/sc), float32((16-y0)*z/sc))
		if got, ok := labelAt("s0"); !ok || math.Abs(float64(got.X-want.X)) > 1 || math.Abs(float64(got.Y-want.Y)) > 1 {
			t.Errorf("panned by %v: label s0 at %v (found %v), want the centroid at %v", pan, got, ok, want)
		}
	}
	w.standsP.IDField.SetSelected("code") // as the user picks it
	if got := strings.Join(ids(), ","); got != "A-0,A-1,A-2,A-3" {
		t.Errorf("after picking code, table ids %s", got)
	}
	if got := strings.Join(w.standsP.labels.names(), ","); !strings.Contains(got, "A-0") || strings.Contains(got, "s0") {
		t.Errorf("after picking code, labels %q", got)
	}
	for range 5 { // towards the small stand
		z, x0, y0 := w.Map.View()
		w.Map.ZoomAround(4, (40.5-x0)*z, (4.5-y0)*z)
	}
	if got := strings.Join(w.standsP.labels.names(), ","); !strings.Contains(got, "A-3") {
		t.Errorf("zoomed in on the small stand: labels %q, want A-3", got)
	}
	w.standsP.IDField.SetSelected(featureID)
	if got := strings.Join(ids(), ","); got != "1,2,3,4" {
		t.Errorf("by feature id, table ids %s", got)
	}
}

// TestStandsFollowNewMap: a computation started while the stands'
// statistics run cancels them; the statistics shown are those of the new
// map (the mean of EVI over each stand's pixels), not of the one they
// started on.
func TestStandsFollowNewMap(t *testing.T) {
	w := newTestWindow(t, options{})
	rects := [][4]int{{2, 2, 20, 30}, {30, 35, 60, 60}}
	if err := w.OpenStands(writeStands(t, rects)); err != nil {
		t.Fatal(err)
	}
	w.index.Index.SetSelected("EVI") // computes at once, cancelling the stands' job
	w.Wait()
	plane, name, pw, _ := w.Plane()
	if name != "evi" {
		t.Fatalf("the map shows %s (status %q)", name, w.Status.Text)
	}
	res := w.standsP.results
	if len(res) != 2 {
		t.Fatalf("%d results", len(res))
	}
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
		if math.Abs(res[i].Mean-sum/float64(n)) > 1e-6 {
			t.Errorf("stand %d: mean %v, want EVI's %v", i, res[i].Mean, sum/float64(n))
		}
	}
}

// TestStandsTable: the Stands tab is a real table: columns id, area and
// valid area (two columns), valid pixels, the statistics named after the
// index (mean NDVI, ...), then the stands' own attributes (species, age);
// a tap on a column's name sorts by it (numbers as numbers, text as
// text), again reverses; a stand half off the raster has the area of its
// part on it.
func TestStandsTable(t *testing.T) {
	w := newTestWindow(t, options{})
	_, _, pw, _ := w.Plane()
	var feats []string
	rects := [][4]int{{2, 2, 22, 22}, {30, 30, 40, 40}, {pw - 5, 50, pw + 5, 60}}
	attrs := []string{`"species":"Picea abies","age":85`, `"species":"Fagus sylvatica","age":120`, `"species":"Abies alba","age":9`}
	for i, s := range rects {
		x0, x1 := 600000+10*float64(s[0]), 600000+10*float64(s[2])
		y0, y1 := 5300000-10*float64(s[1]), 5300000-10*float64(s[3])
		ring := fmt.Sprintf("[[[%g,%g],[%g,%g],[%g,%g],[%g,%g],[%g,%g]]]", x0, y0, x1, y0, x1, y1, x0, y1, x0, y0)
		feats = append(feats, fmt.Sprintf(`{"type":"Feature","properties":{"name":"s%d",%s},"geometry":{"type":"Polygon","coordinates":%s}}`, i, attrs[i], ring))
	}
	gj := `{"type":"FeatureCollection","crs":{"type":"name","properties":{"name":"urn:ogc:def:crs:EPSG::32632"}},"features":[` + strings.Join(feats, ",") + `]}`
	path := filepath.Join(t.TempDir(), "stands.geojson")
	if err := os.WriteFile(path, []byte(gj), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := w.OpenStands(path); err != nil {
		t.Fatal(err)
	}
	w.Wait()
	want := "id,area ha,valid ha,valid px,mean NDVI,median NDVI,std NDVI,min NDVI,max NDVI,age,name,species"
	if got := strings.Join(w.standsP.columns(), ","); got != want {
		t.Fatalf("columns\n %s\nwant\n %s", got, want)
	}
	rows := w.standsP.rows()
	if len(rows) != 3 || rows[0][11] != "Picea abies" || rows[1][9] != "120" {
		t.Fatalf("rows %v", rows)
	}
	// The third stand lies half off the raster: its area on the raster is
	// its part inside (5×10 pixels of 10 m = 0.5 ha).
	if rows[2][1] != "0.50" || rows[0][1] != "4.00" {
		t.Errorf("areas %s %s, want 4.00 and 0.50", rows[0][1], rows[2][1])
	}
	// The header buttons sort: age ascending by number (9 < 85 < 120,
	// not "120" < "85" < "9"), then descending.
	w.showStandsTab()
	if w.tabs.Selected().Text != "Stands" {
		t.Fatalf("the Stands tab is not shown: %s", w.tabs.Selected().Text)
	}
	tapHeader(t, w, "age")
	if got := column(w.standsP.rows(), 9); got != "9,85,120" {
		t.Errorf("sorted by age: %s", got)
	}
	tapHeader(t, w, "age ▲")
	if got := column(w.standsP.rows(), 9); got != "120,85,9" {
		t.Errorf("sorted by age, reversed: %s", got)
	}
	tapHeader(t, w, "species")
	if got := column(w.standsP.rows(), 11); got != "Abies alba,Fagus sylvatica,Picea abies" {
		t.Errorf("sorted by species: %s", got)
	}
}

// tapHeader taps the stands table's header button named name.
func tapHeader(t *testing.T, w *window, name string) {
	t.Helper()
	tbl := w.standsP.table
	tbl.Resize(fyne.NewSize(2400, 400))
	for c := range w.standsP.columns() {
		b := tbl.CreateHeader().(*widget.Button)
		tbl.UpdateHeader(widget.TableCellID{Row: -1, Col: c}, b)
		if b.Text == name {
			test.Tap(b)
			return
		}
	}
	t.Fatalf("no header %q in %v", name, w.standsP.columns())
}

func column(rows [][]string, c int) string {
	var s []string
	for _, r := range rows {
		s = append(s, r[c])
	}
	return strings.Join(s, ",")
}
