// Command asm generates the AVX2 kernels of package vec (vec_amd64.s and
// stub_amd64.go, through avo) and the stubs that stand in for them where
// there is no assembly (stub_other.go). It is a module of its own so that
// avo is never linked into canopy; run it through go generate in the parent
// folder:
//
//	go generate ./compute/internal/vec
//
// Every kernel handles the first len(dst) &^ 7 elements, 32 at a time and
// then 8 at a time; the Go wrapper in package vec computes the tail with the
// scalar definitions. No kernel fuses a multiply and an add: each operation
// rounds once, as the scalar Go code does. Every kernel ends with
// VZEROUPPER.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/format"
	"log"
	"os"
	"strings"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

var otherOut = flag.String("other", "", "file to write the stubs for builds without the assembly")

// constraint is where the assembly is built (avo takes the old +build
// syntax); stub_other.go gets its negation.
const (
	constraint      = "amd64,!noasm"
	otherConstraint = "!amd64 || noasm"
)

// Comparison predicates of VCMPPS.
const (
	cmpEQ    = 0 // equal, ordered, quiet
	cmpUNORD = 3 // either operand is NaN
)

type stub struct{ name, sig string }

var stubs []stub

// text starts a kernel and records its signature for stub_other.go.
func text(name, sig, doc string) {
	TEXT(name, NOSPLIT, "func"+sig)
	Doc(doc)
	stubs = append(stubs, stub{name, sig})
}

// loop emits the vector loops over the first n&^7 elements: four vectors of
// eight per step, then one vector per step; body(i, u) handles the eight
// elements starting at element i+8u. It ends the function (VZEROUPPER, RET).
func loop(prefix string, n reg.Register, body func(i reg.Register, u int)) {
	loopFenced(prefix, n, body, false)
}

// loopFenced is loop, with an SFENCE before the end when fence is set: the
// streaming stores of the body are ordered before whatever the caller does
// next.
func loopFenced(prefix string, n reg.Register, body func(i reg.Register, u int), fence bool) {
	i := GP64()
	XORQ(i, i)
	c := GP64()
	MOVQ(n, c)
	SHRQ(U8(5), c)
	JZ(LabelRef(prefix + "_one"))
	Label(prefix + "_four")
	for u := 0; u < 4; u++ {
		body(i, u)
	}
	ADDQ(U8(32), i)
	DECQ(c)
	JNZ(LabelRef(prefix + "_four"))
	Label(prefix + "_one")
	MOVQ(n, c)
	SHRQ(U8(3), c)
	ANDQ(U8(3), c)
	JZ(LabelRef(prefix + "_done"))
	Label(prefix + "_onel")
	body(i, 0)
	ADDQ(U8(8), i)
	DECQ(c)
	JNZ(LabelRef(prefix + "_onel"))
	Label(prefix + "_done")
	if fence {
		SFENCE()
	}
	VZEROUPPER()
	RET()
}

// at is the memory operand of the eight elements of size bytes at element
// i+8u of base.
func at(base, i reg.Register, size, u int) Mem {
	return Mem{Base: base, Index: i, Scale: uint8(size), Disp: 8 * size * u}
}

func f32(base, i reg.Register, u int) Mem { return at(base, i, 4, u) }

func load(m Mem) reg.VecVirtual {
	y := YMM()
	VMOVUPS(m, y)
	return y
}

// Constants built in registers.

func zeros() reg.VecVirtual {
	y := YMM()
	VXORPS(y, y, y)
	return y
}

func ones() reg.VecVirtual {
	y := YMM()
	VPCMPEQD(y, y, y)
	return y
}

func bcast32(v uint32) reg.VecVirtual {
	r := GP32()
	MOVL(U32(v), r)
	x := XMM()
	VMOVD(r, x)
	y := YMM()
	VPBROADCASTD(x, y)
	return y
}

// bcastParam broadcasts a 4-byte argument (float32 or uint32) to 8 lanes,
// through a general register (VEX-encoded all the way: no legacy SSE move).
func bcastParam(name string) reg.VecVirtual {
	b, err := Param(name).Resolve()
	if err != nil {
		log.Fatal(err)
	}
	r := GP32()
	MOVL(b.Addr, r)
	x := XMM()
	VMOVD(r, x)
	y := YMM()
	VPBROADCASTD(x, y)
	return y
}

