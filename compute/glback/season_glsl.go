package glback

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"canopy/compute/season"
	"canopy/compute/season/normal"
)

// The per-pixel season shaders: one compute shader per plan, the same
// algorithm as the cuda backend's kernels (compute/cudaback/season_ptx.go).
// What depends only on the dates (the design matrix, the dates of each
// role, the sums the normal matrix is made of) is a table in a uniform
// buffer, the loops over the dates have constant bounds, and for up to
// seasonUnrollDates dates NVIDIA's compiler is asked to unroll them all,
// so that on a GPU the table's reads become constant-bank operands as the
// PTX's immediates are; llvmpipe keeps the loops. One invocation is one
// pixel of the block's part, reading its series down the date-major cube.

// seasonLocal is the season shaders' work-group size.
const seasonLocal = 256

// glslFloat is v as a GLSL float expression, exactly.
func glslFloat(v float32) string {
	if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
		return fmt.Sprintf("uintBitsToFloat(0x%08xu)", math.Float32bits(v))
	}
	return strconv.FormatFloat(float64(v), 'e', 8, 32)
}

// seasonTable is what a season shader reads that depends only on the
// dates: its arrays, one after the other, as float32 (indices too: they
// are exact), in a uniform buffer (binding 0) where they fit, else a
// storage buffer (binding 2).
type seasonTable struct {
	vals []float32
	decl strings.Builder
	// unroll asks NVIDIA's compiler to unroll every loop: for up to
	// seasonUnrollDates dates (beyond, its compile time grows past seconds).
	unroll bool
}

// seasonUnrollDates is the most dates whose loops are unrolled.
const seasonUnrollDates = 128

// array appends a named array and declares its accessor NAME(i).
func (tb *seasonTable) array(name string, vs []float32) {
	fmt.Fprintf(&tb.decl, "#define %s(i) TAB(%du + (i))\n", name, len(tb.vals))
	tb.vals = append(tb.vals, vs...)
}

func ints(vs []int) []float32 {
	r := make([]float32, len(vs))
	for i, v := range vs {
		r[i] = float32(v)
	}
	return r
}

// seasonUniformMax is the largest table kept in a uniform buffer (the
// least GL_MAX_UNIFORM_BLOCK_SIZE an OpenGL 4.3 driver allows is 16 KiB;
// NVIDIA's and llvmpipe's are 64 KiB).
const seasonUniformMax = 16 << 10

