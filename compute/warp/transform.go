package warp

import (
	"errors"
	"fmt"
	"math"
	"strings"

	proj "github.com/twpayne/go-proj/v11"

	"canopy/compute/geo"
	"canopy/compute/grid"
)

// MaxError is the approximate transformer's default error bound in
// source pixels, gdalwarp's -et default.
const MaxError = 0.125

// transformer maps destination pixel coordinates to source pixel
// coordinates exactly (GDAL's GenImgProj transformer): the destination
// geotransform, PROJ from the destination's system to the source's (none
// when they are the same system), and the source's inverse geotransform.
// It is not safe for concurrent use (one PROJ object); clone it per
// worker.
type transformer struct {
	dst    [6]float64
	srcInv [6]float64
	pj     *proj.PJ // nil: same system
	ctx    *proj.Context
	srcCRS string
	dstCRS string
	// def is the PROJ string of the operation (open), for clones.
	def string
	// buf holds the points of one PROJ call (points).
	buf []proj.Coord
}

// invGeoTransform inverts a geotransform as GDALInvGeoTransform does
// (the north-up case without a determinant).
func invGeoTransform(g [6]float64) ([6]float64, error) {
	if g[2] == 0 && g[4] == 0 && g[1] != 0 && g[5] != 0 {
		return [6]float64{-g[0] / g[1], 1 / g[1], 0, -g[3] / g[5], 0, 1 / g[5]}, nil
	}
	det := g[1]*g[5] - g[2]*g[4]
	if det == 0 || math.IsNaN(det) {
		return [6]float64{}, errors.New("the source's geotransform is singular")
	}
	inv := 1 / det
	return [6]float64{
		(g[2]*g[3] - g[0]*g[5]) * inv, g[5] * inv, -g[2] * inv,
		(-g[1]*g[3] + g[0]*g[4]) * inv, -g[4] * inv, g[1] * inv,
	}, nil
}

func newTransformer(dst grid.Grid, srcAffine [6]float64, srcCRS string) (*transformer, error) {
	inv, err := invGeoTransform(srcAffine)
	if err != nil {
		return nil, err
	}
	t := &transformer{dst: dst.Affine(), srcInv: inv, srcCRS: srcCRS, dstCRS: dst.CRS}
	same, err := geo.Same(srcCRS, dst.CRS)
	if err != nil {
		return nil, err
	}
	if !same {
		if err := t.open(); err != nil {
			return nil, err
		}
	}
	return t, nil
}

func (t *transformer) open() error {
	ctx := proj.NewContext()
	pj, err := ctx.NewCRSToCRS(t.dstCRS, t.srcCRS, nil)
	if err != nil {
		return fmt.Errorf("no transformation from %s to %s: %v", excerpt(t.dstCRS), excerpt(t.srcCRS), err)
	}
	norm, err := pj.NormalizeForVisualization()
	if err != nil {
		return fmt.Errorf("no transformation from %s to %s: %v", excerpt(t.dstCRS), excerpt(t.srcCRS), err)
	}
	t.ctx, t.pj = ctx, norm
	// The operation PROJ chose, as a PROJ string: a clone builds it
	// without PROJ's database (an object with several candidate
	// operations has none, and its clones open it again).
	t.def = ""
	if d := norm.Info().Definition; strings.HasPrefix(d, "proj=") {
		t.def = d
	}
	return nil
}

// clone returns a transformer with its own PROJ object.
func (t *transformer) clone() (*transformer, error) {
	c := *t
	c.buf = nil
	if t.pj == nil {
		return &c, nil
	}
	if t.def != "" {
		ctx := proj.NewContext()
		if pj, err := ctx.New(t.def); err == nil {
			c.ctx, c.pj = ctx, pj
			return &c, nil
		}
	}
	return &c, c.open()
}

// points is point over the pixels (xs[k], y) into out[k] and ok[k], with
// the PROJ transformation of all of them in one call (the same
// arithmetic point by point as point's, without a call and its error
// bookkeeping a point); where PROJ fails on any of them, each is placed
// again by point.
func (t *transformer) points(xs []float64, y float64, out [][2]float64, ok []bool) {
	if t.pj == nil || len(xs) == 1 {
		for k, x := range xs {
			out[k][0], out[k][1], ok[k] = t.point(x, y)
		}
		return
	}
	g := &t.dst
	t.buf = t.buf[:0]
	for _, x := range xs {
		mx := float64(g[0]+float64(x*g[1])) + float64(y*g[2])
		my := float64(g[3]+float64(x*g[4])) + float64(y*g[5])
		t.buf = append(t.buf, proj.NewCoord(mx, my, 0, 0))
	}
	if err := t.pj.ForwardArray(t.buf); err != nil {
		for k, x := range xs {
			out[k][0], out[k][1], ok[k] = t.point(x, y)
		}
		return
	}
	v := &t.srcInv
	for k, c := range t.buf {
		mx, my := c[0], c[1]
		if math.IsNaN(mx) || math.IsNaN(my) || math.IsInf(mx, 0) || math.IsInf(my, 0) {
			out[k], ok[k] = [2]float64{}, false
			continue
		}
		out[k][0] = float64(v[0]+float64(mx*v[1])) + float64(my*v[2])
		out[k][1] = float64(v[3]+float64(mx*v[4])) + float64(my*v[5])
		ok[k] = true
	}
}

