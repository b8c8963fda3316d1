package stac

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"canopy/compute/remote"
)

// TestEarthSearchTwoCollections replays pystac-client's recording of a
// real Earth Search v1 search of Sentinel-2 L2A and Landsat Collection 2
// Level-2 over one point on one day: the first page holds both items and
// a next link that POSTs the search's body with a paging token, which
// replaces the body (no merge); the second page is empty. The items'
// fields are read as Earth Search wrote them: roles, raster:bands (the
// Sentinel-2 offset of -0.1 from processing baseline 04.00, Landsat's
// 2.75e-5 and -0.2), proj:epsg, proj:shape and proj:transform, and
// storage:requester_pays; s3:// hrefs become the buckets' HTTPS URLs.
func TestEarthSearchTwoCollections(t *testing.T) {
	r := loadCassette(t, "test_multiple_collections.yaml")
	var progress []string
	c := &Client{HTTP: &http.Client{Transport: r}, Progress: func(pages, items, matched int) {
		progress = append(progress, fmt.Sprint(pages, items, matched))
	}}
	items, err := c.Search(context.Background(), Query{API: EarthSearch, Collections: []string{"sentinel-2-l2a", "landsat-c2-l2"},
		Intersects: json.RawMessage(`{"type": "Point", "coordinates": [-105.1019, 40.1672]}`), Datetime: "2023-10-08", MaxCloud: -1})
	if err != nil {
		t.Fatal(err)
	}
	if r.next != 2 || c.Requests != 2 {
		t.Fatalf("%d of the cassette's 2 requests made (%d sent)", r.next, c.Requests)
	}
	// Progress after each page, with the server's numberMatched.
	if fmt.Sprint(progress) != "[1 2 2 2 2 2]" {
		t.Fatalf("progress %v", progress)
	}
	if len(items) != 2 {
		t.Fatalf("items %v", ids(items))
	}
	s2, ls := items[0], items[1]
	if s2.ID != "S2A_13TDE_20231008_0_L2A" || s2.Collection != "sentinel-2-l2a" || s2.Platform != "sentinel-2a" || s2.Cloud != 0.000299 || s2.EPSG != 32613 ||
		!s2.Date.Equal(time.Date(2023, 10, 8, 18, 2, 55, 276000000, time.UTC)) || s2.Href() != "https://earth-search.aws.element84.com/v1/collections/sentinel-2-l2a/items/S2A_13TDE_20231008_0_L2A" {
		t.Fatalf("Sentinel-2 item %+v", s2)
	}
	red := s2.Assets["red"]
	rb := red.RasterBands[0]
	if red.Href != "https://sentinel-cogs.s3.us-west-2.amazonaws.com/sentinel-s2-l2a-cogs/13/T/DE/2023/10/S2A_13TDE_20231008_0_L2A/B04.tif" ||
		!red.HasRole("data") || !red.HasRole("reflectance") || red.EOBands[0].CommonName != "red" ||
		*rb.Scale != 0.0001 || *rb.Offset != -0.1 || rb.NoData != 0.0 || rb.DataType != "uint16" || rb.Resolution != 10 ||
		!reflect.DeepEqual(red.ProjShape, []int{10980, 10980}) || !reflect.DeepEqual(red.ProjTransform, []float64{10, 0, 399960, 0, -10, 4500000}) || red.RequesterPays {
		t.Fatalf("Sentinel-2 red %+v", red)
	}
	if scl := s2.Assets["scl"]; scl.RasterBands[0].Resolution != 20 || scl.ProjShape[0] != 5490 || scl.RasterBands[0].DataType != "uint8" {
		t.Fatalf("Sentinel-2 SCL %+v", scl)
	}
	if v := s2.Assets["visual"]; !v.HasRole("visual") || !strings.HasSuffix(v.Href, "/TCI.tif") {
		t.Fatalf("Sentinel-2 visual %+v", v)
	}
	if ls.ID != "LC08_L2SP_033032_20231008_02_T1" || ls.Collection != "landsat-c2-l2" || ls.Platform != "landsat-8" || ls.Cloud != 0.06 || ls.EPSG != 32613 ||
		!ls.Date.Equal(time.Date(2023, 10, 8, 17, 37, 26, 656958000, time.UTC)) {
		t.Fatalf("Landsat item %+v", ls)
	}
	lred, qa := ls.Assets["red"], ls.Assets["qa_pixel"]
	if lrb := lred.RasterBands[0]; *lrb.Scale != 2.75e-05 || *lrb.Offset != -0.2 || lrb.Resolution != 30 || !lred.RequesterPays ||
		!qa.HasRole("cloud") || !qa.HasRole("cloud-shadow") || qa.HasRole("data") || qa.RasterBands[0].NoData != 1.0 {
		t.Fatalf("Landsat red %+v, qa_pixel %+v", lred, qa)
	}

	// s3:// hrefs (Earth Search's Landsat assets and Sentinel-2 JPEG
	// 2000 twins) as their buckets' HTTPS URLs, in their regions.
	for href, want := range map[string]string{
		lred.Href:                    "https://usgs-landsat.s3.us-west-2.amazonaws.com/collection02/level-2/standard/oli-tirs/2023/033/032/LC08_L2SP_033032_20231008_20231017_02_T1/LC08_L2SP_033032_20231008_20231017_02_T1_SR_B4.TIF",
		s2.Assets["red-jp2"].Href:    "https://sentinel-s2-l2a.s3.eu-central-1.amazonaws.com/tiles/13/T/DE/2023/10/8/0/B04.jp2",
		s2.Assets["visual-jp2"].Href: "https://sentinel-s2-l2a.s3.eu-central-1.amazonaws.com/tiles/13/T/DE/2023/10/8/0/TCI.jp2",
	} {
		got, err := remote.HTTPURL(href)
		if err != nil || got != want {
			t.Errorf("HTTPURL(%s) = %s, %v; want %s", href, got, err, want)
		}
	}
}

