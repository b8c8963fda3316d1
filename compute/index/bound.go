package index

import "math"

// Arith describes a float32 arithmetic for Bound: how far each operation's
// result may be from the exact result of its (float32) operands.
type Arith struct {
	// U bounds the relative error of + - and *: 2^-24 for IEEE round to
	// nearest.
	U float64
	// DivU bounds the relative error of / and sqrt: 2^-24 when correctly
	// rounded; larger for a GPU whose division or square root is not
	// (CUDA's div.full.f32 is within 2 ulp: 2^-22).
	DivU float64
	// Tiny bounds the absolute error near zero: 2^-150 with IEEE gradual
	// underflow, 2^-126 where subnormal results are flushed to zero.
	Tiny float64
}

// IEEE32 is correctly rounded float32 with subnormals: Go, and C compiled
// without fast-math and with -ffp-contract=off.
var IEEE32 = Arith{U: 0x1p-24, DivU: 0x1p-24, Tiny: 0x1p-150}

// Verdict is what a float32 evaluation of a formula may give on one pixel.
type Verdict struct {
	// Want is the float64 truth, Expr.Eval64.
	Want float64
	// Tol bounds |float32 result - Want| when Want is finite.
	Tol float64
	// Determinate is false where float32 may legitimately give another
	// kind of result than float64: a denominator or a square root's operand
	// whose sign or zeroness float32 rounding can change, an overflow of
	// the float32 range, or 0 * Inf with an inexact zero. Anything agrees
	// there.
	Determinate bool
}

// Agrees reports whether a float32 result is right: NaN exactly where Want
// is NaN, and within Tol of Want elsewhere (or the pixel is boundIndeterminate).
func (v Verdict) Agrees(got float64) bool {
	if !v.Determinate {
		return true
	}
	if math.IsNaN(v.Want) || math.IsNaN(got) {
		return math.IsNaN(v.Want) && math.IsNaN(got)
	}
	return math.Abs(got-v.Want) <= v.Tol
}

// Bound evaluates e on one pixel in float64 and bounds how far a float32
// evaluation, op by op with arithmetic a, may be from it: a running error
// analysis (Higham, "Accuracy and Stability of Numerical Algorithms", ch.
// 3). Each node carries its float64 value v and a bound err on |v32 - v|;
// inputs are exact (they are float32 values); a literal carries its float32
// rounding; an operation adds the propagated operand errors and its own
// rounding, a.U·|result| + a.Tiny, plus float64's own rounding (2^-53);
// an operation of exact operands in IEEE arithmetic is computed in float32
// and its error is known (so 0.375 - 0.375 is exactly 0 in both). The
// bound holds for any float32 evaluation that rounds each operation once,
// in the tree's order or any order that computes the same operations
// (common subexpressions, commuted operands, constant subtrees folded
// once): Program.Eval32 and the backends. Verification uses it to tell
// an ill-conditioned pixel from a wrong one.
func Bound(e *Expr, px *[NumRoles]float64, a Arith) Verdict {
	b := bounder{px: px, u: a.U + 0x1p-52, divu: a.DivU + 0x1p-52, tiny: a.Tiny,
		ieee: a.U == IEEE32.U && a.Tiny == IEEE32.Tiny, ieeeDiv: a.DivU == IEEE32.DivU && a.Tiny == IEEE32.Tiny}
	r := b.eval(e)
	if !r.det {
		return Verdict{Want: e.Eval64(px), Determinate: false}
	}
	if math.IsInf(r.v, 0) || math.IsNaN(r.v) {
		return Verdict{Want: math.NaN(), Determinate: true}
	}
	// The bound's own float64 arithmetic rounds too: a little slack.
	return Verdict{Want: r.v, Tol: r.err*(1+1e-9) + a.Tiny, Determinate: true}
}

// boundFitLimit is the magnitude beyond which a float32 result may overflow.
const boundFitLimit = 1e38

type bounder struct {
	px            *[NumRoles]float64
	u, divu, tiny float64
	ieee, ieeeDiv bool // + - * (/ and sqrt) are IEEE float32: Go's
}

// bv is a bounded value: float64 value v, |v32 - v| <= err. When v is not
// finite and det, v32 is exactly the same NaN-ness or infinity, err is 0.
type bv struct {
	v, err float64
	det    bool
}

var boundIndeterminate = bv{v: math.NaN()}

func boundFinite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// rounded adds an operation's rounding (relative u) to a propagated error
// and checks that the float32 result stays in range.
func (b *bounder) rounded(v, prop, u float64) bv {
	err := prop + u*(math.Abs(v)+prop) + b.tiny
	if math.Abs(v)+err > boundFitLimit {
		return boundIndeterminate
	}
	return bv{v: v, err: err, det: true}
}

// exact is the result of an IEEE float32 operation on exact operands: r32
// is what float32 computes, so the error is known.
func boundExact(v float64, r32 float32) bv {
	r := float64(r32)
	if math.IsInf(r, 0) || math.Abs(v) > boundFitLimit {
		return boundIndeterminate
	}
	return bv{v: v, err: math.Abs(r-v) * (1 + 0x1p-52), det: true}
}