// genSeasonGLSL is the shader of plan p and its table (padded to whole
// vec4s).
func genSeasonGLSL(p *season.Plan) (string, []float32) {
	m := p.Model
	var s strings.Builder
	tb := &seasonTable{unroll: len(p.Dates) <= seasonUnrollDates}
	w := func(format string, a ...any) { fmt.Fprintf(&s, format+"\n", a...) }
	w("const float NAN = uintBitsToFloat(0x7fc00000u);")
	w("bool valid(float y) { return (floatBitsToUint(y) & 0x7fffffffu) <= 0x7f800000u; }")
	var fit, mon, both []int
	for t, r := range p.Role {
		switch r {
		case season.RoleFit:
			fit = append(fit, t)
			both = append(both, t)
		case season.RoleMonitor:
			mon = append(mon, t)
			both = append(both, t)
		}
	}
	w("const uint NF = %du;", len(fit))
	tb.array("FIT", ints(fit))
	monitoring := m.Kind == season.Mosum || m.Kind == season.Anomaly
	ne := max(1, len(both))
	if m.Kind == season.Composite {
		ne = max(1, len(fit))
	}
	w("float e[%d];", ne)
	w("void put(uint o, uint px, float v) { outs[o * P + px] = v; }")
	// quantile sorts e[from .. from+n) and returns its type-7 quantile q
	// (the median for q = 50, exactly as season's: (n−1)/2 and its half).
	w(`float quantile(uint from, uint n, float q, bool median) {
	if (n == 0u) return NAN;
	for (uint i = 1u; i < n; i++) {
		float v = e[from + i];
		uint j = i;
		while (j > 0u && e[from + j - 1u] > v) { e[from + j] = e[from + j - 1u]; j--; }
		e[from + j] = v;
	}
	float h; uint lo;
	if (median) { lo = (n - 1u) / 2u; h = float(lo) + (((n - 1u) & 1u) == 1u ? 0.5 : 0.0); }
	else {
		// (n-1)*q/100 correctly rounded, as season's float32: a
		// driver's float division may be 2 ulp off (NVIDIA's is), so
		// the quotient is taken in double and rounded once to float.
		precise float p = float(n - 1u) * q;
		h = float(double(p) / 100.0lf);
		lo = min(uint(h), n - 1u);
	}
	float r = e[from + lo];
	if (lo >= n - 1u) return r;
	return r + (h - float(lo)) * (e[from + lo + 1u] - r);
}`)
	w("void main() {")
	w("\tuint px = gl_GlobalInvocationID.x;")
	w("\tif (px >= P) return;")
	if m.Kind == season.Composite {
		genCompositeGLSL(&s, tb, p)
		w("}")
		return tb.finish(s.String())
	}
	k := p.Coefs
	// X rows of the fit dates, then of the fit and monitoring dates.
	rows := func(ts []int) []float32 {
		var r []float32
		for _, t := range ts {
			r = append(r, p.X32[t*k:(t+1)*k]...)
		}
		return r
	}
	terms, entry := normal.Sums(p)
	var tab []float32
	for _, t := range fit {
		for _, f := range terms[1:] {
			tab = append(tab, float32(f(t)))
		}
	}
	nt := len(terms) - 1
	tb.array("XF", rows(fit))
	tb.array("SF", tab)
	w("\tfloat s[%d]; for (uint i = 0u; i < %du; i++) s[i] = 0.0;", len(terms), len(terms))
	w("\tfloat b[%d]; for (uint i = 0u; i < %du; i++) b[i] = 0.0;", k, k)
	w("\tuint n = 0u;")
	w("\tfor (uint f = 0u; f < NF; f++) {")
	w("\t\tfloat y = cube[uint(FIT(f)) * P + px];")
	w("\t\tbool ok = valid(y);")
	w("\t\tfloat wt = ok ? 1.0 : 0.0; float yv = ok ? y : 0.0;")
	w("\t\tn += ok ? 1u : 0u; s[0] += wt;")
	if nt > 0 {
		w("\t\tfor (uint i = 0u; i < %du; i++) s[i + 1u] = fma(wt, SF(f * %du + i), s[i + 1u]);", nt, nt)
	}
	w("\t\tfor (uint q = 0u; q < %du; q++) b[q] = fma(yv, XF(f * %du + q), b[q]);", k, k)
	w("\t}")
	// XᵀX from the sums (lower triangle, row-major in L).
	w("\tfloat L[%d];", k*k)
	for i := range k {
		for j := 0; j <= i; j++ {
			var ex []string
			for _, e := range entry[i][j] {
				ex = append(ex, fmt.Sprintf("%s * s[%d]", glslFloat(e.Weight), e.Sum))
			}
			if len(ex) == 0 {
				ex = []string{"0.0"}
			}
			w("\tL[%d] = %s;", i*k+j, strings.Join(ex, " + "))
		}
	}
	w("\tbool good = n >= %du;", k)
	w("\tfloat inv[%d];", k)
	w(`	for (uint c = 0u; c < %[1]du; c++) {
		float d = L[c * %[1]du + c];
		for (uint q = 0u; q < c; q++) d = fma(L[c * %[1]du + q], -L[c * %[1]du + q], d);
		good = good && d > 0.0;
		d = sqrt(d);
		L[c * %[1]du + c] = d;
		inv[c] = 1.0 / d;
		for (uint r = c + 1u; r < %[1]du; r++) {
			float v = L[r * %[1]du + c];
			for (uint q = 0u; q < c; q++) v = fma(L[r * %[1]du + q], -L[c * %[1]du + q], v);
			L[r * %[1]du + c] = v * inv[c];
		}
	}
	for (uint r = 0u; r < %[1]du; r++) {
		float v = b[r];
		for (uint q = 0u; q < r; q++) v = fma(L[r * %[1]du + q], -b[q], v);
		b[r] = v * inv[r];
	}
	for (int r = %[2]d; r >= 0; r--) {
		float v = b[r];
		for (int q = r + 1; q < %[1]d; q++) v = fma(L[q * %[1]d + r], -b[q], v);
		b[r] = v * inv[r];
	}`, k, k-1)
	// Pass 2: the residuals of the fit dates (and the monitoring dates,
	// kept in e with the monitoring dates' dates in dl).
	pass := fit
	if monitoring {
		pass = both
	}
	roleFit := make([]int, len(pass))
	for i, t := range pass {
		if p.Role[t] == season.RoleFit {
			roleFit[i] = 1
		}
	}
	var dates []float32
	for _, t := range pass {
		dates = append(dates, p.Dates32[t])
	}
	w("\tconst uint NP = %du;", len(pass))
	tb.array("TP", ints(pass))
	tb.array("FP", ints(roleFit))
	tb.array("XP", rows(pass))
	tb.array("DP", dates)
	w("\tfloat dl[%d];", max(1, len(mon)))
	w("\tfloat rss = 0.0; uint ne = 0u, nm = 0u;")
	w("\tfor (uint i = 0u; i < NP; i++) {")
	w("\t\tfloat y = cube[uint(TP(i)) * P + px];")
	w("\t\tif (!valid(y)) continue;")
	w("\t\tfloat f = b[0] * XP(i * %du);", k)
	w("\t\tfor (uint q = 1u; q < %du; q++) f = fma(b[q], XP(i * %du + q), f);", k, k)
	w("\t\tfloat r = y - f;")
	w("\t\tif (FP(i) == 1.0) rss = fma(r, r, rss); else { dl[nm] = DP(i); nm++; }")
	if monitoring {
		w("\t\te[ne] = r; ne++;")
	}
	w("\t}")
	w("\tfloat nf = float(n);")
	switch m.Kind {
	case season.Harmonic:
		w("\tput(0u, px, good ? sqrt(rss / nf) : NAN);")
		w("\tput(1u, px, nf);")
		for q := range k {
			w("\tput(%du, px, good ? b[%d] : NAN);", 2+q, q)
		}
	case season.Mosum:
		w("\tput(3u, px, float(n + nm));")
		w("\tfloat brk = NAN, mag = NAN, conf = NAN;")
		w("\tuint K = uint(floor(%s * double(n)));", strconv.FormatFloat(m.H, 'e', 17, 64)+"lf")
		w("\tfloat sigma = sqrt(rss / float(n - %du));", k)
		w("\tif (good && n > %du && K > 1u && nm > 0u && sigma > 0.0) {", k)
		w("\t\tfloat norm = sigma * sqrt(nf);")
		w("\t\tfloat sum = 0.0;")
		w("\t\tfor (uint i = n - K; i < n; i++) sum += e[i];")
		w("\t\tconf = 0.0; int bi = -1;")
		w("\t\tfor (uint j = 0u; j < nm; j++) {")
		w("\t\t\tuint kk = n + j;")
		w("\t\t\tsum += e[kk] - e[kk - K];")
		w("\t\t\tfloat ms = abs(sum / norm);")
		w("\t\t\tfloat x = float(kk + 1u) / nf;")
		w("\t\t\tfloat bound = %s * sqrt(2.0 * (x <= %s ? 1.0 : log(x)));", glslFloat(float32(p.Critval)), glslFloat(float32(math.E)))
		w("\t\t\tconf = max(conf, ms / bound);")
		w("\t\t\tif (bi < 0 && ms > bound) bi = int(j);")
		w("\t\t}")
		w("\t\tif (bi >= 0) brk = dl[bi];")
		w("\t\tmag = quantile(n, nm, 50.0, true);")
		w("\t}")
		w("\tput(0u, px, brk); put(1u, px, mag); put(2u, px, conf);")
	case season.Anomaly:
		sig := map[season.Direction]string{season.Down: "-e[n + i]", season.Up: "e[n + i]", season.Both: "abs(e[n + i])"}[m.Direction]
		w("\tput(3u, px, float(n + nm));")
		w("\tfloat brk = NAN, mag = NAN, conf = NAN;")
		w("\tif (good) {")
		w("\t\tint start = -1; uint runA = 0u, runN = 0u, first = 0u;")
		w("\t\tfor (uint i = 0u; i < nm; i++) {")
		w("\t\t\tif (%s > %s) {", sig, glslFloat(float32(m.Threshold)))
		w("\t\t\t\tif (runA == 0u) first = i;")
		w("\t\t\t\trunA++; runN = 0u;")
		w("\t\t\t\tif (start < 0 && runA >= %du) start = int(first);", m.Run)
		w("\t\t\t} else {")
		w("\t\t\t\trunN++; runA = 0u;")
		w("\t\t\t\tif (start >= 0 && runN >= %du) start = -1;", m.Run)
		w("\t\t\t}")
		w("\t\t}")
		w("\t\tif (start >= 0) {")
		w("\t\t\tuint a = 0u;")
		w("\t\t\tfor (uint i = uint(start); i < nm; i++) if (%s > %s) a++;", sig, glslFloat(float32(m.Threshold)))
		w("\t\t\tconf = float(a) / float(nm - uint(start));")
		w("\t\t\tbrk = dl[start];")
		w("\t\t\tmag = quantile(n + uint(start), nm - uint(start), 50.0, true);")
		w("\t\t}")
		w("\t}")
		w("\tput(0u, px, brk); put(1u, px, mag); put(2u, px, conf);")
	}
	w("}")
	return tb.finish(s.String())
}

