package zonal

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/paulmach/orb"
)

// affine is a GDAL geotransform and its inverse.
type affine struct {
	gt  [6]float64
	inv [4]float64 // col = inv[0]*dx + inv[1]*dy, row = inv[2]*dx + inv[3]*dy
	det float64
}

func newAffine(gt [6]float64) (affine, error) {
	for _, v := range gt {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return affine{}, fmt.Errorf("geotransform %v is not finite", gt)
		}
	}
	det := gt[1]*gt[5] - gt[2]*gt[4]
	if det == 0 {
		return affine{}, fmt.Errorf("geotransform %v is singular (pixels of zero area)", gt)
	}
	return affine{gt: gt, det: det, inv: [4]float64{gt[5] / det, -gt[2] / det, -gt[4] / det, gt[1] / det}}, nil
}

// toPixel maps map coordinates to pixel coordinates (column, row; the
// top-left corner of pixel (0, 0) is (0, 0)).
func (a affine) toPixel(p orb.Point) (float64, float64) {
	dx, dy := p[0]-a.gt[0], p[1]-a.gt[3]
	return a.inv[0]*dx + a.inv[1]*dy, a.inv[2]*dx + a.inv[3]*dy
}

// edge is one polygon edge in pixel space, oriented downwards (y0 < y1);
// dir is +1 or -1: the sign of its contribution to the winding integral,
// with rings normalised so that shells count +1 and holes −1. x is local
// to the stand's window (column − c0), y is the raster row coordinate.
type edge struct {
	x0, y0, x1, y1, dir float64
}

// shape is a stand prepared for coverage: its window in the raster and
// its edges sorted by y0.
type shape struct {
	c0, r0, c1, r1 int // window: columns [c0, c1), rows [r0, r1)
	edges          []edge
}

var errOutside = errors.New("outside the raster")

// prepare maps g into pixel space and clips its window to a w×h raster.
// errOutside: no cell of the raster can be covered.
func prepare(g orb.Geometry, a affine, w, h int) (shape, error) {
	var mp orb.MultiPolygon
	switch g := g.(type) {
	case orb.Polygon:
		mp = orb.MultiPolygon{g}
	case orb.MultiPolygon:
		mp = g
	case nil:
	default:
		return shape{}, fmt.Errorf("is a %s, not a polygon", g.GeoJSONType())
	}
	type ring struct {
		pts  []orb.Point // pixel space
		area float64     // shoelace, pixel space
	}
	var rings []ring
	var holes []bool
	for _, p := range mp {
		for ri, r := range p {
			if len(r) < 3 {
				continue
			}
			pts := make([]orb.Point, len(r))
			var area float64
			minx, miny := math.Inf(1), math.Inf(1)
			maxx, maxy := math.Inf(-1), math.Inf(-1)
			for i, q := range r {
				x, y := a.toPixel(q)
				if math.IsNaN(x) || math.IsInf(x, 0) || math.IsNaN(y) || math.IsInf(y, 0) {
					return shape{}, errors.New("has coordinates that are not finite")
				}
				pts[i] = orb.Point{x, y}
				minx, maxx = math.Min(minx, x), math.Max(maxx, x)
				miny, maxy = math.Min(miny, y), math.Max(maxy, y)
			}
			n := len(pts)
			for i := range pts {
				j := (i + 1) % n
				area += pts[i][0]*pts[j][1] - pts[j][0]*pts[i][1]
			}
			if minx < -clipMargin || miny < -clipMargin || maxx > float64(w)+clipMargin || maxy > float64(h)+clipMargin {
				// Far outside the raster: clip to the box around it first,
				// so that every coordinate that reaches the accumulation is
				// of the raster's size.
				pts = clipBox(pts, -clipMargin, -clipMargin, float64(w)+clipMargin, float64(h)+clipMargin)
				if math.IsNaN(area) {
					area = 0
					for i := range pts {
						j := (i + 1) % len(pts)
						area += pts[i][0]*pts[j][1] - pts[j][0]*pts[i][1]
					}
				}
				if len(pts) < 3 {
					continue
				}
			}
			rings = append(rings, ring{pts, area})
			holes = append(holes, ri > 0)
		}
	}
	if len(rings) == 0 {
		return shape{}, errOutside
	}
	minx, miny := math.Inf(1), math.Inf(1)
	maxx, maxy := math.Inf(-1), math.Inf(-1)
	for _, r := range rings {
		for _, q := range r.pts {
			minx, maxx = math.Min(minx, q[0]), math.Max(maxx, q[0])
			miny, maxy = math.Min(miny, q[1]), math.Max(maxy, q[1])
		}
	}
	s := shape{
		c0: max(0, floorInt(minx)), c1: min(w, ceilInt(maxx)),
		r0: max(0, floorInt(miny)), r1: min(h, ceilInt(maxy)),
	}
	if s.c0 >= s.c1 || s.r0 >= s.r1 {
		return shape{}, errOutside
	}
	ox := float64(s.c0)
	for k, r := range rings {
		// In pixel space (y down) a ring whose shoelace sum is negative
		// has its interior to the right of its downward edges: that is the
		// +1 orientation for a shell.
		sign := 1.0
		if r.area > 0 {
			sign = -1
		}
		if holes[k] {
			sign = -sign
		}
		n := len(r.pts)
		for i := range r.pts {
			p, q := r.pts[i], r.pts[(i+1)%n]
			if p[1] == q[1] {
				continue // horizontal edges add nothing
			}
			e := edge{x0: p[0] - ox, y0: p[1], x1: q[0] - ox, y1: q[1], dir: sign}
			if e.y0 > e.y1 {
				e.x0, e.y0, e.x1, e.y1, e.dir = e.x1, e.y1, e.x0, e.y0, -sign
			}
			s.edges = append(s.edges, e)
		}
	}
	sort.Slice(s.edges, func(i, j int) bool { return s.edges[i].y0 < s.edges[j].y0 })
	return s, nil
}

