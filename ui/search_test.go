package ui

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"canopy/compute/fake"
	"canopy/compute/geotiff"
)

// TestSearchArchive: File › Search the archive… takes the area on screen
// in degrees, lists the scenes a STAC API finds (on the loopback), and
// opens the one chosen over HTTP, its assets read by byte ranges.
func TestSearchArchive(t *testing.T) {
	// The cache (ranges read, searches and items kept) in a folder of the
	// test's: what makes the window work offline.
	t.Setenv("CANOPY_CACHE_DIR", t.TempDir())
	w := newTestWindow(t, options{})
	w.searchDialog()
	f := &w.archive.form

	// The area: the map view, in degrees, by default.
	bb := strings.Split(f.area.Text, ",")
	if f.areaFrom.Selected != areaView || f.area.Text != w.viewBBox() || len(bb) != 4 {
		t.Fatalf("the area %q from %q; the view's %q", f.area.Text, f.areaFrom.Selected, w.viewBBox())
	}
	var v [4]float64
	for i, s := range bb {
		v[i], _ = strconv.ParseFloat(s, 64)
	}
	if !(v[0] < v[2] && v[1] < v[3] && v[0] >= -180 && v[2] <= 180 && v[1] >= -90 && v[3] <= 90) {
		t.Fatalf("the view's area %v is not west,south,east,north", v)
	}
	// The stands' extent: none open yet, said so; then the stands'.
	f.areaFrom.SetSelected(areaStands)
	if f.area.Text != w.viewBBox() || !strings.Contains(w.Status.Text, "no stands are open") {
		t.Fatalf("stands chosen with none open: area %q, status %q", f.area.Text, w.Status.Text)
	}
	if err := w.OpenStands(writeStands(t, [][4]int{{2, 2, 20, 30}, {30, 35, 60, 60}})); err != nil {
		t.Fatal(err)
	}
	w.Wait()
	f.areaFrom.SetSelected(areaView)
	f.areaFrom.SetSelected(areaStands)
	var s4 [4]float64
	for i, s := range strings.Split(f.area.Text, ",") {
		s4[i], _ = strconv.ParseFloat(s, 64)
	}
	// Inside the view (the fake scene's grid), and smaller: pixels 2 to 60
	// of its 10 m grid.
	if !(s4[0] > v[0] && s4[1] > v[1] && s4[2] < v[2] && s4[3] < v[3] && s4[0] < s4[2] && s4[1] < s4[3]) {
		t.Fatalf("the stands' extent %v (%q) against the view's %v", s4, f.area.Text, v)
	}
	f.areaFrom.SetSelected(areaView)
	if f.area.Text != w.viewBBox() {
		t.Fatalf("back to the view: %q", f.area.Text)
	}

	// Two single-band GeoTIFFs and two items over them, behind a search.
	dir := t.TempDir()
	for b, name := range []string{"red", "nir"} {
		px := make([]uint16, 40*30)
		for i := range px {
			px[i] = uint16(500 + 300*b + i%40*10)
		}
		if err := geotiff.WriteBands(filepath.Join(dir, name+".tif"), 40, 30, [][]uint16{px}, fake.GeoRef(), geotiff.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// A true-colour COG for the thumbnails ("visual", as Earth Search's
	// and the Planetary Computer's Sentinel-2 items have).
	vis := make([][]float32, 3)
	for b := range vis {
		vis[b] = make([]float32, 200*150)
		for i := range vis[b] {
			vis[b][i] = 0.05*float32(b+1) + 0.001*float32(i%200)
		}
	}
	vf, err := os.Create(filepath.Join(dir, "visual.tif"))
	if err != nil {
		t.Fatal(err)
	}
	if err := geotiff.WriteCOG(vf, 200, 150, vis, fake.GeoRef(), geotiff.COGOptions{}); err != nil {
		t.Fatal(err)
	}
	vf.Close()
	var srv *httptest.Server
	item := func(id string, cloud float64) map[string]any {
		date := "2024-06-03T10:16:22Z"
		if id == "B" {
			date = "2024-06-13T10:16:20Z"
		}
		return map[string]any{"type": "Feature", "stac_version": "1.0.0", "id": id, "collection": "sentinel-2-l2a",
			"properties": map[string]any{"datetime": date, "eo:cloud_cover": cloud, "platform": "sentinel-2b"},
			"links":      []map[string]any{{"rel": "self", "href": srv.URL + "/items/" + id + ".json"}},
			"assets": map[string]any{
				"red": map[string]any{"href": "../red.tif", "roles": []string{"data"}, "eo:bands": []map[string]any{{"name": "B04", "common_name": "red"}},
					"raster:bands": []map[string]any{{"scale": 0.0001, "offset": 0, "nodata": 0}}},
				"visual": map[string]any{"href": "../visual.tif", "type": "image/tiff; application=geotiff; profile=cloud-optimized", "roles": []string{"visual"}},
				"nir": map[string]any{"href": "../nir.tif", "roles": []string{"data"}, "eo:bands": []map[string]any{{"name": "B08", "common_name": "nir"}},
					"raster:bands": []map[string]any{{"scale": 0.0001, "offset": 0, "nodata": 0}}}}}
	}
	var posted map[string]any
	var hangMu sync.Mutex
	var hanging func(r *http.Request)
	hangFor := func() func(r *http.Request) { hangMu.Lock(); defer hangMu.Unlock(); return hanging }
	setHang := func(f func(r *http.Request)) { hangMu.Lock(); hanging = f; hangMu.Unlock() }
	srv = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/v1/search" && hangFor() != nil:
			hangFor()(r)
		case r.URL.Path == "/v1/search":
			b, _ := io.ReadAll(r.Body)
			json.Unmarshal(b, &posted)
			json.NewEncoder(rw).Encode(map[string]any{"type": "FeatureCollection", "features": []any{item("A", 4.5), item("B", 12)}})
		case strings.HasPrefix(r.URL.Path, "/items/"):
			id := strings.TrimSuffix(filepath.Base(r.URL.Path), ".json")
			json.NewEncoder(rw).Encode(item(id, 4.5))
		default:
			http.FileServer(http.Dir(dir)).ServeHTTP(rw, r)
		}
	}))
	t.Cleanup(srv.Close)

	// The loopback archive in the dialog's list.
	saved := archiveAPIs
	archiveAPIs = append(slices.Clone(archiveAPIs), struct{ label, url string }{"Loopback", srv.URL + "/v1"})
	t.Cleanup(func() { archiveAPIs = saved })
	search := func() {
		t.Helper()
		w.searchDialog()
		f.api.SetSelected("Loopback")
		f.from.SetText("2024-05-01")
		f.to.SetText("2024-09-30")
		test.Tap(f.search)
		w.Wait()
	}
	search()
	if len(w.archive.items) != 2 || w.archive.list == nil || !strings.Contains(w.Status.Text, "2 scenes found") || w.archive.offline {
		t.Fatalf("%d scenes listed; status %q", len(w.archive.items), w.Status.Text)
	}
	if posted["datetime"] != "2024-05-01T00:00:00Z/2024-09-30T23:59:59Z" || fmt.Sprint(posted["bbox"]) != fmt.Sprint([]any{v[0], v[1], v[2], v[3]}) ||
		fmt.Sprint(posted["query"]) != "map[eo:cloud_cover:map[lte:30]]" {
		t.Fatalf("posted %v", posted)
	}
	if row := archiveRow(w.archive.items[0]); row != "2024-06-03 10:16   cloud  4.5%   sentinel-2b   A" {
		t.Fatalf("row %q", row)
	}
	// Both scenes have a thumbnail, drawn from their visual COG.
	if len(w.archive.thumbs) != 2 || w.archive.thumbs[0] == nil {
		t.Fatalf("%d thumbnails; status %q", len(w.archive.thumbs), w.Status.Text)
	}
	if b := w.archive.thumbs[1].Bounds(); b.Dx() != 200 || b.Dy() != 150 {
		t.Fatalf("thumbnail %v", b)
	}
	if !w.archive.open.Disabled() || !w.archive.openMany.Disabled() {
		t.Fatal("Open is enabled with nothing selected or checked")
	}
	w.archive.list.Select(1)
	test.Tap(w.archive.open)
	w.Wait()
	ndvi, wd, ht := ndviOf(w)
	if ndvi == nil || wd != 40 || ht != 30 || !strings.Contains(w.SceneLabel.Text, "B") {
		t.Fatalf("after opening B: %d×%d, scene %q, status %q", wd, ht, w.SceneLabel.Text, w.Status.Text)
	}
	// NDVI of the first pixel: (0.08 - 0.05) / (0.08 + 0.05).
	if got, want := float64(ndvi[0]), (0.08-0.05)/(0.08+0.05); got < want-1e-6 || got > want+1e-6 {
		t.Fatalf("ndvi[0] = %v, want %v", got, want)
	}

	// Both checked (the rows' own check boxes): one mosaic of the two.
	search()
	checks := rowChecks(t, w)
	if len(checks) != 2 {
		t.Fatalf("%d check boxes in the list", len(checks))
	}
	// A check box is tapped on its box, in the middle of the row's height.
	tapBox := func(c *widget.Check) { test.TapAt(c, fyne.NewPos(4, c.Size().Height/2)) }
	tapBox(checks[0])
	if !w.archive.openMany.Disabled() {
		t.Fatal("one scene checked opens a mosaic")
	}
	tapBox(checks[1])
	if w.archive.openMany.Disabled() {
		t.Fatalf("two scenes checked: no mosaic to open (checked %v, boxes %v %v)", w.archive.checked, checks[0].Checked, checks[1].Checked)
	}
	test.Tap(w.archive.openMany)
	w.Wait()
	if ndvi, wd, ht := ndviOf(w); ndvi == nil || wd != 40 || ht != 30 || !strings.Contains(w.SceneLabel.Text, "mosaic of 2 products") {
		t.Fatalf("the mosaic: %d×%d, scene %q, status %q", wd, ht, w.SceneLabel.Text, w.Status.Text)
	}

	// Both checked: a stack of their two dates, the index on each with
	// its valid share, as canopy stack lists them.
	search()
	checks = rowChecks(t, w)
	tapBox(checks[0])
	tapBox(checks[1])
	if w.archive.openStack.Disabled() {
		t.Fatal("two scenes checked: no stack to open")
	}
	test.Tap(w.archive.openStack)
	w.Wait()
	if st := w.archive.stack; len(st) != 2 || st[0].ISO != "2024-06-03" || st[1].ISO != "2024-06-13" || st[0].ValidShare != 1 || st[1].How != "STAC item" ||
		!strings.Contains(w.archive.stackText.Text, "2 dates on 40×30 pixels") || !strings.Contains(w.archive.stackText.Text, "2024-06-13   sentinel-2b   valid 100.0 %") {
		t.Fatalf("the stack %+v; status %q", w.archive.stack, w.Status.Text)
	}
	// The stack goes on to the time-series window: its slider over the
	// two dates, the map the second date's index, a click a series.
	tv := w.archive.series
	if tv == nil {
		t.Fatalf("the stack was not shown as a time series: %q", w.archive.stackText.Text)
	}
	if tv.s.w != 40 || tv.s.h != 30 || len(tv.s.dates) != 2 || tv.slider.Max != 1 {
		t.Fatalf("the time series: %d×%d, %d dates, slider to %v", tv.s.w, tv.s.h, len(tv.s.dates), tv.slider.Max)
	}
	tv.Wait() // its first model run, the main window's stands read
	tv.click.SetSelected(tsClickPixel)
	tv.ShowDate(1)
	if !strings.HasPrefix(tv.label.Text, "2024-06-13 (2 of 2)") {
		t.Fatalf("the time series' date label %q", tv.label.Text)
	}
	tv.Click(20, 15)
	if tv.series == nil || len(tv.series.Values) != 2 {
		t.Fatalf("a click on the time series drew %+v (%q, %q)", tv.series, tv.info.Text, tv.runInfo.Text)
	}
	for k, x := range tv.series.Values {
		if want := float64(tv.s.cube[k*40*30+15*40+20]); x != want && !(x != x && want != want) {
			t.Fatalf("the series' date %d: %v, the cube %v", k, x, want)
		}
	}

	// Cancel stops a search that hangs: the server sees its request end.
	hang, gone := make(chan struct{}), make(chan struct{})
	setHang(func(r *http.Request) {
		io.ReadAll(r.Body) // the server notices a closed connection once the body is read
		close(hang)
		<-r.Context().Done()
		close(gone)
	})
	w.searchDialog()
	f.api.SetSelected("Loopback")
	test.Tap(f.search)
	<-hang
	test.Tap(w.Cancel)
	<-gone
	w.Wait()
	setHang(nil)
	if len(w.archive.items) != 2 {
		t.Fatalf("a cancelled search changed the list: %d scenes", len(w.archive.items))
	}

	// Offline: the archive gone, the same search lists the scenes kept,
	// says so, draws their thumbnails from the cache and opens a scene
	// from what the cache holds.
	srv.Close()
	search()
	if len(w.archive.items) != 2 || !w.archive.offline || !strings.Contains(w.Status.Text, "the archive did not answer") {
		t.Fatalf("offline: %d scenes; status %q", len(w.archive.items), w.Status.Text)
	}
	if len(w.archive.thumbs) != 2 {
		t.Fatalf("offline: %d thumbnails", len(w.archive.thumbs))
	}
	w.archive.list.Select(0)
	test.Tap(w.archive.open)
	w.Wait()
	if ndvi, wd, _ := ndviOf(w); ndvi == nil || wd != 40 || !strings.Contains(w.SceneLabel.Text, "A") {
		t.Fatalf("offline, A: scene %q, status %q", w.SceneLabel.Text, w.Status.Text)
	}

	// The dialog's fields are checked before anything is sent.
	for _, bad := range [][6]string{
		{srv.URL, "", "1,2,3,4", "2024-05-01", "2024-06-01", "30"},
		{srv.URL, "x", "1,2,3", "2024-05-01", "2024-06-01", "30"},
		{srv.URL, "x", "1,2,3,4", "2024-06-01", "2024-05-01", "30"},
		{srv.URL, "x", "1,2,3,4", "2024-05-01", "2024-06-01", "130"},
	} {
		if _, err := archiveQuery(bad[0], bad[1], bad[2], bad[3], bad[4], bad[5]); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

// rowChecks are the check boxes of the archive list's rows, as laid out
// in the dialog.
func rowChecks(t *testing.T, w *window) []*widget.Check {
	t.Helper()
	var out []*widget.Check
	for _, o := range test.LaidOutObjects(w.archive.list) {
		if c, ok := o.(*widget.Check); ok {
			out = append(out, c)
		}
	}
	return out
}
