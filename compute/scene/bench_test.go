package scene

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkLoadRedNIR loads red and nir (B04 and B08, lossless JPEG 2000)
// of the product scripts/fixtures-products --big makes in the folder
// CANOPY_BENCH_PRODUCTS: from the unpacked folder, from a zip whose
// members are stored (read in place) and from a deflated zip (inflated as
// read). scripts/bench-products runs it beside gdal_translate.
func BenchmarkLoadRedNIR(b *testing.B) {
	dir := os.Getenv("CANOPY_BENCH_PRODUCTS")
	if dir == "" {
		b.Skip("CANOPY_BENCH_PRODUCTS is not set (see scripts/bench-products)")
	}
	for _, c := range []struct{ name, path string }{
		{"folder", s2New + ".SAFE"},
		{"zip-stored", "stored/" + s2New + ".SAFE.zip"},
		{"zip-deflated", s2New + ".SAFE.zip"},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				s, err := Open(filepath.Join(dir, c.path))
				if err != nil {
					b.Fatal(err)
				}
				bands, _, err := s.Load([]string{"red", "nir"}, LoadOptions{Mask: "none"})
				s.Close()
				if err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(len(bands[0].Plane.Data) + len(bands[1].Plane.Data)))
			}
		})
	}
}
