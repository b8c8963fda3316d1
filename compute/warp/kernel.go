package warp

import (
	"fmt"
	"math"

	"canopy/compute"
	"canopy/compute/geotiff"
)

// Source is one band to warp, as stored: its samples, where it lies, and
// which of its pixels hold no data (NoData, NaN in a float band, or a
// non-zero Mask byte).
type Source struct {
	Plane compute.Plane
	Grid  SourceGrid
	// NoData is the stored value that means "no data" when HasNoData.
	NoData    float64
	HasNoData bool
	// Mask, when not nil, holds one byte a pixel: non-zero is masked
	// (cloud, shadow, outside the product).
	Mask []uint8
	// Name names the source in messages.
	Name string
	// Stored, for a StoredTaker backend, is the band as its file stores
	// it, not yet decoded: Plane then has its type and size but no Data.
	Stored *geotiff.Stored
}

// StoredTaker is a Streamer that decodes bands itself: a source read for
// it may come as stored (Source.Stored) rather than decoded.
type StoredTaker interface {
	Streamer
	TakesStored() bool
}

// Check reports a source whose parts do not fit together.
func (s *Source) Check() error {
	p := s.Plane
	if s.Stored != nil && p.Data == nil {
		st := s.Stored
		if st.Type != p.Type || st.Width != p.Width || st.Height != p.Height {
			return fmt.Errorf("%s: the stored band is %d×%d %s, the plane %d×%d %s", s.Name, st.Width, st.Height, st.Type, p.Width, p.Height, p.Type)
		}
		if p.Type.Size() == 0 || p.Width <= 0 || p.Height <= 0 {
			return fmt.Errorf("%s: a %d×%d band of unknown type", s.Name, p.Width, p.Height)
		}
	} else if err := p.Check(); err != nil {
		return fmt.Errorf("%s: %v", s.Name, err)
	}
	if s.Plane.Width != s.Grid.Width || s.Plane.Height != s.Grid.Height {
		return fmt.Errorf("%s: the plane is %d×%d pixels, its grid %d×%d", s.Name, s.Plane.Width, s.Plane.Height, s.Grid.Width, s.Grid.Height)
	}
	if s.Mask != nil && len(s.Mask) != s.Plane.Pixels() {
		return fmt.Errorf("%s: the mask has %d pixels, the band %d", s.Name, len(s.Mask), s.Plane.Pixels())
	}
	return nil
}

// Target is the destination of a warp: a plane of the source's type on
// the plan's grid, the value written where no source pixel is valid (it
// is left as it is), and Filled, one byte a destination pixel, non-zero
// once a source gave it a value (a mosaic fills each pixel from the first
// source valid there and leaves it).
type Target struct {
	Plane  compute.Plane
	NoData float64
	// HasNoData makes an integer result equal to NoData move one step
	// towards the inside of the type's range, as GDAL does, so that a
	// valid pixel never reads as nodata.
	HasNoData bool
	Filled    []uint8
}

// sample is a stored sample type.
type sample interface {
	uint8 | uint16 | int16 | uint32 | int32 | float32
}

// kernel holds what one warp of a source into a target reads.
type kernel[T sample] struct {
	p      *Plan
	src    []T
	w, h   int
	nd     float64
	hasND  bool
	mask   []uint8
	dst    []T
	filled []uint8
	dstND  float64
	hasDND bool
	lo, hi float64 // the type's range (integers)
	isF    bool
	wx     []float64 // scratch: horizontal weights
}

func newKernel[T sample](p *Plan, s *Source, t *Target) *kernel[T] {
	k := &kernel[T]{p: p, src: typed[T](s.Plane), w: s.Plane.Width, h: s.Plane.Height, nd: s.NoData, hasND: s.HasNoData,
		mask: s.Mask, dst: typed[T](t.Plane), filled: t.Filled, dstND: t.NoData, hasDND: t.HasNoData}
	switch s.Plane.Type {
	case compute.U8:
		k.lo, k.hi = 0, 255
	case compute.U16:
		k.lo, k.hi = 0, 65535
	case compute.I16:
		k.lo, k.hi = -32768, 32767
	case compute.U32:
		k.lo, k.hi = 0, 4294967295
	case compute.I32:
		k.lo, k.hi = -2147483648, 2147483647
	default:
		k.isF = true
	}
	k.wx = make([]float64, 2*(max(p.XRadius, 2)+1)+2)
	return k
}

