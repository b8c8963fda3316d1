package cudaback

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"canopy/compute"
	"canopy/compute/computetest"
	"canopy/compute/index"
	"canopy/native/cuda"
)

var testTarget = ptxTarget{ISA: 78, Arch: 90}

func TestDriverISA(t *testing.T) {
	for v, want := range map[int]int{13000: 90, 13010: 90, 12090: 88, 12080: 87, 12060: 85, 12050: 85, 12040: 84, 12000: 80,
		11080: 78, 11040: 74, 11000: 70, 10020: 65, 10000: 63, 9020: 62, 9000: 60, 8000: 0} {
		if got := driverISA(v); got != want {
			t.Errorf("driverISA(%d) = %d, want %d", v, got, want)
		}
	}
}

func TestChooseTarget(t *testing.T) {
	for _, c := range []struct {
		major, minor, driver int
		want                 ptxTarget
	}{
		{9, 0, 13000, ptxTarget{78, 90}},   // H200, CUDA 13
		{9, 0, 11080, ptxTarget{78, 90}},   // Hopper's first driver
		{9, 0, 11070, ptxTarget{71, 86}},   // too old for sm_90: Ampere's PTX, compiled for Hopper
		{8, 9, 12040, ptxTarget{78, 89}},   // Ada
		{8, 7, 12040, ptxTarget{71, 86}},   // Orin: sm_86 PTX runs there
		{8, 0, 11000, ptxTarget{70, 80}},   // A100
		{7, 5, 10020, ptxTarget{63, 75}},   // Turing
		{10, 0, 12080, ptxTarget{86, 100}}, // Blackwell
		{10, 3, 12060, ptxTarget{78, 90}},  // a driver without sm_100: Hopper's PTX
		{12, 0, 13000, ptxTarget{87, 120}}, // RTX 50
		{12, 1, 12090, ptxTarget{87, 120}},
		{11, 0, 13000, ptxTarget{86, 100}},
	} {
		got, err := chooseTarget(c.major, c.minor, c.driver)
		if err != nil || got != c.want {
			t.Errorf("chooseTarget(%d.%d, %d) = %v, %v; want %v", c.major, c.minor, c.driver, got, err, c.want)
		}
	}
	for _, c := range [][3]int{{6, 1, 12000}, {9, 0, 8000}} {
		if got, err := chooseTarget(c[0], c[1], c[2]); err == nil {
			t.Errorf("chooseTarget(%d.%d, %d) = %v, want an error", c[0], c[1], c[2], got)
		} else if !strings.Contains(err.Error(), fmt.Sprintf("%d.%d", c[0], c[1])) {
			t.Errorf("error %q does not name the compute capability", err)
		}
	}
}

func TestNodataValue(t *testing.T) {
	band := func(typ compute.DataType, nd float64, has bool) compute.BandInput {
		return compute.BandInput{Plane: compute.NewPlane(typ, 1, 1), NoData: nd, HasNoData: has, Radiometry: compute.Identity()}
	}
	for _, c := range []struct {
		typ  compute.DataType
		nd   float64
		has  bool
		want any
	}{
		{compute.U8, 255, true, uint32(255)},
		{compute.U8, 256, false, nil},
		{compute.U8, -1, false, nil},
		{compute.U8, 1.5, false, nil},
		{compute.U16, 0, true, uint32(0)},
		{compute.U16, 65535, true, uint32(65535)},
		{compute.U16, -9999, false, nil},
		{compute.I16, -9999, true, int32(-9999)},
		{compute.I16, -32769, false, nil},
		{compute.U32, 4294967295, true, uint32(4294967295)},
		{compute.I32, -2147483648, true, int32(-2147483648)},
		{compute.I32, 2147483648, false, nil},
		{compute.F32, -9999, true, float32(-9999)},
		{compute.F32, math.Inf(-1), true, float32(math.Inf(-1))},
		{compute.F32, 0.1, false, nil}, // no float32 equals 0.1 exactly
		{compute.F32, math.NaN(), false, nil},
	} {
		has, v := nodataValue(band(c.typ, c.nd, true))
		if has != c.has || (has && v != c.want) {
			t.Errorf("%s nodata %g: %v %v (%T), want %v %v", c.typ, c.nd, has, v, v, c.has, c.want)
		}
		// Where the kernel compares nothing, no stored value may equal
		// the nodata value in compute's float64 comparison either, and
		// where it compares, it compares the same value.
		if has {
			p := compute.NewPlane(c.typ, 1, 1)
			b := band(c.typ, c.nd, true)
			b.Plane = p
			setSample(p, v)
			if p.At(0) != c.nd {
				t.Errorf("%s nodata %g: the parameter %v stores as %g", c.typ, c.nd, v, p.At(0))
			}
		}
	}
	if has, _ := nodataValue(band(compute.U16, 0, false)); has {
		t.Error("a band without nodata compares")
	}
}