// op2 computes one result vector from two operands.
type op2 func(a, b reg.VecVirtual) reg.VecVirtual

func binary(vop func(ops ...Op)) op2 {
	return func(a, b reg.VecVirtual) reg.VecVirtual {
		r := YMM()
		vop(b, a, r)
		return r
	}
}

// div makes an op2 a/b whose result is NaN (all bits set) where b is ±0.
func div(zero reg.VecVirtual) op2 {
	return func(a, b reg.VecVirtual) reg.VecVirtual {
		q := YMM()
		VDIVPS(b, a, q)
		m := YMM()
		VCMPPS(U8(cmpEQ), zero, b, m)
		VORPS(m, q, q)
		return q
	}
}

// minmax: VMINPS/VMAXPS give a<b?a:b / a>b?a:b, and b where either is NaN;
// the unordered mask then turns every lane with a NaN into NaN.
func minmax(vop func(ops ...Op)) op2 {
	return func(a, b reg.VecVirtual) reg.VecVirtual {
		r := YMM()
		vop(b, a, r)
		m := YMM()
		VCMPPS(U8(cmpUNORD), b, a, m)
		VORPS(m, r, r)
		return r
	}
}

type binop struct {
	name, doc string
	op        func() op2 // emits the constants, returns the operation
}

var binops = []binop{
	{"add", "%[1]s + %[2]s", func() op2 { return binary(VADDPS) }},
	{"sub", "%[1]s - %[2]s", func() op2 { return binary(VSUBPS) }},
	{"mul", "%[1]s * %[2]s", func() op2 { return binary(VMULPS) }},
	{"div", "%[1]s / %[2]s, NaN where %[2]s is ±0,", func() op2 { return div(zeros()) }},
	{"min", "min(%[1]s, %[2]s), NaN where either is NaN,", func() op2 { return minmax(VMINPS) }},
	{"max", "max(%[1]s, %[2]s), NaN where either is NaN,", func() op2 { return minmax(VMAXPS) }},
}

func genBinary(b binop) {
	text(b.name+"AVX2", "(dst, a, b []float32)", fmt.Sprintf("%sAVX2 sets dst[i] = %s for the first len(dst)&^7 elements.", b.name, fmt.Sprintf(b.doc, "a[i]", "b[i]")))
	d := Load(Param("dst").Base(), GP64())
	pa := Load(Param("a").Base(), GP64())
	pb := Load(Param("b").Base(), GP64())
	n := Load(Param("dst").Len(), GP64())
	op := b.op()
	loop(b.name, n, func(i reg.Register, u int) {
		VMOVUPS(op(load(f32(pa, i, u)), load(f32(pb, i, u))), f32(d, i, u))
	})
}

// genConst makes the kernel with a constant operand: a op k, or k op a when
// swap is set.
func genConst(name string, b binop, swap bool) {
	what := fmt.Sprintf(b.doc, "a[i]", "k")
	if swap {
		what = fmt.Sprintf(b.doc, "k", "a[i]")
	}
	text(name+"AVX2", "(dst, a []float32, k float32)", fmt.Sprintf("%sAVX2 sets dst[i] = %s for the first len(dst)&^7 elements.", name, what))
	d := Load(Param("dst").Base(), GP64())
	pa := Load(Param("a").Base(), GP64())
	n := Load(Param("dst").Len(), GP64())
	k := bcastParam("k")
	op := b.op()
	loop(name, n, func(i reg.Register, u int) {
		a := load(f32(pa, i, u))
		var r reg.VecVirtual
		if swap {
			r = op(k, a)
		} else {
			r = op(a, k)
		}
		VMOVUPS(r, f32(d, i, u))
	})
}

type unop struct {
	name, doc string
	op        func() func(a reg.VecVirtual) reg.VecVirtual
}

