package index

import (
	"strings"
	"testing"
)

// FuzzParse: any text as a formula: Parse returns an expression or a
// one-line error naming a column, never panics; what parses prints back
// to a formula that parses to the same expression, evaluates, and
// compiles.
func FuzzParse(f *testing.F) {
	for _, c := range Catalogue() {
		f.Add(c.Formula)
	}
	for _, s := range []string{"(nir - red) / (nir + red)", "clamp(nir, 0, 1)", "-(-(-red))", "max(1e308 * 1e308, nir)", strings.Repeat("(", 10000) + "red" + strings.Repeat(")", 10000), "sqrt(", "nir ** 2", "red/0", "\x00", "ÿ"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		e, err := Parse(src)
		if err != nil {
			if e != nil {
				t.Fatal("an error with an expression")
			}
			if m := err.Error(); strings.ContainsAny(m, "\r\n") {
				t.Fatalf("the error is not one line: %.300q", m)
			}
			return
		}
		again, err := Parse(e.String())
		if err != nil || !again.Equal(e) {
			t.Fatalf("%q prints as %q, which parses to %v (%v)", src, e.String(), again, err)
		}
		var v [NumRoles]float64
		for i := range v {
			v[i] = 0.1 * float64(i+1)
		}
		e.Eval64(&v)
		if _, err := Compile([]*Expr{e}); err != nil && strings.ContainsAny(err.Error(), "\r\n") {
			t.Fatalf("the compile error is not one line: %.300q", err)
		}
	})
}