// clipMargin is how far, in pixels, a stand's rings may reach beyond the
// raster before they are clipped: rings inside it are used as they are
// (bit for bit), rings beyond it are cut to the box, which keeps the
// coverage of every pixel of the raster and keeps coordinates such as
// 1e300 out of the accumulation's arithmetic.
const clipMargin = 1 << 20

// clipBox clips a closed ring (its last point joined to its first) to the
// box [x0, x1] × [y0, y1] (Sutherland–Hodgman, one side at a time). The
// parts outside are replaced by paths along the box's sides, so the
// winding number of every point inside the box is that of the ring: the
// coverage of the raster's cells is unchanged. The result may have
// repeated points and edges along the box; it has fewer than 3 points
// when nothing of the ring is in the box.
func clipBox(pts []orb.Point, x0, y0, x1, y1 float64) []orb.Point {
	type side struct {
		axis int
		v    float64
		keep func(float64) bool
	}
	sides := []side{
		{0, x0, func(v float64) bool { return v >= x0 }},
		{0, x1, func(v float64) bool { return v <= x1 }},
		{1, y0, func(v float64) bool { return v >= y0 }},
		{1, y1, func(v float64) bool { return v <= y1 }},
	}
	out := pts
	for _, sd := range sides {
		in := out
		out = make([]orb.Point, 0, len(in)+4)
		n := len(in)
		for i := range in {
			p, q := in[i], in[(i+1)%n]
			pin, qin := sd.keep(p[sd.axis]), sd.keep(q[sd.axis])
			if pin {
				out = append(out, p)
			}
			if pin != qin {
				out = append(out, cross(p, q, sd.axis, sd.v))
			}
		}
		if len(out) == 0 {
			return nil
		}
	}
	return out
}

