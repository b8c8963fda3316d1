package index_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"canopy/compute/index"
	"canopy/compute/index/indextest"
)

func compile(t *testing.T, srcs ...string) *index.Program {
	t.Helper()
	var es []*index.Expr
	for _, s := range srcs {
		if c, ok := index.Lookup(s); ok {
			es = append(es, c.Expr)
			continue
		}
		es = append(es, index.MustParse(s))
	}
	p, err := index.Compile(es)
	if err != nil {
		t.Fatal(err)
	}
	checkWellFormed(t, p, len(es))
	return p
}

// checkWellFormed checks a program's invariants: registers written before
// they are read and within NumRegs, each input loaded once, outputs written
// by an OpFinite and never overwritten.
func checkWellFormed(t *testing.T, p *index.Program, nexpr int) {
	t.Helper()
	written := make([]bool, p.NumRegs)
	loaded := make([]int, len(p.Inputs))
	finalWrite := map[int]int{} // register -> position of its last write
	for pos, in := range p.Code {
		regs := []uint16{in.A, in.B}[:in.Op.Regs()]
		for _, r := range regs {
			if int(r) >= p.NumRegs || !written[r] {
				t.Fatalf("instruction %d (%s) reads r%d before it is written\n%s", pos, in.String(p), r, p)
			}
		}
		if in.Op == index.OpLoad {
			loaded[in.A]++
		}
		if int(in.Dst) >= p.NumRegs {
			t.Fatalf("instruction %d writes r%d of %d", pos, in.Dst, p.NumRegs)
		}
		written[in.Dst] = true
		finalWrite[int(in.Dst)] = pos
	}
	for k, n := range loaded {
		if n != 1 {
			t.Errorf("input %s loaded %d times\n%s", p.Inputs[k], n, p)
		}
	}
	if len(p.Outputs) != nexpr {
		t.Fatalf("%d outputs for %d expressions", len(p.Outputs), nexpr)
	}
	for i, r := range p.Outputs {
		pos, ok := finalWrite[r]
		if !ok || p.Code[pos].Op != index.OpFinite {
			t.Errorf("output %d (r%d) is not last written by finite\n%s", i, r, p)
		}
	}
	for i := 1; i < len(p.Inputs); i++ {
		if index.RoleIndex(p.Inputs[i-1]) >= index.RoleIndex(p.Inputs[i]) {
			t.Errorf("inputs not in canonical order: %v", p.Inputs)
		}
	}
}

// TestProgramVsEval64 is the property test: random trees of depth up to 5,
// compiled alone and several to a program, evaluated with Eval32 on random
// inputs (NaN, ±Inf, ±0, tiny, huge among them) agree with the float64
// truth: NaN in the same pixels, and elsewhere within the rigorous float32
// rounding bound of indextest.Bound. Pixels where float32 may legitimately
// differ in kind (a denominator float32 can round to zero, an overflow)
// are counted and must stay rare.
func TestProgramVsEval64(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	const pixels = 64
	trees := 3000
	if testing.Short() {
		trees = 500
	}
	var total, indet, nanAgree, finiteAgree, inexact int
	var in []float32
	regs := make([]float32, 0)
	for i := 0; i < trees; {
		n := 1 + rng.IntN(4) // expressions per program
		es := make([]*index.Expr, n)
		for j := range es {
			es[j] = indextest.RandomExpr(rng, 1+rng.IntN(5))
		}
		i += n
		p, err := index.Compile(es)
		if err != nil {
			t.Fatalf("Compile(%v): %v", es, err)
		}
		checkWellFormed(t, p, n)
		if cap(regs) < p.NumRegs {
			regs = make([]float32, p.NumRegs)
		}
		out := make([]float32, n)
		planes := indextest.RandomInputs(rng, pixels)
		for px := 0; px < pixels; px++ {
			v := indextest.Pixel(&planes, px)
			in = indextest.Inputs32(p, &planes, px, in)
			p.Eval32(in, regs[:p.NumRegs], out)
			for j, e := range es {
				total++
				want := e.Eval64(&v)
				ver := index.Bound(e, &v, index.IEEE32)
				if math.IsNaN(ver.Want) != math.IsNaN(want) || !math.IsNaN(want) && ver.Want != want {
					t.Fatalf("Bound's value %v != Eval64 %v for %s", ver.Want, want, e)
				}
				got := float64(out[j])
				if !ver.Determinate {
					indet++
					continue
				}
				if !ver.Agrees(got) {
					t.Fatalf("%s\non %v\nEval32 = %v, Eval64 = %v (tolerance %g)\n%s", e, v, got, want, ver.Tol, p)
				}
				if math.IsNaN(want) {
					nanAgree++
				} else {
					finiteAgree++
					if got != want {
						inexact++
					}
				}
			}
		}
	}
	t.Logf("%d results: %d NaN in both, %d finite within the bound (%d not bit-equal to float64), %d indeterminate",
		total, nanAgree, finiteAgree, inexact, indet)
	if indet*10 > total {
		t.Errorf("%d of %d results indeterminate: the inputs do not test much", indet, total)
	}
	if nanAgree*10 < total || finiteAgree*4 < total || inexact*20 < total {
		t.Errorf("too few NaN (%d), finite (%d) or inexact (%d) results of %d: the test is weak", nanAgree, finiteAgree, inexact, total)
	}
}

