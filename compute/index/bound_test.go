package index_test

import (
	"math"
	"testing"

	"canopy/compute/index"
)

// TestBoundRules checks the bound's verdicts on the edge cases.
func TestBoundRules(t *testing.T) {
	pixel := func(kv map[string]float64) *[index.NumRoles]float64 {
		var v [index.NumRoles]float64
		for k, x := range kv {
			v[index.RoleIndex(k)] = x
		}
		return &v
	}
	inf := math.Inf(1)
	cases := []struct {
		src  string
		in   map[string]float64
		det  bool
		nan  bool
		tol0 bool // the float32 result is known exactly
	}{
		{"nir - red", map[string]float64{"nir": 0.375, "red": 0.125}, true, false, true},
		{"nir / (red - 0.375)", map[string]float64{"nir": 1, "red": 0.375}, true, true, false},
		{"nir / (red - 0.1)", map[string]float64{"nir": 1, "red": 0.1}, false, false, false},
		{"nir / (red * 0.1 - 0.1)", map[string]float64{"nir": 1, "red": 2}, true, false, false},
		{"sqrt(nir - 0.1)", map[string]float64{"nir": 0.1}, false, false, false},
		{"sqrt(nir - 0.5)", map[string]float64{"nir": 0.25}, true, true, false},
		{"sqrt(nir)", map[string]float64{"nir": 0.5}, true, false, false},
		{"(nir - 0.1 * 3) * red", map[string]float64{"nir": 0.3, "red": inf}, false, false, false},
		{"(nir - 0.5) * red", map[string]float64{"nir": 0.5, "red": inf}, true, true, false},
		{"nir * red", map[string]float64{"nir": 0x1p100, "red": 0x1p100}, false, false, false},
		{"1 / (nir * red)", map[string]float64{"nir": 0x1p-80, "red": 0x1p-80}, false, false, false},
		{"min(nir, red) + 0.1", map[string]float64{"nir": inf, "red": 2}, true, false, false},
		{"nir - red", map[string]float64{"nir": inf, "red": inf}, true, true, false},
		{"nir + 0.1", map[string]float64{"nir": inf}, true, true, false},
		{"0.1 / nir", map[string]float64{"nir": inf}, true, false, true},
	}
	for _, c := range cases {
		e := index.MustParse(c.src)
		v := index.Bound(e, pixel(c.in), index.IEEE32)
		if v.Determinate != c.det {
			t.Errorf("%s on %v: determinate %v, want %v", c.src, c.in, v.Determinate, c.det)
			continue
		}
		if !c.det {
			continue
		}
		if math.IsNaN(v.Want) != c.nan {
			t.Errorf("%s on %v: want %v", c.src, c.in, v.Want)
		}
		if c.tol0 && v.Tol > 0x1p-140 {
			t.Errorf("%s on %v: tolerance %g, want exact", c.src, c.in, v.Tol)
		}
		if !c.nan && !c.tol0 && (v.Tol <= 0 || v.Tol > 1e-6*math.Max(1, math.Abs(v.Want))) {
			t.Errorf("%s on %v: tolerance %g for %v", c.src, c.in, v.Tol, v.Want)
		}
	}
	// A looser arithmetic gives a looser bound.
	e := index.MustParse("nir / 3")
	px := pixel(map[string]float64{"nir": 1})
	if a, b := index.Bound(e, px, index.IEEE32), index.Bound(e, px, index.Arith{U: 0x1p-24, DivU: 0x1p-22, Tiny: 0x1p-126}); !(b.Tol > a.Tol) {
		t.Errorf("GPU arithmetic: tolerance %g, IEEE %g", b.Tol, a.Tol)
	}
}
