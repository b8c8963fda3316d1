package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"canopy/compute"
	"canopy/compute/fake"
	"canopy/compute/geotiff"
	"canopy/compute/index"
	"canopy/compute/outfile"
	"canopy/compute/source"
)

// `canopy compute --tif` is the road: the files opened by source.Open,
// run by source.Run, written by the road's COG sink, byte for byte (ui's
// TestExportGeoTIFFIsTheTerminalsCOG holds the window's export to the
// same function).
func TestComputeTifIsTheRoad(t *testing.T) {
	const w, h = 600, 530
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
	got := filepath.Join(dir, "compute.tif")
	if code, _, stderr := run(t, "compute", "--red", red, "--nir", nir, "--backend", "go", "--tif", got); code != 0 {
		t.Fatalf("compute: %d %s", code, stderr)
	}

	ref := filepath.Join(dir, "road.tif")
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
	err = outfile.WriteFile(ref, func(w *outfile.Writer) error {
		c, err := source.NewCOG(w, ref, src.Grid(), []string{"ndvi"}, geotiff.Deflate, dir)
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
	a, _ := os.ReadFile(got)
	b, _ := os.ReadFile(ref)
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Fatalf("compute --tif (%d bytes) differs from the road's COG (%d bytes)", len(a), len(b))
	}
}