// TestBoundCatches checks that the bound is not so loose that it accepts
// wrong results: a result off by a few float32 ulps of the result fails.
func TestBoundCatches(t *testing.T) {
	e := index.MustParse("(nir - red) / (nir + red)")
	var v [index.NumRoles]float64
	v[index.RoleIndex("nir")], v[index.RoleIndex("red")] = 0.375, 0.125
	ver := index.Bound(e, &v, index.IEEE32)
	if !ver.Determinate || ver.Want != 0.5 {
		t.Fatalf("verdict %+v", ver)
	}
	if !ver.Agrees(0.5) || ver.Agrees(float64(math.Nextafter32(0.5, 1))) || ver.Agrees(math.NaN()) {
		t.Errorf("bound %g accepts wrong results or rejects the right one", ver.Tol)
	}
	v[index.RoleIndex("red")] = -0.375
	if ver := index.Bound(e, &v, index.IEEE32); !ver.Determinate || !math.IsNaN(ver.Want) || ver.Agrees(0) {
		t.Errorf("x/0: verdict %+v", ver)
	}
}

// TestProgramRules: Eval32 follows the result rules, the same table as
// Eval64's.
func TestProgramRules(t *testing.T) {
	for _, c := range ruleCases {
		p := compile(t, c.src)
		in := make([]float32, len(p.Inputs))
		for k, r := range p.Inputs {
			x, ok := c.in[r]
			if !ok {
				x = math.NaN()
			}
			in[k] = float32(x)
		}
		out := make([]float32, 1)
		p.Eval32(in, make([]float32, p.NumRegs), out)
		got := float64(out[0])
		if math.IsNaN(c.want) != math.IsNaN(got) || !math.IsNaN(c.want) && got != c.want {
			t.Errorf("%s with %v: Eval32 = %v, want %v\n%s", c.src, c.in, got, c.want, p)
		}
	}
}

