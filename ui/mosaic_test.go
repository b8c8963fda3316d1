package ui

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"canopy/compute"
	"canopy/compute/geotiff"
)

// writeTileOrtho writes an n×n two-band uint16 orthomosaic (red, nir by
// their descriptions) at 10 m in UTM zone epsg, nodata 0.
func writeTileOrtho(t *testing.T, path string, epsg uint16, x0, y0 float64, n int, seed uint64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	red, nir := make([]uint16, n*n), make([]uint16, n*n)
	for i := range red {
		red[i] = uint16(300 + rng.IntN(1000))
		nir[i] = uint16(2000 + rng.IntN(2000))
	}
	g := &compute.GeoRef{PixelScale: []float64{10, 10, 0}, Tiepoints: []float64{0, 0, 0, x0, y0, 0},
		GeoKeyDirectory: []uint16{1, 1, 0, 3, 1024, 0, 1, 1, 1025, 0, 1, 1, 3072, 0, 1, epsg}}
	if err := geotiff.WriteBands(path, n, n, [][]uint16{red, nir}, g, geotiff.WriteOptions{NoData: "0", Descriptions: []string{"red", "nir"}}); err != nil {
		t.Fatal(err)
	}
}

// TestMosaicOfTwoZones opens two adjacent tiles in UTM zones 32 and 33
// as the window does when both are dropped (or given as --scene twice):
// one set of bands on the UTM zone covering most of them, and a header
// that says the grid and the resampling.
func TestMosaicOfTwoZones(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.tif"), filepath.Join(dir, "b.tif")
	writeTileOrtho(t, a, 32632, 713500, 5600000, 100, 1)
	writeTileOrtho(t, b, 32633, 286500, 5601000, 140, 2)
	src, err := openProducts([]string{a, b}, "auto", 0)
	if err != nil {
		t.Fatal(err)
	}
	set, err := src.load(context.Background(), func(float64, string) {}, []string{"red", "nir"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if k := set.geo.GeoKeyDirectory; k[len(k)-1] != 32633 {
		t.Fatalf("the mosaic is on %v, want UTM 33N", k)
	}
	if set.w <= 140 || set.h < 100 {
		t.Fatalf("a %d×%d mosaic of a 100² and a 140² tile", set.w, set.h)
	}
	valid := 0
	for _, m := range set.mask {
		if m == 0 {
			valid++
		}
	}
	if valid < 100*100 {
		t.Errorf("only %d pixels valid", valid)
	}
	note := src.mosaicNote(set.geo)
	if !strings.Contains(note, "EPSG:32633") || !strings.Contains(note, "bilinear") || !strings.Contains(note, "2 products") {
		t.Errorf("header note %q", note)
	}
	if in := src.inputFiles(); !slices.Contains(in, b) {
		t.Errorf("the second product %s is not among the inputs exports refuse: %v", b, in)
	}
	if _, err := openProducts([]string{a, filepath.Join(dir, "missing.tif")}, "auto", 0); err == nil || !strings.Contains(err.Error(), "missing.tif") {
		t.Errorf("a missing second product: %v", err)
	}
}