func setSample(p compute.Plane, v any) {
	switch p.Type {
	case compute.U8:
		p.U8()[0] = uint8(v.(uint32))
	case compute.U16:
		p.U16()[0] = uint16(v.(uint32))
	case compute.I16:
		p.I16()[0] = int16(v.(int32))
	case compute.U32:
		p.U32()[0] = v.(uint32)
	case compute.I32:
		p.I32()[0] = v.(int32)
	case compute.F32:
		p.F32()[0] = v.(float32)
	}
}

// everyOp is a program using every op once (K ops with distinct
// constants), over two inputs, with two outputs.
func everyOp() *index.Program {
	I := func(op index.Op, dst, a, b uint16, k float32) index.Instr {
		return index.Instr{Op: op, Dst: dst, A: a, B: b, K: k}
	}
	return &index.Program{
		Inputs:  []string{"red", "nir"},
		NumRegs: 4,
		Code: []index.Instr{
			I(index.OpLoad, 0, 0, 0, 0),
			I(index.OpLoad, 1, 1, 0, 0),
			I(index.OpAdd, 2, 0, 1, 0),
			I(index.OpSub, 2, 2, 0, 0),
			I(index.OpMul, 2, 2, 1, 0),
			I(index.OpDiv, 2, 2, 1, 0),
			I(index.OpNeg, 2, 2, 0, 0),
			I(index.OpAbs, 2, 2, 0, 0),
			I(index.OpSqrt, 2, 2, 0, 0),
			I(index.OpMin, 2, 2, 0, 0),
			I(index.OpMax, 2, 2, 1, 0),
			I(index.OpAddK, 2, 2, 0, 1.5),
			I(index.OpSubK, 2, 2, 0, 2),
			I(index.OpKSub, 2, 2, 0, 3),
			I(index.OpMulK, 2, 2, 0, 4),
			I(index.OpDivK, 2, 2, 0, 5),
			I(index.OpKDiv, 2, 2, 0, 6),
			I(index.OpMinK, 2, 2, 0, 7),
			I(index.OpMaxK, 2, 2, 0, -8),
			I(index.OpConst, 3, 0, 0, 0.25),
			I(index.OpFinite, 3, 3, 0, 0),
			I(index.OpFinite, 2, 2, 0, 0),
		},
		Outputs: []int{2, 3},
	}
}

var (
	regRe     = regexp.MustCompile(`%(rd|r|p|f)(\d+)\b`)
	declRe    = regexp.MustCompile(`\.reg \.\w+ %(rd|r|p|f)<(\d+)>;`)
	paramUse  = regexp.MustCompile(`\[canopy_job_param_(\d+)\]`)
	paramDecl = regexp.MustCompile(`\.param (\.\w+) canopy_job_param_(\d+)`)
)

