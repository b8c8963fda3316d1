package scene

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// TestRemoteSTAC: a STAC item served over HTTP, its assets relative to it
// or absolute URLs, opens and loads the very pixels and mask of the same
// item on disk; a GeoTIFF URL opens as a GeoTIFF does.
func TestRemoteSTAC(t *testing.T) {
	t.Setenv("CANOPY_CACHE_DIR", "off")
	dir := t.TempDir()
	copyTree(t, fx(t, "stac"), dir)
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		http.FileServer(http.Dir(dir)).ServeHTTP(w, r)
	}))
	defer srv.Close()
	// The fixture names some files by their absolute local path: on the
	// server they are relative to the item.
	b, _ := os.ReadFile(filepath.Join(dir, "item.json"))
	b = bytes.ReplaceAll(b, []byte(`"`+fx(t, "stac")+`/`), []byte(`"./`))
	os.WriteFile(filepath.Join(dir, "item.json"), b, 0o644)
	abs := strings.ReplaceAll(string(b), `"./`, `"`+srv.URL+`/`)
	if abs == string(b) {
		t.Fatal("the fixture item has no ./ hrefs")
	}
	os.WriteFile(filepath.Join(dir, "item-abs.json"), []byte(abs), 0o644)

	local, err := Open(filepath.Join(dir, "item.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	want, wmask, err := local.Load([]string{"red", "nir2"}, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"item.json", "item-abs.json"} {
		s, err := Open(srv.URL + "/" + name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if s.Kind != KindSTAC || s.Sensor != local.Sensor || s.Tile != local.Tile || s.Mask.Kind != "scl" ||
			s.Bands["red"].Radiometry != local.Bands["red"].Radiometry || s.Grid.Width != local.Grid.Width || !strings.HasPrefix(s.Bands["red"].File, srv.URL+"/") {
			t.Fatalf("%s: %+v", name, s)
		}
		got, mask, err := s.Load([]string{"red", "nir2"}, LoadOptions{})
		s.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for i := range got {
			if !bytes.Equal(got[i].Plane.Data, want[i].Plane.Data) {
				t.Fatalf("%s: band %d differs from the local item's", name, i)
			}
		}
		if !bytes.Equal(mask, wmask) {
			t.Fatalf("%s: the mask differs from the local item's", name)
		}
	}

	// A GeoTIFF URL is a GeoTIFF product.
	g, err := Open(srv.URL + "/B04.tif")
	if err != nil {
		t.Fatal(err)
	}
	g.Close()
	if g.Kind != KindOrthomosaic {
		t.Fatalf("a GeoTIFF URL opened as %s", g.Kind)
	}
	// Missing: one line naming the URL.
	_, err = Open(srv.URL + "/nothing.json")
	oneLine(t, "missing item", err, "not found (404 Not Found)")
}

// TestOpenItem: an item of a saved search, given as its JSON and its own
// URL, opens without fetching the item again, its relative links resolved
// against that URL, and loads the pixels of the same item on disk; with no
// URL of its own, a relative link is one line; a cancelled context stops
// the scene's requests.
func TestOpenItem(t *testing.T) {
	t.Setenv("CANOPY_CACHE_DIR", "off")
	dir := t.TempDir()
	copyTree(t, fx(t, "stac"), dir)
	var items atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, ".json") {
			items.Add(1)
		}
		http.FileServer(http.Dir(dir)).ServeHTTP(w, r)
	}))
	defer srv.Close()
	b, _ := os.ReadFile(filepath.Join(dir, "item.json"))
	b = bytes.ReplaceAll(b, []byte(`"`+fx(t, "stac")+`/`), []byte(`"./`))
	os.WriteFile(filepath.Join(dir, "item.json"), b, 0o644)
	local, err := Open(filepath.Join(dir, "item.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	want, _, err := local.Load([]string{"red"}, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}

	s, err := OpenItem(context.Background(), b, srv.URL+"/item.json")
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := s.Load([]string{"red"}, LoadOptions{})
	s.Close()
	if err != nil || !bytes.Equal(got[0].Plane.Data, want[0].Plane.Data) || s.Path != srv.URL+"/item.json" || items.Load() != 0 {
		t.Fatalf("OpenItem: %v (path %s, %d item requests)", err, s.Path, items.Load())
	}

	_, err = OpenItem(context.Background(), b, "")
	oneLine(t, "relative link without a self link", err, "is relative and the item has no link of its own")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = OpenItem(ctx, b, srv.URL+"/item.json")
	if err == nil || !strings.Contains(err.Error(), context.Canceled.Error()) {
		t.Fatalf("a cancelled open: %v", err)
	}
}
