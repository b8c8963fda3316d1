package vector

import (
	"fmt"

	"github.com/paulmach/orb"
)

// ExtentLatLon is the extent of the layer's geometries in degrees
// (WGS 84) as west, south, east, north: what a STAC search's bbox takes.
// The layer is left as it is (a copy is reprojected). A layer without
// geometry is an error naming it.
func ExtentLatLon(l *Layer) ([]float64, error) {
	c := l.Clone()
	if err := Reproject(c, "EPSG:4326"); err != nil {
		return nil, err
	}
	var bound orb.Bound
	first := true
	for _, f := range c.Features {
		if f.Geom == nil {
			continue
		}
		b := f.Geom.Bound()
		if b.IsEmpty() && b.Min == (orb.Point{}) {
			continue
		}
		if first {
			bound, first = b, false
		} else {
			bound = bound.Union(b)
		}
	}
	if first {
		return nil, fmt.Errorf("%s: the stands have no geometry: their extent is unknown", l.source())
	}
	return []float64{bound.Min[0], bound.Min[1], bound.Max[0], bound.Max[1]}, nil
}