// checkStructure checks generated PTX without running it: a header,
// declared registers covering every register used, every register read
// after it is first written, every parameter declared in order and
// loaded once, and none of the instructions that would break exactness
// (fused multiply-add, approximate or flush-to-zero forms).
func checkStructure(t *testing.T, spec *kernelSpec) {
	t.Helper()
	src := spec.PTX
	for _, want := range []string{
		fmt.Sprintf(".version %d.%d\n.target sm_%d\n.address_size 64\n", spec.Target.ISA/10, spec.Target.ISA%10, spec.Target.Arch),
		".visible .entry canopy_job(", ".maxntid 256, 1, 1", "\tret;\n",
	} {
		if !strings.Contains(src, want) {
			t.Fatalf("PTX lacks %q", want)
		}
	}
	for _, bad := range []string{"fma", "mad.f32", "mad.rn", ".ftz", ".approx", ".full", "rcp", "ex2", "lg2"} {
		if strings.Contains(src, bad) {
			t.Fatalf("PTX contains %q, which breaks the float32 definition", bad)
		}
	}
	decl := map[string]int{}
	for _, m := range declRe.FindAllStringSubmatch(src, -1) {
		var n int
		fmt.Sscan(m[2], &n)
		decl[m[1]] = n
	}
	if len(decl) != 4 {
		t.Fatalf("register declarations: %v", decl)
	}
	written := map[string]bool{}
	_, body, _ := strings.Cut(src, "{\n")
	for ln, line := range strings.Split(body, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "//") || strings.HasPrefix(line, ".reg") || strings.HasSuffix(line, ":") || line == "}" {
			continue
		}
		for _, m := range regRe.FindAllStringSubmatch(line, -1) {
			var n int
			fmt.Sscan(m[2], &n)
			if n >= decl[m[1]] {
				t.Fatalf("body line %d: %s beyond the %d declared: %s", ln, m[0], decl[m[1]], line)
			}
		}
		guard := ""
		if strings.HasPrefix(line, "@") {
			guard, line, _ = strings.Cut(line[1:], " ")
		}
		if guard != "" && !written[guard] {
			t.Fatalf("body line %d: guard %s read before written: %s", ln, guard, line)
		}
		op, rest, _ := strings.Cut(strings.TrimSuffix(line, ";"), " ")
		ops := splitOperands(rest)
		var dst []string
		srcOps := ops
		if !strings.HasPrefix(op, "st.") && op != "bra" && op != "ret" && len(ops) > 0 {
			dst = regRe.FindAllString(ops[0], -1)
			srcOps = ops[1:]
		}
		for _, o := range srcOps {
			for _, r := range regRe.FindAllString(o, -1) {
				if !written[r] {
					t.Fatalf("body line %d: %s read before it is written: %s", ln, r, line)
				}
			}
		}
		for _, r := range dst {
			written[r] = true
		}
	}
	decls := paramDecl.FindAllStringSubmatch(src, -1)
	if len(decls) != len(spec.Params) {
		t.Fatalf("%d parameters declared, spec has %d", len(decls), len(spec.Params))
	}
	for i, m := range decls {
		if m[2] != fmt.Sprint(i) || m[1] != spec.Params[i].Type {
			t.Fatalf("parameter %d declared %s %s, spec says %s", i, m[1], m[2], spec.Params[i].Type)
		}
	}
	uses := map[string]int{}
	for _, m := range paramUse.FindAllStringSubmatch(src, -1) {
		uses[m[1]]++
	}
	for i := range spec.Params {
		if uses[fmt.Sprint(i)] != 1 {
			t.Fatalf("parameter %d loaded %d times", i, uses[fmt.Sprint(i)])
		}
	}
}

func f32Band() bandShape { return bandShape{Type: compute.F32} }

