package cudaback

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"canopy/compute"
	"canopy/compute/index"
	"canopy/native/cuda"
)

// Generated kernels. RunJob turns a job's index.Program into PTX text (the
// CUDA virtual machine's assembly language) at run time, and the driver's
// JIT compiles it for the GPU: no CUDA toolkit is needed on the user's
// machine. The kernel follows compute.Job's definition exactly:
//
//   - each band is read in its stored type (ld.global.nc) and converted
//     with cvt.rn.f32.{u32,s32}, which is Go's float32 of the integer;
//   - nodata is compared on the stored value (setp.eq on the integer, or on
//     the float32 for float bands; NaN needs no test: it propagates);
//   - radiometry is add.rn, mul.rn, add.rn in float32 (the .rn forms are
//     never contracted into a fused multiply-add);
//   - every op is its correctly rounded IEEE form (add/sub/mul/div/sqrt
//     .rn.f32, subnormals kept: no .ftz), with the result rules of package
//     index: NaN on a zero denominator (setp.eq + selp), NaN-propagating
//     min and max (min.f32 + setp.nan + selp, for any architecture), NaN
//     where the result is not finite (abs + setp.lt infinity);
//   - a masked pixel is NaN in every output.
//
// Each thread takes four pixels at a time (one 4-, 8- or 16-byte vector of
// each band and output) in a grid-stride loop; the pixels past the last
// whole vector are done one by one by the first threads of the grid.
// Pointers must be aligned to a vector: cuMemAlloc gives 256 bytes, and
// chunks start on multiples of ChunkAlign pixels.

// KernelName is the entry point of every generated kernel.
const KernelName = "canopy_job"

// KernelBlock is the block size generated kernels are compiled for
// (.maxntid) and launched with.
const KernelBlock = 256

// kernelLanes is how many pixels a thread takes per loop step.
const kernelLanes = 4

// ptxTarget is the PTX ISA version and the architecture a kernel is
// generated for.
type ptxTarget struct {
	ISA  int // 10*major + minor: 78 for PTX ISA 7.8
	Arch int // 10*major + minor of the compute capability: 90 for sm_90
}

func (t ptxTarget) String() string {
	return fmt.Sprintf("PTX %d.%d for sm_%d", t.ISA/10, t.ISA%10, t.Arch)
}

// ptxTargets are the architectures kernels are generated for, each with
// the first PTX ISA version that knows it. PTX for one architecture is
// compiled by the driver for any later GPU, so the newest entry at or
// below the device's compute capability is taken.
var ptxTargets = []ptxTarget{
	{ISA: 60, Arch: 70}, {ISA: 63, Arch: 75}, {ISA: 70, Arch: 80}, {ISA: 71, Arch: 86},
	{ISA: 78, Arch: 89}, {ISA: 78, Arch: 90}, {ISA: 86, Arch: 100}, {ISA: 87, Arch: 120},
}

// driverISA is the newest PTX ISA version the driver for CUDA version v
// (cuDriverGetVersion: 12080 for 12.8) reads; 0 when older than CUDA 9.
func driverISA(v int) int {
	major, minor := v/1000, v%1000/10
	switch {
	case major >= 13:
		return 90
	case major == 12:
		switch {
		case minor >= 9:
			return 88
		case minor == 8:
			return 87
		case minor >= 5:
			return 85
		}
		return 80 + minor
	case major == 11:
		return 70 + min(minor, 8)
	case major == 10:
		return 63 + min(minor, 2)
	case major == 9:
		return 60 + min(minor, 2)
	}
	return 0
}

// chooseTarget picks the newest architecture at or below compute
// capability major.minor whose PTX version the driver (CUDA version
// driver) reads, with the oldest PTX version that knows it: the
// instructions the kernels use are all far older than either.
func chooseTarget(major, minor, driver int) (ptxTarget, error) {
	cc, isa := 10*major+minor, driverISA(driver)
	for i := len(ptxTargets) - 1; i >= 0; i-- {
		if t := ptxTargets[i]; t.Arch <= cc && t.ISA <= isa {
			return t, nil
		}
	}
	return ptxTarget{}, fmt.Errorf("no PTX target for a GPU of compute capability %d.%d with a driver for CUDA %s (generated kernels need compute capability 7.0 and CUDA 9 or newer)",
		major, minor, cuda.VersionString(driver))
}