// point maps destination pixel (x, y) to source pixel coordinates; ok is
// false where PROJ cannot place the point. Every product is rounded
// before it is added (float64 conversions), as GDAL's C++ compiled
// without fused multiply-adds rounds it.
func (t *transformer) point(x, y float64) (sx, sy float64, ok bool) {
	g := &t.dst
	mx := float64(g[0]+float64(x*g[1])) + float64(y*g[2])
	my := float64(g[3]+float64(x*g[4])) + float64(y*g[5])
	if t.pj != nil {
		c, err := t.pj.Forward(proj.NewCoord(mx, my, 0, 0))
		if err != nil || math.IsNaN(c[0]) || math.IsNaN(c[1]) || math.IsInf(c[0], 0) || math.IsInf(c[1], 0) {
			return 0, 0, false
		}
		mx, my = c[0], c[1]
	}
	v := &t.srcInv
	sx = float64(v[0]+float64(mx*v[1])) + float64(my*v[2])
	sy = float64(v[3]+float64(mx*v[4])) + float64(my*v[5])
	return sx, sy, true
}

// Segment is a run of destination pixels along a row whose source
// positions are linear: pixel Start+k (k < N) samples the source at
// (SX + DX·(K0+k), SY + DY·(K0+k)), each product rounded before the sum,
// exactly as GDAL's approximate transformer interpolates (K0 is not 0
// where a run was cut around a pixel placed exactly). A point PROJ could
// not place has N = 1 and NaN coordinates.
type Segment struct {
	Start, N, K0 int32
	SX, SY       float64
	DX, DY       float64
}

// Pos returns the source position of the segment's k-th pixel.
func (s *Segment) Pos(k int) (x, y float64) {
	fk := float64(int(s.K0) + k)
	return s.SX + float64(s.DX*fk), s.SY + float64(s.DY*fk)
}

// approxRow runs GDAL's approximate transformer (GDALApproxTransform)
// over one destination row: the points x0+i (i < n) at height y. The
// start, middle and end are transformed exactly; when the linear
// interpolation between start and end misses the middle by more than
// maxErr (the sum of the errors in x and y, in source pixels), the row is
// split in two ([0, n/2) and [n/2, n) with n/2 = (n−1)/2) and each half
// handled the same way; a run of at most 5 points is transformed point by
// point. The result is appended to segs.
func (t *transformer) approxRow(segs []Segment, x0, y float64, n int, maxErr float64) []Segment {
	if n <= 0 {
		return segs
	}
	if n <= 5 || maxErr <= 0 {
		return t.exact(segs, x0, y, 0, n)
	}
	mid := (n - 1) / 2
	var sme [3][2]float64
	var ok [3]bool
	t.points([]float64{x0, x0 + float64(mid), x0 + float64(n-1)}, y, sme[:], ok[:])
	if !ok[0] || !ok[1] || !ok[2] {
		return t.exact(segs, x0, y, 0, n)
	}
	return t.approxInternal(segs, x0, y, 0, n, sme, maxErr)
}

// xAt is the destination x of point i, as GDAL holds it (x0 + i, rounded).
func xAt(x0 float64, i int) float64 { return x0 + float64(i) }

