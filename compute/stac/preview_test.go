package stac

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"canopy/compute/geotiff"
	"canopy/compute/remote"
)

// TestPreview: an item's picture comes from the smallest overview of its
// COGs that still has the side asked for: the visual asset's three bands
// from one file, or the red, green and blue assets, each at the cost of
// its header GET and one GET of the overview's tiles.
func TestPreview(t *testing.T) {
	dir := t.TempDir()
	w, h := 1200, 900
	bands := make([][]float32, 3)
	for b := range bands {
		bands[b] = make([]float32, w*h)
		for i := range bands[b] {
			bands[b][i] = 0.1*float32(b+1) + 0.0001*float32(i%w)
		}
	}
	write := func(name string, bs [][]float32) {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := geotiff.WriteCOG(f, w, h, bs, nil, geotiff.COGOptions{TileSize: 256}); err != nil {
			t.Fatal(err)
		}
	}
	write("visual.tif", bands)
	for i, c := range []string{"red", "green", "blue"} {
		write(c+".tif", bands[i:i+1])
	}
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		http.FileServer(http.Dir(dir)).ServeHTTP(rw, r)
	}))
	defer srv.Close()
	c := remote.New(remote.Options{})
	self := []Link{{Rel: "self", Href: srv.URL + "/items/x.json"}}

	vis := Item{ID: "vis", Links: self, Assets: map[string]Asset{"visual": {Href: "../visual.tif", Type: "image/tiff; application=geotiff; profile=cloud-optimized"}}}
	got, err := Preview(context.Background(), c, nil, vis, 100)
	if err != nil {
		t.Fatal(err)
	}
	// Overviews of 1200×900: 600×450, 300×225, 150×113; the smallest
	// with 100 pixels on its longer side is 150×113.
	if p := got[0].Plane; p.Width != 150 || p.Height != 113 || got[2].Plane.Width != 150 {
		t.Fatalf("preview %d×%d", p.Width, p.Height)
	}
	if n := requests.Load(); n != 2 {
		t.Fatalf("the visual preview took %d requests, want 2 (header, overview)", n)
	}
	if v := got[1].Plane.F32()[0]; v < 0.19 || v > 0.21 {
		t.Fatalf("green's first pixel %v", v)
	}

	requests.Store(0)
	sep := Item{ID: "sep", Links: self, Assets: map[string]Asset{}}
	for _, col := range []string{"red", "green", "blue"} {
		a := Asset{Href: srv.URL + "/" + col + ".tif"}
		a.EOBands = append(a.EOBands, struct {
			Name       string `json:"name,omitempty"`
			CommonName string `json:"common_name,omitempty"`
		}{Name: col, CommonName: col})
		sep.Assets["B_"+col] = a
	}
	got, err = Preview(context.Background(), c, nil, sep, 100)
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Plane.Width != 150 || got[0].Role != "red" || got[2].Role != "blue" {
		t.Fatalf("separate bands: %+v", got[0])
	}
	if n := requests.Load(); n != 6 {
		t.Fatalf("three files took %d requests, want 6", n)
	}
	_, err = Preview(context.Background(), c, nil, Item{ID: "none", Assets: map[string]Asset{"nir": {Href: "x.tif"}}}, 100)
	if err == nil {
		t.Fatal("an item without colours drew")
	}
}