var unops = []unop{
	{"neg", "-a[i] (the sign bit flipped)", func() func(reg.VecVirtual) reg.VecVirtual {
		sign := ones()
		VPSLLD(U8(31), sign, sign)
		return func(a reg.VecVirtual) reg.VecVirtual {
			r := YMM()
			VXORPS(sign, a, r)
			return r
		}
	}},
	{"abs", "|a[i]| (the sign bit cleared)", func() func(reg.VecVirtual) reg.VecVirtual {
		mag := ones()
		VPSRLD(U8(1), mag, mag)
		return func(a reg.VecVirtual) reg.VecVirtual {
			r := YMM()
			VANDPS(mag, a, r)
			return r
		}
	}},
	{"sqrt", "sqrt(a[i]), NaN where a[i] < 0,", func() func(reg.VecVirtual) reg.VecVirtual {
		return func(a reg.VecVirtual) reg.VecVirtual {
			r := YMM()
			VSQRTPS(a, r)
			return r
		}
	}},
	{"finite", "a[i], NaN where a[i] is ±Inf,", func() func(reg.VecVirtual) reg.VecVirtual {
		mag := ones()
		VPSRLD(U8(1), mag, mag)
		inf := bcast32(0x7f800000)
		return func(a reg.VecVirtual) reg.VecVirtual {
			m := YMM()
			VANDPS(mag, a, m)
			VCMPPS(U8(cmpEQ), inf, m, m)
			r := YMM()
			VORPS(m, a, r)
			return r
		}
	}},
}

func genUnary(o unop) {
	text(o.name+"AVX2", "(dst, a []float32)", fmt.Sprintf("%sAVX2 sets dst[i] = %s for the first len(dst)&^7 elements.", o.name, o.doc))
	d := Load(Param("dst").Base(), GP64())
	pa := Load(Param("a").Base(), GP64())
	n := Load(Param("dst").Len(), GP64())
	op := o.op()
	loop(o.name, n, func(i reg.Register, u int) {
		VMOVUPS(op(load(f32(pa, i, u))), f32(d, i, u))
	})
}

// ndvi returns (nir-red)/(nir+red), NaN where the sum is ±0.
func ndvi(zero, red, nir reg.VecVirtual) reg.VecVirtual {
	s := YMM()
	VADDPS(red, nir, s)
	q := YMM()
	VSUBPS(red, nir, q)
	VDIVPS(s, q, q)
	m := YMM()
	VCMPPS(U8(cmpEQ), zero, s, m)
	VORPS(m, q, q)
	return q
}

func genNDVI() {
	text("ndviAVX2", "(out, red, nir []float32)", "ndviAVX2 sets out[i] = (nir[i]-red[i])/(nir[i]+red[i]), NaN where the sum is ±0, for the first len(out)&^7 elements.")
	d := Load(Param("out").Base(), GP64())
	pr := Load(Param("red").Base(), GP64())
	pn := Load(Param("nir").Base(), GP64())
	n := Load(Param("out").Len(), GP64())
	zero := zeros()
	loop("ndvi", n, func(i reg.Register, u int) {
		VMOVUPS(ndvi(zero, load(f32(pr, i, u)), load(f32(pn, i, u))), f32(d, i, u))
	})
}

// genNDFinite is genNDVI with the finite of the result in the same pass: a
// fused normalised difference that writes an output (go-parallel's nd
// store).
func genNDFinite() {
	text("ndFiniteAVX2", "(out, red, nir []float32)", "ndFiniteAVX2 sets out[i] = (nir[i]-red[i])/(nir[i]+red[i]), NaN where the sum is ±0 and where the quotient is ±Inf, for the first len(out)&^7 elements.")
	d := Load(Param("out").Base(), GP64())
	pr := Load(Param("red").Base(), GP64())
	pn := Load(Param("nir").Base(), GP64())
	n := Load(Param("out").Len(), GP64())
	zero := zeros()
	var fin func(reg.VecVirtual) reg.VecVirtual
	for _, o := range unops {
		if o.name == "finite" {
			fin = o.op()
		}
	}
	loop("ndfinite", n, func(i reg.Register, u int) {
		VMOVUPS(fin(ndvi(zero, load(f32(pr, i, u)), load(f32(pn, i, u)))), f32(d, i, u))
	})
}

// finiteOp is the finite unary operation's code.
func finiteOp() func(reg.VecVirtual) reg.VecVirtual {
	for _, o := range unops {
		if o.name == "finite" {
			return o.op()
		}
	}
	panic("no finite operation")
}