// cross is the point where segment p–q meets the line where coordinate
// axis equals v (p and q on either side of it). The fraction along the
// segment is taken from the far side's distances, which stay finite for
// any finite coordinates, and the point is put exactly on the line.
func cross(p, q orb.Point, axis int, v float64) orb.Point {
	o := 1 - axis
	// t = (v − p) / (q − p) without overflowing q − p.
	dp, dq := v-p[axis], q[axis]-v
	t := dp / (dp + dq)
	if math.IsNaN(t) || math.IsInf(dp+dq, 0) {
		t = 1 / (1 + dq/dp)
	}
	t = math.Min(1, math.Max(0, t))
	var r orb.Point
	r[axis] = v
	r[o] = p[o] + t*(q[o]-p[o])
	if math.IsInf(q[o]-p[o], 0) || math.IsNaN(r[o]) {
		r[o] = p[o]*(1-t) + q[o]*t
	}
	return r
}

// clampInt converts v to an int within [lo, hi] (lo for NaN).
func clampInt(v, lo, hi float64) int {
	if !(v >= lo) {
		return int(lo)
	}
	return int(math.Min(v, hi))
}

// floorInt and ceilInt convert with saturation, so that absurd coordinates
// clip instead of overflowing.
func floorInt(v float64) int {
	f := math.Floor(v)
	switch {
	case f < -1<<40:
		return -1 << 40
	case f > 1<<40:
		return 1 << 40
	}
	return int(f)
}

func ceilInt(v float64) int {
	f := math.Ceil(v)
	switch {
	case f < -1<<40:
		return -1 << 40
	case f > 1<<40:
		return 1 << 40
	}
	return int(f)
}

// accumulate adds the winding-area contributions of the shape's edges for
// rows [ys, ye) into acc: row r − ys at offset (r − ys)·stride, stride ≥
// window width + 2. After a prefix sum along each row, cell i of a row
// holds the integral of the winding number over that cell: its exact
// covered fraction for a valid polygon. When lo and hi are given (one per
// row, lo filled with the window width and hi with 0 beforehand), they
// receive the span of cells [lo, hi) the row's edges touch: left of it the
// running sum is 0, right of it the row's edges have all been passed and
// it is 0 again (edges clipped at the right border extend hi to the
// border).
func (s *shape) accumulate(acc []float64, stride, ys, ye int, lo, hi []int) {
	fys, fye := float64(ys), float64(ye)
	cw := float64(s.c1 - s.c0)
	for _, e := range s.edges {
		if e.y0 >= fye {
			break
		}
		if e.y1 <= fys {
			continue
		}
		ya, yb := math.Max(e.y0, fys), math.Min(e.y1, fye)
		slope := (e.x1 - e.x0) / (e.y1 - e.y0)
		for r := int(math.Floor(ya)); float64(r) < yb; r++ {
			t0, t1 := math.Max(ya, float64(r)), math.Min(yb, float64(r+1))
			if t1 <= t0 {
				continue
			}
			xa := e.x0 + (t0-e.y0)*slope
			if t0 == e.y0 {
				xa = e.x0
			}
			xb := e.x0 + (t1-e.y0)*slope
			if t1 == e.y1 {
				xb = e.x1
			}
			off := (r - ys) * stride
			span(acc[off:off+stride], xa, xb, (t1-t0)*e.dir, cw)
			if lo != nil {
				l := clampInt(math.Floor(math.Min(xa, xb)), 0, cw)
				h := clampInt(math.Ceil(math.Max(xa, xb))+1, 0, cw)
				lo[r-ys] = min(lo[r-ys], l)
				hi[r-ys] = max(hi[r-ys], h)
			}
		}
	}
}

// span adds the contribution of one straight piece of edge inside one row
// — from x = xa to x = xb over a signed height d — to the row's
// difference buffer a, clipped to the window [0, cw]: the part left of the
// window acts as a vertical edge at x = 0, the part right of it does not
// reach any cell of the window.
func span(a []float64, xa, xb, d, cw float64) {
	if xa > xb {
		xa, xb = xb, xa
	}
	if xb <= 0 {
		a[0] += d
		return
	}
	if xa >= cw {
		return
	}
	if xa < 0 {
		f := -xa / (xb - xa)
		a[0] += d * f
		d *= 1 - f
		xa = 0
	}
	if xb > cw {
		d *= (cw - xa) / (xb - xa)
		xb = cw
	}
	spread(a, xa, xb, d)
}