func typed[T sample](p compute.Plane) []T {
	var z T
	switch any(z).(type) {
	case uint8:
		return any(p.U8()).([]T)
	case uint16:
		return any(p.U16()).([]T)
	case int16:
		return any(p.I16()).([]T)
	case uint32:
		return any(p.U32()).([]T)
	case int32:
		return any(p.I32()).([]T)
	}
	return any(p.F32()).([]T)
}

// valid reports whether source pixel i holds data.
func (k *kernel[T]) valid(i int) bool {
	if k.mask != nil && k.mask[i] != 0 {
		return false
	}
	v := float64(k.src[i])
	if v != v {
		return false
	}
	return !k.hasND || v != k.nd
}

// store writes v to destination pixel i: float32 rounded once; integers
// rounded half up (half away from zero below 0), clamped to the type and
// moved off the nodata value as GDAL's GWKSetPixelValue does.
func (k *kernel[T]) store(i int, v float64) {
	if k.isF {
		k.dst[i] = T(float32(v))
	} else {
		var r float64
		switch {
		case v < k.lo:
			r = k.lo
		case v > k.hi:
			r = k.hi
		case k.lo < 0:
			r = math.Floor(v + 0.5)
		default:
			r = math.Trunc(v + 0.5)
		}
		if k.hasDND && r == k.dstND {
			if r == k.lo {
				r++
			} else {
				r--
			}
		}
		k.dst[i] = T(r)
	}
	if k.filled != nil {
		k.filled[i] = 1
	}
}

// rows warps destination rows [r0, r1).
func (k *kernel[T]) rows(r0, r1 int) {
	p := k.p
	W := p.Dst.Width
	for r := r0; r < r1; r++ {
		base := r * W
		if p.Resampling == Average {
			k.averageRow(r, base)
			continue
		}
		fw, fh := float64(k.w), float64(k.h)
		for si := range p.Segments(r) {
			s := &p.Segments(r)[si]
			// Pixels that cannot fall on the source are skipped (at would
			// reject them).
			j0, j1 := s.Span(-1, fw+1, -1, fh+1)
			for j := j0; j <= j1; j++ {
				x := int(s.Start) + j
				if k.filled != nil && k.filled[base+x] != 0 {
					continue
				}
				sx, sy := s.Pos(j)
				if v, ok := k.at(sx, sy); ok {
					k.store(base+x, v)
				}
			}
		}
	}
}

// at resamples the source at (sx, sy) in source pixel coordinates.
func (k *kernel[T]) at(sx, sy float64) (float64, bool) {
	// GDAL's GWKCheckAndComputeSrcOffsets: NaN, left of or above the
	// source, or past its right or bottom edge (with 1e-10 slack) is
	// outside.
	if sx != sx || sy != sy || sx < 0 || sy < 0 {
		return 0, false
	}
	if sx+1e-10 > float64(k.w) || sy+1e-10 > float64(k.h) {
		return 0, false
	}
	// The pixel under the sample must be valid whatever the resampling
	// (GDAL's unified source validity).
	ix, iy := int(sx+1e-10), int(sy+1e-10)
	if ix == k.w {
		ix--
	}
	if iy == k.h {
		iy--
	}
	i := iy*k.w + ix
	if !k.valid(i) {
		return 0, false
	}
	switch k.p.Resampling {
	case Nearest:
		return float64(k.src[i]), true
	case Bilinear:
		if k.p.Use4 {
			return k.bilinear4(sx, sy)
		}
		return k.general(sx, sy, bilinearWeight)
	case Cubic:
		if k.p.Use4 {
			return k.cubic4(sx, sy)
		}
		return k.general(sx, sy, cubicWeight)
	}
	return 0, false
}

