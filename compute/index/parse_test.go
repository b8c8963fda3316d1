package index_test

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"canopy/compute/index"
	"canopy/compute/index/indextest"
)

const roleList = "blue, green, red, rededge1, rededge2, rededge3, nir, nir2, swir1, swir2"

// TestParseErrors checks malformed formulas: each gives a *SyntaxError at
// the exact column with the exact message.
func TestParseErrors(t *testing.T) {
	cases := []struct {
		src string
		col int
		msg string
	}{
		{"", 1, "empty expression"},
		{"   ", 1, "empty expression"},
		{"nir - ", 5, `missing operand after "-"`},
		{"nir +", 5, `missing operand after "+"`},
		{"-", 1, `missing operand after "-"`},
		{"nir * (red", 7, `unclosed "("`},
		{"((nir)", 1, `unclosed "("`},
		{"(", 1, `unclosed "("`},
		{"min(nir, red", 4, `unclosed "("`},
		{"sqrt(", 5, `unclosed "("`},
		{"nir + red)", 10, `unexpected ")"`},
		{"(nir - red))", 12, `unexpected ")"`},
		{"nir + (red)) ", 12, `unexpected ")"`},
		{"()", 2, `unexpected ")"`},
		{"nir + )", 7, `unexpected ")"`},
		{"min(nir,)", 9, `unexpected ")"`},
		{"min(nir,", 8, `missing argument after ","`},
		{"min(,nir)", 5, `unexpected ","`},
		{"nir, red", 4, `unexpected ","`},
		{"(nir, red)", 5, `unexpected ","`},
		{"1..2", 1, `malformed number "1..2"`},
		{"nir * 1.2.3", 7, `malformed number "1.2.3"`},
		{"2e", 1, `malformed number "2e"`},
		{"2e+", 1, `malformed number "2e+"`},
		{"red + .", 7, `malformed number "."`},
		{"1e39", 1, `number "1e39" is too large for float32 (max 3.4e38)`},
		{"nir / 1e-50", 7, `number "1e-50" is too small for float32 (it would round to 0)`},
		{"nir red", 5, `missing operator before "red"`},
		{"2 3", 3, `missing operator before "3"`},
		{"2nir", 2, `missing operator before "nir"`},
		{"2 (nir)", 3, `missing operator before "("`},
		{"(nir red)", 6, `missing operator before "red"`},
		{"min(nir red)", 9, `missing operator before "red"`},
		{"*nir", 1, `missing operand before "*"`},
		{"nir * / red", 7, `missing operand before "/"`},
		{"nir + * red", 7, `missing operand before "*"`},
		{"+nir", 1, `missing operand before "+"`},
		{"nri + red", 1, `unknown role "nri": did you mean "nir"? (roles: ` + roleList + `)`},
		{"(nir - red) / (nir + rde)", 22, `unknown role "rde": did you mean "red"? (roles: ` + roleList + `)`},
		{"B8 - B4", 1, `unknown role "B8" (roles: ` + roleList + `)`},
		{"ndvi * 2", 1, `"ndvi" is an index, not a band role (roles: ` + roleList + `)`},
		{"foo(nir)", 1, `unknown function "foo" (functions: abs, sqrt, min, max, clamp)`},
		{"nir + pow(red, 2)", 7, `unknown function "pow" (functions: abs, sqrt, min, max, clamp)`},
		{"sqrt nir", 1, `sqrt is a function: write sqrt(x)`},
		{"1 + min", 5, `min is a function: write min(a, b)`},
		{"nir(red)", 1, `"nir" is a band role, not a function`},
		{"red + nir (2)", 7, `"nir" is a band role, not a function`},
		{"min(nir)", 1, `min takes 2 arguments, got 1`},
		{"2 + min(nir)", 5, `min takes 2 arguments, got 1`},
		{"max(1, 2, 3)", 1, `max takes 2 arguments, got 3`},
		{"abs(nir, red)", 1, `abs takes 1 argument, got 2`},
		{"sqrt()", 1, `sqrt takes 1 argument, got 0`},
		{"clamp(nir, 0)", 1, `clamp takes 3 arguments, got 2`},
		{"abs(clamp(nir))", 5, `clamp takes 3 arguments, got 1`},
		{"nir ^ 2", 5, `"^" is not supported: there is no power operator (write x * x)`},
		{"nir ** 2", 5, `"**" is not supported: there is no power operator (write x * x)`},
		{"nir % 2", 5, `unexpected character "%"`},
		{"nir − red", 5, `unexpected character "−" (a typographic minus: type "-")`},
		{"2 × nir", 3, `unexpected character "×" (type "*" to multiply)`},
		{"nir ÷ 2", 5, `unexpected character "÷" (type "/" to divide)`},
		{"nïr", 1, `unknown role "nïr": did you mean "nir"? (roles: ` + roleList + `)`},
		{"nir @ red", 5, `unexpected character "@"`},
		{"a−b", 1, `unknown role "a" (roles: ` + roleList + `)`},
		{"nir = red", 5, `unexpected character "="`},
		{strings.Repeat("(", 300) + "nir" + strings.Repeat(")", 300), 257, `expression nested too deeply (more than 256 levels)`},
		{strings.Repeat("-", 300) + "nir", 257, `expression nested too deeply (more than 256 levels)`},
	}
	if len(cases) < 40 {
		t.Fatalf("only %d cases", len(cases))
	}
	for _, c := range cases {
		e, err := index.Parse(c.src)
		if err == nil {
			t.Errorf("Parse(%q) = %v, want an error", c.src, e)
			continue
		}
		var se *index.SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("Parse(%q): error %T %v, want *SyntaxError", c.src, err, err)
			continue
		}
		if se.Col != c.col || se.Msg != c.msg {
			t.Errorf("Parse(%q):\n got column %d: %s\nwant column %d: %s", c.src, se.Col, se.Msg, c.col, c.msg)
		}
		if want := "column " + itoa(c.col) + ": " + c.msg; err.Error() != want {
			t.Errorf("Parse(%q).Error() = %q, want %q", c.src, err.Error(), want)
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("Parse(%q): message is more than one line", c.src)
		}
	}
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// tree builders for expected trees.
func num(v float64) *index.Expr { return &index.Expr{Kind: index.KindNum, Value: v} }
func role(name string) *index.Expr {
	i := index.RoleIndex(name)
	if i < 0 {
		panic(name)
	}
	return &index.Expr{Kind: index.KindRole, Role: i}
}
func op(k index.Kind, args ...*index.Expr) *index.Expr { return &index.Expr{Kind: k, Args: args} }

