package cudaback

import (
	"encoding/binary"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"canopy/native/cuda"
)

// A tiny interpreter for the PTX subset the generator emits, so that the
// generated kernels' logic (lane extraction, conversions, nodata, the
// result rules, the grid-stride loop and tail, the parameter order) is
// checked against the Go definition on machines without a GPU. It is
// strict: an instruction, operand or register it does not know, a
// register read before it is written, an unaligned vector access or an
// access outside a buffer is an error. It follows the PTX ISA's
// semantics for each instruction (min.f32 and max.f32 return the
// non-NaN operand; abs and neg only touch the sign; .rn arithmetic is
// IEEE round to nearest even, subnormals kept), which is what the GPU
// implements; ptxas on the GPU machine checks the syntax.

type simKind uint8

const (
	simReg simKind = iota
	simImm
	simMem     // [reg]
	simParam   // [name]
	simVec     // {reg, reg, ...}
	simSpecial // %tid.x ...
	simLabel
)

type simOperand struct {
	kind  simKind
	slot  int
	cls   string // register prefix: p, r, f, rd
	imm   uint64
	vec   []simOperand
	name  string
	label int
}

type simInstr struct {
	line  int
	guard int // predicate slot, -1 for none
	op    string
	args  []simOperand
}

type simKernel struct {
	params []string // names, in order
	ptypes []string // PTX types
	code   []simInstr
	nslots int
	decl   map[string]int // register class -> declared count
}

var (
	simRegRe   = regexp.MustCompile(`^%(rd|r|p|f)(\d+)$`)
	simParamRe = regexp.MustCompile(`^\t\.param (\.\w+) (\w+),?$`)
	simDeclRe  = regexp.MustCompile(`^\t\.reg \.\w+ %(rd|r|p|f)<(\d+)>;$`)
)