// finish puts the header and the table's declarations before the body.
func (tb *seasonTable) finish(body string) (string, []float32) {
	for len(tb.vals)%4 != 0 || len(tb.vals) == 0 {
		tb.vals = append(tb.vals, 0)
	}
	var h strings.Builder
	h.WriteString("#version 430\n")
	if tb.unroll {
		h.WriteString("#pragma optionNV(unroll all)\n")
	}
	fmt.Fprintf(&h, "layout(local_size_x = %d) in;\n", seasonLocal)
	h.WriteString("layout(std430, binding = 0) readonly buffer Cube { float cube[]; };\n")
	h.WriteString("layout(std430, binding = 1) writeonly buffer Outs { float outs[]; };\n")
	if 4*len(tb.vals) <= seasonUniformMax {
		fmt.Fprintf(&h, "layout(std140, binding = 0) uniform Tab { vec4 tab[%d]; };\n", len(tb.vals)/4)
	} else {
		h.WriteString("layout(std430, binding = 2) readonly buffer Tab { vec4 tab[]; };\n")
	}
	h.WriteString("#define TAB(i) tab[(i) >> 2][(i) & 3u]\n")
	h.WriteString(tb.decl.String())
	h.WriteString("layout(location = 0) uniform uint P;\n")
	return h.String() + body, tb.vals
}