// TestPrecedence checks the shapes of trees: precedence, left
// associativity, unary minus binding tighter than * and /.
func TestPrecedence(t *testing.T) {
	a, b, c := role("nir"), role("red"), role("blue")
	cases := []struct {
		src   string
		want  *index.Expr
		canon string
	}{
		{"nir-red-blue", op(index.KindSub, op(index.KindSub, a, b), c), "nir - red - blue"},
		{"nir-(red-blue)", op(index.KindSub, a, op(index.KindSub, b, c)), "nir - (red - blue)"},
		{"nir/red/blue", op(index.KindDiv, op(index.KindDiv, a, b), c), "nir / red / blue"},
		{"nir/(red/blue)", op(index.KindDiv, a, op(index.KindDiv, b, c)), "nir / (red / blue)"},
		{"nir+red*blue", op(index.KindAdd, a, op(index.KindMul, b, c)), "nir + red * blue"},
		{"(nir+red)*blue", op(index.KindMul, op(index.KindAdd, a, b), c), "(nir + red) * blue"},
		{"nir*red+blue", op(index.KindAdd, op(index.KindMul, a, b), c), "nir * red + blue"},
		{"nir+(red+blue)", op(index.KindAdd, a, op(index.KindAdd, b, c)), "nir + (red + blue)"},
		{"-nir*red", op(index.KindMul, op(index.KindNeg, a), b), "-nir * red"},
		{"-(nir*red)", op(index.KindNeg, op(index.KindMul, a, b)), "-(nir * red)"},
		{"--nir", op(index.KindNeg, op(index.KindNeg, a)), "--nir"},
		{"nir - -red", op(index.KindSub, a, op(index.KindNeg, b)), "nir - -red"},
		{"nir*-red", op(index.KindMul, a, op(index.KindNeg, b)), "nir * -red"},
		{"-nir-red", op(index.KindSub, op(index.KindNeg, a), b), "-nir - red"},
		{"-(nir-red)", op(index.KindNeg, op(index.KindSub, a, b)), "-(nir - red)"},
		{"((nir))", a, "nir"},
		{"NIR + Red", op(index.KindAdd, a, b), "nir + red"},
		{"MIN(nir , red)", op(index.KindMin, a, b), "min(nir, red)"},
		{"clamp(nir-red,0,1)", op(index.KindClamp, op(index.KindSub, a, b), num(0), num(1)), "clamp(nir - red, 0, 1)"},
		{"2.5e-1*.5 + 5.", op(index.KindAdd, op(index.KindMul, num(0.25), num(0.5)), num(5)), "0.25 * 0.5 + 5"},
		{"1E3", num(1000), "1000"},
		{"\tnir\n+ red ", op(index.KindAdd, a, b), "nir + red"},
	}
	for _, c := range cases {
		e, err := index.Parse(c.src)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.src, err)
			continue
		}
		if !e.Equal(c.want) {
			t.Errorf("Parse(%q) = %v, want %v", c.src, e, c.want)
		}
		if got := e.String(); got != c.canon {
			t.Errorf("Parse(%q).String() = %q, want %q", c.src, got, c.canon)
		}
	}
}

