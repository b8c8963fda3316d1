package index_test

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"canopy/compute/index"
	"canopy/compute/index/indextest"
)

func plain(role string) string { return role }

func TestCExprText(t *testing.T) {
	cases := []struct {
		src, c, glsl string
	}{
		{"ndvi", "cn_finite(cn_div((nir - red), (nir + red)))", "cn_finite(cn_div((nir - red), (nir + red)))"},
		{"evi", "cn_finite(cn_div((2.5f * (nir - red)), (((nir + (6.0f * red)) - (7.5f * blue)) + 1.0f)))",
			"cn_finite(cn_div((2.5 * (nir - red)), (((nir + (6.0 * red)) - (7.5 * blue)) + 1.0)))"},
		{"savi", "cn_finite(cn_div((1.5f * (nir - red)), ((nir + red) + 0.5f)))", ""},
		{"-nir * 1e-5", "cn_finite(((-nir) * 1e-05f))", "cn_finite(((-nir) * 1e-05))"},
		{"nir - 0.1 * 9", "cn_finite((nir - 0.9f))", ""},
		{"nir * -(2 + 1)", "cn_finite((nir * (-3.0f)))", "cn_finite((nir * (-3.0)))"},
		{"nir / 0 + red", "cn_finite(cn_nan())", ""},
		{"nir + 1e38 * 10", "cn_finite((nir + cn_inf()))", ""},
		{"nir - -1e38 * 10", "cn_finite((nir - (-cn_inf())))", ""},
		{"1 / nir", "cn_finite(cn_div(1.0f, nir))", ""},
		{"clamp(abs(nir), 0, sqrt(red))", "cn_finite(cn_min(cn_max(cn_abs(nir), 0.0f), cn_sqrt(red)))", ""},
		{"min(nir, red) - max(2, swir1)", "cn_finite((cn_min(nir, red) - cn_max(2.0f, swir1)))", ""},
		{"2 * 3", "cn_finite(6.0f)", "cn_finite(6.0)"},
		{"1e30 * 100", "cn_finite(1e+32f)", ""},
		{"--nir", "cn_finite((-(-nir)))", ""},
	}
	for _, c := range cases {
		_, e, err := index.Resolve(c.src)
		if err != nil {
			t.Fatal(err)
		}
		if got := e.CExpr(index.DialectC, plain); got != c.c {
			t.Errorf("CExpr(%s) =\n %s\nwant\n %s", c.src, got, c.c)
		}
		if c.glsl != "" {
			if got := e.CExpr(index.DialectGLSL, plain); got != c.glsl {
				t.Errorf("GLSL CExpr(%s) =\n %s\nwant\n %s", c.src, got, c.glsl)
			}
		}
	}
	got := index.MustParse("nir2 + swir1").CExpr(index.DialectC, func(r string) string {
		return fmt.Sprintf("v[%d]", index.RoleIndex(r))
	})
	if got != "cn_finite((v[7] + v[8]))" {
		t.Errorf("input text: %s", got)
	}
}

// TestCExprRuns compiles CExpr's text of random formulas and the catalogue
// with the system C compiler and CHelpers, runs it on random inputs (NaN,
// ±Inf, ±0, tiny, huge) and checks it equals Program.Eval32 bit for bit
// (NaN for NaN; -0 and +0 are equal). Skipped without a C compiler.
func TestCExprRuns(t *testing.T) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler")
	}
	if testing.Short() {
		t.Skip("compiles C")
	}
	rng := rand.New(rand.NewPCG(5, 6))
	var exprs []*index.Expr
	for _, c := range index.Catalogue() {
		exprs = append(exprs, c.Expr)
	}
	for len(exprs) < 400 {
		exprs = append(exprs, indextest.RandomExpr(rng, 1+rng.IntN(5)))
	}
	const pixels = 48
	planes := indextest.RandomInputs(rng, pixels)

	var src bytes.Buffer
	src.WriteString("#include <stdio.h>\n#include <string.h>\n")
	src.WriteString(index.CHelpers)
	fmt.Fprintf(&src, "static const unsigned int in_bits[%d][%d] = {\n", pixels, index.NumRoles)
	for px := 0; px < pixels; px++ {
		src.WriteString("{")
		for r := 0; r < index.NumRoles; r++ {
			fmt.Fprintf(&src, "0x%08xu,", math.Float32bits(planes[r][px]))
		}
		src.WriteString("},\n")
	}
	src.WriteString("};\n")
	for i, e := range exprs {
		fmt.Fprintf(&src, "static float f%d(const float *v) { return %s; }\n", i, e.CExpr(index.DialectC, func(r string) string {
			return fmt.Sprintf("v[%d]", index.RoleIndex(r))
		}))
	}
	src.WriteString("typedef float (*fn)(const float *);\nstatic const fn fns[] = {")
	for i := range exprs {
		fmt.Fprintf(&src, "f%d,", i)
	}
	src.WriteString("};\n")
	fmt.Fprintf(&src, `int main(void) {
	for (int p = 0; p < %d; p++) {
		float v[%d];
		memcpy(v, in_bits[p], sizeof v);
		for (int i = 0; i < %d; i++) {
			float r = fns[i](v);
			unsigned int b;
			memcpy(&b, &r, sizeof b);
			printf("%%08x\n", b);
		}
	}
	return 0;
}
`, pixels, index.NumRoles, len(exprs))

	dir := t.TempDir()
	cfile, bin := filepath.Join(dir, "cexpr.c"), filepath.Join(dir, "cexpr")
	if err := os.WriteFile(cfile, src.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(cc, "-std=c99", "-O2", "-ffp-contract=off", "-o", bin, cfile, "-lm")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cc: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatalf("running the C program: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	progs := make([]*index.Program, len(exprs))
	for i, e := range exprs {
		if progs[i], err = index.Compile([]*index.Expr{e}); err != nil {
			t.Fatal(err)
		}
	}
	res := make([]float32, 1)
	var in []float32
	checked := 0
	for px := 0; px < pixels; px++ {
		for i, p := range progs {
			if !sc.Scan() {
				t.Fatalf("C output ends at pixel %d, expression %d", px, i)
			}
			bits, err := strconv.ParseUint(strings.TrimSpace(sc.Text()), 16, 32)
			if err != nil {
				t.Fatal(err)
			}
			got := math.Float32frombits(uint32(bits))
			in = indextest.Inputs32(p, &planes, px, in)
			p.Eval32(in, make([]float32, p.NumRegs), res)
			if got != res[0] && !(got != got && res[0] != res[0]) {
				t.Fatalf("%s on pixel %d: C %v, Eval32 %v\n%s", exprs[i].CExpr(index.DialectC, plain), px, got, res[0], p)
			}
			checked++
		}
	}
	t.Logf("%d results of C equal Eval32", checked)
}