// TestEarthSearchPaging replays pystac-client's recording of an Earth
// Search v1 search with a CQL2-JSON filter over every collection, two
// pages of ten: the next link is a POST whose body is the paging token
// alone (it replaces the request's body), and the second page's items
// follow the first's. Items of collections without eo:cloud_cover
// (Sentinel-1) keep no cloud share; proj:epsg of the Sentinel-2
// Collection 1 items is read.
func TestEarthSearchPaging(t *testing.T) {
	r := loadCassette(t, "TestCLISearch.test_filter[inprocess].yaml")
	var matched []int
	c := &Client{HTTP: &http.Client{Transport: r}, Progress: func(_, _, m int) { matched = append(matched, m) }}
	items, err := c.Search(context.Background(), Query{API: EarthSearch, MaxCloud: -1, MaxItems: 20,
		Filter: json.RawMessage(`{"op": "lte", "args": [{"property": "eo:cloud_cover"}, 40]}`)})
	if err != nil {
		t.Fatal(err)
	}
	if r.skipped != 1 || r.next != 3 || c.Requests != 2 {
		t.Fatalf("%d requests sent, %d of the cassette's 3 interactions used (%d landing-page GETs skipped)", c.Requests, r.next, r.skipped)
	}
	if len(items) != 20 || items[0].ID != "S1A_IW_GRDH_1SSH_20250731T135702_20250731T135722_060328_077F7E" || items[10].ID != "S2B_24MVV_20250731_0_L2A" ||
		items[19].ID != "S2B_24MUA_20250731_0_L2A" {
		t.Fatalf("items %v", ids(items))
	}
	if fmt.Sprint(matched) != "[115912757 115912758]" {
		t.Fatalf("matched %v", matched)
	}
	if s1 := items[0]; s1.Collection != "sentinel-1-grd" || !math.IsNaN(s1.Cloud) {
		t.Fatalf("Sentinel-1 item %+v", s1)
	}
	c1 := items[3]
	if c1.ID != "S2B_T20EPT_20250731T131905_L2A" || c1.Collection != "sentinel-2-c1-l2a" || c1.EPSG != 32720 || c1.Cloud != 26.02542 ||
		c1.Assets["red"].Href != "https://e84-earth-search-sentinel-data.s3.us-west-2.amazonaws.com/sentinel-2-c1-l2a/20/E/PT/2025/7/S2B_T20EPT_20250731T131905_L2A/B04.tif" ||
		*c1.Assets["red"].RasterBands[0].Offset != -0.1 {
		t.Fatalf("Sentinel-2 Collection 1 item %+v", c1)
	}
}

