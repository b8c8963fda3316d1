package index

import "math"

// Eval64 evaluates the formula in float64 on one pixel, v[i] being the
// physical value of role Roles[i] (NaN where nodata or masked; roles the
// formula does not use are ignored). It is the reference every backend is
// checked against and follows the result rules of the package doc.
func (e *Expr) Eval64(v *[NumRoles]float64) float64 {
	return Finite64(e.eval64(v))
}

func (e *Expr) eval64(v *[NumRoles]float64) float64 {
	switch e.Kind {
	case KindNum:
		return e.Value
	case KindRole:
		return v[e.Role]
	case KindNeg:
		return -e.Args[0].eval64(v)
	case KindAbs:
		return math.Abs(e.Args[0].eval64(v))
	case KindSqrt:
		return Sqrt64(e.Args[0].eval64(v))
	case KindClamp:
		x, lo, hi := e.Args[0].eval64(v), e.Args[1].eval64(v), e.Args[2].eval64(v)
		return Min64(Max64(x, lo), hi)
	}
	a, b := e.Args[0].eval64(v), e.Args[1].eval64(v)
	switch e.Kind {
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
	case KindMax:
		return Max64(a, b)
	}
	return math.NaN()
}

// Div64 is a / b under the result rules: NaN when b is zero.
func Div64(a, b float64) float64 {
	if b == 0 {
		return math.NaN()
	}
	return a / b
}

// Sqrt64 is the square root under the result rules: NaN below zero.
func Sqrt64(x float64) float64 {
	if x < 0 {
		return math.NaN()
	}
	return math.Sqrt(x)
}

// Min64 is min under the result rules: NaN if either is NaN, else a when
// a < b, else b.
func Min64(a, b float64) float64 {
	if a != a || b != b {
		return math.NaN()
	}
	if a < b {
		return a
	}
	return b
}

// Max64 is max under the result rules: NaN if either is NaN, else a when
// a > b, else b.
func Max64(a, b float64) float64 {
	if a != a || b != b {
		return math.NaN()
	}
	if a > b {
		return a
	}
	return b
}

// Finite64 is the final rule: x when finite, else NaN.
func Finite64(x float64) float64 {
	if math.IsInf(x, 0) {
		return math.NaN()
	}
	return x
}
