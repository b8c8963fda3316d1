package geo

import (
	"errors"
	"fmt"
	"math"
	"sync"

	proj "github.com/twpayne/go-proj/v11"

	"canopy/compute"
)

// Transformer converts between a CRS's map coordinates and latitude and
// longitude on WGS 84 (EPSG:4326). It is safe for concurrent use.
type Transformer struct {
	crs CRS
	pj  *proj.PJ // map (x, y) -> (lon, lat), GIS order on both sides
}

var transformers sync.Map // def -> transformerResult

type transformerResult struct {
	t   *Transformer
	err error
}

// NewTransformer returns the (cached) transformer of the system def.
func NewTransformer(def string) (*Transformer, error) {
	if r, ok := transformers.Load(def); ok {
		return r.(transformerResult).t, r.(transformerResult).err
	}
	t, err := newTransformer(def)
	transformers.Store(def, transformerResult{t, err})
	return t, err
}

func newTransformer(def string) (*Transformer, error) {
	c, err := Describe(def)
	if err != nil {
		return nil, err
	}
	pj, err := proj.NewCRSToCRS(def, "EPSG:4326", nil)
	if err != nil {
		return nil, fmt.Errorf("no transformation from %s to latitude and longitude: %v", c.Label(), err)
	}
	norm, err := pj.NormalizeForVisualization()
	if err != nil {
		return nil, fmt.Errorf("no transformation from %s to latitude and longitude: %v", c.Label(), err)
	}
	return &Transformer{crs: c, pj: norm}, nil
}

// TransformerOf returns the transformer of a raster's CRS.
func TransformerOf(g *compute.GeoRef) (*Transformer, error) {
	def, err := Definition(g)
	if err != nil {
		return nil, err
	}
	return NewTransformer(def)
}

// CRS returns the system the transformer converts from.
func (t *Transformer) CRS() CRS { return t.crs }