// Every op becomes its PTX, once per pixel of the vector body (four) and
// once in the tail.
func TestGenerateEveryOp(t *testing.T) {
	p := everyOp()
	spec, err := generate(p, kernelShape{Bands: []bandShape{f32Band(), f32Band()}}, testTarget)
	if err != nil {
		t.Fatal(err)
	}
	checkStructure(t, spec)
	const per = kernelLanes + 1
	for ins, n := range map[string]int{
		"add.rn.f32": 2, "sub.rn.f32": 3, "mul.rn.f32": 2, "div.rn.f32": 3, "neg.f32": 1, "abs.f32": 3,
		"sqrt.rn.f32": 1, "min.f32": 2, "max.f32": 2, "setp.nan.f32": 4, "setp.eq.f32": 2, "setp.lt.f32": 2,
		"selp.f32": 2 + 4 + 2, // division by zero, NaN min/max, not finite
	} {
		if got := strings.Count(spec.PTX, "\t"+ins+" "); got != n*per {
			t.Errorf("%s appears %d times, want %d", ins, got, n*per)
		}
	}
	// The constants, each once, before the loop, exactly.
	_, beforeLoop, _ := strings.Cut(spec.PTX, "{\n")
	beforeLoop, _, _ = strings.Cut(beforeLoop, "$L__loop:")
	for _, k := range []float32{1.5, 2, 3, 4, 5, 6, 7, -8, 0.25} {
		imm := fmt.Sprintf("0f%08X", math.Float32bits(k))
		if strings.Count(spec.PTX, imm) != 1 || !strings.Contains(beforeLoop, imm) {
			t.Errorf("constant %g (%s) not loaded once before the loop", k, imm)
		}
	}
	if n := strings.Count(spec.PTX, "st.global.v4.f32"); n != 2 {
		t.Errorf("%d vector stores, want one per output", n)
	}
	if n := strings.Count(spec.PTX, "st.global.f32"); n != 2 {
		t.Errorf("%d tail stores, want one per output", n)
	}
}

// Each stored type is read in its own type, converted exactly, compared
// with its nodata value as stored, and converted with the three roundings
// of its radiometry.
func TestGenerateTypes(t *testing.T) {
	p, err := index.Compile([]*index.Expr{index.MustParse("nir")})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		typ              compute.DataType
		vec, scalar, cvt string
		cmp              string
	}{
		{compute.U8, "ld.global.nc.u32", "ld.global.nc.u8", "cvt.rn.f32.u32", "setp.eq.u32"},
		{compute.U16, "ld.global.nc.v2.u32", "ld.global.nc.u16", "cvt.rn.f32.u32", "setp.eq.u32"},
		{compute.I16, "ld.global.nc.v2.u32", "ld.global.nc.s16", "cvt.rn.f32.s32", "setp.eq.s32"},
		{compute.U32, "ld.global.nc.v4.u32", "ld.global.nc.u32", "cvt.rn.f32.u32", "setp.eq.u32"},
		{compute.I32, "ld.global.nc.v4.u32", "ld.global.nc.s32", "cvt.rn.f32.s32", "setp.eq.s32"},
		{compute.F32, "ld.global.nc.v4.f32", "ld.global.nc.f32", "", "setp.eq.f32"},
	} {
		for _, nd := range []bool{false, true} {
			for _, rad := range []bool{false, true} {
				for _, mask := range []bool{false, true} {
					sh := kernelShape{Bands: []bandShape{{Type: c.typ, NoData: nd, Radiometry: rad}}, Mask: mask}
					spec, err := generate(p, sh, testTarget)
					if err != nil {
						t.Fatal(err)
					}
					name := fmt.Sprintf("%s nodata %v radiometry %v mask %v", c.typ, nd, rad, mask)
					checkStructure(t, spec)
					count := func(s string) int { return strings.Count(spec.PTX, "\t"+s+" ") }
					if count(c.vec) < 1 || count(c.scalar) < 1 {
						t.Errorf("%s: loads %s / %s missing", name, c.vec, c.scalar)
					}
					if c.cvt != "" && count(c.cvt) != kernelLanes+1 {
						t.Errorf("%s: %d %s, want %d", name, count(c.cvt), c.cvt, kernelLanes+1)
					}
					if c.cvt == "" && strings.Contains(spec.PTX, "cvt.rn.f32") {
						t.Errorf("%s: a float band is converted", name)
					}
					wantCmp := 0
					if nd {
						wantCmp = kernelLanes + 1
					}
					if got := count(c.cmp); got != wantCmp && !(c.typ == compute.F32 && !nd && got == 0) {
						t.Errorf("%s: %d %s, want %d", name, got, c.cmp, wantCmp)
					}
					wantRad := 0
					if rad {
						wantRad = kernelLanes + 1
					}
					if got := count("mul.rn.f32"); got != wantRad {
						t.Errorf("%s: %d radiometry multiplies, want %d", name, got, wantRad)
					}
					if got := count("add.rn.f32"); got != 2*wantRad {
						t.Errorf("%s: %d radiometry adds, want %d", name, got, 2*wantRad)
					}
					params := 2 + 1 // n, band, output
					if nd {
						params++
					}
					if rad {
						params += 3
					}
					if mask {
						params++
					}
					if len(spec.Params) != params {
						t.Errorf("%s: %d parameters, want %d", name, len(spec.Params), params)
					}
					if mask != strings.Contains(spec.PTX, "setp.ne.u32") {
						t.Errorf("%s: mask test present %v", name, !mask)
					}
				}
			}
		}
	}
}

