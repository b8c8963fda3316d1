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