func finite(vs ...float64) bool {
	for _, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

// ToLatLon returns the latitude and longitude (degrees, WGS 84) of map
// point (x, y) (easting and northing, or longitude and latitude for a
// geographic system). A point outside the projection's domain is an
// error.
func (t *Transformer) ToLatLon(x, y float64) (lat, lon float64, err error) {
	if !finite(x, y) {
		return 0, 0, fmt.Errorf("map point (%g, %g) is not a number", x, y)
	}
	c, err := t.pj.Forward(proj.NewCoord(x, y, 0, 0))
	if err != nil || !finite(c[0], c[1]) {
		return 0, 0, fmt.Errorf("map point (%g, %g) of %s has no latitude and longitude (outside the projection's domain)", x, y, t.crs.Label())
	}
	return c[1], c[0], nil
}

// FromLatLon returns the map coordinates of latitude lat and longitude
// lon (degrees, WGS 84).
func (t *Transformer) FromLatLon(lat, lon float64) (x, y float64, err error) {
	if !finite(lat, lon) || math.Abs(lat) > 90 {
		return 0, 0, fmt.Errorf("latitude %g, longitude %g is not a place on the Earth", lat, lon)
	}
	c, err := t.pj.Inverse(proj.NewCoord(lon, lat, 0, 0))
	if err != nil || !finite(c[0], c[1]) {
		return 0, 0, fmt.Errorf("latitude %g, longitude %g is outside the domain of %s", lat, lon, t.crs.Label())
	}
	return c[0], c[1], nil
}

// ToLatLon returns the latitude and longitude (degrees, WGS 84) of the
// map point (x, y) of a raster georeferenced by geo, through PROJ from
// its CRS (the EPSG code of its GeoKeys) to EPSG:4326.
func ToLatLon(geo *compute.GeoRef, x, y float64) (lat, lon float64, err error) {
	t, err := TransformerOf(geo)
	if err != nil {
		return 0, 0, err
	}
	return t.ToLatLon(x, y)
}

// FromLatLon returns the map coordinates in geo's CRS of latitude lat and
// longitude lon (degrees, WGS 84).
func FromLatLon(geo *compute.GeoRef, lat, lon float64) (x, y float64, err error) {
	t, err := TransformerOf(geo)
	if err != nil {
		return 0, 0, err
	}
	return t.FromLatLon(lat, lon)
}

// errNoGeo is returned for a raster that places no pixel.
var errNoGeo = errors.New("the raster is not georeferenced")

// PixelToMap returns the map coordinates of the image point (col, row),
// in pixels from the top-left corner of the top-left pixel: (0.5, 0.5) is
// that pixel's centre.
func PixelToMap(geo *compute.GeoRef, col, row float64) (x, y float64, err error) {
	t, ok := geo.Affine()
	if !ok {
		return 0, 0, errNoGeo
	}
	return t[0] + col*t[1] + row*t[2], t[3] + col*t[4] + row*t[5], nil
}

// MapToPixel returns the image point (col, row) of map point (x, y): the
// inverse of PixelToMap.
func MapToPixel(geo *compute.GeoRef, x, y float64) (col, row float64, err error) {
	t, ok := geo.Affine()
	if !ok {
		return 0, 0, errNoGeo
	}
	det := t[1]*t[5] - t[2]*t[4]
	if det == 0 {
		return 0, 0, errors.New("the raster's geotransform is singular")
	}
	dx, dy := x-t[0], y-t[3]
	return (t[5]*dx - t[2]*dy) / det, (-t[4]*dx + t[1]*dy) / det, nil
}

// wgs84 is the ellipsoid used when a system's is unknown.
const (
	wgs84A    = 6378137.0
	wgs84InvF = 298.257223563
)

// ellipsoid returns the semi-major axis and flattening of c's ellipsoid
// (WGS 84's when PROJ gives none).
func (c CRS) ellipsoid() (a, f float64) {
	a, invf := c.A, c.InvF
	if !(a > 0) {
		a, invf = wgs84A, wgs84InvF
	}
	if invf > 0 {
		f = 1 / invf
	}
	return a, f
}

// Geodesic is CRS.Geodesic on WGS 84.
func Geodesic(lat1, lon1, lat2, lon2 float64) (metres, azimuth float64) {
	return CRS{}.Geodesic(lat1, lon1, lat2, lon2)
}

// GroundDistance returns the distance in metres between map points (x1,
// y1) and (x2, y2) of geo's CRS: in a projected system the distance on
// the map in its unit converted to metres (what a scale bar measures);
// in a geographic system (x longitude, y latitude) the geodesic on the
// system's ellipsoid.
func GroundDistance(geo *compute.GeoRef, x1, y1, x2, y2 float64) (float64, error) {
	c, err := Of(geo)
	if err != nil {
		return 0, err
	}
	return c.Distance(x1, y1, x2, y2)
}

// Distance is GroundDistance in c.
func (c CRS) Distance(x1, y1, x2, y2 float64) (float64, error) {
	if !finite(x1, y1, x2, y2) {
		return 0, errors.New("a distance between points that are not numbers")
	}
	if m, ok := c.MetresPerUnit(); ok {
		return math.Hypot(x2-x1, y2-y1) * m, nil
	}
	if c.Geographic {
		deg := c.UnitSI * 180 / math.Pi // the unit in degrees (1 for degrees)
		if !(deg > 0) {
			deg = 1
		}
		if math.Abs(y1*deg) > 90 || math.Abs(y2*deg) > 90 {
			return 0, fmt.Errorf("latitude beyond ±90° in %s", c.Label())
		}
		s, _ := c.Geodesic(y1*deg, x1*deg, y2*deg, x2*deg)
		return s, nil
	}
	return 0, fmt.Errorf("%s has no ground distances (neither projected nor geographic)", c.Label())
}

// PixelSize returns the ground size in metres of one pixel of geo at
// image point (col, row): along a row (x) and along a column (y). In a
// projected system it is the same everywhere; in a geographic one a
// pixel's width shrinks with the cosine of the latitude.
func PixelSize(geo *compute.GeoRef, col, row float64) (dx, dy float64, err error) {
	c, err := Of(geo)
	if err != nil {
		return 0, 0, err
	}
	x0, y0, err := PixelToMap(geo, col-0.5, row)
	if err != nil {
		return 0, 0, err
	}
	x1, y1, _ := PixelToMap(geo, col+0.5, row)
	if dx, err = c.Distance(x0, y0, x1, y1); err != nil {
		return 0, 0, err
	}
	x0, y0, _ = PixelToMap(geo, col, row-0.5)
	x1, y1, _ = PixelToMap(geo, col, row+0.5)
	dy, err = c.Distance(x0, y0, x1, y1)
	return dx, dy, err
}

// NorthAngle returns the direction of true north at image point (col,
// row) of geo, in radians clockwise from "up" on the image (decreasing
// rows): 0 on a north-up geographic raster, the grid convergence on a
// projected one (a few degrees away from a UTM zone's central meridian),
// and the rotation of a rotated geotransform.
func NorthAngle(geo *compute.GeoRef, col, row float64) (float64, error) {
	t, err := TransformerOf(geo)
	if err != nil {
		return 0, err
	}
	x, y, err := PixelToMap(geo, col, row)
	if err != nil {
		return 0, err
	}
	lat, lon, err := t.ToLatLon(x, y)
	if err != nil {
		return 0, err
	}
	// A step of about 10 m north (south near the north pole, reversed).
	const d = 1e-4
	step, sign := d, 1.0
	if lat+d > 89.9 {
		step, sign = -d, -1
	}
	x2, y2, err := t.FromLatLon(lat+step, lon)
	if err != nil {
		return 0, err
	}
	c2, r2, err := MapToPixel(geo, x2, y2)
	if err != nil {
		return 0, err
	}
	dc, dr := sign*(c2-col), sign*(r2-row)
	if dc == 0 && dr == 0 {
		return 0, errors.New("the raster's pixels are too large to find north")
	}
	return math.Atan2(dc, -dr), nil
}

// Scaled returns the georeferencing of the same ground seen through
// pixels sx × sy times as large (a picture reduced by those factors):
// pixel (c, r) of the result covers the ground of pixel (c·sx, r·sy) of
// g. The CRS is g's; the result holds a ModelTransformation and says
// PixelIsArea. It returns nil when g places no pixel or a factor is not
// a positive number.
func Scaled(g *compute.GeoRef, sx, sy float64) *compute.GeoRef {
	t, ok := g.Affine()
	if !ok || !(sx > 0) || !(sy > 0) || math.IsInf(sx, 0) || math.IsInf(sy, 0) {
		return nil
	}
	a, b, d, e := t[1]*sx, t[2]*sy, t[4]*sx, t[5]*sy
	out := &compute.GeoRef{
		Transformation:  []float64{a, b, 0, t[0], d, e, 0, t[3], 0, 0, 0, 0, 0, 0, 0, 1},
		GeoKeyDirectory: append([]uint16(nil), g.GeoKeyDirectory...),
		GeoDoubleParams: append([]float64(nil), g.GeoDoubleParams...),
		GeoASCIIParams:  g.GeoASCIIParams,
	}
	// The transformation places corners: say so (GTRasterTypeGeoKey).
	k := out.GeoKeyDirectory
	if len(k) >= 4 {
		for i := 0; i < int(k[3]) && 8+4*i <= len(k); i++ {
			if e := k[4+4*i:]; e[0] == 1025 && e[1] == 0 {
				e[3] = 1
			}
		}
	}
	return out
}