// Programs the generator cannot translate are errors, not broken PTX.
func TestGenerateRejects(t *testing.T) {
	good := everyOp()
	sh := kernelShape{Bands: []bandShape{f32Band(), f32Band()}}
	bad := func(edit func(p *index.Program)) *index.Program {
		p := *good
		p.Code = append([]index.Instr(nil), good.Code...)
		p.Outputs = append([]int(nil), good.Outputs...)
		edit(&p)
		return &p
	}
	for name, p := range map[string]*index.Program{
		"nil":           nil,
		"no outputs":    bad(func(p *index.Program) { p.Outputs = nil }),
		"output range":  bad(func(p *index.Program) { p.Outputs[0] = 9 }),
		"read unset":    bad(func(p *index.Program) { p.Code[2].B = 3 }),
		"dst range":     bad(func(p *index.Program) { p.Code[2].Dst = 4 }),
		"load range":    bad(func(p *index.Program) { p.Code[0].A = 2 }),
		"unknown op":    bad(func(p *index.Program) { p.Code[3].Op = 200 }),
		"inputs differ": bad(func(p *index.Program) { p.Inputs = p.Inputs[:1] }),
	} {
		if _, err := generate(p, sh, testTarget); err == nil {
			t.Errorf("%s: generated", name)
		} else if strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error of several lines: %q", name, err)
		}
	}
	// More indices than a launch's parameters.
	var exprs []*index.Expr
	for i := range MaxKernelParams {
		exprs = append(exprs, index.MustParse(fmt.Sprintf("nir * %d", i+2)))
	}
	p, err := index.Compile(exprs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := generate(p, kernelShape{Bands: []bandShape{f32Band()}}, testTarget); err == nil || !strings.Contains(err.Error(), "parameters") {
		t.Errorf("%d outputs: %v", MaxKernelParams, err)
	}
}

// The JIT's error log becomes one line naming the PTX line and its text.
func TestJITErrorMessage(t *testing.T) {
	ptx := ".version 7.8\n.target sm_90\n.address_size 64\n\tadd.rn.f32 %f1, %r2, %f3;\n"
	log := cuda.JITLog{Error: "ptxas application ptx input, line 4; error   : Arguments mismatch for instruction 'add'\nptxas fatal   : Ptx assembly aborted due to errors\n"}
	drvErr := &cuda.Error{Func: "cuModuleLoadDataEx", Code: cuda.ErrInvalidPTX, Name: "CUDA_ERROR_INVALID_PTX", Text: "a PTX JIT compilation failed"}
	e := jitError(ptx, testTarget, log, drvErr)
	msg := e.Error()
	for _, want := range []string{"PTX line 4", "Arguments mismatch for instruction 'add'", "add.rn.f32 %f1, %r2, %f3;", "sm_90"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "\n") || e.Line != 4 || !errors.Is(e, drvErr) {
		t.Errorf("error %q: line %d, unwraps to the driver error %v", msg, e.Line, errors.Is(e, drvErr))
	}
	// Without a line: the log's first line and the driver's error.
	e = jitError(ptx, testTarget, cuda.JITLog{Error: "\nptxas fatal   : Unresolved extern function 'x'\n"}, drvErr)
	if msg := e.Error(); !strings.Contains(msg, "Unresolved extern") || !strings.Contains(msg, "CUDA_ERROR_INVALID_PTX") || strings.Contains(msg, "\n") {
		t.Errorf("no line: %q", msg)
	}
	if msg := jitError(ptx, testTarget, cuda.JITLog{}, drvErr).Error(); !strings.Contains(msg, "CUDA_ERROR_INVALID_PTX") {
		t.Errorf("empty log: %q", msg)
	}
}

