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
	r := b.Radiometry
	conv := func(p int, dn float64) {
		if math.IsNaN(dn) || (b.HasNoData && dn == b.NoData) {
			dst[p] = math.NaN()
		} else {
			dst[p] = r.Apply64(dn)
		}
	}
	switch b.Plane.Type {
	case U8:
		for p, v := range b.Plane.U8()[lo : lo+n] {
			conv(p, float64(v))
		}
	case U16:
		for p, v := range b.Plane.U16()[lo : lo+n] {
			conv(p, float64(v))
		}
	case I16:
		for p, v := range b.Plane.I16()[lo : lo+n] {
			conv(p, float64(v))
		}
	case U32:
		for p, v := range b.Plane.U32()[lo : lo+n] {
			conv(p, float64(v))
		}
	case I32:
		for p, v := range b.Plane.I32()[lo : lo+n] {
			conv(p, float64(v))
		}
	case F32:
		for p, v := range b.Plane.F32()[lo : lo+n] {
			conv(p, float64(v))
		}
	default:
		for p := range dst {
			conv(p, b.Plane.At(lo+p))
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
	switch e.Kind {
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
