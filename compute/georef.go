package compute

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
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
// A PixelIsPoint raster (GTRasterTypeGeoKey 2) has its tiepoint on a pixel
// centre; the transform is shifted by half a pixel as GDAL does, so that a
// PixelIsPoint file and a PixelIsArea file that GDAL places identically
// give the same transform.
func (g *GeoRef) Affine() ([6]float64, bool) {
	var t [6]float64
	switch {
	case g == nil:
		return t, false
	case len(g.Transformation) >= 16:
		m := g.Transformation
		t = [6]float64{m[3], m[0], m[1], m[7], m[4], m[5]}
	case len(g.PixelScale) >= 2 && len(g.Tiepoints) >= 6:
		s, tp := g.PixelScale, g.Tiepoints
		t = [6]float64{tp[3] - tp[0]*s[0], s[0], 0, tp[4] + tp[1]*s[1], 0, -s[1]}
	default:
		return t, false
	}
	if g.PixelIsPoint() {
		// The tags place pixel centres; GDAL moves the corner half a
		// pixel up and left (its default, GTIFF_POINT_GEO_IGNORE=NO).
		t[0] -= 0.5 * (t[1] + t[2])
		t[3] -= 0.5 * (t[4] + t[5])
	}
	return t, true
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

// GeoKey IDs and values this package interprets (GeoTIFF 1.1, OGC 19-008).
const (
	keyModelType        = 1024 // GTModelTypeGeoKey: 1 projected, 2 geographic, 3 geocentric
	keyRasterType       = 1025 // GTRasterTypeGeoKey: 1 PixelIsArea, 2 PixelIsPoint
	keyCitation         = 1026 // GTCitationGeoKey
	keyGeographicType   = 2048 // GeodeticCRSGeoKey (GeographicTypeGeoKey)
	keyGeogCitation     = 2049
	keyProjectedCSType  = 3072 // ProjectedCRSGeoKey (ProjectedCSTypeGeoKey)
	keyPCSCitation      = 3073
	keyVerticalCSType   = 4096
	keyVerticalCitation = 4097

	rasterPixelIsPoint = 2
	geoUserDefined     = 32767
	// tagGeoDoubles and tagGeoASCII are where a GeoKey's value can live
	// besides the directory itself (TIFFTagLocation).
	tagGeoKeys    = 34735
	tagGeoDoubles = 34736
	tagGeoASCII   = 34737
)

// geoKey is one GeoKey's value: shorts, doubles or text.
type geoKey struct {
	shorts  []uint16
	doubles []float64
	text    string
}

func (k geoKey) code() (int, bool) {
	if len(k.shorts) == 1 {
		return int(k.shorts[0]), true
	}
	return 0, false
}

func (k geoKey) equal(o geoKey) bool {
	if len(k.shorts) != len(o.shorts) || len(k.doubles) != len(o.doubles) || k.text != o.text {
		return false
	}
	for i := range k.shorts {
		if k.shorts[i] != o.shorts[i] {
			return false
		}
	}
	for i := range k.doubles {
		a, b := k.doubles[i], o.doubles[i]
		if math.Abs(a-b) > 1e-12*math.Max(1, math.Max(math.Abs(a), math.Abs(b))) {
			return false
		}
	}
	return true
}

// geoKeys parses the GeoKey directory: a header (version, revision, minor
// revision, number of keys) and one (key, location, count, value) entry
// per key, whose value is inline (location 0) or in the directory, the
// double or the ASCII parameters.
func (g *GeoRef) geoKeys() (map[uint16]geoKey, error) {
	d := g.GeoKeyDirectory
	if len(d) == 0 {
		return nil, nil
	}
	if len(d) < 4 {
		return nil, fmt.Errorf("the GeoKey directory holds %d values, less than its 4-value header", len(d))
	}
	if d[0] != 1 {
		return nil, fmt.Errorf("the GeoKey directory has version %d, not 1", d[0])
	}
	n := int(d[3])
	if len(d) < 4+4*n {
		return nil, fmt.Errorf("the GeoKey directory claims %d keys but holds %d", n, (len(d)-4)/4)
	}
	keys := make(map[uint16]geoKey, n)
	for i := range n {
		e := d[4+4*i:]
		id, loc, count, val := e[0], int(e[1]), int(e[2]), int(e[3])
		var k geoKey
		switch loc {
		case 0:
			k.shorts = []uint16{e[3]}
		case tagGeoKeys:
			if val+count > len(d) {
				return nil, fmt.Errorf("GeoKey %d points past the GeoKey directory", id)
			}
			k.shorts = d[val : val+count]
		case tagGeoDoubles:
			if val+count > len(g.GeoDoubleParams) {
				return nil, fmt.Errorf("GeoKey %d points past the %d GeoDoubleParams", id, len(g.GeoDoubleParams))
			}
			k.doubles = g.GeoDoubleParams[val : val+count]
		case tagGeoASCII:
			if val+count > len(g.GeoASCIIParams) {
				return nil, fmt.Errorf("GeoKey %d points past the %d bytes of GeoAsciiParams", id, len(g.GeoASCIIParams))
			}
			k.text = strings.TrimRight(g.GeoASCIIParams[val:val+count], "|\x00")
		default:
			return nil, fmt.Errorf("GeoKey %d is stored in tag %d, which holds no GeoKeys", id, loc)
		}
		keys[id] = k
	}
	return keys, nil
}

// PixelIsPoint reports whether the raster type GeoKey says the tiepoint
// is on a pixel's centre (RasterPixelIsPoint) rather than its corner.
func (g *GeoRef) PixelIsPoint() bool {
	if g == nil {
		return false
	}
	d := g.GeoKeyDirectory
	if len(d) < 4 {
		return false
	}
	for i := 0; i < int(d[3]) && 8+4*i <= len(d); i++ {
		e := d[4+4*i:]
		if e[0] == keyRasterType && e[1] == 0 {
			return e[3] == rasterPixelIsPoint
		}
	}
	return false
}

// Check reports georeferencing no GIS could use: a non-finite or zero
// pixel size, non-finite tiepoints, a singular or non-finite
// transformation, non-finite GeoKey parameters or a damaged GeoKey
// directory. A nil GeoRef is fine (no georeferencing).
func (g *GeoRef) Check() error {
	if g == nil {
		return nil
	}
	for _, a := range []struct {
		name string
		v    []float64
	}{{"ModelPixelScale", g.PixelScale}, {"ModelTiepoint", g.Tiepoints}, {"ModelTransformation", g.Transformation}, {"GeoDoubleParams", g.GeoDoubleParams}} {
		for i, x := range a.v {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return fmt.Errorf("the georeferencing is not usable: %s value %d is %v", a.name, i+1, x)
			}
		}
	}
	if len(g.Transformation) == 0 && len(g.PixelScale) >= 2 && (g.PixelScale[0] == 0 || g.PixelScale[1] == 0) {
		return fmt.Errorf("the georeferencing is not usable: the pixel size is %v x %v", g.PixelScale[0], g.PixelScale[1])
	}
	if len(g.Transformation) > 0 && len(g.Transformation) < 16 {
		return fmt.Errorf("the georeferencing is not usable: ModelTransformation has %d values, not 16", len(g.Transformation))
	}
	if t, ok := g.Affine(); ok && t[1]*t[5]-t[2]*t[4] == 0 {
		return errors.New("the georeferencing is not usable: its transformation maps the image to a line or a point")
	}
	if _, err := g.geoKeys(); err != nil {
		return fmt.Errorf("the georeferencing is not usable: %w", err)
	}
	return nil
}