// bandShape is what a generated kernel knows of one band; the values
// themselves (nodata, radiometry) are kernel parameters, so that one
// kernel serves every scene with the same program and band types.
type bandShape struct {
	Type compute.DataType
	// NoData: compare the stored value with a nodata parameter.
	NoData bool
	// Radiometry: convert with (v + add) * scale + offset, three
	// parameters; false for Identity, which leaves the value as stored.
	Radiometry bool
}

// kernelShape is everything but the program that a kernel depends on.
type kernelShape struct {
	Bands []bandShape
	Mask  bool
}

// paramKind says what a kernel parameter carries.
type paramKind uint8

const (
	parN      paramKind = iota // .u64 pixel count
	parBand                    // .u64 pointer to band Index
	parNoData                  // band Index's nodata value, in its stored type
	parAdd                     // .f32 radiometry of band Index
	parScale
	parOffset
	parMask // .u64 pointer to the mask bytes
	parOut  // .u64 pointer to output Index
)

// kernelParam is one parameter of a generated kernel, in order.
type kernelParam struct {
	Kind  paramKind
	Index int
	// Type is the PTX type: .u64, .u32, .s32 or .f32.
	Type string
}

// kernelSpec is a generated kernel: its PTX and its parameter list.
type kernelSpec struct {
	PTX    string
	Params []kernelParam
	Target ptxTarget
	// Entry is the kernel's entry point ("": KernelName).
	Entry string
	// Block is the threads a block of the resident launches (0:
	// residentBlock).
	Block int
}

// block is the threads a block spec's kernel is launched with.
func (s *kernelSpec) block() int {
	if s.Block > 0 {
		return s.Block
	}
	return residentBlock
}

// MaxKernelParams is the most parameters a generated kernel may have
// (native/cuda's launch limit): a job needs 1 + one per band (up to four
// more with nodata and radiometry) + one for a mask + one per index.
const MaxKernelParams = 128

// intType reports whether t is an integer type, and whether signed.
func intType(t compute.DataType) (isInt, signed bool) {
	switch t {
	case compute.U8, compute.U16, compute.U32:
		return true, false
	case compute.I16, compute.I32:
		return true, true
	}
	return false, false
}

// nodataParamType is the PTX type of a band's nodata parameter.
func nodataParamType(t compute.DataType) string {
	isInt, signed := intType(t)
	switch {
	case !isInt:
		return ".f32"
	case signed:
		return ".s32"
	}
	return ".u32"
}

// checkProgram reports a program the generator cannot translate (an
// operand out of range) instead of generating broken PTX.
func checkProgram(p *index.Program, inputs int) error {
	if p == nil {
		return errors.New("no program")
	}
	if len(p.Inputs) != inputs {
		return fmt.Errorf("program reads %d inputs, the kernel has %d bands", len(p.Inputs), inputs)
	}
	if len(p.Outputs) == 0 {
		return errors.New("program has no outputs")
	}
	written := make([]bool, p.NumRegs)
	reg := func(r uint16) error {
		if int(r) >= p.NumRegs || !written[r] {
			return fmt.Errorf("register r%d read before it is written", r)
		}
		return nil
	}
	for i, c := range p.Code {
		if int(c.Dst) >= p.NumRegs {
			return fmt.Errorf("instruction %d (%s) writes r%d of %d registers", i, c.String(p), c.Dst, p.NumRegs)
		}
		switch c.Op {
		case index.OpLoad:
			if int(c.A) >= len(p.Inputs) {
				return fmt.Errorf("instruction %d (%s) loads input %d of %d", i, c.String(p), c.A, len(p.Inputs))
			}
		case index.OpConst:
		default:
			if c.Op.Regs() == 0 {
				return fmt.Errorf("instruction %d: unknown op %s", i, c.Op)
			}
			if err := reg(c.A); err != nil {
				return fmt.Errorf("instruction %d (%s): %v", i, c.String(p), err)
			}
			if c.Op.Regs() == 2 {
				if err := reg(c.B); err != nil {
					return fmt.Errorf("instruction %d (%s): %v", i, c.String(p), err)
				}
			}
		}
		written[c.Dst] = true
	}
	for i, o := range p.Outputs {
		if o < 0 || o >= p.NumRegs || !written[o] {
			return fmt.Errorf("output %d is register r%d, never written", i, o)
		}
	}
	return nil
}

