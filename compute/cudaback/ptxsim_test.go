package cudaback

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"regexp"
	"strconv"
	"strings"

	"canopy/native/cuda"
)

// A tiny interpreter for the PTX subset the generators emit, so that the
// generated kernels' logic (lane extraction, conversions, nodata, the
// result rules, the grid-stride loop and tail, the parameter order; the
// resident kernels' shared memory, barriers, atomics and float64
// arithmetic) is checked against the Go definition on machines without a
// GPU. It is strict: an instruction, operand or register it does not know,
// a register read before it is written, an unaligned access, an access
// outside a buffer (global or shared), a barrier that some threads of a
// block never reach, is an error. Shared memory starts as garbage, as on
// the GPU. It follows the PTX ISA's semantics for each instruction
// (min.f32 and max.f32 return the non-NaN operand; abs and neg only touch
// the sign; .rn arithmetic is IEEE round to nearest even, subnormals kept;
// float to integer conversions saturate, NaN giving 0), which is what the
// GPU implements; ptxas on the GPU machine checks the syntax.
//
// Threads of a block run one after another up to each barrier (bar.sync),
// so atomic operations need no locking and the result of a kernel whose
// threads race is the result of one order among those the GPU allows.

type simKind uint8

const (
	simReg simKind = iota
	simImm
	simMem     // [reg] or [reg+off]
	simParam   // [name]
	simVec     // {reg, reg, ...}
	simSpecial // %tid.x ...
	simLabel
)

type simOperand struct {
	kind  simKind
	slot  int
	cls   string // register prefix: p, r, f, rd, fd
	imm   uint64
	off   int64 // simMem: the offset added to the register
	vec   []simOperand
	name  string
	label int
}

type simInstr struct {
	line     int
	guard    int // predicate slot, -1 for none
	guardNeg bool
	op       string
	args     []simOperand
}

type simKernel struct {
	params []string // names, in order
	ptypes []string // PTX types
	code   []simInstr
	nslots int
	decl   map[string]int // register class -> declared count
	// shared is the size of the kernel's shared array (0: none).
	shared int
	// local is the size of each thread's local array (0: none).
	local int
}

// simSharedBase is the address of the shared array in the shared window.
const simSharedBase = 0x100

// simLocalBase is the address of the local array in the local window.
const simLocalBase = 0x200