// approxInternal is GDALApproxTransformInternal over points [a, a+n)
// whose start, middle and end (a, a+(n−1)/2, a+n−1) are in sme.
func (t *transformer) approxInternal(segs []Segment, x0, y float64, a, n int, sme [3][2]float64, maxErr float64) []Segment {
	mid := (n - 1) / 2
	span := xAt(x0, a+n-1) - xAt(x0, a)
	dx := (sme[2][0] - sme[0][0]) / span
	dy := (sme[2][1] - sme[0][1]) / span
	dm := xAt(x0, a+mid) - xAt(x0, a)
	e := math.Abs(float64(sme[0][0]+float64(dx*dm))-sme[1][0]) + math.Abs(float64(sme[0][1]+float64(dy*dm))-sme[1][1])
	if e <= maxErr {
		// dfDist = x[i] − x[0] is the whole number i for pixel positions.
		return append(segs, Segment{Start: int32(a), N: int32(n), SX: sme[0][0], SY: sme[0][1], DX: dx, DY: dy})
	}
	// Split: the left half [a, a+mid) and the right half [a+mid, a+n).
	ln, rn := mid, n-mid
	lmid, rmid := a+(ln-1)/2, a+mid+(rn-1)/2
	baseLeft := ln <= 5
	baseRight := rn <= 5
	var lm, le, rm [2]float64
	// The left half's middle and end and the right half's middle, those
	// that are needed, in one call (GDAL's own order: where the left
	// half's fail, the right half's is not needed either).
	var xs [3]float64
	var got [3][2]float64
	var oks [3]bool
	k := 0
	if !baseLeft {
		xs[0], xs[1] = xAt(x0, lmid), xAt(x0, a+ln-1)
		k = 2
	}
	if !baseRight {
		xs[k] = xAt(x0, rmid)
		k++
	}
	okAll := true
	if k > 0 {
		t.points(xs[:k], y, got[:k], oks[:k])
		for _, ok := range oks[:k] {
			okAll = okAll && ok
		}
		if !baseLeft {
			lm, le = got[0], got[1]
		}
		if !baseRight {
			rm = got[k-1]
		}
	}
	if !okAll {
		// GDAL transforms the interior exactly and keeps the three
		// known points.
		segs = appendPoint(segs, a, sme[0], true)
		segs = t.exact(segs, x0, y, a+1, a+ln)
		segs = appendPoint(segs, a+mid, sme[1], true)
		segs = t.exact(segs, x0, y, a+mid+1, a+n-1)
		return appendPoint(segs, a+n-1, sme[2], true)
	}
	if baseLeft {
		segs = appendPoint(segs, a, sme[0], true)
		segs = t.exact(segs, x0, y, a+1, a+ln)
	} else {
		segs = t.approxInternal(segs, x0, y, a, ln, [3][2]float64{sme[0], lm, le}, maxErr)
	}
	if baseRight {
		segs = appendPoint(segs, a+mid, sme[1], true)
		segs = t.exact(segs, x0, y, a+mid+1, a+n-1)
		return appendPoint(segs, a+n-1, sme[2], true)
	}
	return t.approxInternal(segs, x0, y, a+mid, rn, [3][2]float64{sme[1], rm, sme[2]}, maxErr)
}

func appendPoint(segs []Segment, i int, p [2]float64, ok bool) []Segment {
	if !ok {
		p = [2]float64{math.NaN(), math.NaN()}
	}
	return append(segs, Segment{Start: int32(i), N: 1, SX: p[0], SY: p[1]})
}

// exact appends the points [i0, i1) each transformed exactly (PROJ
// called on up to exactBatch of them at once).
func (t *transformer) exact(segs []Segment, x0, y float64, i0, i1 int) []Segment {
	var xs [exactBatch]float64
	var got [exactBatch][2]float64
	var oks [exactBatch]bool
	for lo := i0; lo < i1; lo += exactBatch {
		n := min(exactBatch, i1-lo)
		for k := range n {
			xs[k] = xAt(x0, lo+k)
		}
		t.points(xs[:n], y, got[:n], oks[:n])
		for k := range n {
			segs = appendPoint(segs, lo+k, got[k], oks[k])
		}
	}
	return segs
}

// exactBatch is how many points exact hands PROJ at once.
const exactBatch = 256

func excerpt(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// kRange returns the pixels k of [0, n) whose coordinate a + d·k may lie
// in [lo, hi]: a range one pixel wider on each side than the interval
// solved in float64, so that rounding never leaves one out; k0 > k1 when
// none does.
func kRange(a, d, lo, hi float64, n int) (k0, k1 int) {
	if d == 0 || n == 1 {
		if a >= lo-1e-9 && a <= hi+1e-9 {
			return 0, n - 1
		}
		return 0, -1
	}
	t0, t1 := (lo-a)/d, (hi-a)/d
	if t0 > t1 {
		t0, t1 = t1, t0
	}
	if t1 < -1 || t0 > float64(n) || t0 != t0 || t1 != t1 {
		return 0, -1
	}
	k0 = max(0, int(math.Floor(t0))-1)
	k1 = min(n-1, int(math.Ceil(t1))+1)
	return k0, k1
}

// inner returns the pixels k of [0, n) whose coordinate a + d·k surely
// lies in [lo, hi] (the solved interval shrunk by a pixel a side); k0 >
// k1 when none surely does.
func inner(a, d, lo, hi float64, n int) (k0, k1 int) {
	if d == 0 {
		if a > lo && a < hi {
			return 0, n - 1
		}
		return 0, -1
	}
	t0, t1 := (lo-a)/d, (hi-a)/d
	if t0 > t1 {
		t0, t1 = t1, t0
	}
	if t0 != t0 || t1 != t1 {
		return 0, -1
	}
	return max(0, int(math.Ceil(t0))+1), min(n-1, int(math.Floor(t1))-1)
}

// Span returns the pixels [k0, k1] of s whose source position may fall
// inside [xlo, xhi] × [ylo, yhi]; a kernel need not look at the others.
func (s *Segment) Span(xlo, xhi, ylo, yhi float64) (k0, k1 int) {
	n := int(s.N)
	fk := float64(s.K0)
	ax := s.SX + float64(s.DX*fk)
	ay := s.SY + float64(s.DY*fk)
	if ax != ax || ay != ay {
		return 0, n - 1 // the kernel rejects it itself
	}
	x0, x1 := kRange(ax, s.DX, xlo, xhi, n)
	y0, y1 := kRange(ay, s.DY, ylo, yhi, n)
	return max(x0, y0), min(x1, y1)
}
