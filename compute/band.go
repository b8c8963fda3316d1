package compute

import (
	"fmt"
	"math"
)

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

// Nodata is the per-band nodata configuration a kernel receives.
type Nodata struct {
	Red, NIR       float32
	HasRed, HasNIR bool
}

// Input is what every backend computes NDVI from.
type Input struct {
	Width, Height int
	Red, NIR      []float32
	Nodata        Nodata
}

// Pixels returns Width*Height.
func (in Input) Pixels() int { return in.Width * in.Height }

// Check returns an error when the planes do not match the declared size.
func (in Input) Check() error {
	if in.Width <= 0 || in.Height <= 0 {
		return fmt.Errorf("image size %dx%d: both sides must be positive", in.Width, in.Height)
	}
	n := in.Width * in.Height
	if len(in.Red) != n || len(in.NIR) != n {
		return fmt.Errorf("image %dx%d needs %d pixels per band, got red %d and nir %d", in.Width, in.Height, n, len(in.Red), len(in.NIR))
	}
	return nil
}

// PairInput checks that red and nir can be combined (same size and, when both
// are georeferenced, the same grid in the same CRS) and returns the kernel input.
func PairInput(red, nir *Band) (Input, error) {
	if red.Width != nir.Width || red.Height != nir.Height {
		return Input{}, SizeMismatch("red", red.Source, red.Width, red.Height, "nir", nir.Source, nir.Width, nir.Height)
	}
	if why := red.Geo.Mismatch(nir.Geo); why != "" {
		return Input{}, fmt.Errorf("the bands are not on one grid: red %s and nir %s %s; the bands of one computation must share a grid", red.Source, nir.Source, why)
	}
	in := Input{Width: red.Width, Height: red.Height, Red: red.Data, NIR: nir.Data}
	if red.HasNoData && !math.IsNaN(red.NoData) {
		in.Nodata.Red, in.Nodata.HasRed = float32(red.NoData), true
	}
	if nir.HasNoData && !math.IsNaN(nir.NoData) {
		in.Nodata.NIR, in.Nodata.HasNIR = float32(nir.NoData), true
	}
	return in, in.Check()
}