var (
	simRegRe    = regexp.MustCompile(`^%(rd|fd|r|p|f)(\d+)$`)
	simParamRe  = regexp.MustCompile(`^\t\.param (\.\w+) (\w+),?$`)
	simDeclRe   = regexp.MustCompile(`^\t\.reg \.\w+ %(rd|fd|r|p|f)<(\d+)>;$`)
	simSharedRe = regexp.MustCompile(`^\t\.shared \.align \d+ \.b8 (\w+)\[(\d+)\];$`)
	simLocalRe  = regexp.MustCompile(`^\t\.local \.align \d+ \.b8 (\w+)\[(\d+)\];$`)
	simMemRe    = regexp.MustCompile(`^\[(%\w+)(?:\+(\d+))?\]$`)
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
	for i := range len(src) {
		if src[i] >= 0x80 { // ptxas refuses any, comments too
			return nil, fmt.Errorf("line %d: a byte that is not ASCII", 1+strings.Count(src[:i], "\n"))
		}
	}
	k := &simKernel{decl: map[string]int{}}
	slots := map[string]int{}
	labels := map[string]int{}
	sharedName, localName := "", ""
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
		if m := simSharedRe.FindStringSubmatch(line); m != nil {
			if sharedName != "" {
				return nil, fmt.Errorf("line %d: a second shared array", ln+1)
			}
			sharedName = m[1]
			k.shared, _ = strconv.Atoi(m[2])
			continue
		}
		if m := simLocalRe.FindStringSubmatch(line); m != nil {
			if localName != "" {
				return nil, fmt.Errorf("line %d: a second local array", ln+1)
			}
			localName = m[1]
			k.local, _ = strconv.Atoi(m[2])
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
			if strings.HasPrefix(g, "!") {
				in.guardNeg, g = true, g[1:]
			}
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
				m := simMemRe.FindStringSubmatch(a)
				if m == nil {
					return nil, fmt.Errorf("line %d: bad address %q", ln+1, a)
				}
				r, err := reg(m[1])
				if err != nil {
					return nil, err
				}
				o = r
				o.kind = simMem
				if m[2] != "" {
					o.off, _ = strconv.ParseInt(m[2], 10, 64)
				}
			case strings.HasPrefix(a, "["):
				o = simOperand{kind: simParam, name: strings.Trim(a, "[]")}
			case strings.HasPrefix(a, "0f"):
				b, err := strconv.ParseUint(a[2:], 16, 32)
				if err != nil || len(a) != 10 {
					return nil, fmt.Errorf("line %d: bad float immediate %q", ln+1, a)
				}
				o = simOperand{kind: simImm, imm: b}
			case strings.HasPrefix(a, "0d"):
				b, err := strconv.ParseUint(a[2:], 16, 64)
				if err != nil || len(a) != 18 {
					return nil, fmt.Errorf("line %d: bad double immediate %q", ln+1, a)
				}
				o = simOperand{kind: simImm, imm: b}
			case a == "%ctaid.x" || a == "%ntid.x" || a == "%tid.x" || a == "%nctaid.x":
				o = simOperand{kind: simSpecial, name: a}
			case strings.HasPrefix(a, "%"):
				o, err = reg(a)
			case strings.HasPrefix(a, "$"):
				o = simOperand{kind: simLabel}
				fixes = append(fixes, fix{len(k.code), len(in.args), a})
			case sharedName != "" && a == sharedName:
				o = simOperand{kind: simImm, imm: simSharedBase}
			case localName != "" && a == localName:
				o = simOperand{kind: simImm, imm: simLocalBase}
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

// bytes returns the buffer allocated at p (nil for none).
func (m *simMemory) bytes(p cuda.DevicePtr) []byte {
	for _, b := range m.bufs {
		if b.base == uint64(p) {
			return b.data
		}
	}
	return nil
}

// free forgets the buffer at p, so that a later access to it fails.
func (m *simMemory) free(p cuda.DevicePtr) {
	for i, b := range m.bufs {
		if b.base == uint64(p) {
			m.bufs[i].data = nil
		}
	}
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

// simThread is one thread's state, kept across barriers.
type simThread struct {
	pc    int
	regs  []uint64
	set   []bool
	done  bool
	local []byte
}

// run executes the kernel on grid×block threads: each block's threads one
// after another up to each barrier.
func (k *simKernel) run(mem *simMemory, grid, block int, args []any) error {
	if len(args) != len(k.params) {
		return fmt.Errorf("%d arguments for %d parameters", len(args), len(k.params))
	}
	params := map[string]uint64{}
	for i, a := range args {
		var v uint64
		want := map[string]string{".u64": "cuda.DevicePtr or uint64", ".u32": "uint32", ".s32": "int32", ".f32": "float32", ".f64": "float64"}[k.ptypes[i]]
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
		case float64:
			v, ok = math.Float64bits(x), k.ptypes[i] == ".f64"
		}
		if !ok {
			return fmt.Errorf("parameter %d is %s (wants a %s), the argument a %T", i, k.ptypes[i], want, a)
		}
		params[k.params[i]] = v
	}
	threads := make([]simThread, block)
	for i := range threads {
		threads[i].regs = make([]uint64, k.nslots)
		threads[i].set = make([]bool, k.nslots)
		threads[i].local = make([]byte, k.local)
	}
	shared := make([]byte, k.shared)
	for b := range grid {
		for i := range shared {
			shared[i] = 0xA5 // garbage, as on the GPU
		}
		for i := range threads {
			threads[i].pc, threads[i].done = 0, false
			clear(threads[i].set)
			for j := range threads[i].local {
				threads[i].local[j] = 0x5A // garbage, as on the GPU
			}
		}
		for {
			waiting, done := 0, 0
			for t := range threads {
				th := &threads[t]
				if th.done {
					done++
					continue
				}
				barrier, err := k.thread(mem, shared, params, th, b, t, grid, block)
				if err != nil {
					return fmt.Errorf("block %d thread %d: %w", b, t, err)
				}
				if barrier {
					waiting++
				} else {
					done++
				}
			}
			if waiting == 0 {
				break
			}
			if done > 0 {
				return fmt.Errorf("block %d: %d threads wait at a barrier that %d threads have left the kernel without reaching", b, waiting, done)
			}
		}
	}
	return nil
}

func f32of(v uint64) float32  { return math.Float32frombits(uint32(v)) }
func bitsOf(f float32) uint64 { return uint64(math.Float32bits(f)) }
func f64of(v uint64) float64  { return math.Float64frombits(v) }
func bits64(f float64) uint64 { return math.Float64bits(f) }

// satU32 is PTX's float to u32 conversion after rounding: saturating, NaN
// giving 0.
func satU32(x float64) uint64 {
	switch {
	case x != x || x <= 0:
		return 0
	case x >= math.MaxUint32:
		return math.MaxUint32
	}
	return uint64(uint32(x))
}

// simElem is the bytes and register class of a memory access type.
var simElem = map[string]struct {
	size int
	cls  string
}{
	"u8": {1, "r"}, "u16": {2, "r"}, "s16": {2, "r"}, "u32": {4, "r"}, "s32": {4, "r"},
	"f32": {4, "f"}, "f64": {8, "fd"}, "u64": {8, "rd"},
}

// thread runs th until it reaches a barrier (true) or returns (false).
func (k *simKernel) thread(mem *simMemory, shared []byte, params map[string]uint64, th *simThread, b, t, grid, block int) (bool, error) {
	regs, set := th.regs, th.set
	steps := 0
	sharedAt := func(addr uint64, size int) ([]byte, error) {
		if addr%uint64(size) != 0 {
			return nil, fmt.Errorf("shared access of %d bytes at %#x is not aligned", size, addr)
		}
		if addr < simSharedBase || addr+uint64(size) > simSharedBase+uint64(len(shared)) {
			return nil, fmt.Errorf("shared access of %d bytes at %#x outside the %d-byte array", size, addr, len(shared))
		}
		o := addr - simSharedBase
		return shared[o : o+uint64(size)], nil
	}
	localAt := func(addr uint64, size int) ([]byte, error) {
		if addr%uint64(size) != 0 {
			return nil, fmt.Errorf("local access of %d bytes at %#x is not aligned", size, addr)
		}
		if addr < simLocalBase || addr+uint64(size) > simLocalBase+uint64(len(th.local)) {
			return nil, fmt.Errorf("local access of %d bytes at %#x outside the %d-byte array", size, addr, len(th.local))
		}
		o := addr - simLocalBase
		return th.local[o : o+uint64(size)], nil
	}
	for th.pc < len(k.code) {
		in := &k.code[th.pc]
		th.pc++
		if steps++; steps > 1<<26 {
			return false, fmt.Errorf("line %d: runs away", in.line)
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
				return regs[o.slot] + uint64(o.off), nil
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
		// clsOf checks that operand i is a register of class cls (or an
		// immediate).
		clsOf := func(i int, cls string) error {
			if o := in.args[i]; o.kind == simReg && o.cls != cls {
				return fmt.Errorf("line %d: operand %d is a %%%s register, %s wants %%%s", in.line, i, o.cls, in.op, cls)
			}
			return nil
		}
		if in.guard >= 0 {
			if !set[in.guard] {
				return false, fmt.Errorf("line %d: guard read before it is written", in.line)
			}
			if (regs[in.guard] != 0) == in.guardNeg {
				continue
			}
		}
		// Operands 1.. as values.
		var v [4]uint64
		memOp := strings.HasPrefix(in.op, "st.") || strings.HasPrefix(in.op, "ld.") || strings.HasPrefix(in.op, "red.")
		if in.op != "bra" && !memOp && in.op != "ret" && in.op != "bar.sync" {
			for i := 1; i < len(in.args); i++ {
				x, err := get(i)
				if err != nil {
					return false, err
				}
				v[i-1] = x
			}
		}
		fa, fb := f32of(v[0]), f32of(v[1])
		da, db := f64of(v[0]), f64of(v[1])
		pred := func(c bool) error {
			var p uint64
			if c {
				p = 1
			}
			return put(0, p, "p")
		}
		var err error
		switch in.op {
		case "ret":
			th.done = true
			return false, nil
		case "bar.sync":
			if len(in.args) != 1 || in.args[0].kind != simImm || in.args[0].imm != 0 {
				return false, fmt.Errorf("line %d: only bar.sync 0 is known", in.line)
			}
			return true, nil
		case "bra":
			th.pc = in.args[0].label
		case "ld.param.u64", "ld.param.u32", "ld.param.s32", "ld.param.f32", "ld.param.f64":
			p, ok := params[in.args[1].name]
			if !ok {
				return false, fmt.Errorf("line %d: unknown parameter %s", in.line, in.args[1].name)
			}
			cls := map[string]string{"ld.param.u64": "rd", "ld.param.f32": "f", "ld.param.f64": "fd"}[in.op]
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
		case "mov.f64":
			if err = clsOf(1, "fd"); err == nil {
				err = put(0, v[0], "fd")
			}
		case "mul.lo.u64":
			err = put(0, v[0]*v[1], "rd")
		case "mul.wide.u32":
			err = put(0, uint64(uint32(v[0]))*uint64(uint32(v[1])), "rd")
		case "cvt.u64.u32":
			err = put(0, uint64(uint32(v[0])), "rd")
		case "add.u64":
			err = put(0, v[0]+v[1], "rd")
		case "shr.u64":
			err = put(0, v[0]>>v[1], "rd")
		// The inflate kernel's (inflate_ptx.go): bit operations, 64-bit
		// subtraction and narrowing, more compares.
		case "or.b64":
			err = put(0, v[0]|v[1], "rd")
		case "sub.u64":
			err = put(0, v[0]-v[1], "rd")
		case "or.b32":
			err = put(0, uint64(uint32(v[0])|uint32(v[1])), "r")
		case "xor.b32":
			err = put(0, uint64(uint32(v[0])^uint32(v[1])), "r")
		case "brev.b32":
			err = put(0, uint64(bits.Reverse32(uint32(v[0]))), "r")
		case "cvt.u32.u64":
			err = put(0, uint64(uint32(v[0])), "r")
		case "setp.gt.u64":
			err = pred(v[0] > v[1])
		case "setp.le.u32":
			err = pred(uint32(v[0]) <= uint32(v[1]))
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
		case "add.u32":
			err = put(0, uint64(uint32(v[0])+uint32(v[1])), "r")
		case "sub.u32":
			err = put(0, uint64(uint32(v[0])-uint32(v[1])), "r")
		case "mul.lo.u32":
			err = put(0, uint64(uint32(v[0])*uint32(v[1])), "r")
		case "div.u32":
			if uint32(v[1]) == 0 {
				return false, fmt.Errorf("line %d: integer division by zero", in.line)
			}
			err = put(0, uint64(uint32(v[0])/uint32(v[1])), "r")
		case "min.u32":
			err = put(0, uint64(min(uint32(v[0]), uint32(v[1]))), "r")
		case "setp.ge.u64", "setp.lt.u64", "setp.eq.u32", "setp.ne.u32", "setp.eq.s32", "setp.ge.u32", "setp.lt.u32", "setp.gt.u32",
			"setp.eq.f32", "setp.lt.f32", "setp.ge.f32", "setp.gt.f32", "setp.le.f32", "setp.nan.f32", "setp.num.f32", "setp.ge.f64", "setp.lt.f64":
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
			case "setp.ge.u32":
				c = uint32(v[0]) >= uint32(v[1])
			case "setp.lt.u32":
				c = uint32(v[0]) < uint32(v[1])
			case "setp.gt.u32":
				c = uint32(v[0]) > uint32(v[1])
			case "setp.gt.f32":
				c = fa > fb
			case "setp.le.f32":
				c = fa <= fb
			case "setp.num.f32":
				c = fa == fa && fb == fb
			case "setp.eq.s32":
				c = int32(uint32(v[0])) == int32(uint32(v[1]))
			case "setp.eq.f32":
				c = fa == fb
			case "setp.lt.f32":
				c = fa < fb
			case "setp.ge.f32":
				c = fa >= fb
			case "setp.nan.f32":
				c = fa != fa || fb != fb
			case "setp.ge.f64":
				c = da >= db
			case "setp.lt.f64":
				c = da < db
			}
			err = pred(c)
		case "setp.ge.and.f32", "setp.lt.and.f32", "setp.le.and.f64", "setp.lt.and.f64":
			if in.args[3].cls != "p" {
				return false, fmt.Errorf("line %d: %s without a predicate", in.line, in.op)
			}
			var c bool
			switch in.op {
			case "setp.ge.and.f32":
				c = fa >= fb
			case "setp.lt.and.f32":
				c = fa < fb
			case "setp.le.and.f64":
				c = da <= db
			case "setp.lt.and.f64":
				c = da < db
			}
			err = pred(c && v[2] != 0)
		case "not.pred":
			err = pred(v[0] == 0)
		case "and.pred":
			err = pred(v[0] != 0 && v[1] != 0)
		case "or.pred":
			err = pred(v[0] != 0 || v[1] != 0)
		case "selp.f32", "selp.b32", "selp.f64":
			if in.args[3].cls != "p" {
				return false, fmt.Errorf("line %d: selp without a predicate", in.line)
			}
			r := v[1]
			if v[2] != 0 {
				r = v[0]
			}
			err = put(0, r, map[string]string{"selp.f32": "f", "selp.b32": "r", "selp.f64": "fd"}[in.op])
		case "cvt.rn.f32.u32":
			err = put(0, bitsOf(float32(uint32(v[0]))), "f")
		case "cvt.rn.f32.s32":
			err = put(0, bitsOf(float32(int32(uint32(v[0])))), "f")
		case "cvt.rzi.u32.f32":
			err = put(0, satU32(math.Trunc(float64(fa))), "r")
		case "cvt.f64.f32":
			err = put(0, bits64(float64(fa)), "fd")
		case "cvt.rn.f64.u32":
			err = put(0, bits64(float64(uint32(v[0]))), "fd")
		case "cvt.rzi.u32.f64":
			err = put(0, satU32(math.Trunc(da)), "r")
		case "cvt.rmi.f64.f64":
			err = put(0, bits64(math.Floor(da)), "fd")
		case "add.rn.f32":
			err = put(0, bitsOf(fa+fb), "f")
		case "sub.rn.f32":
			err = put(0, bitsOf(fa-fb), "f")
		case "mul.rn.f32":
			err = put(0, bitsOf(fa*fb), "f")
		case "div.rn.f32":
			err = put(0, bitsOf(fa/fb), "f")
		case "fma.rn.f32":
			// a·b is exact in float64; the sum is rounded there and then
			// to float32, which is the fused result but for rare double
			// rounding.
			err = put(0, bitsOf(float32(math.FMA(float64(fa), float64(fb), float64(f32of(v[2]))))), "f")
		case "rcp.rn.f32":
			err = put(0, bitsOf(1/fa), "f")
		case "lg2.approx.f32":
			err = put(0, bitsOf(float32(math.Log2(float64(fa)))), "f")
		case "sqrt.rn.f32":
			err = put(0, bitsOf(float32(math.Sqrt(float64(fa)))), "f")
		case "add.rn.f64", "sub.rn.f64", "mul.rn.f64", "div.rn.f64", "max.f64":
			for i := 1; i <= 2 && err == nil; i++ {
				err = clsOf(i, "fd")
			}
			var r float64
			switch in.op {
			case "add.rn.f64":
				r = da + db
			case "sub.rn.f64":
				r = da - db
			case "mul.rn.f64":
				r = da * db
			case "div.rn.f64":
				r = da / db
			case "max.f64":
				switch {
				case da != da:
					r = db
				case db != db:
					r = da
				default:
					r = max(da, db)
				}
			}
			if err == nil {
				err = put(0, bits64(r), "fd")
			}
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
			"ld.global.nc.f32", "ld.global.nc.v2.u32", "ld.global.nc.v4.u32", "ld.global.nc.v4.f32",
			"ld.shared.u32", "ld.shared.f32", "ld.shared.f64", "ld.local.f32",
			"ld.global.nc.u64", "ld.shared.u16", "ld.shared.u8":
			a, e := get(1)
			if e != nil {
				return false, e
			}
			if in.args[1].kind != simMem || in.args[1].cls != "rd" {
				return false, fmt.Errorf("line %d: load address is not a 64-bit register", in.line)
			}
			sharedOp := strings.HasPrefix(in.op, "ld.shared.")
			localOp := strings.HasPrefix(in.op, "ld.local.")
			typ := strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(in.op, "ld.global.nc."), "ld.shared."), "ld.local.")
			base := strings.TrimPrefix(strings.TrimPrefix(typ, "v2."), "v4.")
			lanes, elem := 1, simElem[base]
			dsts := []simOperand{in.args[0]}
			if strings.HasPrefix(typ, "v") {
				lanes = int(typ[1] - '0')
				dsts = in.args[0].vec
				if len(dsts) != lanes {
					return false, fmt.Errorf("line %d: %d registers for %d lanes", in.line, len(dsts), lanes)
				}
			}
			var bs []byte
			if sharedOp {
				bs, e = sharedAt(a, lanes*elem.size)
			} else if localOp {
				bs, e = localAt(a, lanes*elem.size)
			} else {
				bs, e = mem.at(a, lanes*elem.size)
			}
			if e != nil {
				return false, fmt.Errorf("line %d: %w", in.line, e)
			}
			for l, d := range dsts {
				var x uint64
				w := bs[l*elem.size : (l+1)*elem.size]
				switch base {
				case "u8":
					x = uint64(w[0])
				case "u16":
					x = uint64(binary.LittleEndian.Uint16(w))
				case "s16":
					x = uint64(uint32(int32(int16(binary.LittleEndian.Uint16(w)))))
				case "f64", "u64":
					x = binary.LittleEndian.Uint64(w)
				default:
					x = uint64(binary.LittleEndian.Uint32(w))
				}
				if d.kind != simReg || d.cls != elem.cls {
					return false, fmt.Errorf("line %d: %s into a %%%s register", in.line, in.op, d.cls)
				}
				regs[d.slot], set[d.slot] = x, true
			}
		case "st.global.f32", "st.global.v4.f32", "st.global.u32", "st.global.f64",
			"st.shared.u32", "st.shared.f32", "st.shared.f64", "st.local.f32",
			"st.shared.u16", "st.shared.u8":
			a, e := get(0)
			if e != nil {
				return false, e
			}
			if in.args[0].kind != simMem || in.args[0].cls != "rd" {
				return false, fmt.Errorf("line %d: store address is not a 64-bit register", in.line)
			}
			typ := strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(in.op, "st.global."), "st.shared."), "st.local.")
			base := strings.TrimPrefix(typ, "v4.")
			elem := simElem[base]
			srcs := []simOperand{in.args[1]}
			if strings.HasPrefix(typ, "v4.") {
				srcs = in.args[1].vec
			}
			var bs []byte
			if strings.HasPrefix(in.op, "st.shared.") {
				bs, e = sharedAt(a, elem.size*len(srcs))
			} else if strings.HasPrefix(in.op, "st.local.") {
				bs, e = localAt(a, elem.size*len(srcs))
			} else {
				bs, e = mem.at(a, elem.size*len(srcs))
			}
			if e != nil {
				return false, fmt.Errorf("line %d: %w", in.line, e)
			}
			for l, s := range srcs {
				if s.kind != simReg || s.cls != elem.cls || !set[s.slot] {
					return false, fmt.Errorf("line %d: %s of an unwritten register or one of another class", in.line, in.op)
				}
				switch elem.size {
				case 1:
					bs[l] = byte(regs[s.slot])
				case 2:
					binary.LittleEndian.PutUint16(bs[2*l:], uint16(regs[s.slot]))
				case 8:
					binary.LittleEndian.PutUint64(bs[8*l:], regs[s.slot])
				default:
					binary.LittleEndian.PutUint32(bs[4*l:], uint32(regs[s.slot]))
				}
			}
		case "red.shared.add.u32", "red.global.add.u32":
			a, e := get(0)
			if e != nil {
				return false, e
			}
			x, e := get(1)
			if e != nil {
				return false, e
			}
			if e := clsOf(1, "r"); e != nil {
				return false, e
			}
			var bs []byte
			if in.op == "red.shared.add.u32" {
				bs, e = sharedAt(a, 4)
			} else {
				bs, e = mem.at(a, 4)
			}
			if e != nil {
				return false, fmt.Errorf("line %d: %w", in.line, e)
			}
			binary.LittleEndian.PutUint32(bs, binary.LittleEndian.Uint32(bs)+uint32(x))
		// The warp kernel's (warp_ptx.go): signed compares, float64
		// compares, roundings and conversions, narrow stores.
		case "setp.lt.s32", "setp.ge.s32", "setp.gt.s32":
			a, c := int32(uint32(v[0])), int32(uint32(v[1]))
			err = pred(map[string]bool{"setp.lt.s32": a < c, "setp.ge.s32": a >= c, "setp.gt.s32": a > c}[in.op])
		case "setp.eq.f64", "setp.gt.f64", "setp.le.f64", "setp.nan.f64":
			for i := 1; i <= 2 && err == nil; i++ {
				err = clsOf(i, "fd")
			}
			if err == nil {
				err = pred(map[string]bool{"setp.eq.f64": da == db, "setp.gt.f64": da > db, "setp.le.f64": da <= db,
					"setp.nan.f64": da != da || db != db}[in.op])
			}
		case "min.f64":
			r := min(da, db)
			switch {
			case da != da:
				r = db
			case db != db:
				r = da
			}
			err = put(0, bits64(r), "fd")
		case "abs.f64":
			err = put(0, bits64(math.Abs(da)), "fd")
		case "cvt.rn.f64.s32":
			err = put(0, bits64(float64(int32(uint32(v[0])))), "fd")
		case "cvt.rn.f32.f64":
			err = put(0, bitsOf(float32(da)), "f")
		case "cvt.rpi.f64.f64":
			err = put(0, bits64(math.Ceil(da)), "fd")
		case "cvt.rzi.f64.f64":
			err = put(0, bits64(math.Trunc(da)), "fd")
		case "cvt.rzi.s32.f64", "cvt.rmi.s32.f64":
			x := math.Trunc(da)
			if in.op == "cvt.rmi.s32.f64" {
				x = math.Floor(da)
			}
			var r int32 // saturating, NaN giving 0
			switch {
			case x != x:
			case x <= math.MinInt32:
				r = math.MinInt32
			case x >= math.MaxInt32:
				r = math.MaxInt32
			default:
				r = int32(x)
			}
			err = put(0, uint64(uint32(r)), "r")
		case "ld.global.nc.f64", "ld.global.u8":
			if in.args[1].kind != simMem || in.args[1].cls != "rd" {
				return false, fmt.Errorf("line %d: load address is not a 64-bit register", in.line)
			}
			a, e := get(1)
			if e != nil {
				return false, e
			}
			size, cls := 8, "fd"
			if in.op == "ld.global.u8" {
				size, cls = 1, "r"
			}
			bs, e := mem.at(a, size)
			if e != nil {
				return false, fmt.Errorf("line %d: %w", in.line, e)
			}
			x := uint64(bs[0])
			if size == 8 {
				x = binary.LittleEndian.Uint64(bs)
			}
			err = put(0, x, cls)
		case "st.global.u8", "st.global.u16":
			a, e := get(0)
			if e != nil {
				return false, e
			}
			if in.args[0].kind != simMem || in.args[0].cls != "rd" {
				return false, fmt.Errorf("line %d: store address is not a 64-bit register", in.line)
			}
			if s := in.args[1]; s.kind != simReg || s.cls != "r" || !set[s.slot] {
				return false, fmt.Errorf("line %d: %s of an unwritten register or one of another class", in.line, in.op)
			}
			size := 1
			if in.op == "st.global.u16" {
				size = 2
			}
			bs, e := mem.at(a, size)
			if e != nil {
				return false, fmt.Errorf("line %d: %w", in.line, e)
			}
			x := regs[in.args[1].slot]
			bs[0] = byte(x)
			if size == 2 {
				bs[1] = byte(x >> 8)
			}
		default:
			return false, fmt.Errorf("line %d: instruction %s unknown to the simulator", in.line, in.op)
		}
		if err != nil {
			return false, err
		}
	}
	return false, fmt.Errorf("fell off the end without ret")
}