// bilinear4 is GDAL's GWKBilinearResample4Sample: the 2×2 neighbours'
// weights, renormalised over those that are inside the source and valid.
func (k *kernel[T]) bilinear4(sx, sy float64) (float64, bool) {
	ix := int(math.Floor(sx - 0.5))
	iy := int(math.Floor(sy - 0.5))
	rx := 1.5 - (sx - float64(ix))
	ry := 1.5 - (sy - float64(iy))
	if ix == -1 {
		ix, rx = 0, 1
	}
	if iy == -1 {
		iy, ry = 0, 1
	}
	var acc, div float64
	add := func(x, y int, m float64) {
		if x < 0 || x >= k.w || y < 0 || y >= k.h {
			return
		}
		i := y*k.w + x
		if !k.valid(i) {
			return
		}
		div += m
		acc += float64(float64(k.src[i]) * m)
	}
	m1 := float64(rx * ry)
	m2 := float64((1 - rx) * ry)
	add(ix, iy, m1)
	add(ix+1, iy, m2)
	m1 = float64(rx * (1 - ry))
	m2 = float64((1 - rx) * (1 - ry))
	add(ix, iy+1, m1)
	add(ix+1, iy+1, m2)
	switch {
	case div == 1:
		return acc, true
	case div < 0.00001:
		return 0, false
	}
	return acc / div, true
}

// cubicWeights are the Catmull-Rom (Keys, a = −0.5) weights of the four
// neighbours at fraction x, as GDAL's GWKCubicComputeWeights writes them.
func cubicWeights(x float64, c *[4]float64) {
	halfX := 0.5 * x
	threeX := 3.0 * x
	halfX2 := float64(halfX * x)
	c[0] = float64(halfX * float64(-1+float64(x*float64(2-x))))
	c[1] = 1 + float64(halfX2*float64(-5+threeX))
	c[2] = float64(halfX * float64(1+float64(x*float64(4-threeX))))
	c[3] = float64(halfX2 * float64(-1+x))
}

func convol4(a, b *[4]float64) float64 {
	return float64(float64(float64(a[0]*b[0])+float64(a[1]*b[1]))+float64(a[2]*b[2])) + float64(a[3]*b[3])
}

// cubic4 is GDAL's GWKCubicResample4Sample: 4×4 Catmull-Rom where the
// whole 4×4 is inside the source and valid, else bilinear.
func (k *kernel[T]) cubic4(sx, sy float64) (float64, bool) {
	ix := int(sx - 0.5)
	iy := int(sy - 0.5)
	if ix-1 < 0 || ix+2 >= k.w || iy-1 < 0 || iy+2 >= k.h {
		return k.bilinear4(sx, sy)
	}
	fx := sx - 0.5 - float64(ix)
	fy := sy - 0.5 - float64(iy)
	var cx, cy, row, vals [4]float64
	cubicWeights(fx, &cx)
	for j := -1; j < 3; j++ {
		o := (iy+j)*k.w + ix - 1
		for i := 0; i < 4; i++ {
			if !k.valid(o + i) {
				return k.bilinear4(sx, sy)
			}
			row[i] = float64(k.src[o+i])
		}
		vals[j+1] = convol4(&cx, &row)
	}
	cubicWeights(fy, &cy)
	return convol4(&cy, &vals), true
}

func bilinearWeight(x float64) float64 {
	a := math.Abs(x)
	if a <= 1 {
		return 1 - a
	}
	return 0
}

func cubicWeight(x float64) float64 {
	a := math.Abs(x)
	if a <= 1 {
		x2 := float64(x * x)
		return float64(x2*float64(float64(1.5*a)-2.5)) + 1
	}
	if a <= 2 {
		x2 := float64(x * x)
		return float64(float64(x2*float64(float64(-0.5*a)+2.5))-float64(4*a)) + 2
	}
	return 0
}

