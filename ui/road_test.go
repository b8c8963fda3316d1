package ui

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"canopy/compute"
	"canopy/compute/fake"
	"canopy/compute/geotiff"
	_ "canopy/compute/goback"
	"canopy/compute/index"
	"canopy/compute/outfile"
	"canopy/compute/source"
)

// roadCOG writes what `canopy compute --red red --nir nir --backend go
// --tif out` writes: the files opened by source.Open, run by source.Run
// on go, into the road's COG sink (ui/cli's TestComputeTifIsTheRoad holds
// the terminal to the same function).
func roadCOG(t *testing.T, red, nir, out string) {
	t.Helper()
	ctx := context.Background()
	src, err := source.Open(ctx, source.Spec{Files: map[string]string{"red": red, "nir": nir}}, source.Options{Roles: []string{"red", "nir"}, Need: "ndvi"})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	be, err := compute.New(compute.NameGo)
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	ndvi, _ := index.Lookup("ndvi")
	err = outfile.WriteFile(out, func(w *outfile.Writer) error {
		c, err := source.NewCOG(w, out, src.Grid(), []string{"ndvi"}, geotiff.Deflate, filepath.Dir(out))
		if err != nil {
			return err
		}
		if _, err := source.Run(ctx, src, source.Job{Backend: be, Names: []string{"ndvi"}, Exprs: []*index.Expr{ndvi.Expr}, Verify: true}, c); err != nil {
			c.Abort()
			return err
		}
		return c.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The window's Export GeoTIFF is the terminal's COG, byte for byte, on
// the same band files: one sink (source.COG) writes both.
func TestExportGeoTIFFIsTheTerminalsCOG(t *testing.T) {
	const w, h = 600, 530 // two rows of 512-pixel tiles and an overview
	dir := t.TempDir()
	bands, geo, err := fake.Bands(fake.Landscape, w, h, 7, []string{"red", "nir"})
	if err != nil {
		t.Fatal(err)
	}
	red, nir := filepath.Join(dir, "red.tif"), filepath.Join(dir, "nir.tif")
	for i, p := range []string{red, nir} {
		if err := geotiff.WriteBands(p, w, h, [][]float32{bands[i].Plane.F32()}, geo, geotiff.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	ref := filepath.Join(dir, "compute.tif")
	roadCOG(t, red, nir, ref)

	be, err := compute.New(compute.NameGo)
	if err != nil {
		t.Fatal(err)
	}
	win := newTestWindow(t, options{Bands: map[string]string{"red": red, "nir": nir}, Backend: compute.NameGo}, hooks{backends: []compute.Backend{be}})
	got := filepath.Join(dir, "window.tif")
	if err := win.ExportGeoTIFF(got); err != nil {
		t.Fatal(err)
	}
	a, err := os.ReadFile(ref)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(got)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Fatalf("the window's GeoTIFF (%d bytes) differs from compute --tif's (%d bytes)", len(b), len(a))
	}
}
