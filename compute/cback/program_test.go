package cback

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"unsafe"

	"canopy/compute/index"
	"canopy/native/cpu"
)

// Every index.Op has an op of the C interpreter, and the interpreter
// has no unfused op compute/index lacks.
func TestOpNumbers(t *testing.T) {
	for op := index.OpLoad; int(op) < len(cpuOps); op++ {
		if strings.HasPrefix(op.String(), "Op(") {
			t.Errorf("op %d is unknown to compute/index", op)
		}
		if op != index.OpLoad && cpuOps[op] == cpu.OpLoad {
			t.Errorf("%s has no op in the C interpreter", op)
		}
	}
	if s := index.Op(len(cpuOps)).String(); !strings.HasPrefix(s, "Op(") {
		t.Errorf("compute/index has op %s (number %d), which the C interpreter lacks", s, len(cpuOps))
	}
	if cpu.NumOps != len(cpuOps) {
		t.Errorf("C has %d ops, the table %d", cpu.NumOps, len(cpuOps))
	}
}

// eachISA runs f with the interpreter this CPU picks and with the portable
// C ops.
func eachISA(t *testing.T, f func(t *testing.T)) {
	best := cpu.ProgramISA()
	t.Run(best, f)
	if best != "scalar" {
		cpu.UseScalar(true)
		defer cpu.UseScalar(false)
		t.Run("scalar", f)
	}
}

// specials are the awkward float32 values every op is tried on, in every
// pair.
var specials = []float32{0, float32(math.Copysign(0, -1)), 1, -1, 0.5, -2.5, 3e38, -3e38,
	float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 1e-45, -1e-45, 1.17549435e-38,
	0.1, 7, 1e-20, 1e20, 0.30000001}

func same(a, b float32) bool { return a == b || (a != a && b != b) }

func f32Bytes(s []float32) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), 4*len(s))
}

// Every op, on every pair of special values (and, for the ops with a
// constant, every special constant the compiler can produce), equals
// index.Program.Eval32, lane by lane, in the vector body and in the tail.
func TestOpsMatchEval32(t *testing.T) {
	var as, bs []float32
	for _, a := range specials {
		for _, b := range specials {
			as, bs = append(as, a), append(bs, b)
		}
	}
	// Pad to two blocks and a tail, shuffled so that every pair meets
	// every lane position.
	g := rand.New(rand.NewPCG(1, 2))
	for len(as) < 2*cpu.Block+13 {
		as = append(as, specials[g.IntN(len(specials))])
		bs = append(bs, specials[g.IntN(len(specials))])
	}
	n := len(as)
	bands := []cpu.Band{{Type: cpu.F32, Data: f32Bytes(as)}, {Type: cpu.F32, Data: f32Bytes(bs)}}
	var ks []float32
	for _, k := range specials {
		if k == k { // the compiler never leaves a NaN constant
			ks = append(ks, k)
		}
	}
	eachISA(t, func(t *testing.T) {
		for op := index.OpConst; int(op) < cpu.NumOps; op++ {
			kvals := []float32{0}
			if op.HasK() {
				kvals = ks
			}
			for _, k := range kvals {
				if (op == index.OpDivK) && k == 0 {
					continue // x / 0 is folded to NaN, never emitted
				}
				prog := &index.Program{Inputs: []string{"red", "nir"}, NumRegs: 3,
					Code: []index.Instr{
						{Op: index.OpLoad, Dst: 0, A: 0},
						{Op: index.OpLoad, Dst: 1, A: 1},
						{Op: op, Dst: 2, A: 0, B: 1, K: k},
					}, Outputs: []int{2}}
				out := make([]float32, n)
				runProgram(t, prog, n, bands, [][]float32{out}, nil)
				in, regs, want := make([]float32, 2), make([]float32, 3), make([]float32, 1)
				bad := 0
				for i := range n {
					in[0], in[1] = as[i], bs[i]
					prog.Eval32(in, regs, want)
					if !same(out[i], want[0]) {
						if bad++; bad <= 3 {
							t.Errorf("%s(%g, %g, k=%g) pixel %d: got %g, want %g", op, as[i], bs[i], k, i, out[i], want[0])
						}
					}
				}
			}
		}
	})
}

