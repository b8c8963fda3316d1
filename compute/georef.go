package compute

import "math"

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