// Register classes of the generated code.
const (
	clsPred = iota
	clsB32
	clsF32
	clsB64
	numCls
)

var clsPrefix = [numCls]string{"%p", "%r", "%f", "%rd"}
var clsType = [numCls]string{".pred", ".b32", ".f32", ".b64"}

// gen writes one kernel's body; registers are numbered from 1 per class.
type gen struct {
	b    strings.Builder
	regs [numCls]int

	p     *index.Program
	shape kernelShape
	// Per band: its global pointer and its parameter registers.
	bandPtr, ndReg  []string
	addReg, scale   []string
	offReg          []string
	maskPtr         string
	outPtr          []string
	konst           map[uint32]string
	nan             string
	offsets         map[int]string // vector or pixel byte offsets by shift
	vecIdx, scalIdx string
}

func (g *gen) reg(c int) string {
	g.regs[c]++
	return fmt.Sprintf("%s%d", clsPrefix[c], g.regs[c])
}

func (g *gen) ins(format string, args ...any) {
	g.b.WriteByte('\t')
	fmt.Fprintf(&g.b, format, args...)
	g.b.WriteString(";\n")
}

func (g *gen) label(l string) { g.b.WriteString(l + ":\n") }

func (g *gen) comment(format string, args ...any) {
	g.b.WriteString("\t// ")
	fmt.Fprintf(&g.b, format, args...)
	g.b.WriteByte('\n')
}