func runProgram(t *testing.T, prog *index.Program, n int, bands []cpu.Band, out [][]float32, mask []uint8) {
	t.Helper()
	var p cpu.Program
	if err := p.Prepare(marshalled(prog), n, bands, out, mask, n > 1000); err != nil {
		t.Fatal(err)
	}
	defer p.Release()
	s := p.NewScratch()
	// Two calls, split at an odd pixel: spans need not be aligned.
	mid := n / 3
	if err := p.Run(s, 0, mid); err != nil {
		t.Fatal(err)
	}
	if err := p.Run(s, mid, n); err != nil {
		t.Fatal(err)
	}
}

// loadCase is one band of samples and how to convert them.
type loadCase struct {
	name string
	band cpu.Band
	// dn returns sample i as float64, and float32(sample) as Go converts it.
	dn func(i int) (float64, float32)
	n  int
}

func u32Bytes(s []uint32) []byte { return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), 4*len(s)) }
func i32Bytes(s []int32) []byte  { return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), 4*len(s)) }
func u16Bytes(s []uint16) []byte { return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), 2*len(s)) }
func i16Bytes(s []int16) []byte  { return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), 2*len(s)) }

// loadCases draws samples of every type, with the values whose conversion
// is delicate: uint32 above 2^31 and 2^24 (ties to even, which a signed
// conversion or a truncation gets wrong), the extremes of each type, and
// the nodata value itself.
func loadCases(g *rand.Rand, n int) []loadCase {
	u8 := make([]uint8, n)
	u16 := make([]uint16, n)
	i16 := make([]int16, n)
	u32 := make([]uint32, n)
	i32 := make([]int32, n)
	f32 := make([]float32, n)
	u32special := []uint32{0, 1, 1<<24 + 1, 1<<24 + 3, 1<<25 + 2, 1<<25 + 6, 1<<31 - 1, 1 << 31, 1<<31 + 1, 1<<31 + 128,
		1<<31 + 384, 1<<32 - 1, 1<<32 - 128, 1<<32 - 129, 0x8000_0081, 0xffff_ff7f, 0xffff_ff80, 12345}
	i32special := []int32{0, -1, 1<<24 + 1, -(1<<24 + 1), math.MaxInt32, math.MinInt32, math.MinInt32 + 1, 1<<25 + 2, -9999}
	for i := range n {
		u8[i] = uint8(g.IntN(256))
		u16[i] = uint16(g.IntN(65536))
		i16[i] = int16(g.IntN(65536) - 32768)
		if g.IntN(2) == 0 {
			u32[i] = u32special[g.IntN(len(u32special))]
		} else {
			u32[i] = g.Uint32()
		}
		if g.IntN(2) == 0 {
			i32[i] = i32special[g.IntN(len(i32special))]
		} else {
			i32[i] = int32(g.Uint32())
		}
		f32[i] = specials[g.IntN(len(specials))]
		if g.IntN(5) == 0 {
			u8[i], u16[i], i16[i], u32[i], i32[i], f32[i] = 255, 0, -9999, 1<<32-1, -9999, 0.1
		}
	}
	return []loadCase{
		{"uint8", cpu.Band{Type: cpu.U8, Data: u8, NoData: 255, HasNoData: true},
			func(i int) (float64, float32) { return float64(u8[i]), float32(u8[i]) }, n},
		{"uint16", cpu.Band{Type: cpu.U16, Data: u16Bytes(u16), NoData: 0, HasNoData: true},
			func(i int) (float64, float32) { return float64(u16[i]), float32(u16[i]) }, n},
		{"int16", cpu.Band{Type: cpu.I16, Data: i16Bytes(i16), NoData: -9999, HasNoData: true},
			func(i int) (float64, float32) { return float64(i16[i]), float32(i16[i]) }, n},
		{"uint32", cpu.Band{Type: cpu.U32, Data: u32Bytes(u32), NoData: 1<<32 - 1, HasNoData: true},
			func(i int) (float64, float32) { return float64(u32[i]), float32(u32[i]) }, n},
		{"int32", cpu.Band{Type: cpu.I32, Data: i32Bytes(i32), NoData: -9999, HasNoData: true},
			func(i int) (float64, float32) { return float64(i32[i]), float32(i32[i]) }, n},
		{"float32", cpu.Band{Type: cpu.F32, Data: f32Bytes(f32), NoData: float64(float32(0.1)), HasNoData: true},
			func(i int) (float64, float32) { return float64(f32[i]), f32[i] }, n},
	}
}