// TestColumns checks the columns recorded in the tree.
func TestColumns(t *testing.T) {
	e := index.MustParse("(nir - red) / min(nir, 2)")
	if e.Col != 13 || e.Args[0].Col != 6 || e.Args[0].Args[1].Col != 8 || e.Args[1].Col != 15 || e.Args[1].Args[1].Col != 24 {
		t.Errorf("columns: / %d, - %d, red %d, min %d, 2 %d", e.Col, e.Args[0].Col, e.Args[0].Args[1].Col, e.Args[1].Col, e.Args[1].Args[1].Col)
	}
}

// TestRoundTrip is the property Parse(e.String()) == e on random trees.
func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 5000; i++ {
		e := indextest.RandomExpr(rng, 1+i%6)
		if err := e.Check(); err != nil {
			t.Fatalf("RandomExpr gave an invalid tree: %v", err)
		}
		s := e.String()
		back, err := index.Parse(s)
		if err != nil {
			t.Fatalf("Parse(%q): %v", s, err)
		}
		if !back.Equal(e) {
			t.Fatalf("Parse(%q) = %q, a different tree", s, back.String())
		}
		if back.String() != s {
			t.Fatalf("String is not canonical: %q then %q", s, back.String())
		}
	}
}

func TestRoles(t *testing.T) {
	e := index.MustParse("swir2 + nir * blue - nir / max(red, blue)")
	got := strings.Join(e.Roles(), ",")
	if got != "blue,red,nir,swir2" {
		t.Errorf("Roles = %s, want blue,red,nir,swir2", got)
	}
	if n := len(index.MustParse("2 * 3").Roles()); n != 0 {
		t.Errorf("a constant uses %d roles", n)
	}
	for i, r := range index.Roles {
		if index.RoleIndex(r) != i || index.RoleIndex(strings.ToUpper(r)) != i {
			t.Errorf("RoleIndex(%q) != %d", r, i)
		}
	}
	if index.RoleIndex("nir3") != -1 || index.RoleIndex("") != -1 {
		t.Error("RoleIndex accepts a non-role")
	}
}

func TestCheck(t *testing.T) {
	bad := []*index.Expr{
		nil,
		{Kind: index.KindAdd, Args: []*index.Expr{num(1)}},
		{Kind: index.KindRole, Role: index.NumRoles},
		{Kind: index.KindNum, Value: 1e300},
		op(index.KindNeg, &index.Expr{Kind: 200}),
		op(index.KindSqrt, num(2), num(3)),
	}
	for _, e := range bad {
		if err := e.Check(); err == nil {
			t.Errorf("Check(%v) passed", e)
		}
	}
	if err := index.MustParse("clamp(abs(-nir), 0, sqrt(red))").Check(); err != nil {
		t.Error(err)
	}
}