// generate writes the kernel that runs p over bands of the given shape,
// for target t.
func generate(p *index.Program, sh kernelShape, t ptxTarget) (*kernelSpec, error) {
	if err := checkProgram(p, len(sh.Bands)); err != nil {
		return nil, fmt.Errorf("generate PTX: %w", err)
	}
	for k, b := range sh.Bands {
		if b.Type.Size() == 0 {
			return nil, fmt.Errorf("generate PTX: band %d has unknown sample type %s", k, b.Type)
		}
	}
	spec := &kernelSpec{Target: t}
	add := func(k paramKind, i int, typ string) { spec.Params = append(spec.Params, kernelParam{k, i, typ}) }
	add(parN, 0, ".u64")
	for k, b := range sh.Bands {
		add(parBand, k, ".u64")
		if b.NoData {
			add(parNoData, k, nodataParamType(b.Type))
		}
		if b.Radiometry {
			add(parAdd, k, ".f32")
			add(parScale, k, ".f32")
			add(parOffset, k, ".f32")
		}
	}
	if sh.Mask {
		add(parMask, 0, ".u64")
	}
	for o := range p.Outputs {
		add(parOut, o, ".u64")
	}
	if len(spec.Params) > MaxKernelParams {
		return nil, fmt.Errorf("generate PTX: %d indices over %d bands need %d kernel parameters, more than the %d a launch takes: split the indices over several jobs",
			len(p.Outputs), len(sh.Bands), len(spec.Params), MaxKernelParams)
	}

	g := &gen{p: p, shape: sh, konst: map[uint32]string{}, offsets: map[int]string{}}
	nb := len(sh.Bands)
	g.bandPtr, g.ndReg = make([]string, nb), make([]string, nb)
	g.addReg, g.scale, g.offReg = make([]string, nb), make([]string, nb), make([]string, nb)
	g.outPtr = make([]string, len(p.Outputs))

	// Parameters, each loaded once; pointers made global.
	var nReg string
	ptr := func(i int) string {
		r := g.reg(clsB64)
		g.ins("ld.param.u64 %s, [%s_param_%d]", r, KernelName, i)
		gp := g.reg(clsB64)
		g.ins("cvta.to.global.u64 %s, %s", gp, r)
		return gp
	}
	scalar := func(i int, typ string) string {
		c := clsB32
		if typ == ".f32" {
			c = clsF32
		}
		r := g.reg(c)
		g.ins("ld.param%s %s, [%s_param_%d]", typ, r, KernelName, i)
		return r
	}
	for i, par := range spec.Params {
		switch par.Kind {
		case parN:
			nReg = g.reg(clsB64)
			g.ins("ld.param.u64 %s, [%s_param_%d]", nReg, KernelName, i)
		case parBand:
			g.bandPtr[par.Index] = ptr(i)
		case parNoData:
			g.ndReg[par.Index] = scalar(i, par.Type)
		case parAdd:
			g.addReg[par.Index] = scalar(i, par.Type)
		case parScale:
			g.scale[par.Index] = scalar(i, par.Type)
		case parOffset:
			g.offReg[par.Index] = scalar(i, par.Type)
		case parMask:
			g.maskPtr = ptr(i)
		case parOut:
			g.outPtr[par.Index] = ptr(i)
		}
	}
	// The program's constants and NaN, in registers before the loop.
	g.nan = g.reg(clsF32)
	g.ins("mov.f32 %s, 0f7FC00000", g.nan)
	for _, c := range p.Code {
		if c.Op == index.OpConst || c.Op.HasK() {
			bits := math.Float32bits(c.K)
			if _, ok := g.konst[bits]; !ok {
				r := g.reg(clsF32)
				g.ins("mov.f32 %s, 0f%08X", r, bits)
				g.konst[bits] = r
			}
		}
	}

	// Thread index, stride, whole vectors.
	ctaid, ntid, tid, nctaid := g.reg(clsB32), g.reg(clsB32), g.reg(clsB32), g.reg(clsB32)
	g.ins("mov.u32 %s, %%ctaid.x", ctaid)
	g.ins("mov.u32 %s, %%ntid.x", ntid)
	g.ins("mov.u32 %s, %%tid.x", tid)
	g.ins("mov.u32 %s, %%nctaid.x", nctaid)
	gid, tid64, stride, nv := g.reg(clsB64), g.reg(clsB64), g.reg(clsB64), g.reg(clsB64)
	g.ins("mul.wide.u32 %s, %s, %s", gid, ctaid, ntid)
	g.ins("cvt.u64.u32 %s, %s", tid64, tid)
	g.ins("add.u64 %s, %s, %s", gid, gid, tid64)
	g.ins("mul.wide.u32 %s, %s, %s", stride, nctaid, ntid)
	g.ins("shr.u64 %s, %s, 2", nv, nReg)
	g.vecIdx = g.reg(clsB64)
	g.ins("mov.u64 %s, %s", g.vecIdx, gid)
	skip := g.reg(clsPred)
	g.ins("setp.ge.u64 %s, %s, %s", skip, g.vecIdx, nv)
	g.ins("@%s bra $L__tail", skip)

	g.label("$L__loop")
	g.comment("pixels 4v to 4v+3")
	g.offsets = map[int]string{}
	g.body(kernelLanes, g.vecIdx)
	g.ins("add.u64 %s, %s, %s", g.vecIdx, g.vecIdx, stride)
	again := g.reg(clsPred)
	g.ins("setp.lt.u64 %s, %s, %s", again, g.vecIdx, nv)
	g.ins("@%s bra $L__loop", again)

	g.label("$L__tail")
	g.comment("the last n %% 4 pixels, one per thread")
	rem := g.reg(clsB64)
	g.ins("and.b64 %s, %s, 3", rem, nReg)
	done := g.reg(clsPred)
	g.ins("setp.ge.u64 %s, %s, %s", done, gid, rem)
	g.ins("@%s bra $L__done", done)
	g.scalIdx = g.reg(clsB64)
	g.ins("shl.b64 %s, %s, 2", g.scalIdx, nv)
	g.ins("add.u64 %s, %s, %s", g.scalIdx, g.scalIdx, gid)
	g.offsets = map[int]string{}
	g.body(1, g.scalIdx)
	g.label("$L__done")
	g.ins("ret")

	var out strings.Builder
	out.WriteString("//\n// Generated by Canopy (compute/cudaback) from the index program\n")
	for _, l := range strings.Split(strings.TrimRight(p.String(), "\n"), "\n") {
		out.WriteString("//   " + l + "\n")
	}
	for k, b := range sh.Bands {
		fmt.Fprintf(&out, "// band %d (%s): %s, nodata %v, radiometry %v\n", k, p.Inputs[k], b.Type, b.NoData, b.Radiometry)
	}
	fmt.Fprintf(&out, "// mask %v\n//\n\n", sh.Mask)
	fmt.Fprintf(&out, ".version %d.%d\n.target sm_%d\n.address_size 64\n\n", t.ISA/10, t.ISA%10, t.Arch)
	fmt.Fprintf(&out, ".visible .entry %s(\n", KernelName)
	for i, par := range spec.Params {
		sep := ","
		if i == len(spec.Params)-1 {
			sep = ""
		}
		fmt.Fprintf(&out, "\t.param %s %s_param_%d%s\n", par.Type, KernelName, i, sep)
	}
	fmt.Fprintf(&out, ")\n.maxntid %d, 1, 1\n{\n", KernelBlock)
	for c := range numCls {
		fmt.Fprintf(&out, "\t.reg %s %s<%d>;\n", clsType[c], clsPrefix[c], g.regs[c]+1)
	}
	out.WriteByte('\n')
	out.WriteString(g.b.String())
	out.WriteString("}\n")
	spec.PTX = out.String()
	return spec, nil
}