// general is GDAL's GWKResample: the kernel widened by the scale (its
// argument multiplied by the destination's pixels per source pixel when
// below 1) over the window around the sample, the weights of valid
// pixels inside the source summed row by row, the result divided by the
// sum of the weights used unless that sum is within 1e-5 of 1.
func (k *kernel[T]) general(sx, sy float64, f func(float64) float64) (float64, bool) {
	p := k.p
	ix := int(math.Floor(sx - 0.5))
	iy := int(math.Floor(sy - 0.5))
	dx := sx - 0.5 - float64(ix)
	dy := sy - 0.5 - float64(iy)
	xs, ys := p.XScale, p.YScale
	init := (p.Resampling.radius()+1)%2 - p.XRadius
	initY := (p.Resampling.radius()+1)%2 - p.YRadius
	j, jMax := initY, p.YRadius
	if iy+j < 0 {
		j = -iy
	}
	if iy+jMax >= k.h {
		jMax = k.h - iy - 1
	}
	iMin, iMax := init, p.XRadius
	if ix+iMin < 0 {
		iMin = -ix
	}
	if ix+iMax >= k.w {
		iMax = k.w - ix - 1
	}
	if iMax < iMin {
		return 0, false
	}
	wx := k.wx[:iMax-iMin+1]
	for i := iMin; i <= iMax; i++ {
		d := float64(i) - dx
		if xs < 1 {
			d = float64(d * xs)
		}
		wx[i-iMin] = f(d)
	}
	var acc, accW float64
	for ; j <= jMax; j++ {
		d := float64(j) - dy
		if ys < 1 {
			d = float64(d * ys)
		}
		w1 := f(d)
		var a, aw float64
		o := (iy+j)*k.w + ix
		for i := iMin; i <= iMax; i++ {
			if !k.valid(o + i) {
				continue
			}
			w2 := wx[i-iMin]
			a += float64(float64(k.src[o+i]) * w2)
			aw += w2
		}
		acc += float64(a * w1)
		accW += float64(aw * w1)
	}
	if accW < 0.000001 {
		return 0, false
	}
	if accW < 0.99999 || accW > 1.00001 {
		return acc / accW, true
	}
	return acc, true
}

// averageRow is GDAL's average of GWKAverageOrMode: each destination
// pixel's corners are taken to the source (top-left from Segs,
// bottom-right from Far); the source pixels the box touches are averaged,
// each weighted by the share of it inside the box; invalid pixels are
// left out.
func (k *kernel[T]) averageRow(r, base int) {
	p := k.p
	W := p.Dst.Width
	near, far := p.Segments(r), p.FarSegments(r)
	ni, fi := 0, 0
	for x := 0; x < W; x++ {
		for ni < len(near) && int(near[ni].Start+near[ni].N) <= x {
			ni++
		}
		for fi < len(far) && int(far[fi].Start+far[fi].N) <= x {
			fi++
		}
		if ni >= len(near) || fi >= len(far) {
			return
		}
		if k.filled != nil && k.filled[base+x] != 0 {
			continue
		}
		x0, y0 := near[ni].Pos(x - int(near[ni].Start))
		x1, y1 := far[fi].Pos(x - int(far[fi].Start))
		if v, ok := k.average(x0, y0, x1, y1); ok {
			k.store(base+x, v)
		}
	}
}

func (k *kernel[T]) average(x0, y0, x1, y1 float64) (float64, bool) {
	if x0 != x0 || y0 != y0 || x1 != x1 || y1 != y1 {
		return 0, false
	}
	if x0 > x1 {
		x0, x1 = x1, x0
	}
	if y0 > y1 {
		y0, y1 = y1, y0
	}
	fw, fh := float64(k.w), float64(k.h)
	ixMin := int(math.Max(math.Floor(x0+1e-10), 0))
	ixMax := int(math.Min(math.Ceil(x1-1e-10), fw))
	iyMin := int(math.Max(math.Floor(y0+1e-10), 0))
	iyMax := int(math.Min(math.Ceil(y1-1e-10), fh))
	if ixMin == ixMax && ixMax < k.w {
		ixMax++
	}
	if iyMin == iyMax && iyMax < k.h {
		iyMax++
	}
	var total, weight float64
	for iy := iyMin; iy < iyMax; iy++ {
		wy := 1.0
		switch {
		case iy == iyMin && iyMin+1 == iyMax:
			wy = 1
		case iy == iyMin:
			wy = 1 - (y0 - float64(iyMin))
		case iy+1 == iyMax:
			wy = 1 - (float64(iyMax) - y1)
		}
		for ix := ixMin; ix < ixMax; ix++ {
			i := iy*k.w + ix
			if !k.valid(i) {
				continue
			}
			w := wy
			switch {
			case ix == ixMin && ixMin+1 == ixMax:
			case ix == ixMin:
				w = float64(wy * (1 - (x0 - float64(ixMin))))
			case ix+1 == ixMax:
				w = float64(wy * (1 - (float64(ixMax) - x1)))
			}
			if w > 0 {
				total += float64(float64(k.src[i]) * w)
				weight += w
			}
		}
	}
	if !(weight > 0) {
		return 0, false
	}
	return total / weight, true
}