// Every stored type loads as Go converts it: float32(x) (one rounding to
// nearest even), then ((v + Add) * Scale) + Offset in three float32
// roundings, NaN where float64(x) equals NoData; with and without
// radiometry and nodata, and with nodata values no sample can equal.
func TestLoadsMatchGo(t *testing.T) {
	g := rand.New(rand.NewPCG(3, 4))
	n := 3*cpu.Block + 7
	prog := &index.Program{Inputs: []string{"red"}, NumRegs: 1,
		Code: []index.Instr{{Op: index.OpLoad, Dst: 0, A: 0}}, Outputs: []int{0}}
	rads := []struct {
		on                 bool
		add, scale, offset float32
	}{{false, 0, 1, 0}, {true, -1000, 1e-4, 0}, {true, 0, 2.75e-5, -0.2}, {true, 0.5, 1e-5, 0.01}}
	eachISA(t, func(t *testing.T) {
		for _, c := range loadCases(g, n) {
			for _, nd := range []struct {
				has bool
				v   float64
			}{{false, 0}, {true, c.band.NoData}, {true, 0.5}, {true, 1e12}, {true, -1e12}, {true, math.NaN()}} {
				for _, r := range rads {
					b := c.band
					b.HasNoData, b.NoData = nd.has, nd.v
					b.Radiometry, b.Add, b.Scale, b.Offset = r.on, r.add, r.scale, r.offset
					out := make([]float32, n)
					runProgram(t, prog, n, []cpu.Band{b}, [][]float32{out}, nil)
					bad := 0
					for i := range n {
						x, v := c.dn(i)
						if r.on {
							v = float32(float32(v+r.add)*r.scale) + r.offset
						}
						if nd.has && x == nd.v {
							v = float32(math.NaN())
						}
						if !same(out[i], v) {
							if bad++; bad <= 3 {
								t.Errorf("%s nodata %v radiometry %+v: sample %d (%v) loads as %g, want %g", c.name, nd, r, i, x, out[i], v)
							}
						}
					}
				}
			}
		}
	})
}

// The mask makes every output NaN where it is set, and only there; several
// outputs are written from their registers.
func TestMaskAndOutputs(t *testing.T) {
	n := 2*cpu.Block + 29
	a := make([]float32, n)
	mask := make([]uint8, n)
	g := rand.New(rand.NewPCG(5, 6))
	for i := range a {
		a[i] = float32(i)
		if g.IntN(7) == 0 {
			a[i] = float32(math.Inf(1 - 2*g.IntN(2)))
		}
		if g.IntN(3) == 0 {
			mask[i] = uint8(1 + g.IntN(255))
		}
	}
	// Outputs 0 and 1 are stored from their registers after the code;
	// outputs 2 and 3 share one finite, which writes them directly.
	prog := &index.Program{Inputs: []string{"red"}, NumRegs: 3,
		Code: []index.Instr{{Op: index.OpLoad, Dst: 0, A: 0}, {Op: index.OpMulK, Dst: 1, A: 0, K: 2},
			{Op: index.OpFinite, Dst: 2, A: 1}},
		Outputs: []int{1, 0, 2, 2}}
	if prog.StoringFinite(2) != 2 || prog.StoringFinite(1) != -1 {
		t.Fatalf("storingFinite: %d %d, want 2 -1", prog.StoringFinite(2), prog.StoringFinite(1))
	}
	eachISA(t, func(t *testing.T) {
		outs := [][]float32{make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)}
		runProgram(t, prog, n, []cpu.Band{{Type: cpu.F32, Data: f32Bytes(a)}}, outs, mask)
		for i := range n {
			w := []float32{2 * a[i], a[i], 2 * a[i], 2 * a[i]}
			if math.IsInf(float64(w[2]), 0) {
				w[2], w[3] = float32(math.NaN()), float32(math.NaN())
			}
			for o := range w {
				if mask[i] != 0 {
					w[o] = float32(math.NaN())
				}
				if !same(outs[o][i], w[o]) {
					t.Fatalf("output %d pixel %d (mask %d): got %g, want %g", o, i, mask[i], outs[o][i], w[o])
				}
			}
		}
	})
	// A finite whose register is read later is not a storing one.
	prog.Code = append(prog.Code, index.Instr{Op: index.OpAdd, Dst: 0, A: 2, B: 2})
	if at := prog.StoringFinite(2); at != -1 {
		t.Errorf("storingFinite = %d for a register read later", at)
	}
}