// crs is the part of the GeoKeys that defines the coordinate reference
// system: everything but the citations (descriptions) and the raster type
// (which says where in a pixel the tiepoint is, not where the pixel is).
func (g *GeoRef) crs() map[uint16]geoKey {
	keys, err := g.geoKeys()
	if err != nil {
		return nil
	}
	for _, id := range []uint16{keyRasterType, keyCitation, keyGeogCitation, keyPCSCitation, keyVerticalCitation} {
		delete(keys, id)
	}
	if len(keys) == 0 {
		return nil
	}
	return keys
}

// epsg returns the code naming the CRS (projected, else geographic), 0 if
// none does (user-defined or absent).
func epsg(keys map[uint16]geoKey) int {
	for _, id := range []uint16{keyProjectedCSType, keyGeographicType} {
		if c, ok := keys[id].code(); ok && c > 0 && c < geoUserDefined {
			return c
		}
	}
	return 0
}

// HasCRS reports whether g says which coordinate reference system its
// coordinates are in.
func (g *GeoRef) HasCRS() bool { return g != nil && g.crs() != nil }

// SameCRS reports whether g and o are in the same coordinate reference
// system, judged by definition as GDAL does rather than by the numbers of
// the grid: two EPSG codes must be equal (and the keys both files give
// beside the code must agree), and user-defined systems must have the
// same defining GeoKeys (citations, which only describe, are ignored). A
// code and a user-defined system are different: Canopy has no EPSG
// database to tell whether the definition is the code's. When either has
// no CRS at all there is nothing to compare and SameCRS is true.
func (g *GeoRef) SameCRS(o *GeoRef) bool {
	a, b := g.crs(), o.crs()
	if a == nil || b == nil {
		return true
	}
	ca, cb := epsg(a), epsg(b)
	if ca != 0 || cb != 0 {
		if ca != cb {
			return false
		}
		for id, ka := range a {
			if kb, ok := b[id]; ok && !ka.equal(kb) {
				return false
			}
		}
		return true
	}
	if len(a) != len(b) {
		return false
	}
	for id, ka := range a {
		if kb, ok := b[id]; !ok || !ka.equal(kb) {
			return false
		}
	}
	return true
}

