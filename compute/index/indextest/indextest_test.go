package indextest

import (
	"math"
	"math/rand/v2"
	"testing"

	"canopy/compute/index"
)

// TestRandomExprCoverage: the generator makes every kind of node, valid
// trees, within the depth.
func TestRandomExprCoverage(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	seen := map[index.Kind]int{}
	var depth func(e *index.Expr) int
	depth = func(e *index.Expr) int {
		seen[e.Kind]++
		d := 0
		for _, a := range e.Args {
			d = max(d, depth(a)+1)
		}
		return d
	}
	for i := 0; i < 2000; i++ {
		want := i % 6
		e := RandomExpr(rng, want)
		if err := e.Check(); err != nil {
			t.Fatal(err)
		}
		if d := depth(e); d > want {
			t.Fatalf("depth %d > %d: %s", d, want, e)
		}
	}
	for k := index.KindNum; k <= index.KindClamp; k++ {
		if seen[k] == 0 {
			t.Errorf("no %s node", k)
		}
	}
}

// TestRandomInputsCoverage: the inputs hold every special value.
func TestRandomInputsCoverage(t *testing.T) {
	planes := RandomInputs(rand.New(rand.NewPCG(2, 2)), 2000)
	var nan, pinf, ninf, pzero, nzero, tiny, huge, plain int
	for _, p := range planes {
		if len(p) != 2000 {
			t.Fatalf("plane of %d", len(p))
		}
		for _, v := range p {
			x := float64(v)
			switch a := math.Abs(x); {
			case math.IsNaN(x):
				nan++
			case math.IsInf(x, 1):
				pinf++
			case math.IsInf(x, -1):
				ninf++
			case x == 0 && math.Signbit(x):
				nzero++
			case x == 0:
				pzero++
			case a < 1e-6:
				tiny++
			case a > 1e6:
				huge++
			default:
				plain++
			}
		}
	}
	for name, n := range map[string]int{"NaN": nan, "+Inf": pinf, "-Inf": ninf, "+0": pzero, "-0": nzero, "tiny": tiny, "huge": huge} {
		if n == 0 {
			t.Errorf("no %s input", name)
		}
	}
	if plain < 15000 {
		t.Errorf("only %d ordinary inputs of 20000", plain)
	}
}

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
		v := Bound(e, pixel(c.in), IEEE32)
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
	if a, b := Bound(e, px, IEEE32), Bound(e, px, Arith{U: 0x1p-24, DivU: 0x1p-22, Tiny: 0x1p-126}); !(b.Tol > a.Tol) {
		t.Errorf("GPU arithmetic: tolerance %g, IEEE %g", b.Tol, a.Tol)
	}
}
