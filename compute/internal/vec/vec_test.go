package vec

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// same reports whether two results are the same float32: equal bits, or both
// NaN (payloads may differ).
func same(x, y float32) bool {
	return math.Float32bits(x) == math.Float32bits(y) || (x != x && y != y)
}

var specials = []float32{
	0, float32(math.Copysign(0, -1)), 1, -1, 0.5, 2, 3,
	float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()),
	math.Float32frombits(0x7fc00001), math.Float32frombits(0xffa00000), // other NaNs
	math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32, 1e-40, -3e-39, // denormals
	1.17549435e-38, -1.17549435e-38, // smallest normal
	math.MaxFloat32, -math.MaxFloat32, 3e38, 1e30, -1e-30, 16777217, 1e-4,
}

// floats gives n values: specials, random bit patterns (every class of
// float32), and ordinary magnitudes.
func floats(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		switch r.IntN(4) {
		case 0:
			s[i] = specials[r.IntN(len(specials))]
		case 1:
			s[i] = math.Float32frombits(r.Uint32())
		default:
			s[i] = float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(12)-6)))
		}
	}
	return s
}

// lengths are the slice lengths every kernel is checked at.
func lengths() []int {
	var ns []int
	for n := 0; n <= 70; n++ {
		ns = append(ns, n)
	}
	return append(ns, 255, 256, 1000, 4099, 65536+13)
}

// needAVX2 skips a comparison of the kernels with the definitions where no
// kernel runs (the comparison would compare the Go loops with themselves).
func needAVX2(t *testing.T) {
	t.Helper()
	if !haveAVX2() {
		t.Skip("no AVX2 kernels in this build or on this CPU: only the Go definitions run")
	}
	if !useAVX2 {
		t.Skip("CANOPY_NOSIMD is set: only the Go definitions run")
	}
}

// withScalar runs f with the Go loops forced.
func withScalar(f func()) {
	saved := useAVX2
	useAVX2 = false
	defer func() { useAVX2 = saved }()
	f()
}

func compare(t *testing.T, what string, got, want []float32, in ...[]float32) {
	t.Helper()
	for i := range want {
		if !same(got[i], want[i]) {
			var args []string
			for _, s := range in {
				args = append(args, fmt.Sprintf("%g (%#08x)", s[i], math.Float32bits(s[i])))
			}
			t.Fatalf("%s [%d of %d]: kernel %g (%#08x), definition %g (%#08x); inputs %s",
				what, i, len(want), got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]), strings.Join(args, ", "))
		}
	}
}

var binaries = map[string]func(dst, a, b []float32){
	"Add": Add, "Sub": Sub, "Mul": Mul, "Div": Div, "Min": Min, "Max": Max, "NDVI": NDVI,
	"NDFinite": NDFinite, "NDFiniteStream": NDFiniteStream,
}

var withConst = map[string]func(dst, a []float32, k float32){
	"AddK": AddK, "SubK": SubK, "KSub": KSub, "MulK": MulK, "DivK": DivK, "KDiv": KDiv, "MinK": MinK, "MaxK": MaxK,
}

var unaries = map[string]func(dst, a []float32){
	"Neg": Neg, "Abs": Abs, "Sqrt": Sqrt, "Finite": Finite, "FiniteStream": FiniteStream,
}

// alignedFloats returns n float32 starting on a 32-byte boundary, as the
// streaming stores need.
func alignedFloats(n int) []float32 {
	s := make([]float32, n+8)
	for i := range 8 {
		if aligned32(s[i:]) {
			return s[i : i+n]
		}
	}
	panic("no 32-byte boundary in 8 float32")
}

