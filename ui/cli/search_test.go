package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"canopy/compute/stac"
)

// stacAPI is a STAC API on the loopback: two pages of Sentinel-2 items,
// the posted bodies kept.
func stacAPI(t *testing.T) (*httptest.Server, func() []map[string]any) {
	var mu sync.Mutex
	var bodies []map[string]any
	item := func(id, date string, cloud float64) string {
		b, _ := json.Marshal(map[string]any{"type": "Feature", "id": id, "collection": "sentinel-2-l2a", "stac_version": "1.0.0",
			"properties": map[string]any{"datetime": date, "eo:cloud_cover": cloud, "platform": "sentinel-2b"},
			"assets":     map[string]any{"red": map[string]any{"href": "https://sentinel-cogs.s3.us-west-2.amazonaws.com/" + id + "/B04.tif", "roles": []string{"data"}}}})
		return string(b)
	}
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		b, _ := io.ReadAll(r.Body)
		json.Unmarshal(b, &body)
		mu.Lock()
		bodies = append(bodies, body)
		mu.Unlock()
		if r.URL.Path != "/v1/search" || r.Method != http.MethodPost {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/geo+json")
		if body["next"] == nil {
			io.WriteString(w, `{"type":"FeatureCollection","features":[`+item("S2B_32TQM_20240603_0_L2A", "2024-06-03T10:16:22.5Z", 3.25)+`],
				"links":[{"rel":"next","method":"POST","merge":true,"href":"`+srv.URL+`/v1/search","body":{"next":"x"}}]}`)
			return
		}
		io.WriteString(w, `{"type":"FeatureCollection","features":[`+item("S2B_32TQM_20240613_0_L2A", "2024-06-13T10:16:20Z", 27)+`],"links":[]}`)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []map[string]any { mu.Lock(); defer mu.Unlock(); return bodies }
}

func TestSearchCommand(t *testing.T) {
	srv, bodies := stacAPI(t)
	code, out, errs := run(t, "search", "--collection", "sentinel-2-l2a", "--bbox", "11.0,46.0,11.2,46.1",
		"--datetime", "2024-05-01/2024-09-30", "--cloud", "30", "--api", srv.URL+"/v1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"2024-06-03 10:16    3.2%  sentinel-2b    S2B_32TQM_20240603_0_L2A", "27.0%", "2 scenes from " + srv.URL + "/v1/search"} {
		if !strings.Contains(out, want) {
			t.Fatalf("output lacks %q:\n%s", want, out)
		}
	}
	b := bodies()[0]
	if b["datetime"] != "2024-05-01T00:00:00Z/2024-09-30T23:59:59Z" || b["bbox"].([]any)[2] != 11.2 ||
		b["query"].(map[string]any)["eo:cloud_cover"].(map[string]any)["lte"] != 30.0 {
		t.Fatalf("posted %v", b)
	}

	// --json: a STAC ItemCollection of the items as sent, for a stack.
	code, out, errs = run(t, "search", "--collection", "sentinel-2-l2a", "--bbox", "11.0,46.0,11.2,46.1",
		"--datetime", "2024-05-01/2024-09-30", "--api", srv.URL+"/v1", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var fc struct {
		Type     string            `json:"type"`
		Features []json.RawMessage `json:"features"`
		Search   map[string]any    `json:"canopy:search"`
	}
	if err := json.Unmarshal([]byte(out), &fc); err != nil || fc.Type != "FeatureCollection" || len(fc.Features) != 2 || fc.Search["max_cloud"] != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	if !strings.Contains(string(fc.Features[1]), `"href":"https://sentinel-cogs.s3.us-west-2.amazonaws.com/S2B_32TQM_20240613_0_L2A/B04.tif"`) {
		t.Fatalf("item not as sent: %s", fc.Features[1])
	}
	// --out: the same document saved, which a stack reads back as its
	// dates (stac.ReadResult).
	saved := filepath.Join(t.TempDir(), "r.json")
	code, out, errs = run(t, "search", "--collection", "sentinel-2-l2a", "--bbox", "11.0,46.0,11.2,46.1",
		"--datetime", "2024-05-01/2024-09-30", "--api", srv.URL+"/v1", "--out", saved)
	if code != 0 || !strings.Contains(out, "2 scenes from") {
		t.Fatalf("--out: exit %d: %s%s", code, out, errs)
	}
	res, err := stac.ReadResult(saved)
	if err != nil || len(res.Items) != 2 || res.Items[0].ID != "S2B_32TQM_20240603_0_L2A" || res.API != srv.URL+"/v1/search" ||
		!res.Items[1].Date.Equal(time.Date(2024, 6, 13, 10, 16, 20, 0, time.UTC)) {
		t.Fatalf("--out read back: %+v, %v", res, err)
	}
}

// TestSearchStands: the area is the stands' extent in degrees.
func TestSearchStands(t *testing.T) {
	srv, bodies := stacAPI(t)
	// A stand in UTM 32N around 11.1°E 46.05°N.
	gj := `{"type":"FeatureCollection","crs":{"type":"name","properties":{"name":"urn:ogc:def:crs:EPSG::32632"}},"features":[
		{"type":"Feature","properties":{"id":1},"geometry":{"type":"Polygon","coordinates":[[[664000,5101000],[666000,5101000],[666000,5103000],[664000,5103000],[664000,5101000]]]}}]}`
	p := filepath.Join(t.TempDir(), "stands.geojson")
	os.WriteFile(p, []byte(gj), 0o644)
	code, _, errs := run(t, "search", "--collection", "sentinel-2-l2a", "--stands", p, "--datetime", "2024-06-01/2024-06-30", "--api", srv.URL+"/v1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	bb := bodies()[0]["bbox"].([]any)
	w, s, e, n := bb[0].(float64), bb[1].(float64), bb[2].(float64), bb[3].(float64)
	if math.Abs(w-11.1) > 0.05 || math.Abs(e-11.13) > 0.05 || math.Abs(s-46.04) > 0.05 || math.Abs(n-46.06) > 0.05 || !(w < e && s < n) {
		t.Fatalf("bbox %v", bb)
	}
}

func TestSearchUsage(t *testing.T) {
	for _, args := range [][]string{
		{"search", "--bbox", "1,2,3,4", "--datetime", "2024-05-01/2024-06-01"},
		{"search", "--collection", "x", "--datetime", "2024-05-01/2024-06-01"},
		{"search", "--collection", "x", "--bbox", "1,2,3,4", "--stands", "s.gpkg", "--datetime", "2024"},
		{"search", "--collection", "x", "--bbox", "1,2,3", "--datetime", "2024-05-01/2024-06-01"},
		{"search", "--collection", "x", "--bbox", "1,2,3,4", "--datetime", "2024-09-01/2024-06-01"},
		{"search", "--collection", "x", "--bbox", "1,2,3,4"},
		{"search", "--collection", "x", "--bbox", "1,2,3,4", "--datetime", "2024-05-01/2024-06-01", "--api", "ftp://x"},
		{"search", "--collection", "x", "--bbox", "1,2,3,4", "--datetime", "2024-05-01/2024-06-01", "--cloud", "120"},
	} {
		code, _, errs := run(t, args...)
		if code != 2 || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%v: exit %d, %q; want 2 and one line", args, code, errs)
		}
	}
	// An API that is not there: exit 1, one line.
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	code, _, errs := run(t, "search", "--collection", "x", "--bbox", "1,2,3,4", "--datetime", "2024-05-01/2024-06-01", "--api", srv.URL)
	if code != 1 || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
		t.Errorf("a closed API: exit %d, %q", code, errs)
	}
}

// TestComputeRemoteScene: --scene takes a URL; the results equal those of
// the same file on disk.
func TestComputeRemoteScene(t *testing.T) {
	t.Setenv("CANOPY_CACHE_DIR", "off")
	dir := t.TempDir()
	p := filepath.Join(dir, "flight.tif")
	date(t, p, 24, 16, 600000, 0, 2, 2, 8, 8)
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer srv.Close()
	local, remote := filepath.Join(t.TempDir(), "l.tif"), filepath.Join(t.TempDir(), "r.tif")
	if code, _, e := run(t, "compute", "--scene", p, "--index", "ndvi", "--tif", local); code != 0 {
		t.Fatal(e)
	}
	if code, _, e := run(t, "compute", "--scene", srv.URL+"/flight.tif", "--index", "ndvi", "--tif", remote); code != 0 {
		t.Fatal(e)
	}
	a, _ := os.ReadFile(local)
	b, _ := os.ReadFile(remote)
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Fatalf("the GeoTIFF from the URL (%d bytes) differs from the one from the file (%d bytes)", len(b), len(a))
	}
	code, out, e := run(t, "scene", srv.URL+"/flight.tif", "--json")
	if code != 0 || !strings.Contains(out, `"path":"`+srv.URL+`/flight.tif"`) {
		t.Fatalf("canopy scene URL: exit %d: %s %s", code, out, e)
	}
	code, _, e = run(t, "compute", "--scene", srv.URL+"/missing.tif", "--index", "ndvi", "--tif", remote)
	if code != 1 || !strings.Contains(e, "not found (404 Not Found)") || strings.Count(strings.TrimSpace(e), "\n") != 0 {
		t.Fatalf("a missing URL: exit %d: %q", code, e)
	}
}
