// Package change compares two dates of an index: the difference before −
// after (a loss of vegetation is positive, as the dNBR of burn severity),
// the after date brought onto the before date's grid when the two differ,
// both dates' invalid pixels (nodata, masks) NaN in the result, and change
// classes with their hectares (the USGS dNBR severity classes for nbr,
// symmetric thresholds for other indices, or the caller's own).
package change

import (
	"fmt"
	"math"
	"strings"

	"canopy/compute"
	"canopy/compute/par"
)

// Difference writes before[i] − after[i] into out (NaN where either is
// NaN, and where the difference is not finite), on all cores. The three
// planes have the same length; out may be before or after.
func Difference(out, before, after []float32) error {
	if len(before) != len(after) || len(out) != len(before) {
		return fmt.Errorf("difference of planes of %d and %d pixels into %d", len(before), len(after), len(out))
	}
	par.Blocks(len(out), 1<<16, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			d := before[i] - after[i]
			if d-d != 0 {
				d = compute.NaN32
			}
			out[i] = d
		}
	})
	return nil
}

// Alignment says how the after date was put on the before date's grid.
type Alignment struct {
	// Resampled is false when both dates share the grid (nothing done).
	Resampled bool `json:"resampled"`
	// Method is "nearest" when resampled.
	Method string `json:"method,omitempty"`
	// Overlap is the share of the before grid's pixels the after date
	// covers (1 on the same grid).
	Overlap float64 `json:"overlap"`
}

// OntoGrid returns plane (w×h on geo src) on the grid dst (dw×dh), by
// nearest neighbour: each destination pixel takes the source pixel under
// its centre, NaN outside the source. Both grids must be georeferenced,
// north-up, in the same CRS, and overlap; a grid of the same geometry is
// returned as it is.
func OntoGrid(plane []float32, w, h int, src *compute.GeoRef, dw, dh int, dst *compute.GeoRef) ([]float32, Alignment, error) {
	if w == dw && h == dh && src.SameGrid(dst) && src.SameCRS(dst) {
		return plane, Alignment{Overlap: 1}, nil
	}
	if !src.Valid() || !dst.Valid() {
		return nil, Alignment{}, fmt.Errorf("the dates are on different grids (%dx%d and %dx%d) and one has no georeferencing to align them", dw, dh, w, h)
	}
	if !src.SameCRS(dst) {
		return nil, Alignment{}, fmt.Errorf("the dates are in different coordinate reference systems (%s and %s); reproject one first (gdalwarp -t_srs)", dst.CRSName(), src.CRSName())
	}
	s, _ := src.Affine()
	d, _ := dst.Affine()
	if s[2] != 0 || s[4] != 0 || d[2] != 0 || d[4] != 0 {
		return nil, Alignment{}, fmt.Errorf("rotated grids are not supported for alignment; resample one with gdalwarp first")
	}
	out := compute.NewOutput(dw * dh)
	covered := make([]int64, par.Workers(dh))
	par.Ranges(dh, 1, func(p, y0, y1 int) {
		var c int64
		for y := y0; y < y1; y++ {
			my := d[3] + (float64(y)+0.5)*d[5]
			sy := int(math.Floor((my - s[3]) / s[5]))
			row := out[y*dw : (y+1)*dw]
			for x := range row {
				mx := d[0] + (float64(x)+0.5)*d[1]
				sx := int(math.Floor((mx - s[0]) / s[1]))
				if sx < 0 || sy < 0 || sx >= w || sy >= h {
					row[x] = compute.NaN32
					continue
				}
				row[x] = plane[sy*w+sx]
				c++
			}
		}
		covered[p] += c
	})
	var n int64
	for _, c := range covered {
		n += c
	}
	if n == 0 {
		return nil, Alignment{}, fmt.Errorf("the dates do not overlap")
	}
	return out, Alignment{Resampled: true, Method: "nearest", Overlap: float64(n) / float64(dw*dh)}, nil
}

// DNBRClasses are the USGS burn severity classes of dNBR (Key and Benson,
// FIREMON): enhanced regrowth (high, low), unburned, low severity,
// moderate-low, moderate-high and high severity.
func DNBRClasses() []compute.Class {
	inf := math.Inf(1)
	return []compute.Class{
		{Name: "enhanced regrowth, high", Lo: -inf, Hi: -0.25},
		{Name: "enhanced regrowth, low", Lo: -0.25, Hi: -0.1},
		{Name: "unburned", Lo: -0.1, Hi: 0.1},
		{Name: "low severity", Lo: 0.1, Hi: 0.27},
		{Name: "moderate-low severity", Lo: 0.27, Hi: 0.44},
		{Name: "moderate-high severity", Lo: 0.44, Hi: 0.66},
		{Name: "high severity", Lo: 0.66, Hi: inf},
	}
}

// LossClasses are symmetric change classes for an index other than nbr:
// strong gain, gain, stable, loss and strong loss, split at ±t and ±2t
// (t = 0.1 for the vegetation indices).
func LossClasses(t float64) []compute.Class {
	inf := math.Inf(1)
	return []compute.Class{
		{Name: "strong gain", Lo: -inf, Hi: -2 * t},
		{Name: "gain", Lo: -2 * t, Hi: -t},
		{Name: "stable", Lo: -t, Hi: t},
		{Name: "loss", Lo: t, Hi: 2 * t},
		{Name: "strong loss", Lo: 2 * t, Hi: inf},
	}
}

// ClassesFor returns the default change classes of an index.
func ClassesFor(index string) []compute.Class {
	if index == "nbr" || index == "nbr2" {
		return DNBRClasses()
	}
	return LossClasses(0.1)
}

// ParseClasses reads class thresholds as a user types them: "t1,t2,...,tn"
// gives n+1 classes "< t1", "t1 – t2", ..., "≥ tn", named by their bounds.
func ParseClasses(spec string) ([]compute.Class, error) {
	var ts []float64
	for _, f := range strings.Split(spec, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		var v float64
		if _, err := fmt.Sscanf(f, "%g", &v); err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("class threshold %q is not a number", f)
		}
		if len(ts) > 0 && v <= ts[len(ts)-1] {
			return nil, fmt.Errorf("class thresholds must increase (%g after %g)", v, ts[len(ts)-1])
		}
		ts = append(ts, v)
	}
	if len(ts) == 0 {
		return nil, fmt.Errorf("no class threshold in %q", spec)
	}
	inf := math.Inf(1)
	var cs []compute.Class
	lo := -inf
	for _, t := range append(ts, inf) {
		c := compute.Class{Lo: lo, Hi: t}
		c.Name = c.Bounds()
		cs = append(cs, c)
		lo = t
	}
	return cs, nil
}