// genStreams emits the streaming-store forms of the two operations that
// write a block program's output (ndFinite and finite): VMOVNTPS, which
// spares the read-for-ownership of every output line, then SFENCE. out
// must be 32-byte aligned (the Go wrapper checks).
func genStreams() {
	text("ndFiniteStreamAVX2", "(out, red, nir []float32)", "ndFiniteStreamAVX2 is ndFiniteAVX2 with streaming stores; out is 32-byte aligned.")
	d := Load(Param("out").Base(), GP64())
	pr := Load(Param("red").Base(), GP64())
	pn := Load(Param("nir").Base(), GP64())
	n := Load(Param("out").Len(), GP64())
	zero := zeros()
	fin := finiteOp()
	loopFenced("ndfinitestream", n, func(i reg.Register, u int) {
		VMOVNTPS(fin(ndvi(zero, load(f32(pr, i, u)), load(f32(pn, i, u)))), f32(d, i, u))
	}, true)

	text("finiteStreamAVX2", "(dst, a []float32)", "finiteStreamAVX2 is finiteAVX2 with streaming stores; dst is 32-byte aligned.")
	d = Load(Param("dst").Base(), GP64())
	pa := Load(Param("a").Base(), GP64())
	n = Load(Param("dst").Len(), GP64())
	fin = finiteOp()
	loopFenced("finitestream", n, func(i reg.Register, u int) {
		VMOVNTPS(fin(load(f32(pa, i, u))), f32(d, i, u))
	}, true)
}

// A stored sample type and how eight of them become eight int32 lanes (or,
// for float32, eight float lanes).
type sample struct {
	name, goType string
	size         int
	widen        func(m Mem) reg.VecVirtual // eight samples -> eight 32-bit lanes
	float        bool                       // the lanes are float32 already
	unsigned32   bool                       // uint32: convert in two halves
}

func widenWith(ins func(ops ...Op)) func(m Mem) reg.VecVirtual {
	return func(m Mem) reg.VecVirtual {
		y := YMM()
		ins(m, y)
		return y
	}
}

var samples = []sample{
	{name: "U8", goType: "uint8", size: 1, widen: widenWith(VPMOVZXBD)},
	{name: "U16", goType: "uint16", size: 2, widen: widenWith(VPMOVZXWD)},
	{name: "I16", goType: "int16", size: 2, widen: widenWith(VPMOVSXWD)},
	{name: "U32", goType: "uint32", size: 4, widen: load, unsigned32: true},
	{name: "I32", goType: "int32", size: 4, widen: load},
	{name: "F32", goType: "float32", size: 4, widen: load, float: true},
}

// converter emits the constants for type s and returns the conversion of
// eight widened lanes to float32, exactly as Go's float32(x).
func converter(s sample) func(x reg.VecVirtual) reg.VecVirtual {
	switch {
	case s.float:
		return func(x reg.VecVirtual) reg.VecVirtual { return x }
	case s.unsigned32:
		// float32(x) = float32(hi)*65536 + float32(lo): both terms are
		// exact, so the one rounding of the sum is Go's rounding (to
		// nearest even) of the whole value.
		low := ones()
		VPSRLD(U8(16), low, low)
		k := bcast32(0x47800000) // 65536.0
		return func(x reg.VecVirtual) reg.VecVirtual {
			hi := YMM()
			VPSRLD(U8(16), x, hi)
			lo := YMM()
			VPAND(low, x, lo)
			VCVTDQ2PS(hi, hi)
			VMULPS(k, hi, hi)
			VCVTDQ2PS(lo, lo)
			r := YMM()
			VADDPS(lo, hi, r)
			return r
		}
	default:
		return func(x reg.VecVirtual) reg.VecVirtual {
			r := YMM()
			VCVTDQ2PS(x, r)
			return r
		}
	}
}

// radiometry holds the broadcast (add, scale, offset) of one band.
type radiometry struct{ add, scale, offset reg.VecVirtual }

func (r radiometry) apply(v reg.VecVirtual) reg.VecVirtual {
	out := YMM()
	VADDPS(r.add, v, out)
	VMULPS(r.scale, out, out)
	VADDPS(r.offset, out, out)
	return out
}

