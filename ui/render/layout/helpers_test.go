package layout

import (
	"math"
	"testing"

	"canopy/compute"
	"canopy/compute/fake"
)

// landscape returns the NDVI of a generated w×h landscape, with a block of
// no data in its top-left corner.
func landscape(t testing.TB, w, h int) []float32 {
	t.Helper()
	red, nir, err := fake.RedNIR(fake.Landscape, w, h, 7)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]float32, w*h)
	for i := range out {
		r, n := red.Data[i], nir.Data[i]
		out[i] = (n - r) / (n + r)
	}
	for y := range h / 8 {
		for x := range w / 8 {
			out[y*w+x] = float32(math.NaN())
		}
	}
	return out
}

// utm is a north-up raster in EPSG:32633 with its top-left corner at
// (x0, y0) and square pixels of px metres.
func utm(x0, y0, px float64) *compute.GeoRef {
	return &compute.GeoRef{
		PixelScale:      []float64{px, px, 0},
		Tiepoints:       []float64{0, 0, 0, x0, y0, 0},
		GeoKeyDirectory: []uint16{1, 1, 0, 2, 1024, 0, 1, 1, 3072, 0, 1, 32633},
	}
}

// wgs84 is a north-up raster in EPSG:4326 with deg-degree pixels.
func wgs84(lon0, lat0, deg float64) *compute.GeoRef {
	return &compute.GeoRef{
		PixelScale:      []float64{deg, deg, 0},
		Tiepoints:       []float64{0, 0, 0, lon0, lat0, 0},
		GeoKeyDirectory: []uint16{1, 1, 0, 2, 1024, 0, 1, 2, 2048, 0, 1, 4326},
	}
}
