package compute

import (
	"math"

	"canopy/compute/index"
)

// refBlock is how many pixels the float64 truth is evaluated for at a
// time: the formula's tree is walked once per block, each node one loop
// over the block, instead of once per pixel.
const refBlock = 1024

// refScratch is one verifying worker's buffers.
type refScratch struct {
	in   [index.NumRoles][]float64 // the block's inputs by role
	free [][]float64
}

func (s *refScratch) get() []float64 {
	if n := len(s.free); n > 0 {
		b := s.free[n-1]
		s.free = s.free[:n-1]
		return b
	}
	return make([]float64, refBlock)
}

func (s *refScratch) put(b []float64) { s.free = append(s.free, b) }

// reference64Block sets ref[p] to Reference64(o, lo+p) for the pixels
// [lo, lo+len(ref)): the same float64 operations in the same order (the
// bands' Value64, index.Expr.Eval64's rules node by node), so the same
// bits, a block at a time.
func (j *Job) reference64Block(o, lo int, ref []float64, s *refScratch) {
	n := len(ref)
	for k, role := range j.Program.Inputs {
		r := index.RoleIndex(role)
		if s.in[r] == nil {
			s.in[r] = make([]float64, refBlock)
		}
		j.value64Block(k, lo, s.in[r][:n])
	}
	out := j.evalBlock(j.Exprs[o], n, s)
	for p := range ref {
		ref[p] = index.Finite64(out[p])
		if j.Mask != nil && j.Mask[lo+p] != 0 {
			ref[p] = math.NaN()
		}
	}
	s.put(out)
}

// value64Block sets dst[p] to Value64(k, lo+p).
func (j *Job) value64Block(k, lo int, dst []float64) {
	b := &j.Bands[k]
	n := len(dst)
	switch b.Plane.Type {
	case U8:
		value64(dst, b.Plane.U8()[lo:lo+n], b)
	case U16:
		value64(dst, b.Plane.U16()[lo:lo+n], b)
	case I16:
		value64(dst, b.Plane.I16()[lo:lo+n], b)
	case U32:
		value64(dst, b.Plane.U32()[lo:lo+n], b)
	case I32:
		value64(dst, b.Plane.I32()[lo:lo+n], b)
	case F32:
		value64(dst, b.Plane.F32()[lo:lo+n], b)
	default:
		for p := range dst {
			dst[p] = j.Value64(k, lo+p)
		}
	}
}

// value64 is Value64 over a run of samples.
func value64[T uint8 | uint16 | int16 | uint32 | int32 | float32](dst []float64, src []T, b *BandInput) {
	r, nd, has := b.Radiometry, b.NoData, b.HasNoData
	dst = dst[:len(src)]
	for p, v := range src {
		dn := float64(v)
		if dn != dn || (has && dn == nd) {
			dst[p] = math.NaN()
		} else {
			dst[p] = r.Apply64(dn)
		}
	}
}

// evalBlock evaluates e (before Eval64's final rule) over the block's
// inputs, node by node as index.Expr's eval64 does, into a buffer of s
// (the caller puts it back).
func (j *Job) evalBlock(e *index.Expr, n int, s *refScratch) []float64 {
	d := s.get()[:n]
	switch e.Kind {
	case index.KindNum:
		for p := range d {
			d[p] = e.Value
		}
		return d
	case index.KindRole:
		copy(d, s.in[e.Role][:n])
		return d
	}
	if e.Kind != index.KindClamp && len(e.Args) == 2 && e.Args[0].Kind == index.KindRole && e.Args[1].Kind == index.KindRole {
		// Both operands are bands: read them where they are.
		s.put(d)
		return j.binaryBlock(e.Kind, s.in[e.Args[0].Role][:n], s.in[e.Args[1].Role][:n], s)
	}
	a := j.evalBlock(e.Args[0], n, s)
	defer s.put(a)
	switch e.Kind {
	case index.KindNeg:
		for p := range d {
			d[p] = -a[p]
		}
		return d
	case index.KindAbs:
		for p := range d {
			d[p] = math.Abs(a[p])
		}
		return d
	case index.KindSqrt:
		for p := range d {
			d[p] = index.Sqrt64(a[p])
		}
		return d
	}
	b := j.evalBlock(e.Args[1], n, s)
	defer s.put(b)
	if e.Kind != index.KindClamp {
		s.put(d)
		return j.binaryBlock(e.Kind, a, b, s)
	}
	switch e.Kind {
	case index.KindClamp:
		c := j.evalBlock(e.Args[2], n, s)
		for p := range d {
			d[p] = index.Min64(index.Max64(a[p], b[p]), c[p])
		}
		s.put(c)
	default:
		for p := range d {
			d[p] = math.NaN()
		}
	}
	return d
}

// binaryBlock applies a two-operand node to a and b into a buffer of s.
func (j *Job) binaryBlock(k index.Kind, a, b []float64, s *refScratch) []float64 {
	d := s.get()[:len(a)]
	b = b[:len(a)]
	switch k {
	case index.KindAdd:
		for p := range d {
			d[p] = a[p] + b[p]
		}
	case index.KindSub:
		for p := range d {
			d[p] = a[p] - b[p]
		}
	case index.KindMul:
		for p := range d {
			d[p] = a[p] * b[p]
		}
	case index.KindDiv:
		for p := range d {
			d[p] = index.Div64(a[p], b[p])
		}
	case index.KindMin:
		for p := range d {
			d[p] = index.Min64(a[p], b[p])
		}
	case index.KindMax:
		for p := range d {
			d[p] = index.Max64(a[p], b[p])
		}
	default:
		for p := range d {
			d[p] = math.NaN()
		}
	}
	return d
}