// TestReadResult: a search saved as canopy search --json writes it (the
// recorded Earth Search items as sent, and the search's own member) reads
// back as a stack's dates, in acquisition order, each item once; a single
// item is ErrNotResult; an item without a date is refused, naming it.
func TestReadResult(t *testing.T) {
	r := loadCassette(t, "test_multiple_collections.yaml")
	items, err := (&Client{HTTP: &http.Client{Transport: r}}).Search(context.Background(), Query{API: EarthSearch,
		Collections: []string{"sentinel-2-l2a", "landsat-c2-l2"}, Intersects: json.RawMessage(`{"type": "Point", "coordinates": [-105.1019, 40.1672]}`),
		Datetime: "2023-10-08", MaxCloud: -1})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	saved := filepath.Join(dir, "r.json")
	b, err := MarshalResult(items, SearchInfo{API: SearchURL(EarthSearch), Collections: []string{"sentinel-2-l2a", "landsat-c2-l2"}, Datetime: "2023-10-08"})
	if err != nil {
		t.Fatal(err)
	}
	// The Sentinel-2 item twice (as two overlapping searches joined).
	var doc map[string]any
	json.Unmarshal(b, &doc)
	doc["features"] = append(doc["features"].([]any), doc["features"].([]any)[0])
	b, _ = json.Marshal(doc)
	if err := os.WriteFile(saved, b, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := ReadResult(saved)
	if err != nil {
		t.Fatal(err)
	}
	if res.API != "https://earth-search.aws.element84.com/v1/search" || len(res.Items) != 2 ||
		res.Items[0].ID != "LC08_L2SP_033032_20231008_02_T1" || res.Items[1].ID != "S2A_13TDE_20231008_0_L2A" ||
		res.Items[1].Href() != "https://earth-search.aws.element84.com/v1/collections/sentinel-2-l2a/items/S2A_13TDE_20231008_0_L2A" {
		t.Fatalf("result %+v", res)
	}
	// As a stack's sources: the items kept as local item files, dated.
	src, err := ResultSources(saved, filepath.Join(dir, "items"))
	if err != nil || len(src) != 2 || src[0].ID != "LC08_L2SP_033032_20231008_02_T1" || !src[1].Date.Equal(res.Items[1].Date) ||
		filepath.Dir(src[0].Path) != filepath.Join(dir, "items") {
		t.Fatalf("sources %+v, %v", src, err)
	}
	var kept map[string]any
	if b, err := os.ReadFile(src[1].Path); err != nil || json.Unmarshal(b, &kept) != nil || kept["id"] != "S2A_13TDE_20231008_0_L2A" ||
		kept["assets"].(map[string]any)["red"].(map[string]any)["href"] != "https://sentinel-cogs.s3.us-west-2.amazonaws.com/sentinel-s2-l2a-cogs/13/T/DE/2023/10/S2A_13TDE_20231008_0_L2A/B04.tif" {
		t.Fatalf("kept item %s: %v", src[1].Path, err)
	}
	if src, err := ResultSources(saved, ""); err != nil || src[1].Path != res.Items[1].Href() {
		t.Fatalf("sources by link %+v, %v", src, err)
	}
	// Raw is the item as the API sent it.
	if !json.Valid(res.Items[1].Raw) || !strings.Contains(string(res.Items[1].Raw), `"s2:processing_baseline":"05.09"`) {
		t.Fatalf("raw item %.200s", res.Items[1].Raw)
	}

	one := filepath.Join(dir, "item.json")
	os.WriteFile(one, items[0].Raw, 0o644)
	if _, err := ReadResult(one); err == nil || !strings.Contains(err.Error(), ErrNotResult.Error()) {
		t.Fatalf("a single item: %v", err)
	}
	nodate := filepath.Join(dir, "nodate.json")
	os.WriteFile(nodate, []byte(`{"type":"FeatureCollection","features":[{"type":"Feature","id":"x1","properties":{}}]}`), 0o644)
	if _, err := ReadResult(nodate); err == nil || !strings.Contains(err.Error(), "item x1 has no acquisition time") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("an item without a date: %v", err)
	}
	if _, err := ReadResult(filepath.Join(dir, "absent.json")); err == nil {
		t.Fatal("a missing file read")
	}
}