func genCompositeGLSL(s *strings.Builder, tb *seasonTable, p *season.Plan) {
	w := func(format string, a ...any) { fmt.Fprintf(s, format+"\n", a...) }
	var dates []float32
	for t, r := range p.Role {
		if r == season.RoleFit {
			dates = append(dates, p.Dates32[t])
		}
	}
	tb.array("DF", dates)
	w("\tuint n = 0u;")
	if p.Model.Stat == season.Max {
		w("\tfloat best = NAN, date = NAN;")
		w("\tfor (uint f = 0u; f < NF; f++) {")
		w("\t\tfloat y = cube[uint(FIT(f)) * P + px];")
		w("\t\tif (!valid(y)) continue;")
		w("\t\tif (n == 0u || y > best) { best = y; date = DF(f); }")
		w("\t\tn++;")
		w("\t}")
		w("\tput(0u, px, best); put(1u, px, float(n)); put(2u, px, date);")
		return
	}
	w("\tfor (uint f = 0u; f < NF; f++) {")
	w("\t\tfloat y = cube[uint(FIT(f)) * P + px];")
	w("\t\tif (valid(y)) { e[n] = y; n++; }")
	w("\t}")
	q := 50.0
	if p.Model.Stat == season.Percentile {
		q = p.Model.Percentile
	}
	w("\tput(0u, px, quantile(0u, n, %s, %v));", glslFloat(float32(q)), p.Model.Stat == season.Median)
	w("\tput(1u, px, float(n)); put(2u, px, NAN);")
}
