package vector

// The description of systems (WKT, EPSG codes, equivalence, a raster's
// CRS) lives in canopy/compute/geo; these names stay for the callers of
// this package.

import (
	"fmt"
	"math"
	"strings"

	"github.com/paulmach/orb"
	proj "github.com/twpayne/go-proj/v11"

	"canopy/compute"
	"canopy/compute/geo"
)

// CRSInfo describes a coordinate reference system given as "EPSG:<code>",
// WKT or a PROJ string: its WKT (WKT1 as GDAL writes it where WKT1 can
// express it) and its EPSG code (0 when PROJ finds none). An unknown
// system is an error. It is geo.Info.
func CRSInfo(def string) (wkt string, epsg int, err error) { return geo.Info(def) }

// SameCRS reports whether a and b define the same system (the axis order
// of geographic systems aside). Either being unknown is an error. It is
// geo.Same.
func SameCRS(a, b string) (bool, error) { return geo.Same(a, b) }

// shortCRS shortens a WKT definition for a message.
func shortCRS(def string) string {
	d := strings.Join(strings.Fields(def), " ")
	if len(d) > 60 {
		d = d[:57] + "..."
	}
	return fmt.Sprintf("%q", d)
}

// Reproject transforms every stand of l into the CRS toCRS ("EPSG:<code>",
// WKT, or a PROJ string) in place and sets l.CRS to it. Coordinates are in
// GIS order (easting or longitude first) on both sides. A layer or a target
// without a CRS, an unknown CRS, and points that cannot be transformed
// (outside the projection's domain) are errors; the layer is then left as
// it was.
func Reproject(l *Layer, toCRS string) error {
	if strings.TrimSpace(toCRS) == "" {
		return fmt.Errorf("reproject stands %s: the target (raster) has no CRS", l.source())
	}
	if strings.TrimSpace(l.CRS) == "" {
		return fmt.Errorf("stands %s have no CRS; assign one with ogr2ogr -a_srs EPSG:CODE out.gpkg %s", l.source(), l.Path)
	}
	same, err := SameCRS(l.CRS, toCRS)
	if err != nil {
		return fmt.Errorf("reproject stands %s: %v", l.source(), err)
	}
	if same {
		l.CRS = toCRS
		return nil
	}
	pj, err := proj.NewCRSToCRS(l.CRS, toCRS, nil)
	if err != nil {
		return fmt.Errorf("reproject stands %s from %s to %s: %v", l.source(), shortCRS(l.CRS), shortCRS(toCRS), err)
	}
	norm, err := pj.NormalizeForVisualization()
	if err != nil {
		return fmt.Errorf("reproject stands %s: %v", l.source(), err)
	}
	out := make([]orb.Geometry, len(l.Features))
	var flat []float64
	for i, f := range l.Features {
		g := orb.Clone(f.Geom)
		mp := asMultiPolygon(g)
		for _, p := range mp {
			for _, r := range p {
				flat = flat[:0]
				for _, pt := range r {
					flat = append(flat, pt[0], pt[1])
				}
				if err := norm.ForwardFlatCoords(flat, 2, -1, -1); err != nil {
					return fmt.Errorf("reproject stands %s: feature %d: %v", l.source(), f.FID, err)
				}
				for k := range r {
					x, y := flat[2*k], flat[2*k+1]
					if math.IsNaN(x) || math.IsInf(x, 0) || math.IsNaN(y) || math.IsInf(y, 0) {
						return fmt.Errorf("reproject stands %s: feature %d: point (%g, %g) cannot be transformed from %s to %s (outside its domain?)", l.source(), f.FID, r[k][0], r[k][1], shortCRS(l.CRS), shortCRS(toCRS))
					}
					r[k] = orb.Point{x, y}
				}
			}
		}
		out[i] = g
	}
	for i := range l.Features {
		l.Features[i].Geom = out[i]
	}
	l.CRS = toCRS
	return nil
}

// RasterCRS returns the CRS of a GeoTIFF's georeferencing as
// "EPSG:<code>", from its ProjectedCSTypeGeoKey or GeographicTypeGeoKey.
// A raster without GeoKeys, or with a user-defined system, is an error.
// It is geo.Definition.
func RasterCRS(g *compute.GeoRef) (string, error) { return geo.Definition(g) }

// OnRaster returns a copy of l reprojected into the coordinate system of
// the raster g georeferences, and that system (as RasterCRS names it): how
// stands are placed on a map, a stack or a band's grid. l is left as it
// is.
func OnRaster(l *Layer, g *compute.GeoRef) (*Layer, string, error) {
	crs, err := RasterCRS(g)
	if err != nil {
		return nil, "", err
	}
	work := l.Clone()
	if err := Reproject(work, crs); err != nil {
		return nil, "", err
	}
	return work, crs, nil
}