// TestStreamsAligned runs the streaming stores where they run (a 32-byte
// aligned output; the other tests' outputs may or may not be) against the
// definitions, at every length, the tail included.
func TestStreamsAligned(t *testing.T) {
	needAVX2(t)
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range lengths() {
		a, b := floats(r, n), floats(r, n)
		want := make([]float32, n)
		withScalar(func() { NDFinite(want, a, b) })
		got := alignedFloats(n)
		NDFiniteStream(got, a, b)
		compare(t, fmt.Sprintf("NDFiniteStream n=%d aligned", n), got, want, a, b)
		withScalar(func() { Finite(want, a) })
		got = alignedFloats(n)
		FiniteStream(got, a)
		compare(t, fmt.Sprintf("FiniteStream n=%d aligned", n), got, want, a)
	}
}

// TestKernelsEqualDefinitions runs every kernel against its Go definition at
// every length, at unaligned starts, and with dst aliasing an operand.
func TestKernelsEqualDefinitions(t *testing.T) {
	needAVX2(t)
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range lengths() {
		for off := 0; off < 4; off++ {
			if n > 300 && off > 1 {
				continue
			}
			a := floats(r, n+off)[off:]
			b := floats(r, n+off)[off:]
			for name, f := range binaries {
				want := make([]float32, n)
				withScalar(func() { f(want, a, b) })
				got := make([]float32, n+off)[off:]
				f(got, a, b)
				compare(t, fmt.Sprintf("%s n=%d off=%d", name, n, off), got, want, a, b)
				ga := append([]float32(nil), a...)
				f(ga, ga, b)
				compare(t, fmt.Sprintf("%s n=%d dst==a", name, n), ga, want, a, b)
				gb := append([]float32(nil), b...)
				f(gb, a, gb)
				compare(t, fmt.Sprintf("%s n=%d dst==b", name, n), gb, want, a, b)
			}
			for _, k := range []float32{0, -1, 2.5, 1e-40, float32(math.Inf(1)), float32(math.NaN()), b0(b)} {
				for name, f := range withConst {
					want := make([]float32, n)
					withScalar(func() { f(want, a, k) })
					got := make([]float32, n+off)[off:]
					f(got, a, k)
					compare(t, fmt.Sprintf("%s n=%d off=%d k=%g", name, n, off, k), got, want, a)
					ga := append([]float32(nil), a...)
					f(ga, ga, k)
					compare(t, fmt.Sprintf("%s n=%d dst==a k=%g", name, n, k), ga, want, a)
				}
			}
			for name, f := range unaries {
				want := make([]float32, n)
				withScalar(func() { f(want, a) })
				got := make([]float32, n+off)[off:]
				f(got, a)
				compare(t, fmt.Sprintf("%s n=%d off=%d", name, n, off), got, want, a)
				ga := append([]float32(nil), a...)
				f(ga, ga)
				compare(t, fmt.Sprintf("%s n=%d dst==a", name, n), ga, want, a)
			}
			mask := make([]uint8, n+off)[off:]
			for i := range mask {
				if r.IntN(3) == 0 {
					mask[i] = uint8(1 + r.IntN(255))
				}
			}
			want := append([]float32(nil), a...)
			withScalar(func() { MaskNaN(want, mask) })
			got := append(make([]float32, off), a...)[off:]
			MaskNaN(got, mask)
			compare(t, fmt.Sprintf("MaskNaN n=%d off=%d", n, off), got, want, a)
		}
	}
}

func b0(b []float32) float32 {
	if len(b) == 0 {
		return 7
	}
	return b[0]
}

// Sample generators: extremes, the nodata value, random values.
func randSamples[T sample](r *rand.Rand, n int, nodata float64, gen func() T, extremes ...T) []T {
	s := make([]T, n)
	for i := range s {
		switch r.IntN(5) {
		case 0:
			s[i] = extremes[r.IntN(len(extremes))]
		case 1:
			if nodata == nodata && nodata == math.Trunc(nodata) || isF32[T]() {
				s[i] = T(nodata)
			}
		default:
			s[i] = gen()
		}
	}
	return s
}

func isF32[T sample]() bool {
	var z T
	_, ok := any(z).(float32)
	return ok
}