// simBackend runs jobs through the PTX interpreter: every catalogue index,
// random formulas and every stored type, as generated for the GPU, with a
// pipeline of small chunks and capped grids so that chunk tails and the
// grid-stride loop run.
type simBackend struct {
	t                  *testing.T
	chunkPixels, grid  int
	ran, vecs, strides int
}

func (*simBackend) Name() string { return "cuda-ptx-simulator" }
func (*simBackend) Info() compute.Info {
	return compute.Info{Name: "cuda-ptx-simulator", Available: true}
}
func (*simBackend) Close() error { return nil }

func (sb *simBackend) RunJob(j *compute.Job) (compute.Timings, error) {
	spec, err := generate(j.Program, shapeOf(j), testTarget)
	if err != nil {
		return compute.Timings{}, err
	}
	checkStructure(sb.t, spec)
	k, err := parsePTX(spec.PTX)
	if err != nil {
		return compute.Timings{}, err
	}
	mem := &simMemory{}
	jb := bufsOf(j)
	s := &state{gridCap: sb.grid, chunkPixels: sb.chunkPixels}
	for _, h := range jb.host {
		s.jobDev = append(s.jobDev, mem.alloc(h))
	}
	n := j.Pixels()
	chunks := plan(n, ChunkAlign, s.jobChunkTop(jb.bytesPerPixel()))
	for _, c := range chunks {
		g := s.jobGrid(c.hi - c.lo)
		if g*KernelBlock < (c.hi-c.lo)/kernelLanes {
			sb.strides++
		}
		if err := k.run(mem, g, KernelBlock, s.jobArgs(j, spec, &jb, c)); err != nil {
			return compute.Timings{}, fmt.Errorf("chunk [%d, %d): %w", c.lo, c.hi, err)
		}
	}
	sb.ran++
	return compute.Timings{}, nil
}

// The generated kernels compute exactly what the Go definition computes
// (computetest.Eval32Job, NaN in the same pixels, other values ==), on
// the conformance jobs of the short suite (the interpreter is slow for
// the large sizes), through the PTX interpreter.
func TestGeneratedKernelsSimulated(t *testing.T) {
	sb := &simBackend{t: t, chunkPixels: 64 << 10, grid: 3}
	for i, c := range computetest.JobCases(true) {
		if testing.Short() && i%4 != 0 {
			// -short is the race detector's run (make test), where the
			// host side is what is looked at, and a quarter of the cases
			// runs all of it; the run without it checks every case.
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			j := c.Job
			for _, o := range j.Out {
				for i := range o {
					o[i] = 12345
				}
			}
			if _, err := compute.RunJob(sb, j); err != nil {
				t.Fatal(err)
			}
			in := make([]float32, len(j.Bands))
			regs := make([]float32, j.Program.NumRegs)
			want := make([]float32, len(j.Out))
			bad := 0
			for i := range j.Pixels() {
				computetest.Eval32Job(j, i, in, regs, want)
				for o := range j.Out {
					got := j.Out[o][i]
					if got != want[o] && (got == got || want[o] == want[o]) {
						if bad++; bad <= 3 {
							t.Errorf("%s pixel %d: got %g, want %g; inputs %v", j.Names[o], i, got, want[o], in)
						}
					}
				}
			}
		})
	}
	if sb.ran == 0 || sb.strides == 0 {
		t.Errorf("%d jobs simulated, %d chunks needing the grid-stride loop", sb.ran, sb.strides)
	}
	// One chunk, a grid of one thread per vector.
	sb = &simBackend{t: t, chunkPixels: 1 << 30, grid: 0}
	j := computetest.JobCases(true)[0].Job
	if _, err := compute.RunJob(sb, j); err != nil {
		t.Fatal(err)
	}
	for _, r := range compute.VerifyJob(j) {
		if !r.OK() {
			t.Error(r)
		}
	}
}

