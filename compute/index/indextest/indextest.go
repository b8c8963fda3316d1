// Package indextest holds test helpers for the index engine, shared by the
// tests of every backend: a random formula generator and random inputs
// with the values that break kernels (NaN, ±Inf, ±0, tiny, huge). The
// bound on how far a float32 evaluation may be from the float64 truth,
// which verification uses too, is index.Bound.
package indextest

import (
	"math"
	"math/rand/v2"

	"canopy/compute/index"
)

// numbers are the literals RandomExpr uses: small integers and dyadic
// fractions (exact in float32), zero (for x/0 and 0/0), and the decimal
// constants of the catalogue, which float32 rounds.
var numbers = []float64{0, 1, 2, 3, 0.5, 0.25, 1.5, 10, 100, 0.1, 0.16, 2.4, 6, 7.5, 0.001}

// RandomExpr is a random formula of depth at most depth (0: a single role
// or number), using every kind of node: numbers, roles, unary minus, the
// four operators and the five functions. Numbers are non-negative, as Parse
// makes them, so Parse(e.String()) gives an equal tree.
func RandomExpr(rng *rand.Rand, depth int) *index.Expr {
	if depth <= 0 || rng.IntN(5) == 0 {
		if rng.IntN(4) == 0 {
			return &index.Expr{Kind: index.KindNum, Value: numbers[rng.IntN(len(numbers))]}
		}
		return &index.Expr{Kind: index.KindRole, Role: rng.IntN(index.NumRoles)}
	}
	kinds := []index.Kind{
		index.KindAdd, index.KindAdd, index.KindSub, index.KindSub, index.KindMul, index.KindMul,
		index.KindDiv, index.KindDiv, index.KindNeg, index.KindAbs, index.KindSqrt,
		index.KindMin, index.KindMax, index.KindClamp,
	}
	k := kinds[rng.IntN(len(kinds))]
	e := &index.Expr{Kind: k, Args: make([]*index.Expr, k.Arity())}
	for i := range e.Args {
		e.Args[i] = RandomExpr(rng, depth-1)
	}
	return e
}

// RandomInputs is n pixels of every role (planes[role][pixel]), float32
// physical values. Most are dyadic rationals with few significant bits
// (k/4 for |k| <= 8, or k/64 for |k| <= 64, so that sums, differences and
// products of a few of them are exact in float32, and a denominator that is
// zero in float64 is zero in float32 too); about one in ten is special:
// NaN (nodata), +Inf, -Inf, 0, -0, tiny (±k·2^-30) or huge (±k·2^30).
func RandomInputs(rng *rand.Rand, n int) [index.NumRoles][]float32 {
	var planes [index.NumRoles][]float32
	for r := range planes {
		p := make([]float32, n)
		for i := range p {
			p[i] = randomValue(rng)
		}
		planes[r] = p
	}
	return planes
}

func randomValue(rng *rand.Rand) float32 {
	if rng.IntN(10) == 0 {
		k := float32(rng.IntN(16) + 1)
		if rng.IntN(2) == 0 {
			k = -k
		}
		switch rng.IntN(7) {
		case 0:
			return float32(math.NaN())
		case 1:
			return float32(math.Inf(1))
		case 2:
			return float32(math.Inf(-1))
		case 3:
			return 0
		case 4:
			return float32(math.Copysign(0, -1))
		case 5:
			return k * 0x1p-30
		default:
			return k * 0x1p30
		}
	}
	if rng.IntN(2) == 0 {
		return float32(rng.IntN(17)-8) / 4
	}
	return float32(rng.IntN(129)-64) / 64
}

// Pixel gathers pixel i of planes as Eval64 takes it.
func Pixel(planes *[index.NumRoles][]float32, i int) [index.NumRoles]float64 {
	var v [index.NumRoles]float64
	for r := range v {
		v[r] = float64(planes[r][i])
	}
	return v
}

// Inputs32 gathers pixel i of planes as Program.Eval32 takes it (input k
// is role p.Inputs[k]) into dst, which it returns (grown if short).
func Inputs32(p *index.Program, planes *[index.NumRoles][]float32, i int, dst []float32) []float32 {
	dst = dst[:0]
	for _, role := range p.Inputs {
		dst = append(dst, planes[index.RoleIndex(role)][i])
	}
	return dst
}