// spread adds to a the area to the right of a straight piece from x0 to x1
// (0 ≤ x0 ≤ x1) within a row, as differences between neighbouring cells:
// the cell the piece starts in gets the area right of it inside that cell,
// each later cell the rest, and the cell after the piece's end the
// remainder, so that a prefix sum gives each cell's share and every cell
// past the piece gets d.
func spread(a []float64, x0, x1, d float64) {
	x0f := math.Floor(x0)
	i0 := int(x0f)
	if x1 <= x0f+1 {
		// Inside one column: the trapezoid's area right of the piece is
		// d·(1 − (mean x − i0)).
		m := 0.5*(x0+x1) - x0f
		a[i0] += d * (1 - m)
		a[i0+1] += d * m
		return
	}
	s := 1 / (x1 - x0) // height per unit of x, as a fraction of d
	f0 := x0 - x0f
	a0 := 0.5 * s * (1 - f0) * (1 - f0) // area right of the piece in the first cell
	x1c := math.Ceil(x1)
	i1 := int(x1c)
	f1 := x1 - x1c + 1
	am := 0.5 * s * f1 * f1 // area left of the piece in the last cell
	a[i0] += d * a0
	if i1 == i0+2 {
		a[i0+1] += d * (1 - a0 - am)
	} else {
		a1 := s * (1.5 - f0) // cumulative share at the end of the second cell
		a[i0+1] += d * (a1 - a0)
		ds := d * s
		for i := i0 + 2; i < i1-1; i++ {
			a[i] += ds
		}
		a2 := a1 + float64(i1-i0-3)*s
		a[i1-1] += d * (1 - a2 - am)
	}
	a[i1] += d * am
}

// CoverageGrid is the covered fraction of every cell of a window of the
// raster: Frac[(row−Y0)·W + (col−X0)] in [0, 1].
type CoverageGrid struct {
	X0, Y0, W, H int
	Frac         []float64
}

// Coverage returns the fraction of each cell of a width×height raster
// with geotransform gt (GDAL order) covered by the polygon or multipolygon
// g, given in the raster's map coordinates, over the window of cells that
// g's bounding box touches (clipped to the raster). A geometry outside the
// raster gives an empty grid.
func Coverage(g orb.Geometry, gt [6]float64, width, height int) (*CoverageGrid, error) {
	a, err := newAffine(gt)
	if err != nil {
		return nil, err
	}
	s, err := prepare(g, a, width, height)
	if errors.Is(err, errOutside) {
		return &CoverageGrid{}, nil
	}
	if err != nil {
		return nil, err
	}
	cw, ch := s.c1-s.c0, s.r1-s.r0
	stride := cw + 2
	acc := make([]float64, ch*stride)
	s.accumulate(acc, stride, s.r0, s.r1, nil, nil)
	out := &CoverageGrid{X0: s.c0, Y0: s.r0, W: cw, H: ch, Frac: make([]float64, cw*ch)}
	for r := 0; r < ch; r++ {
		var sum float64
		row := acc[r*stride:]
		for c := 0; c < cw; c++ {
			sum += row[c]
			out.Frac[r*cw+c] = clampCover(sum)
		}
	}
	return out, nil
}

// clampCover turns an accumulated winding integral into a fraction:
// |v| capped at 1 (the absolute value keeps both lobes of a
// self-intersecting ring; the cap keeps overlapping parts from counting
// twice), and within 1e-12 of 0 or 1 rounded to it, as Compute does.
func clampCover(v float64) float64 {
	v = math.Abs(v)
	if v > 1-1e-12 {
		return 1
	}
	if v < 1e-12 {
		return 0
	}
	return v
}