// offset returns the byte offset idx << shift, computed once per body.
func (g *gen) offset(idx string, shift int) string {
	if shift == 0 {
		return idx
	}
	if r, ok := g.offsets[shift]; ok {
		return r
	}
	r := g.reg(clsB64)
	g.ins("shl.b64 %s, %s, %d", r, idx, shift)
	g.offsets[shift] = r
	return r
}

// addr is base + offset of element idx of elemBytes bytes.
func (g *gen) addr(base, idx string, elemBytes int) string {
	shift := map[int]int{1: 0, 2: 1, 4: 2, 8: 3, 16: 4}[elemBytes]
	a := g.reg(clsB64)
	g.ins("add.u64 %s, %s, %s", a, base, g.offset(idx, shift))
	return a
}

// body computes lanes (4 or 1) pixels starting at vector or pixel idx:
// every load first, then the program per lane, then the stores.
func (g *gen) body(lanes int, idx string) {
	p, sh := g.p, g.shape
	in := make([][]string, lanes) // in[lane][band]
	for l := range in {
		in[l] = make([]string, len(sh.Bands))
	}
	for k, b := range sh.Bands {
		size := b.Type.Size()
		a := g.addr(g.bandPtr[k], idx, size*lanes)
		raw := g.load(b.Type, a, lanes)
		for l := range lanes {
			in[l][k] = g.convert(k, b, raw[l])
		}
	}
	var masked []string
	if sh.Mask {
		a := g.addr(g.maskPtr, idx, lanes)
		masked = make([]string, lanes)
		for l, m := range g.load(compute.U8, a, lanes) {
			masked[l] = g.reg(clsPred)
			g.ins("setp.ne.u32 %s, %s, 0", masked[l], m)
		}
	}
	outs := make([][]string, len(p.Outputs)) // outs[output][lane]
	for o := range outs {
		outs[o] = make([]string, lanes)
	}
	for l := range lanes {
		if lanes > 1 {
			g.comment("pixel 4v+%d", l)
		}
		res := g.program(in[l])
		for o, v := range res {
			if masked != nil {
				d := g.reg(clsF32)
				g.ins("selp.f32 %s, %s, %s, %s", d, g.nan, v, masked[l])
				v = d
			}
			outs[o][l] = v
		}
	}
	for o := range outs {
		a := g.addr(g.outPtr[o], idx, 4*lanes)
		if lanes == 1 {
			g.ins("st.global.f32 [%s], %s", a, outs[o][0])
		} else {
			g.ins("st.global.v4.f32 [%s], {%s}", a, strings.Join(outs[o], ", "))
		}
	}
}