// Malformed programs and buffers are refused before any C code runs.
func TestPrepareRefuses(t *testing.T) {
	a := make([]float32, 10)
	band := []cpu.Band{{Type: cpu.F32, Data: f32Bytes(a)}}
	out := [][]float32{make([]float32, 10)}
	good := func() *index.Program {
		return &index.Program{Inputs: []string{"red"}, NumRegs: 1,
			Code: []index.Instr{{Op: index.OpLoad, Dst: 0, A: 0}}, Outputs: []int{0}}
	}
	cases := map[string]func() (*index.Program, []cpu.Band, [][]float32, []uint8){
		"register out of range": func() (*index.Program, []cpu.Band, [][]float32, []uint8) {
			p := good()
			p.Code = append(p.Code, index.Instr{Op: index.OpAdd, Dst: 0, A: 0, B: 5})
			return p, band, out, nil
		},
		"load of a missing input": func() (*index.Program, []cpu.Band, [][]float32, []uint8) {
			p := good()
			p.Code[0].A = 1
			return p, band, out, nil
		},
		"unknown op": func() (*index.Program, []cpu.Band, [][]float32, []uint8) {
			p := good()
			p.Code = append(p.Code, index.Instr{Op: index.Op(cpu.NumOps), Dst: 0})
			return p, band, out, nil
		},
		"short band": func() (*index.Program, []cpu.Band, [][]float32, []uint8) {
			return good(), []cpu.Band{{Type: cpu.F32, Data: f32Bytes(a[:9])}}, out, nil
		},
		"short output": func() (*index.Program, []cpu.Band, [][]float32, []uint8) {
			return good(), band, [][]float32{make([]float32, 9)}, nil
		},
		"short mask": func() (*index.Program, []cpu.Band, [][]float32, []uint8) {
			return good(), band, out, make([]uint8, 3)
		},
		"output register out of range": func() (*index.Program, []cpu.Band, [][]float32, []uint8) {
			p := good()
			p.Outputs[0] = 3
			return p, band, out, nil
		},
		"unknown sample type": func() (*index.Program, []cpu.Band, [][]float32, []uint8) {
			return good(), []cpu.Band{{Type: 9, Data: f32Bytes(a)}}, out, nil
		},
	}
	for name, c := range cases {
		var p cpu.Program
		prog, b, o, m := c()
		if err := p.Prepare(marshalled(prog), 10, b, o, m, false); err == nil {
			t.Errorf("%s: Prepare accepted it", name)
		}
		if err := p.Run(make([]float32, 1<<16), 0, 10); err == nil {
			t.Errorf("%s: Run ran an unprepared program", name)
		}
	}
	var p cpu.Program
	if err := p.Prepare(marshalled(good()), 10, band, out, nil, false); err != nil {
		t.Fatal(err)
	}
	defer p.Release()
	if err := p.Run(p.NewScratch(), 0, 11); err == nil {
		t.Error("Run accepted pixels past the image")
	}
	if err := p.Run(make([]float32, 3), 0, 10); err == nil {
		t.Error("Run accepted short scratch")
	}
}