// splitOperands splits at commas outside braces and brackets.
func splitOperands(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, c := range s {
		switch c {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	if t := strings.TrimSpace(s[start:]); t != "" {
		out = append(out, t)
	}
	return out
}

// parsePTX reads one generated kernel.
func parsePTX(src string) (*simKernel, error) {
	k := &simKernel{decl: map[string]int{}}
	slots := map[string]int{}
	labels := map[string]int{}
	type fix struct {
		instr, arg int
		name       string
	}
	var fixes []fix
	lines := strings.Split(src, "\n")
	inBody := false
	for ln, raw := range lines {
		line := strings.TrimRight(raw, " ")
		if m := simParamRe.FindStringSubmatch(line); m != nil && !inBody {
			k.ptypes = append(k.ptypes, m[1])
			k.params = append(k.params, m[2])
			continue
		}
		if line == "{" {
			inBody = true
			continue
		}
		if !inBody || line == "}" {
			continue
		}
		if m := simDeclRe.FindStringSubmatch(line); m != nil {
			n, _ := strconv.Atoi(m[2])
			k.decl[m[1]] = n
			continue
		}
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "//") {
			continue
		}
		if strings.HasSuffix(t, ":") {
			labels[strings.TrimSuffix(t, ":")] = len(k.code)
			continue
		}
		if !strings.HasSuffix(t, ";") {
			return nil, fmt.Errorf("line %d: no semicolon: %q", ln+1, t)
		}
		t = strings.TrimSuffix(t, ";")
		in := simInstr{line: ln + 1, guard: -1}
		reg := func(s string) (simOperand, error) {
			m := simRegRe.FindStringSubmatch(s)
			if m == nil {
				return simOperand{}, fmt.Errorf("line %d: not a register: %q", ln+1, s)
			}
			n, _ := strconv.Atoi(m[2])
			if n >= k.decl[m[1]] {
				return simOperand{}, fmt.Errorf("line %d: register %s beyond the %d declared", ln+1, s, k.decl[m[1]])
			}
			id, ok := slots[s]
			if !ok {
				id = len(slots)
				slots[s] = id
			}
			return simOperand{kind: simReg, slot: id, cls: m[1]}, nil
		}
		if strings.HasPrefix(t, "@") {
			g, rest, _ := strings.Cut(t[1:], " ")
			o, err := reg(g)
			if err != nil {
				return nil, err
			}
			if o.cls != "p" {
				return nil, fmt.Errorf("line %d: guard %s is not a predicate", ln+1, g)
			}
			in.guard, t = o.slot, strings.TrimSpace(rest)
		}
		op, rest, _ := strings.Cut(t, " ")
		in.op = op
		for _, a := range splitOperands(rest) {
			var o simOperand
			var err error
			switch {
			case strings.HasPrefix(a, "{"):
				o.kind = simVec
				for _, e := range splitOperands(strings.Trim(a, "{}")) {
					r, err := reg(e)
					if err != nil {
						return nil, err
					}
					o.vec = append(o.vec, r)
				}
			case strings.HasPrefix(a, "[%"):
				r, err := reg(strings.Trim(a, "[]"))
				if err != nil {
					return nil, err
				}
				o = r
				o.kind = simMem
			case strings.HasPrefix(a, "["):
				o = simOperand{kind: simParam, name: strings.Trim(a, "[]")}
			case strings.HasPrefix(a, "0f"):
				b, err := strconv.ParseUint(a[2:], 16, 32)
				if err != nil || len(a) != 10 {
					return nil, fmt.Errorf("line %d: bad float immediate %q", ln+1, a)
				}
				o = simOperand{kind: simImm, imm: b}
			case a == "%ctaid.x" || a == "%ntid.x" || a == "%tid.x" || a == "%nctaid.x":
				o = simOperand{kind: simSpecial, name: a}
			case strings.HasPrefix(a, "%"):
				o, err = reg(a)
			case strings.HasPrefix(a, "$"):
				o = simOperand{kind: simLabel}
				fixes = append(fixes, fix{len(k.code), len(in.args), a})
			default:
				v, err := strconv.ParseInt(a, 10, 64)
				if err != nil {
					return nil, fmt.Errorf("line %d: bad operand %q", ln+1, a)
				}
				o = simOperand{kind: simImm, imm: uint64(v)}
			}
			if err != nil {
				return nil, err
			}
			in.args = append(in.args, o)
		}
		k.code = append(k.code, in)
	}
	for _, f := range fixes {
		pc, ok := labels[f.name]
		if !ok {
			return nil, fmt.Errorf("line %d: unknown label %s", k.code[f.instr].line, f.name)
		}
		k.code[f.instr].args[f.arg].label = pc
	}
	k.nslots = len(slots)
	return k, nil
}

// simMemory is device memory: buffers at made-up addresses.
type simMemory struct {
	bufs []simBuf
}

type simBuf struct {
	base uint64
	data []byte
}

func (m *simMemory) alloc(data []byte) cuda.DevicePtr {
	base := uint64(len(m.bufs)+1) << 40
	m.bufs = append(m.bufs, simBuf{base: base, data: data})
	return cuda.DevicePtr(base)
}

func (m *simMemory) at(addr uint64, size int) ([]byte, error) {
	if addr%uint64(size) != 0 {
		return nil, fmt.Errorf("access of %d bytes at %#x is not aligned", size, addr)
	}
	for _, b := range m.bufs {
		if addr >= b.base && addr+uint64(size) <= b.base+uint64(len(b.data)) {
			off := addr - b.base
			return b.data[off : off+uint64(size)], nil
		}
	}
	return nil, fmt.Errorf("access of %d bytes at %#x outside every buffer", size, addr)
}

// run executes the kernel on grid×block threads, one after another.
func (k *simKernel) run(mem *simMemory, grid, block int, args []any) error {
	if len(args) != len(k.params) {
		return fmt.Errorf("%d arguments for %d parameters", len(args), len(k.params))
	}
	params := map[string]uint64{}
	for i, a := range args {
		var v uint64
		want := map[string]string{".u64": "cuda.DevicePtr or uint64", ".u32": "uint32", ".s32": "int32", ".f32": "float32"}[k.ptypes[i]]
		ok := false
		switch x := a.(type) {
		case cuda.DevicePtr:
			v, ok = uint64(x), k.ptypes[i] == ".u64"
		case uint64:
			v, ok = x, k.ptypes[i] == ".u64"
		case uint32:
			v, ok = uint64(x), k.ptypes[i] == ".u32"
		case int32:
			v, ok = uint64(uint32(x)), k.ptypes[i] == ".s32"
		case float32:
			v, ok = uint64(math.Float32bits(x)), k.ptypes[i] == ".f32"
		}
		if !ok {
			return fmt.Errorf("parameter %d is %s (wants a %s), the argument a %T", i, k.ptypes[i], want, a)
		}
		params[k.params[i]] = v
	}
	regs := make([]uint64, k.nslots)
	set := make([]bool, k.nslots)
	for b := range grid {
		for t := range block {
			clear(set)
			if err := k.thread(mem, params, regs, set, b, t, grid, block); err != nil {
				return fmt.Errorf("block %d thread %d: %w", b, t, err)
			}
		}
	}
	return nil
}

func f32of(v uint64) float32  { return math.Float32frombits(uint32(v)) }
func bitsOf(f float32) uint64 { return uint64(math.Float32bits(f)) }

func (k *simKernel) thread(mem *simMemory, params map[string]uint64, regs []uint64, set []bool, b, t, grid, block int) error {
	steps := 0
	for pc := 0; pc < len(k.code); {
		in := &k.code[pc]
		pc++
		if steps++; steps > 1<<26 {
			return fmt.Errorf("line %d: runs away", in.line)
		}
		get := func(i int) (uint64, error) {
			o := in.args[i]
			switch o.kind {
			case simImm:
				return o.imm, nil
			case simReg, simMem:
				if !set[o.slot] {
					return 0, fmt.Errorf("line %d: operand %d read before it is written", in.line, i)
				}
				return regs[o.slot], nil
			case simSpecial:
				switch o.name {
				case "%ctaid.x":
					return uint64(b), nil
				case "%ntid.x":
					return uint64(block), nil
				case "%tid.x":
					return uint64(t), nil
				}
				return uint64(grid), nil
			}
			return 0, fmt.Errorf("line %d: operand %d cannot be read", in.line, i)
		}
		put := func(i int, v uint64, cls string) error {
			o := in.args[i]
			if o.kind != simReg {
				return fmt.Errorf("line %d: destination is not a register", in.line)
			}
			if o.cls != cls {
				return fmt.Errorf("line %d: destination %%%s register for a %s result", in.line, o.cls, cls)
			}
			if cls == "r" || cls == "f" {
				v &= math.MaxUint32
			}
			regs[o.slot], set[o.slot] = v, true
			return nil
		}
		if in.guard >= 0 {
			if !set[in.guard] {
				return fmt.Errorf("line %d: guard read before it is written", in.line)
			}
			if regs[in.guard] == 0 {
				continue
			}
		}
		// Operands 1.. as values.
		var v [4]uint64
		if in.op != "bra" && !strings.HasPrefix(in.op, "st.") && !strings.HasPrefix(in.op, "ld.") && in.op != "ret" {
			for i := 1; i < len(in.args); i++ {
				x, err := get(i)
				if err != nil {
					return err
				}
				v[i-1] = x
			}
		}
		fa, fb := f32of(v[0]), f32of(v[1])
		var err error
		switch in.op {
		case "ret":
			return nil
		case "bra":
			pc = in.args[0].label
		case "ld.param.u64", "ld.param.u32", "ld.param.s32", "ld.param.f32":
			p, ok := params[in.args[1].name]
			if !ok {
				return fmt.Errorf("line %d: unknown parameter %s", in.line, in.args[1].name)
			}
			cls := map[string]string{"ld.param.u64": "rd", "ld.param.f32": "f"}[in.op]
			if cls == "" {
				cls = "r"
			}
			err = put(0, p, cls)
		case "cvta.to.global.u64", "mov.u64":
			err = put(0, v[0], "rd")
		case "mov.u32":
			err = put(0, v[0], "r")
		case "mov.f32":
			err = put(0, v[0], "f")
		case "mul.wide.u32":
			err = put(0, uint64(uint32(v[0]))*uint64(uint32(v[1])), "rd")
		case "cvt.u64.u32":
			err = put(0, uint64(uint32(v[0])), "rd")
		case "add.u64":
			err = put(0, v[0]+v[1], "rd")
		case "shr.u64":
			err = put(0, v[0]>>v[1], "rd")
		case "shl.b64":
			err = put(0, v[0]<<v[1], "rd")
		case "and.b64":
			err = put(0, v[0]&v[1], "rd")
		case "and.b32":
			err = put(0, uint64(uint32(v[0])&uint32(v[1])), "r")
		case "shr.u32":
			err = put(0, uint64(uint32(v[0])>>v[1]), "r")
		case "shl.b32":
			err = put(0, uint64(uint32(v[0])<<v[1]), "r")
		case "shr.s32":
			err = put(0, uint64(uint32(int32(uint32(v[0]))>>v[1])), "r")
		case "setp.ge.u64", "setp.lt.u64", "setp.eq.u32", "setp.ne.u32", "setp.eq.s32",
			"setp.eq.f32", "setp.lt.f32", "setp.nan.f32":
			var c bool
			switch in.op {
			case "setp.ge.u64":
				c = v[0] >= v[1]
			case "setp.lt.u64":
				c = v[0] < v[1]
			case "setp.eq.u32":
				c = uint32(v[0]) == uint32(v[1])
			case "setp.ne.u32":
				c = uint32(v[0]) != uint32(v[1])
			case "setp.eq.s32":
				c = int32(uint32(v[0])) == int32(uint32(v[1]))
			case "setp.eq.f32":
				c = fa == fb
			case "setp.lt.f32":
				c = fa < fb
			case "setp.nan.f32":
				c = fa != fa || fb != fb
			}
			var p uint64
			if c {
				p = 1
			}
			err = put(0, p, "p")
		case "selp.f32":
			if in.args[3].cls != "p" {
				return fmt.Errorf("line %d: selp without a predicate", in.line)
			}
			r := v[1]
			if v[2] != 0 {
				r = v[0]
			}
			err = put(0, r, "f")
		case "cvt.rn.f32.u32":
			err = put(0, bitsOf(float32(uint32(v[0]))), "f")
		case "cvt.rn.f32.s32":
			err = put(0, bitsOf(float32(int32(uint32(v[0])))), "f")
		case "add.rn.f32":
			err = put(0, bitsOf(fa+fb), "f")
		case "sub.rn.f32":
			err = put(0, bitsOf(fa-fb), "f")
		case "mul.rn.f32":
			err = put(0, bitsOf(fa*fb), "f")
		case "div.rn.f32":
			err = put(0, bitsOf(fa/fb), "f")
		case "sqrt.rn.f32":
			err = put(0, bitsOf(float32(math.Sqrt(float64(fa)))), "f")
		case "neg.f32":
			err = put(0, v[0]^0x80000000, "f")
		case "abs.f32":
			err = put(0, v[0]&^0x80000000, "f")
		case "min.f32", "max.f32":
			var r float32
			switch {
			case fa != fa:
				r = fb
			case fb != fb:
				r = fa
			case in.op == "min.f32":
				r = min(fa, fb)
			default:
				r = max(fa, fb)
			}
			err = put(0, bitsOf(r), "f")
		case "ld.global.nc.u8", "ld.global.nc.u16", "ld.global.nc.s16", "ld.global.nc.u32", "ld.global.nc.s32",
			"ld.global.nc.f32", "ld.global.nc.v2.u32", "ld.global.nc.v4.u32", "ld.global.nc.v4.f32":
			a, e := get(1)
			if e != nil {
				return e
			}
			if in.args[1].kind != simMem || in.args[1].cls != "rd" {
				return fmt.Errorf("line %d: load address is not a 64-bit register", in.line)
			}
			typ := in.op[len("ld.global.nc."):]
			lanes, elem := 1, map[string]int{"u8": 1, "u16": 2, "s16": 2, "u32": 4, "s32": 4, "f32": 4}[strings.TrimPrefix(strings.TrimPrefix(typ, "v2."), "v4.")]
			dsts := []simOperand{in.args[0]}
			if strings.HasPrefix(typ, "v") {
				lanes = int(typ[1] - '0')
				dsts = in.args[0].vec
				if len(dsts) != lanes {
					return fmt.Errorf("line %d: %d registers for %d lanes", in.line, len(dsts), lanes)
				}
			}
			bs, e := mem.at(a, lanes*elem)
			if e != nil {
				return fmt.Errorf("line %d: %w", in.line, e)
			}
			for l, d := range dsts {
				var x uint64
				w := bs[l*elem : (l+1)*elem]
				switch strings.TrimPrefix(strings.TrimPrefix(typ, "v2."), "v4.") {
				case "u8":
					x = uint64(w[0])
				case "u16":
					x = uint64(binary.LittleEndian.Uint16(w))
				case "s16":
					x = uint64(uint32(int32(int16(binary.LittleEndian.Uint16(w)))))
				default:
					x = uint64(binary.LittleEndian.Uint32(w))
				}
				cls := "r"
				if strings.HasSuffix(typ, "f32") {
					cls = "f"
				}
				if d.cls != cls {
					return fmt.Errorf("line %d: load into a %%%s register", in.line, d.cls)
				}
				regs[d.slot], set[d.slot] = x, true
			}
		case "st.global.f32", "st.global.v4.f32":
			a, e := get(0)
			if e != nil {
				return e
			}
			srcs := []simOperand{in.args[1]}
			if in.op == "st.global.v4.f32" {
				srcs = in.args[1].vec
			}
			bs, e := mem.at(a, 4*len(srcs))
			if e != nil {
				return fmt.Errorf("line %d: %w", in.line, e)
			}
			for l, s := range srcs {
				if s.cls != "f" || !set[s.slot] {
					return fmt.Errorf("line %d: store of an unwritten or non-float register", in.line)
				}
				binary.LittleEndian.PutUint32(bs[4*l:], uint32(regs[s.slot]))
			}
		default:
			return fmt.Errorf("line %d: instruction %s unknown to the simulator", in.line, in.op)
		}
		if err != nil {
			return err
		}
	}
	return fmt.Errorf("fell off the end without ret")
}
