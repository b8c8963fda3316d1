package raster

import (
	"path/filepath"
	"testing"

	"canopy/compute"
	"canopy/compute/geotiff"
)

func TestLoadStoredKeepsTheStoredType(t *testing.T) {
	dir := t.TempDir()
	const w, h = 37, 29
	check := func(name string, want compute.DataType, nodataKept bool, vals func(i int) float64) {
		t.Helper()
		in, _, err := LoadStored("red", filepath.Join(dir, name)+":2")
		if err != nil {
			t.Fatal(err)
		}
		if in.Plane.Type != want || in.Plane.Width != w || in.Plane.Height != h || in.Role != "red" || in.HasNoData != nodataKept {
			t.Fatalf("%s: %s %dx%d role %s nodata %v", name, in.Plane.Type, in.Plane.Width, in.Plane.Height, in.Role, in.HasNoData)
		}
		if in.Source != filepath.Join(dir, name)+":2" {
			t.Errorf("%s: source %q", name, in.Source)
		}
		for i := range w * h {
			if g, e := in.Plane.At(i), vals(i); g != e {
				t.Fatalf("%s pixel %d: %v, want %v", name, i, g, e)
			}
		}
	}
	u32 := [][]uint32{make([]uint32, w*h), make([]uint32, w*h)}
	i16 := [][]int16{make([]int16, w*h), make([]int16, w*h)}
	f64 := [][]float64{make([]float64, w*h), make([]float64, w*h)}
	for i := range w * h {
		u32[1][i] = uint32(i) * 1234567
		i16[1][i] = int16(i*37 - 20000)
		f64[1][i] = float64(i) / 3
	}
	if err := geotiff.WriteBands(filepath.Join(dir, "u32.tif"), w, h, u32, nil, geotiff.WriteOptions{TileSize: 16, NoData: "7"}); err != nil {
		t.Fatal(err)
	}
	if err := geotiff.WriteBands(filepath.Join(dir, "i16.tif"), w, h, i16, nil, geotiff.WriteOptions{NoData: "1e9"}); err != nil {
		t.Fatal(err)
	}
	if err := geotiff.WriteBands(filepath.Join(dir, "f64.tif"), w, h, f64, nil, geotiff.WriteOptions{Compression: geotiff.ZSTD}); err != nil {
		t.Fatal(err)
	}
	check("u32.tif", compute.U32, true, func(i int) float64 { return float64(uint32(i) * 1234567) })
	// A nodata value int16 cannot hold matches no sample: dropped.
	check("i16.tif", compute.I16, false, func(i int) float64 { return float64(int16(i*37 - 20000)) })
	check("f64.tif", compute.F32, false, func(i int) float64 { return float64(float32(float64(i) / 3)) })
}