// nodataMask is all bits set where the widened lanes x equal nd (integer
// lanes compare as integers, float lanes as floats).
func nodataMask(s sample, x, nd reg.VecVirtual) reg.VecVirtual {
	m := YMM()
	if s.float {
		VCMPPS(U8(cmpEQ), nd, x, m)
	} else {
		VPCMPEQD(nd, x, m)
	}
	return m
}

// Flags of the load kernels' mode argument.
const (
	modeRadiometry = 1 // apply (x + add) * scale + offset
	modeNodata     = 2 // NaN where the sample equals nd
)

func genLoad(s sample) {
	name := "load" + s.name + "AVX2"
	text(name, fmt.Sprintf("(dst []float32, src []%s, add, scale, offset float32, nd uint32, mode uint32)", s.goType),
		fmt.Sprintf("%s converts the first len(dst)&^7 samples of src; mode bit 1: (x + add) * scale + offset, bit 2: NaN where the sample's 32-bit lane (zero- or sign-extended as its type) equals nd.", name))
	d := Load(Param("dst").Base(), GP64())
	ps := Load(Param("src").Base(), GP64())
	n := Load(Param("dst").Len(), GP64())
	mode := Load(Param("mode"), GP32())
	for v := 3; v >= 0; v-- {
		prefix := fmt.Sprintf("mode%d", v)
		if v > 0 {
			CMPL(mode, U8(v))
			JNE(LabelRef(fmt.Sprintf("mode%d_skip", v)))
		}
		conv := converter(s)
		var rad radiometry
		if v&modeRadiometry != 0 {
			rad = radiometry{bcastParam("add"), bcastParam("scale"), bcastParam("offset")}
		}
		var nd reg.VecVirtual
		if v&modeNodata != 0 {
			nd = bcastParam("nd")
		}
		loop(prefix, n, func(i reg.Register, u int) {
			x := s.widen(at(ps, i, s.size, u))
			f := conv(x)
			if v&modeRadiometry != 0 {
				f = rad.apply(f)
			}
			if v&modeNodata != 0 {
				VORPS(nodataMask(s, x, nd), f, f)
			}
			VMOVUPS(f, f32(d, i, u))
		})
		if v > 0 {
			Label(fmt.Sprintf("mode%d_skip", v))
		}
	}
}

func genMask() {
	text("maskNaNAVX2", "(dst []float32, mask []uint8)", "maskNaNAVX2 sets dst[i] = NaN where mask[i] != 0, for the first len(dst)&^7 elements.")
	d := Load(Param("dst").Base(), GP64())
	pm := Load(Param("mask").Base(), GP64())
	n := Load(Param("dst").Len(), GP64())
	zero := zeros()
	all := ones()
	loop("mask", n, func(i reg.Register, u int) {
		m := YMM()
		VPMOVZXBD(at(pm, i, 1, u), m)
		VPCMPEQD(zero, m, m)
		VPXOR(all, m, m)
		v := load(f32(d, i, u))
		VORPS(m, v, v)
		VMOVUPS(v, f32(d, i, u))
	})
}

func main() {
	ConstraintExpr(constraint)
	for _, b := range binops {
		genBinary(b)
	}
	for _, b := range binops {
		genConst(b.name+"K", b, false)
	}
	for _, b := range binops {
		if b.name == "sub" || b.name == "div" {
			genConst("k"+strings.ToUpper(b.name[:1])+b.name[1:], b, true)
		}
	}
	for _, o := range unops {
		genUnary(o)
	}
	genNDVI()
	genNDFinite()
	genStreams()
	for _, s := range samples {
		genLoad(s)
	}
	genMask()
	Generate()
	if *otherOut != "" {
		writeOther(*otherOut)
	}
}

// writeOther writes the stand-ins for builds without the assembly; they are
// never called (haveAVX2 is false there).
func writeOther(path string) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by command: go run asm.go (package vec's generator). DO NOT EDIT.\n\n")
	fmt.Fprintf(&b, "//go:build %s\n\npackage vec\n\n", otherConstraint)
	for _, s := range stubs {
		fmt.Fprintf(&b, "func %s%s { panic(\"vec: %s without the assembly\") }\n\n", s.name, s.sig, s.name)
	}
	src, err := format.Source(b.Bytes())
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(path, src, 0o644); err != nil {
		log.Fatal(err)
	}
}
