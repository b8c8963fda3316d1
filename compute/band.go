package compute

import (
	"fmt"
	"math"
)

// GeoRef is the georeferencing of a raster as GeoTIFF carries it. The tags
// are kept verbatim so that a result written from an input lands in exactly
// the same place in a GIS.
type GeoRef struct {
	// PixelScale is ModelPixelScaleTag (ScaleX, ScaleY, ScaleZ); empty if absent.
	PixelScale []float64
	// Tiepoints is ModelTiepointTag (I, J, K, X, Y, Z)...; empty if absent.
	Tiepoints []float64
	// Transformation is ModelTransformationTag (16 doubles); empty if absent.
	Transformation []float64
	// GeoKeyDirectory is GeoKeyDirectoryTag as stored.
	GeoKeyDirectory []uint16
	// GeoDoubleParams is GeoDoubleParamsTag as stored.
	GeoDoubleParams []float64
	// GeoASCIIParams is GeoAsciiParamsTag as stored.
	GeoASCIIParams string
}

// Valid reports whether g places pixels on the ground (scale and tiepoint, or
// a transformation matrix).
func (g *GeoRef) Valid() bool {
	if g == nil {
		return false
	}
	return (len(g.PixelScale) >= 2 && len(g.Tiepoints) >= 6) || len(g.Transformation) >= 16
}

// Affine returns the GDAL-style geotransform (x0, dx, rx, y0, ry, dy) mapping
// pixel corner (col, row) to map coordinates, and false if g cannot give one.
func (g *GeoRef) Affine() ([6]float64, bool) {
	var t [6]float64
	switch {
	case g == nil:
		return t, false
	case len(g.Transformation) >= 16:
		m := g.Transformation
		return [6]float64{m[3], m[0], m[1], m[7], m[4], m[5]}, true
	case len(g.PixelScale) >= 2 && len(g.Tiepoints) >= 6:
		s, tp := g.PixelScale, g.Tiepoints
		return [6]float64{tp[3] - tp[0]*s[0], s[0], 0, tp[4] + tp[1]*s[1], 0, -s[1]}, true
	}
	return t, false
}

// PixelToMap returns the map coordinates of the centre of pixel (col, row).
func (g *GeoRef) PixelToMap(col, row int) (x, y float64, ok bool) {
	t, ok := g.Affine()
	if !ok {
		return 0, 0, false
	}
	c, r := float64(col)+0.5, float64(row)+0.5
	return t[0] + c*t[1] + r*t[2], t[3] + c*t[4] + r*t[5], true
}

// PixelArea returns the ground area of one pixel in map units squared (m² for
// projected systems), and false if unknown.
func (g *GeoRef) PixelArea() (float64, bool) {
	t, ok := g.Affine()
	if !ok {
		return 0, false
	}
	return math.Abs(t[1]*t[5] - t[2]*t[4]), true
}

// SameGrid reports whether g and o place pixels identically (within a
// relative 1e-9 on every affine coefficient).
func (g *GeoRef) SameGrid(o *GeoRef) bool {
	a, ok1 := g.Affine()
	b, ok2 := o.Affine()
	if !ok1 || !ok2 {
		return ok1 == ok2
	}
	for i := range a {
		d := math.Abs(a[i] - b[i])
		if d > 1e-9*math.Max(1, math.Max(math.Abs(a[i]), math.Abs(b[i]))) {
			return false
		}
	}
	return true
}

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
// are georeferenced, the same grid) and returns the kernel input.
func PairInput(red, nir *Band) (Input, error) {
	if red.Width != nir.Width || red.Height != nir.Height {
		return Input{}, fmt.Errorf("band size mismatch: red %s is %dx%d, nir %s is %dx%d", red.Source, red.Width, red.Height, nir.Source, nir.Width, nir.Height)
	}
	if red.Geo.Valid() && nir.Geo.Valid() && !red.Geo.SameGrid(nir.Geo) {
		return Input{}, fmt.Errorf("band grid mismatch: red %s and nir %s are not on the same georeferenced grid", red.Source, nir.Source)
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