// load reads lanes samples of type t at address a and returns, per lane,
// the stored value: a .b32 register holding the integer (zero- or
// sign-extended), or an .f32 register for float bands.
func (g *gen) load(t compute.DataType, a string, lanes int) []string {
	out := make([]string, lanes)
	if lanes == 1 {
		c, typ := clsB32, map[compute.DataType]string{compute.U8: ".u8", compute.U16: ".u16", compute.I16: ".s16",
			compute.U32: ".u32", compute.I32: ".s32", compute.F32: ".f32"}[t]
		if t == compute.F32 {
			c = clsF32
		}
		out[0] = g.reg(c)
		g.ins("ld.global.nc%s %s, [%s]", typ, out[0], a)
		return out
	}
	switch t {
	case compute.U8: // four bytes in one word
		w := g.reg(clsB32)
		g.ins("ld.global.nc.u32 %s, [%s]", w, a)
		for l := range lanes {
			src := w
			if l > 0 {
				src = g.reg(clsB32)
				g.ins("shr.u32 %s, %s, %d", src, w, 8*l)
			}
			if l == 3 {
				out[l] = src
				continue
			}
			out[l] = g.reg(clsB32)
			g.ins("and.b32 %s, %s, 255", out[l], src)
		}
	case compute.U16, compute.I16: // two samples in each of two words
		w := [2]string{g.reg(clsB32), g.reg(clsB32)}
		g.ins("ld.global.nc.v2.u32 {%s, %s}, [%s]", w[0], w[1], a)
		for l := range lanes {
			word := w[l/2]
			out[l] = g.reg(clsB32)
			switch {
			case t == compute.U16 && l%2 == 0:
				g.ins("and.b32 %s, %s, 65535", out[l], word)
			case t == compute.U16:
				g.ins("shr.u32 %s, %s, 16", out[l], word)
			case l%2 == 0: // low half, sign-extended
				s := g.reg(clsB32)
				g.ins("shl.b32 %s, %s, 16", s, word)
				g.ins("shr.s32 %s, %s, 16", out[l], s)
			default:
				g.ins("shr.s32 %s, %s, 16", out[l], word)
			}
		}
	case compute.U32, compute.I32:
		for l := range out {
			out[l] = g.reg(clsB32)
		}
		g.ins("ld.global.nc.v4.u32 {%s}, [%s]", strings.Join(out, ", "), a)
	case compute.F32:
		for l := range out {
			out[l] = g.reg(clsF32)
		}
		g.ins("ld.global.nc.v4.f32 {%s}, [%s]", strings.Join(out, ", "), a)
	}
	return out
}

// convert turns band k's stored value raw into its physical float32
// value, NaN where it is nodata: compute.Job.Value32.
func (g *gen) convert(k int, b bandShape, raw string) string {
	isInt, signed := intType(b.Type)
	v := raw
	var nd string
	if b.NoData {
		nd = g.reg(clsPred)
		typ := ".f32"
		if isInt {
			typ = ".u32"
			if signed {
				typ = ".s32"
			}
		}
		g.ins("setp.eq%s %s, %s, %s", typ, nd, raw, g.ndReg[k])
	}
	if isInt {
		v = g.reg(clsF32)
		typ := ".u32"
		if signed {
			typ = ".s32"
		}
		g.ins("cvt.rn.f32%s %s, %s", typ, v, raw)
	}
	if b.Radiometry {
		a, m, o := g.reg(clsF32), g.reg(clsF32), g.reg(clsF32)
		g.ins("add.rn.f32 %s, %s, %s", a, v, g.addReg[k])
		g.ins("mul.rn.f32 %s, %s, %s", m, a, g.scale[k])
		g.ins("add.rn.f32 %s, %s, %s", o, m, g.offReg[k])
		v = o
	}
	if nd != "" {
		d := g.reg(clsF32)
		g.ins("selp.f32 %s, %s, %s, %s", d, g.nan, v, nd)
		v = d
	}
	return v
}