// TestProgramCatalogueExact: Eval32 of each catalogue index equals the
// formula written by hand in float32 Go, op by op, bit for bit.
func TestProgramCatalogueExact(t *testing.T) {
	sq := func(x float32) float32 { return float32(math.Sqrt(float64(x))) }
	hand := map[string]func(b, g, r, re1, re2, n, s1, s2 float32) float32{
		"ndvi": func(b, g, r, re1, re2, n, s1, s2 float32) float32 { return float32(n-r) / float32(n+r) },
		"evi": func(b, g, r, re1, re2, n, s1, s2 float32) float32 {
			return float32(2.5*float32(n-r)) / float32(float32(float32(n+float32(6*r))-float32(7.5*b))+1)
		},
		"evi2": func(b, g, r, re1, re2, n, s1, s2 float32) float32 {
			return float32(2.5*float32(n-r)) / float32(float32(n+float32(2.4*r))+1)
		},
		"savi": func(b, g, r, re1, re2, n, s1, s2 float32) float32 {
			return float32(1.5*float32(n-r)) / float32(float32(n+r)+0.5)
		},
		"msavi2": func(b, g, r, re1, re2, n, s1, s2 float32) float32 {
			t := float32(float32(2*n) + 1)
			return float32(0.5 * float32(t-sq(float32(float32(t*t)-float32(8*float32(n-r))))))
		},
		"osavi":   func(b, g, r, re1, re2, n, s1, s2 float32) float32 { return float32(n-r) / float32(float32(n+r)+0.16) },
		"gndvi":   func(b, g, r, re1, re2, n, s1, s2 float32) float32 { return float32(n-g) / float32(n+g) },
		"ndre":    func(b, g, r, re1, re2, n, s1, s2 float32) float32 { return float32(n-re1) / float32(n+re1) },
		"ndvi705": func(b, g, r, re1, re2, n, s1, s2 float32) float32 { return float32(re2-re1) / float32(re2+re1) },
		"ndmi":    func(b, g, r, re1, re2, n, s1, s2 float32) float32 { return float32(n-s1) / float32(n+s1) },
		"nbr":     func(b, g, r, re1, re2, n, s1, s2 float32) float32 { return float32(n-s2) / float32(n+s2) },
		"nbr2":    func(b, g, r, re1, re2, n, s1, s2 float32) float32 { return float32(s1-s2) / float32(s1+s2) },
		"ndwi":    func(b, g, r, re1, re2, n, s1, s2 float32) float32 { return float32(g-n) / float32(g+n) },
		"mndwi":   func(b, g, r, re1, re2, n, s1, s2 float32) float32 { return float32(g-s1) / float32(g+s1) },
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, c := range index.Catalogue() {
		f, ok := hand[c.Name]
		if !ok {
			t.Errorf("%s: no hand-written float32 formula", c.Name)
			continue
		}
		p := compile(t, c.Name)
		out := make([]float32, 1)
		regs := make([]float32, p.NumRegs)
		for i := 0; i < 2000; i++ {
			var px [index.NumRoles]float32
			for r := range px {
				px[r] = rng.Float32() * 0.6
			}
			in := make([]float32, len(p.Inputs))
			for k, r := range p.Inputs {
				in[k] = px[index.RoleIndex(r)]
			}
			p.Eval32(in, regs, out)
			ri := index.RoleIndex
			want := f(px[ri("blue")], px[ri("green")], px[ri("red")], px[ri("rededge1")], px[ri("rededge2")], px[ri("nir")], px[ri("swir1")], px[ri("swir2")])
			if out[0] != want && !(want != want && out[0] != out[0]) {
				t.Fatalf("%s on %v: Eval32 = %v, by hand %v\n%s", c.Name, px, out[0], want, p)
			}
		}
	}
}

func count(p *index.Program, op index.Op) int {
	n := 0
	for _, in := range p.Code {
		if in.Op == op {
			n++
		}
	}
	return n
}

// TestCSE: ndvi, evi and savi together share nir - red, nir + red and the
// loads, so they take fewer instructions than compiled apart.
func TestCSE(t *testing.T) {
	together := compile(t, "ndvi", "evi", "savi")
	apart := 0
	for _, n := range []string{"ndvi", "evi", "savi"} {
		apart += len(compile(t, n).Code)
	}
	if len(together.Code) >= apart {
		t.Errorf("together %d instructions, apart %d\n%s", len(together.Code), apart, together)
	}
	if got := count(together, index.OpSub); got != 2 { // nir - red, and evi's ... - 7.5 * blue
		t.Errorf("%d subtractions, want 2\n%s", got, together)
	}
	if got := count(together, index.OpAdd); got != 2 { // nir + red, evi's nir + 6 * red
		t.Errorf("%d additions, want 2\n%s", got, together)
	}
	if got := count(together, index.OpLoad); got != 3 {
		t.Errorf("%d loads, want 3\n%s", got, together)
	}
	// Commuted operands are one value; the same index twice is one output.
	p := compile(t, "(nir + red) * (red + nir)", "ndvi", "ndvi")
	if got := count(p, index.OpAdd); got != 1 {
		t.Errorf("nir + red and red + nir: %d additions\n%s", got, p)
	}
	if p.Outputs[1] != p.Outputs[2] {
		t.Errorf("ndvi twice: outputs r%d and r%d", p.Outputs[1], p.Outputs[2])
	}
}

// TestRegisters: register reuse keeps NumRegs at the minimum for chains
// and balanced trees (Sethi-Ullman numbers).
func TestRegisters(t *testing.T) {
	cases := []struct {
		src  string
		regs int
	}{
		{"nir", 1},
		{"(nir * 2 + 1) / 3 - 4", 1},
		{"sqrt(abs(-nir)) * 0.5", 1},
		{"nir - red - blue - green - swir1 - swir2", 2},
		{"nir - (red - (blue - (green - (swir1 - swir2))))", 2},
		{"(nir - red) / (blue - green)", 3},
		{"((nir - red) / (blue - green)) * ((swir1 - swir2) + (rededge1 - rededge2))", 4},
		{"clamp(nir, 0, 1)", 1},
		{"nir * nir * nir", 2},
	}
	for _, c := range cases {
		p := compile(t, c.src)
		if p.NumRegs != c.regs {
			t.Errorf("%s: %d registers, want %d\n%s", c.src, p.NumRegs, c.regs, p)
		}
	}
	// A long chain (Horner's scheme) stays at 2 registers.
	src := "nir"
	for i := 0; i < 50; i++ {
		src = "(" + src + ") * red + " + itoa(i)
	}
	if p := compile(t, src); p.NumRegs != 2 {
		t.Errorf("50-step chain: %d registers", p.NumRegs)
	}
}

// TestFolding: constants are folded in float64 and rounded once; x/0 is
// NaN whatever x; clamp is max then min.
func TestFolding(t *testing.T) {
	p := compile(t, "(1 + 0.5) * nir")
	if len(p.Code) != 3 || p.Code[1].Op != index.OpMulK || p.Code[1].K != 1.5 {
		t.Errorf("(1 + 0.5) * nir:\n%s", p)
	}
	// 0.1 * 9 in float64 rounded once (0.9), not float32(0.1) * 9 in
	// float32 (0.90000004).
	p = compile(t, "nir - 0.1 * 9")
	if p.Code[1].Op != index.OpSubK || p.Code[1].K != float32(0.9) || float32(0.9) == float32(float32(0.1)*9) {
		t.Errorf("nir - 0.1 * 9: K = %v, want float32(0.9)\n%s", p.Code[1].K, p)
	}
	for _, src := range []string{"nir / 0", "nir / (1 - 1)", "red + sqrt(-1)", "min(nir, 0 / 0)"} {
		p := compile(t, src)
		if len(p.Inputs) != 0 || p.Code[0].Op != index.OpConst || !math.IsNaN(float64(p.Code[0].K)) {
			t.Errorf("%s is not folded to NaN:\n%s", src, p)
		}
	}
	p = compile(t, "2 - nir", "2 / nir", "nir / 4", "max(0.5, nir)", "clamp(nir, 0.25, 0.75)")
	dis := p.String()
	for _, want := range []string{"ksub", "kdiv", "divk", "maxk", "mink"} {
		if !strings.Contains(dis, "= "+want+" ") {
			t.Errorf("no %s in\n%s", want, dis)
		}
	}
	if count(p, index.OpMaxK) != 2 || count(p, index.OpMinK) != 1 || count(p, index.OpConst) != 0 {
		t.Errorf("constant operands:\n%s", dis)
	}
	if p := compile(t, "3"); p.NumRegs != 1 || len(p.Code) != 2 || p.Code[0].K != 3 {
		t.Errorf("constant program:\n%s", p)
	}
}

func TestCompileErrors(t *testing.T) {
	if _, err := index.Compile(nil); err == nil {
		t.Error("Compile(nil) passed")
	}
	bad := &index.Expr{Kind: index.KindAdd, Args: []*index.Expr{num(1)}}
	if _, err := index.Compile([]*index.Expr{index.MustParse("nir"), bad}); err == nil || !strings.Contains(err.Error(), "expression 2") {
		t.Errorf("Compile(bad): %v", err)
	}
}

func TestDisassembly(t *testing.T) {
	got := compile(t, "ndvi").String()
	want := `inputs: in0=red in1=nir
registers: 3
r0 = load in1 (nir)
r1 = load in0 (red)
r2 = sub r0 r1
r0 = add r0 r1
r0 = div r2 r0
r0 = finite r0
outputs: out0=r0
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