// A normalised difference (sub, add, div in a row) runs as one fused op
// with the roundings of the three, on every pair of special values; the
// fusion is refused when a partial result is used again.
func TestFusedND(t *testing.T) {
	var as, bs []float32
	for _, a := range specials {
		for _, b := range specials {
			as, bs = append(as, a), append(bs, b)
		}
	}
	n := len(as)
	bands := []cpu.Band{{Type: cpu.F32, Data: f32Bytes(as)}, {Type: cpu.F32, Data: f32Bytes(bs)}}
	nd := func(addSwapped bool) *index.Program {
		add := index.Instr{Op: index.OpAdd, Dst: 0, A: 0, B: 1}
		if addSwapped {
			add.A, add.B = 1, 0
		}
		return &index.Program{Inputs: []string{"red", "nir"}, NumRegs: 3,
			Code: []index.Instr{{Op: index.OpLoad, Dst: 0, A: 1}, {Op: index.OpLoad, Dst: 1, A: 0},
				{Op: index.OpSub, Dst: 2, A: 0, B: 1}, add, {Op: index.OpDiv, Dst: 0, A: 2, B: 0},
				{Op: index.OpFinite, Dst: 0, A: 0}},
			Outputs: []int{0}}
	}
	for _, swapped := range []bool{false, true} {
		prog := nd(swapped)
		if !prog.NDAt(2) {
			t.Fatalf("swapped=%v: the normalised difference is not fused", swapped)
		}
		if code := marshalled(prog); len(code.Instrs) != 3 || code.Instrs[2].Op != cpu.OpNDStore {
			t.Fatalf("swapped=%v: marshalled code %v, want load load nd-store", swapped, code.Instrs)
		}
		eachISA(t, func(t *testing.T) {
			out := make([]float32, n)
			runProgram(t, prog, n, bands, [][]float32{out}, nil)
			in, regs, want := make([]float32, 2), make([]float32, 3), make([]float32, 1)
			for i := range n {
				in[0], in[1] = as[i], bs[i]
				prog.Eval32(in, regs, want)
				if !same(out[i], want[0]) {
					t.Fatalf("nd(%g, %g): got %g, want %g", bs[i], as[i], out[i], want[0])
				}
			}
		})
	}
	// Without the finite, the nd is fused alone and the output stored
	// from its register.
	for _, fin := range []bool{false, true} {
		prog := nd(false)
		if !fin {
			prog.Code = prog.Code[:5]
		} else {
			prog.Code[5].Dst = 1 // the finite into another register
			prog.Outputs[0] = 1
		}
		want := []cpu.Op{cpu.OpLoad, cpu.OpLoad, cpu.OpND}
		if fin {
			want[2] = cpu.OpNDStore
		}
		if code := marshalled(prog); len(code.Instrs) != len(want) || code.Instrs[2].Op != want[2] {
			t.Fatalf("finite=%v: marshalled %v, want ops %v", fin, code.Instrs, want)
		}
		eachISA(t, func(t *testing.T) {
			out := make([]float32, n)
			runProgram(t, prog, n, bands, [][]float32{out}, nil)
			in, regs, w := make([]float32, 2), make([]float32, 3), make([]float32, 1)
			for i := range n {
				in[0], in[1] = as[i], bs[i]
				prog.Eval32(in, regs, w)
				if !same(out[i], w[0]) {
					t.Fatalf("finite=%v nd(%g, %g): got %g, want %g", fin, bs[i], as[i], out[i], w[0])
				}
			}
		})
	}
	// The sum is read again by a later op: no fusion.
	prog := nd(false)
	prog.Code = append(prog.Code[:5:5], index.Instr{Op: index.OpAdd, Dst: 1, A: 0, B: 2}, index.Instr{Op: index.OpFinite, Dst: 0, A: 1})
	if prog.NDAt(2) {
		t.Error("fused although the difference is read after the div")
	}
	// The difference overwrites an operand of the add: no fusion.
	prog = nd(false)
	prog.Code[2].Dst = 1
	prog.Code[4].A = 1
	if prog.NDAt(2) {
		t.Error("fused although the sub overwrites the add's operand")
	}
}

// marshalled is prog in the C interpreter's terms.
func marshalled(prog *index.Program) *cpu.Code {
	var c cpu.Code
	marshal(prog, &c)
	return &c
}