// program emits the program for one pixel whose inputs are in (one .f32
// register per input) and returns the register of each output.
func (g *gen) program(in []string) []string {
	p := g.p
	r := make([]string, p.NumRegs)
	un := func(op, a string) string {
		d := g.reg(clsF32)
		g.ins("%s %s, %s", op, d, a)
		return d
	}
	bin := func(op, a, b string) string {
		d := g.reg(clsF32)
		g.ins("%s %s, %s, %s", op, d, a, b)
		return d
	}
	// div is a / b, NaN where b == 0 (either sign).
	div := func(a, b string) string {
		q := bin("div.rn.f32", a, b)
		z := g.reg(clsPred)
		g.ins("setp.eq.f32 %s, %s, 0f00000000", z, b)
		d := g.reg(clsF32)
		g.ins("selp.f32 %s, %s, %s, %s", d, g.nan, q, z)
		return d
	}
	// minmax is min.f32 or max.f32 made NaN when an operand is NaN
	// (testB false: b is a constant, never NaN).
	minmax := func(op, a, b string, testB bool) string {
		m := bin(op, a, b)
		n := g.reg(clsPred)
		if testB {
			g.ins("setp.nan.f32 %s, %s, %s", n, a, b)
		} else {
			g.ins("setp.nan.f32 %s, %s, %s", n, a, a)
		}
		d := g.reg(clsF32)
		g.ins("selp.f32 %s, %s, %s, %s", d, g.nan, m, n)
		return d
	}
	for _, c := range p.Code {
		k := g.konst[math.Float32bits(c.K)]
		var a, b string
		if c.Op.Regs() >= 1 {
			a = r[c.A]
		}
		if c.Op.Regs() == 2 {
			b = r[c.B]
		}
		var d string
		switch c.Op {
		case index.OpLoad:
			d = in[c.A]
		case index.OpConst:
			d = k
		case index.OpAdd:
			d = bin("add.rn.f32", a, b)
		case index.OpSub:
			d = bin("sub.rn.f32", a, b)
		case index.OpMul:
			d = bin("mul.rn.f32", a, b)
		case index.OpDiv:
			d = div(a, b)
		case index.OpNeg:
			d = un("neg.f32", a)
		case index.OpAbs:
			d = un("abs.f32", a)
		case index.OpSqrt:
			d = un("sqrt.rn.f32", a)
		case index.OpMin:
			d = minmax("min.f32", a, b, true)
		case index.OpMax:
			d = minmax("max.f32", a, b, true)
		case index.OpAddK:
			d = bin("add.rn.f32", a, k)
		case index.OpSubK:
			d = bin("sub.rn.f32", a, k)
		case index.OpKSub:
			d = bin("sub.rn.f32", k, a)
		case index.OpMulK:
			d = bin("mul.rn.f32", a, k)
		case index.OpDivK: // K is never zero
			d = bin("div.rn.f32", a, k)
		case index.OpKDiv:
			d = div(k, a)
		case index.OpMinK:
			d = minmax("min.f32", a, k, false)
		case index.OpMaxK:
			d = minmax("max.f32", a, k, false)
		case index.OpFinite: // |a| < inf is false for ±Inf and NaN
			m := un("abs.f32", a)
			fin := g.reg(clsPred)
			g.ins("setp.lt.f32 %s, %s, 0f7F800000", fin, m)
			d = g.reg(clsF32)
			g.ins("selp.f32 %s, %s, %s, %s", d, a, g.nan, fin)
		}
		r[c.Dst] = d
	}
	outs := make([]string, len(p.Outputs))
	for i, o := range p.Outputs {
		outs[i] = r[o]
	}
	return outs
}

// shapeOf is the kernel shape of j's bands and mask.
func shapeOf(j *compute.Job) kernelShape {
	sh := kernelShape{Mask: j.Mask != nil}
	for _, b := range j.Bands {
		has, _ := nodataValue(b)
		sh.Bands = append(sh.Bands, bandShape{Type: b.Plane.Type, NoData: has, Radiometry: !b.Radiometry.IsIdentity()})
	}
	return sh
}

// nodataValue is the kernel parameter for b's nodata value: uint32, int32
// or float32 by the stored type; has is false when no stored value can
// equal it (none given, NaN, not an integer of the type's range, or not a
// float32), so that the kernel compares nothing, as compute.Job.Value32
// (which compares in float64) finds no match either.
func nodataValue(b compute.BandInput) (has bool, v any) {
	if !b.HasNoData || math.IsNaN(b.NoData) {
		return false, nil
	}
	nd := b.NoData
	isInt, _ := intType(b.Plane.Type)
	if isInt && nd != math.Trunc(nd) {
		return false, nil
	}
	switch b.Plane.Type {
	case compute.U8:
		return nd >= 0 && nd <= math.MaxUint8, uint32(max(0, min(nd, math.MaxUint8)))
	case compute.U16:
		return nd >= 0 && nd <= math.MaxUint16, uint32(max(0, min(nd, math.MaxUint16)))
	case compute.U32:
		return nd >= 0 && nd <= math.MaxUint32, uint32(max(0, min(nd, math.MaxUint32)))
	case compute.I16:
		return nd >= math.MinInt16 && nd <= math.MaxInt16, int32(max(math.MinInt16, min(nd, math.MaxInt16)))
	case compute.I32:
		return nd >= math.MinInt32 && nd <= math.MaxInt32, int32(max(math.MinInt32, min(nd, math.MaxInt32)))
	case compute.F32:
		f := float32(nd)
		return float64(f) == nd, f
	}
	return false, nil
}
