package ui

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"canopy/compute"
	"canopy/compute/geotiff"
)

// TestSearchArchive: File › Search the archive… takes the area on screen
// in degrees, lists the scenes a STAC API finds (on the loopback), and
// opens the one chosen over HTTP, its assets read by byte ranges.
func TestSearchArchive(t *testing.T) {
	t.Setenv("CANOPY_CACHE_DIR", "off")
	w := newTestWindow(t, Options{})
	w.searchDialog() // builds and shows the form without a search

	// The area on screen, in degrees.
	bb := strings.Split(w.viewBBox(), ",")
	if len(bb) != 4 {
		t.Fatalf("the view's area %q", w.viewBBox())
	}
	var v [4]float64
	for i, s := range bb {
		v[i], _ = strconv.ParseFloat(s, 64)
	}
	if !(v[0] < v[2] && v[1] < v[3] && v[0] >= -180 && v[2] <= 180 && v[1] >= -90 && v[3] <= 90) {
		t.Fatalf("the view's area %v is not west,south,east,north", v)
	}

	// Two single-band GeoTIFFs and two items over them, behind a search.
	dir := t.TempDir()
	for b, name := range []string{"red", "nir"} {
		px := make([]uint16, 40*30)
		for i := range px {
			px[i] = uint16(500 + 300*b + i%40*10)
		}
		if err := geotiff.WriteBands(filepath.Join(dir, name+".tif"), 40, 30, [][]uint16{px}, compute.FakeGeoRef(), geotiff.WriteOptions{}); err != nil {
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
	if err := geotiff.WriteCOG(vf, 200, 150, vis, compute.FakeGeoRef(), geotiff.COGOptions{}); err != nil {
		t.Fatal(err)
	}
	vf.Close()
	var srv *httptest.Server
	item := func(id string, cloud float64) map[string]any {
		return map[string]any{"type": "Feature", "stac_version": "1.0.0", "id": id, "collection": "sentinel-2-l2a",
			"properties": map[string]any{"datetime": "2024-06-03T10:16:22Z", "eo:cloud_cover": cloud, "platform": "sentinel-2b"},
			"links":      []map[string]any{{"rel": "self", "href": srv.URL + "/items/" + id + ".json"}},
			"assets": map[string]any{
				"red": map[string]any{"href": "../red.tif", "roles": []string{"data"}, "eo:bands": []map[string]any{{"name": "B04", "common_name": "red"}},
					"raster:bands": []map[string]any{{"scale": 0.0001, "offset": 0, "nodata": 0}}},
				"visual": map[string]any{"href": "../visual.tif", "type": "image/tiff; application=geotiff; profile=cloud-optimized", "roles": []string{"visual"}},
				"nir": map[string]any{"href": "../nir.tif", "roles": []string{"data"}, "eo:bands": []map[string]any{{"name": "B08", "common_name": "nir"}},
					"raster:bands": []map[string]any{{"scale": 0.0001, "offset": 0, "nodata": 0}}}}}
	}
	var posted map[string]any
	srv = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		switch {
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
	defer srv.Close()

	q, err := archiveQuery(srv.URL+"/v1", "sentinel-2-l2a", w.viewBBox(), "2024-05-01", "2024-09-30", "30")
	if err != nil {
		t.Fatal(err)
	}
	w.searchArchive(q)
	w.Wait()
	if len(w.archive.items) != 2 || w.archive.list == nil || !strings.Contains(w.Status.Text, "2 scenes found") {
		t.Fatalf("%d scenes listed; status %q", len(w.archive.items), w.Status.Text)
	}
	if posted["datetime"] != "2024-05-01T00:00:00Z/2024-09-30T23:59:59Z" || fmt.Sprint(posted["bbox"]) != fmt.Sprint([]any{v[0], v[1], v[2], v[3]}) {
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
	if !w.archive.open.Disabled() {
		t.Fatal("Open is enabled with nothing selected")
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