// A wrong argument type is caught by the simulator, so the comparison of
// types above means something.
func TestSimulatorChecksArguments(t *testing.T) {
	spec, err := generate(everyOp(), kernelShape{Bands: []bandShape{{Type: compute.U16, NoData: true}, f32Band()}}, testTarget)
	if err != nil {
		t.Fatal(err)
	}
	k, err := parsePTX(spec.PTX)
	if err != nil {
		t.Fatal(err)
	}
	mem := &simMemory{}
	args := []any{uint64(4), mem.alloc(make([]byte, 8)), float32(0), mem.alloc(make([]byte, 16)), mem.alloc(make([]byte, 16)), mem.alloc(make([]byte, 16))}
	if err := k.run(mem, 1, 1, args); err == nil || !strings.Contains(err.Error(), ".u32") {
		t.Errorf("a float32 for a .u32 nodata parameter: %v", err)
	}
	args[2] = uint32(0)
	if err := k.run(mem, 1, KernelBlock, args); err != nil {
		t.Errorf("right arguments: %v", err)
	}
	args[1] = mem.alloc(make([]byte, 6)) // a band too short for its vector
	if err := k.run(mem, 1, 1, args); err == nil || !strings.Contains(err.Error(), "outside") {
		t.Errorf("short band: %v", err)
	}
}

// PTXDirEnv names a directory into which TestWritePTX writes the
// generated kernels of a few jobs, for ptxas on a machine with the CUDA
// toolkit (scripts/gpu-jit runs ptxas -arch=sm_90 on them).
const PTXDirEnv = "CANOPY_PTX_DIR"

func TestWritePTX(t *testing.T) {
	dir := os.Getenv(PTXDirEnv)
	if dir == "" {
		t.Skipf("set %s to write the generated PTX of a few jobs", PTXDirEnv)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name string, spec *kernelSpec) {
		if err := os.WriteFile(filepath.Join(dir, name+".ptx"), []byte(spec.PTX), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	spec, err := generate(everyOp(), kernelShape{Bands: []bandShape{f32Band(), f32Band()}}, testTarget)
	if err != nil {
		t.Fatal(err)
	}
	write("every-op", spec)
	for i, c := range computetest.JobCases(true) {
		targets := []ptxTarget{testTarget}
		if i < 3 || strings.Contains(c.Name, "evi alone") {
			targets = append(targets, ptxTarget{ISA: 63, Arch: 75})
		}
		for _, tg := range targets {
			spec, err := generate(c.Job.Program, shapeOf(c.Job), tg)
			if err != nil {
				t.Fatal(err)
			}
			write(fmt.Sprintf("%02d-sm%d-%s", i, tg.Arch, strings.NewReplacer(" ", "-").Replace(c.Name)), spec)
		}
	}
}

// Chunks carry 192 MiB (both ways) when one direction dominates, 64 MiB
// when the two are balanced, always a multiple of ChunkAlign pixels.
func TestJobChunkTop(t *testing.T) {
	s := &state{chunkPixels: DefaultChunkPixels}
	for _, c := range []struct{ up, down, want int }{
		{12, 4, 192 << 20 / 16 / ChunkAlign * ChunkAlign}, // EVI over float32
		{4, 4, 64 << 20 / 8},                              // NDVI over uint16
		{6, 8, 64 << 20 / 14 / ChunkAlign * ChunkAlign},   // two indices over three uint16 bands
		{14, 40, 192 << 20 / 54 / ChunkAlign * ChunkAlign},
		{0, 4, 192 << 20 / 4}, // a formula of constants
		{1 << 30, 4, ChunkAlign},
	} {
		if got := s.jobChunkTop(c.up, c.down); got != c.want || got%ChunkAlign != 0 {
			t.Errorf("jobChunkTop(%d, %d) = %d, want %d", c.up, c.down, got, c.want)
		}
	}
	s.jobChunkBytes = 32 << 20
	if got := s.jobChunkTop(12, 4); got != 2<<20 {
		t.Errorf("with 32 MiB chunks: %d", got)
	}
}