// convs are the conversions the loads are checked with: identity, the
// products' own, and odd ones; each with and without nodata.
func convs(nodata float64) []Conv {
	base := []Conv{
		Identity(),
		{Add: -1000, Scale: 1e-4},          // Sentinel-2 L2A from baseline 04.00
		{Scale: 1e-4},                      // Sentinel-2 before
		{Scale: 2.75e-5, Offset: -0.2},     // Landsat C2 L2
		{Add: 0.5, Scale: -3, Offset: 1e7}, // odd
		{Add: 1e30, Scale: 1e10, Offset: -1},
		{Offset: float32(math.Copysign(0, -1)), Scale: 1}, // identity too
	}
	var out []Conv
	for _, c := range base {
		out = append(out, c)
		c.HasNoData, c.NoData = true, nodata
		out = append(out, c)
	}
	return out
}

func checkLoad[T sample](t *testing.T, name string, load func([]float32, []T, Conv), nodatas []float64, gen func(r *rand.Rand) T, extremes ...T) {
	t.Helper()
	r := rand.New(rand.NewPCG(3, uint64(len(name))))
	for _, nd := range nodatas {
		for _, c := range convs(nd) {
			for _, n := range lengths() {
				off := n % 3
				src := randSamples(r, n+off, nd, func() T { return gen(r) }, extremes...)[off:]
				want := make([]float32, n)
				withScalar(func() { load(want, src, c) })
				got := make([]float32, n+off)[off:]
				load(got, src, c)
				for i := range want {
					if !same(got[i], want[i]) {
						t.Fatalf("%s %+v n=%d [%d]: sample %v: kernel %g (%#08x), definition %g (%#08x)",
							name, c, n, i, src[i], got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
					}
				}
			}
		}
	}
}

func TestLoadKernelsEqualDefinitions(t *testing.T) {
	needAVX2(t)
	checkLoad(t, "LoadU8", LoadU8, []float64{0, 255, 7, -1, 1.5, 256},
		func(r *rand.Rand) uint8 { return uint8(r.Uint32()) }, 0, 1, 255)
	checkLoad(t, "LoadU16", LoadU16, []float64{0, 65535, 1000, -1, 65536, 0.25},
		func(r *rand.Rand) uint16 { return uint16(r.Uint32()) }, 0, 1, 1000, 65535)
	checkLoad(t, "LoadI16", LoadI16, []float64{0, -1, -32768, 32767, -9999, 32768, -32769, 2.5},
		func(r *rand.Rand) int16 { return int16(r.Uint32()) }, 0, -1, -32768, 32767)
	checkLoad(t, "LoadU32", LoadU32, []float64{0, math.MaxUint32, 16777217, -1, 1 << 32},
		func(r *rand.Rand) uint32 {
			if r.IntN(2) == 0 {
				return r.Uint32()
			}
			return uint32(1<<24 + r.IntN(1<<10)) // where float32 rounds
		}, 0, 1, 1<<24+1, 1<<24+3, 1<<31, 1<<31+1, 1<<31+128, 1<<31+129, math.MaxUint32, math.MaxUint32-127, math.MaxUint32-128)
	checkLoad(t, "LoadI32", LoadI32, []float64{0, -1, math.MinInt32, math.MaxInt32, -9999, 1 << 31},
		func(r *rand.Rand) int32 { return int32(r.Uint32()) }, 0, -1, math.MinInt32, math.MaxInt32, -(1<<24 + 1), 1<<24+1)
	checkLoad(t, "LoadF32", LoadF32, []float64{0, -9999, math.NaN(), math.Inf(-1), 0.1, 1e-50, 3.4e39},
		func(r *rand.Rand) float32 { return floats(r, 1)[0] }, specials...)
}

// The definitions themselves, on values worked out by hand.

func nan() float32 { return float32(math.NaN()) }

var negZero = float32(math.Copysign(0, -1))

func TestDefinitions(t *testing.T) {
	inf := float32(math.Inf(1))
	type row struct {
		name    string
		f       func(dst, a, b []float32)
		a, b, w float32
	}
	rows := []row{
		{"Add", Add, 1, 2, 3},
		{"Add", Add, negZero, negZero, negZero},
		{"Add", Add, inf, -inf, nan()},
		{"Sub", Sub, 1, 3, -2},
		{"Mul", Mul, 3, 0.5, 1.5},
		{"Div", Div, 1, 2, 0.5},
		{"Div", Div, 1, 0, nan()},
		{"Div", Div, 1, negZero, nan()},
		{"Div", Div, 0, 0, nan()},
		{"Div", Div, inf, 2, inf},
		{"Div", Div, 1, inf, 0},
		{"Min", Min, 1, 2, 1},
		{"Min", Min, 2, 1, 1},
		{"Min", Min, nan(), 1, nan()},
		{"Min", Min, 1, nan(), nan()},
		{"Min", Min, negZero, 0, 0},
		{"Min", Min, 0, negZero, negZero},
		{"Min", Min, -inf, 1, -inf},
		{"Max", Max, 1, 2, 2},
		{"Max", Max, nan(), 1, nan()},
		{"Max", Max, 1, nan(), nan()},
		{"Max", Max, negZero, 0, 0},
		{"Max", Max, 0, negZero, negZero},
		{"NDVI", NDVI, 0.1, 0.5, float32(0.4) / float32(0.6)},
		{"NDVI", NDVI, 0, 0, nan()},
		{"NDVI", NDVI, -0.25, 0.25, nan()},
		{"NDVI", NDVI, 0.2, nan(), nan()},
		// red -1e38, nir 3e38: the difference overflows to +Inf, the sum
		// does not; NDVI keeps the Inf, NDFinite makes it NaN.
		{"NDVI", NDVI, -1e38, 3e38, inf},
		{"NDFinite", NDFinite, -1e38, 3e38, nan()},
		{"NDFinite", NDFinite, 0.1, 0.5, float32(0.4) / float32(0.6)},
		{"NDFinite", NDFinite, 0, 0, nan()},
		{"NDFinite", NDFinite, 0.2, nan(), nan()},
		{"NDFiniteStream", NDFiniteStream, -1e38, 3e38, nan()},
		{"NDFiniteStream", NDFiniteStream, 0, 0, nan()},
	}
	for _, kernel := range []bool{false, true} {
		if kernel && !haveAVX2() {
			continue
		}
		saved := useAVX2
		useAVX2 = kernel
		for _, r := range rows {
			// Nine copies: the first eight go through the kernel, the last
			// through the tail.
			a, b, d := fill(9, r.a), fill(9, r.b), make([]float32, 9)
			r.f(d, a, b)
			for i, v := range d {
				if !same(v, r.w) {
					t.Errorf("kernel=%v %s(%g, %g)[%d] = %g, want %g", kernel, r.name, r.a, r.b, i, v, r.w)
				}
			}
		}
		type krow struct {
			name    string
			f       func(dst, a []float32, k float32)
			a, k, w float32
		}
		for _, r := range []krow{
			{"AddK", AddK, 1, 2, 3},
			{"SubK", SubK, 1, 3, -2},
			{"KSub", KSub, 1, 3, 2},
			{"MulK", MulK, 4, 0.25, 1},
			{"DivK", DivK, 1, 4, 0.25},
			{"DivK", DivK, 1, 0, nan()},
			{"KDiv", KDiv, 4, 1, 0.25},
			{"KDiv", KDiv, 0, 1, nan()},
			{"KDiv", KDiv, negZero, 1, nan()},
			{"MinK", MinK, 3, 1, 1},
			{"MinK", MinK, 3, nan(), nan()},
			{"MaxK", MaxK, 3, 1, 3},
			{"MaxK", MaxK, nan(), 1, nan()},
		} {
			a, d := fill(9, r.a), make([]float32, 9)
			r.f(d, a, r.k)
			for i, v := range d {
				if !same(v, r.w) {
					t.Errorf("kernel=%v %s(%g, k=%g)[%d] = %g, want %g", kernel, r.name, r.a, r.k, i, v, r.w)
				}
			}
		}
		type urow struct {
			name string
			f    func(dst, a []float32)
			a, w float32
		}
		for _, r := range []urow{
			{"Neg", Neg, 1, -1},
			{"Neg", Neg, 0, negZero},
			{"Abs", Abs, -2, 2},
			{"Abs", Abs, negZero, 0},
			{"Abs", Abs, -inf, inf},
			{"Sqrt", Sqrt, 4, 2},
			{"Sqrt", Sqrt, 2, float32(math.Sqrt2)},
			{"Sqrt", Sqrt, -1, nan()},
			{"Sqrt", Sqrt, negZero, negZero},
			{"Sqrt", Sqrt, inf, inf},
			{"Finite", Finite, inf, nan()},
			{"Finite", Finite, -inf, nan()},
			{"Finite", Finite, math.MaxFloat32, math.MaxFloat32},
			{"Finite", Finite, 3, 3},
		} {
			a, d := fill(9, r.a), make([]float32, 9)
			r.f(d, a)
			for i, v := range d {
				if !same(v, r.w) {
					t.Errorf("kernel=%v %s(%g)[%d] = %g, want %g", kernel, r.name, r.a, i, v, r.w)
				}
			}
		}
		d := fill(9, 1)
		MaskNaN(d, []uint8{0, 1, 0, 255, 0, 0, 0, 2, 9})
		for i, v := range d {
			if masked := i == 1 || i == 3 || i == 7 || i == 8; masked != (v != v) || !masked && v != 1 {
				t.Errorf("kernel=%v MaskNaN [%d] = %g", kernel, i, v)
			}
		}
		useAVX2 = saved
	}
}

func fill(n int, v float32) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// TestLoadsMatchFloat64 checks the loads against the float64 reference of
// package compute's Radiometry ((DN + add) * scale + offset), within the
// float32 roundings of the three operations.
func TestLoadsMatchFloat64(t *testing.T) {
	for _, kernel := range []bool{false, true} {
		if kernel && !haveAVX2() {
			continue
		}
		saved := useAVX2
		useAVX2 = kernel
		for _, c := range []Conv{{Add: -1000, Scale: 1e-4}, {Scale: 2.75e-5, Offset: -0.2}} {
			src := make([]uint16, 65536)
			for i := range src {
				src[i] = uint16(i)
			}
			dst := make([]float32, len(src))
			LoadU16(dst, src, c)
			for i, v := range dst {
				// The sum DN + add is exact; the product and the final sum
				// each round once (half an ulp, relative 2^-24).
				p := (float64(i) + float64(c.Add)) * float64(c.Scale)
				ref := p + float64(c.Offset)
				tol := (math.Abs(p) + math.Abs(ref)) * 0x1p-24
				if d := math.Abs(float64(v) - ref); d > tol {
					t.Fatalf("kernel=%v %+v LoadU16(%d) = %g, float64 reference %g (off by %g)", kernel, c, i, v, ref, d)
				}
				// Exactly: each of the three operations rounded to float32
				// on its own (no fused multiply-add). Done in float64 and
				// rounded after each step, which gives the float32 result
				// exactly (53 >= 2*24+2 bits).
				s := float32(float64(i) + float64(c.Add))
				m := float32(float64(s) * float64(c.Scale))
				if w := float32(float64(m) + float64(c.Offset)); v != w {
					t.Fatalf("kernel=%v %+v LoadU16(%d) = %g, want %g (three separate roundings)", kernel, c, i, v, w)
				}
			}
			if c.Add == -1000 && dst[1000] != 0 {
				t.Errorf("Sentinel-2: DN 1000 should be reflectance 0 exactly, got %g", dst[1000])
			}
		}
		// Nodata: only the matching stored value, compared in the stored type.
		u := []uint16{0, 1, 0, 2, 0, 3, 0, 4, 0, 5}
		d := make([]float32, len(u))
		LoadU16(d, u, Conv{Add: -1000, Scale: 1e-4, HasNoData: true})
		for i, v := range d {
			if (u[i] == 0) != (v != v) {
				t.Errorf("kernel=%v nodata 0: sample %d gives %g", kernel, u[i], v)
			}
		}
		LoadU16(d, u, Conv{Scale: 1, HasNoData: true, NoData: 0.5})
		for i, v := range d {
			if v != float32(u[i]) {
				t.Errorf("kernel=%v nodata 0.5 matches no uint16: sample %d gives %g", kernel, u[i], v)
			}
		}
		s := []int16{-1, 5, -1, 7, -32768, 32767, -1, 0, 1}
		f := make([]float32, len(s))
		LoadI16(f, s, Conv{Scale: 2, HasNoData: true, NoData: -1})
		for i, v := range f {
			if (s[i] == -1) != (v != v) || s[i] != -1 && v != 2*float32(s[i]) {
				t.Errorf("kernel=%v int16 nodata -1: sample %d gives %g", kernel, s[i], v)
			}
		}
		// uint32 above 2^24: Go's float32 rounds to nearest even; the exact
		// value through float64 rounds once to the same float32.
		w := []uint32{1<<24 + 1, 1<<24 + 3, 1<<25 + 6, math.MaxUint32, 1<<31 + 128, 1<<31 + 384, 0xfffffe80, 123456789}
		g := make([]float32, len(w))
		LoadU32(g, w, Identity())
		for i, v := range g {
			if want := float32(float64(w[i])); v != want {
				t.Errorf("kernel=%v float32(uint32 %d) = %g, want %g", kernel, w[i], v, want)
			}
		}
		x := []float32{nan(), 1, negZero, float32(math.Inf(1)), -9999, 2, 3, 4, nan()}
		y := make([]float32, len(x))
		LoadF32(y, x, Identity())
		compare(t, "LoadF32 identity", y, x)
		LoadF32(y, x, Conv{Scale: 0.5, HasNoData: true, NoData: -9999})
		for i, v := range y {
			if x[i] != x[i] || x[i] == -9999 {
				if v == v {
					t.Errorf("kernel=%v LoadF32 NaN/nodata sample %g gives %g", kernel, x[i], v)
				}
			} else if v != x[i]*0.5 {
				t.Errorf("kernel=%v LoadF32 %g*0.5 gives %g", kernel, x[i], v)
			}
		}
		useAVX2 = saved
	}
}

func TestLengthMismatchPanics(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "vec.Add") {
			t.Errorf("Add with lengths 3, 4, 3: recovered %v, want a panic naming vec.Add", r)
		}
	}()
	Add(make([]float32, 3), make([]float32, 4), make([]float32, 3))
}

// TestKernelNames checks Kernel here and in a child process with
// CANOPY_NOSIMD=1.
func TestKernelNames(t *testing.T) {
	if os.Getenv("VEC_TEST_CHILD") == "1" {
		fmt.Printf("kernel=%s\n", Kernel())
		return
	}
	want := "scalar"
	if haveAVX2() && !noSIMDEnv(os.Getenv("CANOPY_NOSIMD")) {
		want = "avx2"
	}
	if got := Kernel(); got != want {
		t.Errorf("Kernel() = %q, want %q", got, want)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestKernelNames$")
	cmd.Env = append(os.Environ(), "VEC_TEST_CHILD=1", "CANOPY_NOSIMD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "kernel=scalar") {
		t.Errorf("with CANOPY_NOSIMD=1 the child says %q, want kernel=scalar", out)
	}
}