func (b *bounder) eval(e *Expr) bv {
	switch e.Kind {
	case KindNum:
		k := float64(float32(e.Value))
		if math.IsInf(k, 0) {
			return boundIndeterminate
		}
		return bv{v: e.Value, err: math.Abs(k - e.Value), det: true}
	case KindRole:
		return bv{v: b.px[e.Role], det: true}
	case KindNeg:
		x := b.eval(e.Args[0])
		x.v = -x.v
		return x
	case KindAbs:
		x := b.eval(e.Args[0])
		x.v = math.Abs(x.v)
		return x
	case KindSqrt:
		return b.sqrt(b.eval(e.Args[0]))
	case KindClamp:
		x, lo, hi := b.eval(e.Args[0]), b.eval(e.Args[1]), b.eval(e.Args[2])
		return b.minmax(KindMin, b.minmax(KindMax, x, lo), hi)
	case KindMin, KindMax:
		return b.minmax(e.Kind, b.eval(e.Args[0]), b.eval(e.Args[1]))
	}
	x, y := b.eval(e.Args[0]), b.eval(e.Args[1])
	if !x.det || !y.det {
		return boundIndeterminate
	}
	var v float64
	switch e.Kind {
	case KindAdd:
		v = x.v + y.v
	case KindSub:
		v = x.v - y.v
	case KindMul:
		v = x.v * y.v
	default:
		v = Div64(x.v, y.v)
	}
	if math.IsNaN(x.v) || math.IsNaN(y.v) {
		return bv{v: math.NaN(), det: true}
	}
	if math.IsNaN(v) {
		// Made here: x / 0, Inf - Inf, 0 * Inf, Inf / Inf. Float32 makes
		// the same NaN when the operands that matter are exact (the
		// infinite ones always are).
		if e.Kind == KindDiv && y.v == 0 || x.err == 0 && y.err == 0 {
			return bv{v: v, det: y.err == 0}
		}
		return boundIndeterminate
	}
	if !boundFinite(x.v) || !boundFinite(y.v) {
		switch {
		case e.Kind == KindAdd || e.Kind == KindSub: // Inf ± finite
			return bv{v: v, det: true}
		case e.Kind == KindDiv && boundFinite(x.v): // finite / Inf = ±0
			return bv{v: v, det: true}
		}
		// Inf * y, x * Inf, Inf / y: the finite operand's float32 sign and
		// zeroness must be those of its float64 value.
		other := y
		if !boundFinite(y.v) {
			other = x
		}
		if boundFinite(other.v) && math.Abs(other.v) <= other.err {
			return boundIndeterminate
		}
		return bv{v: v, det: true}
	}
	if x.err == 0 && y.err == 0 && (b.ieee && e.Kind != KindDiv || b.ieeeDiv && e.Kind == KindDiv) {
		x32, y32 := float32(x.v), float32(y.v)
		switch e.Kind {
		case KindAdd:
			return boundExact(v, x32+y32)
		case KindSub:
			return boundExact(v, x32-y32)
		case KindMul:
			return boundExact(v, x32*y32)
		}
		return boundExact(v, Div32(x32, y32))
	}
	switch e.Kind {
	case KindAdd, KindSub:
		return b.rounded(v, x.err+y.err, b.u)
	case KindMul:
		return b.rounded(v, math.Abs(x.v)*y.err+math.Abs(y.v)*x.err+x.err*y.err, b.u)
	}
	// Division: the float32 denominator must keep its sign and not be 0.
	ay := math.Abs(y.v)
	if ay <= y.err {
		return boundIndeterminate
	}
	prop := (math.Abs(x.v)*y.err + ay*x.err) / (ay * (ay - y.err))
	return b.rounded(v, prop, b.divu)
}

func (b *bounder) sqrt(x bv) bv {
	if !x.det {
		return boundIndeterminate
	}
	switch {
	case math.IsNaN(x.v) || math.IsInf(x.v, -1):
		return bv{v: math.NaN(), det: true}
	case math.IsInf(x.v, 1):
		return bv{v: x.v, det: true}
	case x.v < 0:
		if x.v+x.err < 0 {
			return bv{v: math.NaN(), det: true}
		}
		return boundIndeterminate
	case x.err == 0 && b.ieeeDiv:
		return boundExact(math.Sqrt(x.v), Sqrt32(float32(x.v)))
	case x.err == 0:
		return b.rounded(math.Sqrt(x.v), 0, b.divu)
	case x.v-x.err < 0:
		return boundIndeterminate // float32 may be below zero
	}
	r := math.Sqrt(x.v)
	prop := math.Min(math.Sqrt(x.err), x.err/(math.Sqrt(x.v-x.err)+r))
	return b.rounded(r, prop, b.divu)
}

// minmax: min and max select an operand, so they add no rounding, and
// |min(x', y') - min(x, y)| <= max(|x' - x|, |y' - y|).
func (b *bounder) minmax(k Kind, x, y bv) bv {
	if !x.det || !y.det {
		return boundIndeterminate
	}
	if math.IsNaN(x.v) || math.IsNaN(y.v) {
		return bv{v: math.NaN(), det: true}
	}
	var v float64
	if k == KindMin {
		v = Min64(x.v, y.v)
	} else {
		v = Max64(x.v, y.v)
	}
	if !boundFinite(v) {
		return bv{v: v, det: true} // an exact infinite operand
	}
	// Operands that are infinite carry no error; the finite ones do.
	err := 0.0
	if boundFinite(x.v) {
		err = x.err
	}
	if boundFinite(y.v) {
		err = math.Max(err, y.err)
	}
	return bv{v: v, err: err, det: true}
}
