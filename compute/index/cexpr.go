package index

import (
	"math"
	"strconv"
	"strings"
)

// Dialect is how CExpr writes for a target language.
type Dialect struct {
	// FloatSuffix writes float literals as 2.5f (C, CUDA). Without it they
	// are written 2.5, which is a float in GLSL but a double in C.
	FloatSuffix bool
}

// The dialects of the backends.
var (
	DialectC    = Dialect{FloatSuffix: true}  // C99 and CUDA C
	DialectGLSL = Dialect{FloatSuffix: false} // GLSL (some versions forbid the f suffix)
)

// CExpr renders the formula as one float expression for C, CUDA or GLSL
// code generation. input gives the text of each role's float32 physical
// value (a variable, "v[6]", a texture read). The text computes exactly
// what Program.Eval32 computes (constant subexpressions folded the same
// way, in float64 and rounded once; the same operations otherwise, each
// parenthesised) when the helpers implement the result rules in float32:
//
//	cn_div(a, b)   a / b, NaN where b == 0
//	cn_sqrt(a)     sqrt(a), NaN where a < 0
//	cn_abs(a)      |a|
//	cn_min(a, b)   NaN if either is NaN, else a < b ? a : b
//	cn_max(a, b)   NaN if either is NaN, else a > b ? a : b
//	cn_finite(a)   a when finite, else NaN (wraps the whole expression)
//	cn_nan()       a NaN (a constant subexpression that folded to NaN)
//	cn_inf()       +Inf (one that folded beyond the float32 range)
//
// The backends supply these definitions (CHelpers is C's). Code must be
// compiled without fast-math and without contracting a * b + c into a
// fused multiply-add (-ffp-contract=off; PTX mul.rn/add.rn), or it is only
// within rounding of Eval32.
func (e *Expr) CExpr(d Dialect, input func(role string) string) string {
	r := cRenderer{d: d, input: input}
	return "cn_finite(" + r.text(r.render(e)) + ")"
}

// CHelpers defines CExpr's helpers in C99 (also valid CUDA C with
// __device__ added by the caller where needed).
const CHelpers = `#include <math.h>
static inline float cn_nan(void) { return NAN; }
static inline float cn_inf(void) { return INFINITY; }
static inline float cn_div(float a, float b) { return b == 0.0f ? NAN : a / b; }
static inline float cn_sqrt(float a) { return a < 0.0f ? NAN : sqrtf(a); }
static inline float cn_abs(float a) { return fabsf(a); }
static inline float cn_min(float a, float b) { return (a != a || b != b) ? NAN : (a < b ? a : b); }
static inline float cn_max(float a, float b) { return (a != a || b != b) ? NAN : (a > b ? a : b); }
static inline float cn_finite(float a) { return a - a == 0.0f ? a : NAN; }
`

type cRenderer struct {
	d     Dialect
	input func(string) string
}

// cval is a rendered subexpression: a float64 constant not yet rounded, or
// text.
type cval struct {
	isConst bool
	c       float64
	s       string
}

// text is the value as an operand: a constant is rounded to float32 here,
// once.
func (r cRenderer) text(v cval) string {
	if v.isConst {
		return r.literal(float32(v.c))
	}
	return v.s
}

// literal writes a float32 constant so that it parses back to the same
// float32.
func (r cRenderer) literal(k float32) string {
	switch {
	case k != k:
		return "cn_nan()"
	case math.IsInf(float64(k), 1):
		return "cn_inf()"
	case math.IsInf(float64(k), -1):
		return "(-cn_inf())"
	case math.Signbit(float64(k)):
		return "(-" + r.literal(-k) + ")"
	}
	s := strconv.FormatFloat(float64(k), 'g', -1, 32)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	if r.d.FloatSuffix {
		s += "f"
	}
	return s
}

func (r cRenderer) render(e *Expr) cval {
	switch e.Kind {
	case KindNum:
		return cval{isConst: true, c: e.Value}
	case KindRole:
		return cval{s: r.input(Roles[e.Role])}
	case KindNeg, KindAbs, KindSqrt:
		x := r.render(e.Args[0])
		if x.isConst {
			return cval{isConst: true, c: fold1(e.Kind, x.c)}
		}
		switch e.Kind {
		case KindNeg:
			return cval{s: "(-" + x.s + ")"}
		case KindAbs:
			return cval{s: "cn_abs(" + x.s + ")"}
		}
		return cval{s: "cn_sqrt(" + x.s + ")"}
	case KindClamp:
		x, lo, hi := r.render(e.Args[0]), r.render(e.Args[1]), r.render(e.Args[2])
		return r.combine(KindMin, r.combine(KindMax, x, lo), hi)
	}
	return r.combine(e.Kind, r.render(e.Args[0]), r.render(e.Args[1]))
}

// combine mirrors builder.combine: the same folding, so that the text and
// the Program compute the same thing.
func (r cRenderer) combine(k Kind, x, y cval) cval {
	if x.isConst && y.isConst {
		return cval{isConst: true, c: fold2(k, x.c, y.c)}
	}
	if x.isConst && math.IsNaN(x.c) || y.isConst && math.IsNaN(y.c) {
		return cval{isConst: true, c: math.NaN()}
	}
	if k == KindDiv && y.isConst && float32(y.c) == 0 {
		return cval{isConst: true, c: math.NaN()}
	}
	a, b := r.text(x), r.text(y)
	switch k {
	case KindAdd:
		return cval{s: "(" + a + " + " + b + ")"}
	case KindSub:
		return cval{s: "(" + a + " - " + b + ")"}
	case KindMul:
		return cval{s: "(" + a + " * " + b + ")"}
	case KindDiv:
		return cval{s: "cn_div(" + a + ", " + b + ")"}
	case KindMin:
		return cval{s: "cn_min(" + a + ", " + b + ")"}
	}
	return cval{s: "cn_max(" + a + ", " + b + ")"}
}

// fold1 folds a unary node of a constant by the rules of Eval64.
func fold1(k Kind, c float64) float64 {
	switch k {
	case KindNeg:
		return -c
	case KindAbs:
		return math.Abs(c)
	}
	return Sqrt64(c)
}

// fold2 folds a binary node of constants by the rules of Eval64.
func fold2(k Kind, a, b float64) float64 {
	switch k {
	case KindAdd:
		return a + b
	case KindSub:
		return a - b
	case KindMul:
		return a * b
	case KindDiv:
		return Div64(a, b)
	case KindMin:
		return Min64(a, b)
	}
	return Max64(a, b)
}
