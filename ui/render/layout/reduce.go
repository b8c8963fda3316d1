package layout

import (
	"fmt"
	"math"

	"canopy/compute"
	"canopy/compute/geo"
)

// Reducer collects a width×height plane that arrives a block of rows at
// a time into a smaller one for a layout: each of its pixels is the mean
// of the finite values of a box of the plane's (NaN when the box has
// none), at most maxSide pixels on the longer side, so that a layout of a
// 10980² scene never holds the scene. A plane no larger is kept as it is.
type Reducer struct {
	sw, sh, w, h int
	xs, ys       []int // box bounds: output column i takes [xs[i], xs[i+1])
	sum          []float64
	cnt          []int32
	out          []float32
	srcY, outY   int
}

// NewReducer starts the reduction of a width×height plane to at most
// maxSide pixels on its longer side.
func NewReducer(width, height, maxSide int) (*Reducer, error) {
	if width <= 0 || height <= 0 || maxSide <= 0 {
		return nil, fmt.Errorf("layout: reduce a %d×%d plane to %d pixels", width, height, maxSide)
	}
	r := &Reducer{sw: width, sh: height, w: width, h: height}
	if long := max(width, height); long > maxSide {
		r.w = max(1, int(math.Round(float64(width)*float64(maxSide)/float64(long))))
		r.h = max(1, int(math.Round(float64(height)*float64(maxSide)/float64(long))))
	}
	r.xs, r.ys = cuts(width, r.w), cuts(height, r.h)
	r.sum, r.cnt = make([]float64, r.w), make([]int32, r.w)
	r.out = make([]float32, r.w*r.h)
	return r, nil
}

// cuts cuts n into k runs: run i is [b[i], b[i+1]).
func cuts(n, k int) []int {
	b := make([]int, k+1)
	for i := range b {
		b[i] = int(int64(i) * int64(n) / int64(k))
	}
	return b
}

// WriteRows adds rows [y0, y0+rows) of the plane (rows×width values, in
// order, each row once).
func (r *Reducer) WriteRows(y0, rows int, vals []float32) error {
	if y0 != r.srcY || rows < 0 || len(vals) < rows*r.sw {
		return fmt.Errorf("layout: rows %d–%d given after row %d (%d values)", y0, y0+rows, r.srcY, len(vals))
	}
	for k := range rows {
		row := vals[k*r.sw : (k+1)*r.sw]
		for i := range r.sum {
			s, n := 0.0, int32(0)
			for _, v := range row[r.xs[i]:r.xs[i+1]] {
				if v == v {
					s += float64(v)
					n++
				}
			}
			r.sum[i] += s
			r.cnt[i] += n
		}
		r.srcY++
		for r.outY < r.h && r.srcY == r.ys[r.outY+1] {
			o := r.out[r.outY*r.w : (r.outY+1)*r.w]
			for i := range o {
				o[i] = float32(math.NaN())
				if r.cnt[i] > 0 {
					o[i] = float32(r.sum[i] / float64(r.cnt[i]))
				}
			}
			clear(r.sum)
			clear(r.cnt)
			r.outY++
		}
	}
	return nil
}

// Map returns the reduced plane as a layout's map, its georeferencing g
// scaled to the larger pixels (geo.Scaled), once every row was written.
func (r *Reducer) Map(g *compute.GeoRef) (Map, error) {
	if r.srcY != r.sh {
		return Map{}, fmt.Errorf("layout: %d of the plane's %d rows were written", r.srcY, r.sh)
	}
	m := Map{Plane: r.out, Width: r.w, Height: r.h, Geo: g}
	if r.w != r.sw || r.h != r.sh {
		m.Geo = geo.Scaled(g, float64(r.sw)/float64(r.w), float64(r.sh)/float64(r.h))
	}
	return m, nil
}