// CRSName names g's coordinate reference system for messages:
// "EPSG:32633", "a user-defined projected CRS (\"my grid\")", "no CRS".
func (g *GeoRef) CRSName() string {
	keys := g.crs()
	if keys == nil {
		return "no CRS"
	}
	name := "EPSG:" + strconv.Itoa(epsg(keys))
	if epsg(keys) == 0 {
		kind := "a user-defined"
		switch c, _ := keys[keyModelType].code(); c {
		case 1:
			kind += " projected"
		case 2:
			kind += " geographic"
		case 3:
			kind += " geocentric"
		}
		name = kind + " CRS"
		all, _ := g.geoKeys()
		for _, id := range []uint16{keyPCSCitation, keyCitation, keyGeogCitation} {
			if t := all[id].text; t != "" {
				name += " (" + Excerpt(t, 40) + ")"
				break
			}
		}
	}
	if c, ok := keys[keyVerticalCSType].code(); ok && c > 0 && c < geoUserDefined {
		name += " + EPSG:" + strconv.Itoa(c)
	}
	return name
}

// Mismatch says why rasters georeferenced by g and o cannot be combined
// pixel by pixel: "" when they can (same grid in the same CRS, or either
// has no georeferencing), else a clause for an error message ("are in
// different coordinate reference systems (EPSG:32633 and EPSG:32634)").
func (g *GeoRef) Mismatch(o *GeoRef) string {
	if !g.Valid() || !o.Valid() {
		return ""
	}
	if !g.SameCRS(o) {
		return fmt.Sprintf("are in different coordinate reference systems (%s and %s)", g.CRSName(), o.CRSName())
	}
	if !g.SameGrid(o) {
		return "are not on the same georeferenced grid"
	}
	return ""
}

// Excerpt quotes s for a one-line message, cut to about n bytes
// with its full length said when it is longer: "\"123 456 …\" (1048576 bytes)".
func Excerpt(s string, n int) string {
	if len(s) <= n {
		return strconv.Quote(s)
	}
	cut := n
	for cut > 0 && !utf8RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]+"…") + fmt.Sprintf(" (%d bytes)", len(s))
}

func utf8RuneStart(b byte) bool { return b&0xc0 != 0x80 }
