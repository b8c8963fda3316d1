package compute

import "fmt"

// Band is one raster band as a float32 plane, row-major, Width*Height long.
type Band struct {
	Width, Height int
	Data          []float32
	// Geo is the band's georeferencing, nil when the source has none.
	Geo *GeoRef
	// NoData is the value that marks missing pixels, valid when HasNoData.
	NoData    float64
	HasNoData bool
	// Source names where the band came from ("red.tif:3", "fake landscape seed 1").
	Source string
}

// NewBand returns a zeroed w×h band.
func NewBand(w, h int) *Band {
	return &Band{Width: w, Height: h, Data: NewOutput(w * h)}
}

// CheckPair checks that red and nir can be combined: the same size and,
// when both are georeferenced, the same grid in the same CRS.
func CheckPair(red, nir *Band) error {
	if red.Width != nir.Width || red.Height != nir.Height {
		return SizeMismatch("red", red.Source, red.Width, red.Height, "nir", nir.Source, nir.Width, nir.Height)
	}
	if why := red.Geo.Mismatch(nir.Geo); why != "" {
		return fmt.Errorf("the bands are not on one grid: red %s and nir %s %s; the bands of one computation must share a grid", red.Source, nir.Source, why)
	}
	return nil
}
