package index

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Op is an instruction of a Program. Every op is elementwise: a block
// interpreter runs it over a block of pixels (dst[i] = f(a[i], b[i])), and
// Dst may be the same register as A or B.
type Op uint8

// The ops. R[x] is register x; K is the instruction's float32 constant.
const (
	OpLoad   Op = iota // R[Dst] = input A (the physical float32 value of role Program.Inputs[A])
	OpConst            // R[Dst] = K
	OpAdd              // R[Dst] = R[A] + R[B]
	OpSub              // R[Dst] = R[A] - R[B]
	OpMul              // R[Dst] = R[A] * R[B]
	OpDiv              // R[Dst] = R[A] / R[B], NaN where R[B] == 0
	OpNeg              // R[Dst] = -R[A]
	OpAbs              // R[Dst] = |R[A]|
	OpSqrt             // R[Dst] = sqrt(R[A]), NaN where R[A] < 0
	OpMin              // R[Dst] = min(R[A], R[B]), NaN if either is NaN
	OpMax              // R[Dst] = max(R[A], R[B]), NaN if either is NaN
	OpAddK             // R[Dst] = R[A] + K
	OpSubK             // R[Dst] = R[A] - K
	OpKSub             // R[Dst] = K - R[A]
	OpMulK             // R[Dst] = R[A] * K
	OpDivK             // R[Dst] = R[A] / K (K is never zero: x/0 is folded to NaN)
	OpKDiv             // R[Dst] = K / R[A], NaN where R[A] == 0
	OpMinK             // R[Dst] = min(R[A], K), NaN where R[A] is NaN (K is never NaN)
	OpMaxK             // R[Dst] = max(R[A], K), NaN where R[A] is NaN (K is never NaN)
	OpFinite           // R[Dst] = R[A] when finite, else NaN: the last op of every output
	numOps
)

var opInfo = [numOps]struct {
	name string
	regs int  // register operands (A, then B)
	k    bool // uses K
	sym  string
}{
	OpLoad:   {"load", 0, false, ""},
	OpConst:  {"const", 0, true, ""},
	OpAdd:    {"add", 2, false, "+"},
	OpSub:    {"sub", 2, false, "-"},
	OpMul:    {"mul", 2, false, "*"},
	OpDiv:    {"div", 2, false, "/"},
	OpNeg:    {"neg", 1, false, ""},
	OpAbs:    {"abs", 1, false, ""},
	OpSqrt:   {"sqrt", 1, false, ""},
	OpMin:    {"min", 2, false, ""},
	OpMax:    {"max", 2, false, ""},
	OpAddK:   {"addk", 1, true, "+"},
	OpSubK:   {"subk", 1, true, "-"},
	OpKSub:   {"ksub", 1, true, "-"},
	OpMulK:   {"mulk", 1, true, "*"},
	OpDivK:   {"divk", 1, true, "/"},
	OpKDiv:   {"kdiv", 1, true, "/"},
	OpMinK:   {"mink", 1, true, ""},
	OpMaxK:   {"maxk", 1, true, ""},
	OpFinite: {"finite", 1, false, ""},
}

// String is the op's mnemonic ("add", "mulk").
func (o Op) String() string {
	if o < numOps {
		return opInfo[o].name
	}
	return fmt.Sprintf("Op(%d)", uint8(o))
}

// Regs is how many register operands the op reads: A, then B. OpLoad reads
// none (its A is an input number).
func (o Op) Regs() int {
	if o < numOps {
		return opInfo[o].regs
	}
	return 0
}

// HasK reports whether the op uses the constant K.
func (o Op) HasK() bool { return o < numOps && opInfo[o].k }

// Instr is one instruction: R[Dst] = Op(R[A], R[B], K).
type Instr struct {
	Op     Op
	Dst, A uint16
	B      uint16
	K      float32
}

// Program is one or more expressions compiled into register code.
type Program struct {
	// Inputs are the roles the program reads, in canonical order; input k
	// is role Inputs[k]. Each is loaded once (one OpLoad).
	Inputs []string
	// NumRegs is the number of registers (a block interpreter needs
	// NumRegs blocks of scratch).
	NumRegs int
	// Code runs in order; every register is written before it is read.
	Code []Instr
	// Outputs[i] is the register holding expression i's result after the
	// code has run (written by an OpFinite; never overwritten later).
	Outputs []int
}

// dnode is a value of the DAG being built; identical dnodes are one value
// (common-subexpression elimination).
type dnode struct {
	op    Op
	a, b  int    // operand node ids, -1 when unused
	kbits uint32 // math.Float32bits(K)
	in    int    // OpLoad: role index
}

type builder struct {
	nodes []dnode
	memo  map[dnode]int
}

// val is a lowered subexpression: a float64 constant (id < 0) or a node.
type val struct {
	c  float64
	id int
}

func konst(c float64) val { return val{c: c, id: -1} }

func (v val) isConst() bool { return v.id < 0 }

func (b *builder) add(n dnode) val {
	if id, ok := b.memo[n]; ok {
		return val{id: id}
	}
	b.nodes = append(b.nodes, n)
	id := len(b.nodes) - 1
	b.memo[n] = id
	return val{id: id}
}

func (b *builder) unary(op Op, x int) val { return b.add(dnode{op: op, a: x, b: -1, in: -1}) }

func (b *builder) withK(op Op, x int, k float32) val {
	return b.add(dnode{op: op, a: x, b: -1, kbits: math.Float32bits(k), in: -1})
}

func (b *builder) binary(op Op, x, y int) val {
	switch op {
	case OpAdd, OpMul, OpMin, OpMax: // commutative: one order for CSE
		if y < x {
			x, y = y, x
		}
	}
	return b.add(dnode{op: op, a: x, b: y, in: -1})
}

// lower turns a tree into DAG values, folding constant subexpressions in
// float64 by the rules of Eval64.
func (b *builder) lower(e *Expr) val {
	switch e.Kind {
	case KindNum:
		return konst(e.Value)
	case KindRole:
		return b.add(dnode{op: OpLoad, a: -1, b: -1, in: e.Role})
	case KindNeg, KindAbs, KindSqrt:
		x := b.lower(e.Args[0])
		if x.isConst() {
			return konst(fold1(e.Kind, x.c))
		}
		op := map[Kind]Op{KindNeg: OpNeg, KindAbs: OpAbs, KindSqrt: OpSqrt}[e.Kind]
		return b.unary(op, x.id)
	case KindClamp:
		x, lo, hi := b.lower(e.Args[0]), b.lower(e.Args[1]), b.lower(e.Args[2])
		return b.combine(KindMin, b.combine(KindMax, x, lo), hi)
	}
	return b.combine(e.Kind, b.lower(e.Args[0]), b.lower(e.Args[1]))
}

// combine builds x op y for a binary kind, folding and choosing the
// constant-operand forms.
func (b *builder) combine(k Kind, x, y val) val {
	if x.isConst() && y.isConst() {
		return konst(fold2(k, x.c, y.c))
	}
	if !x.isConst() && !y.isConst() {
		op := map[Kind]Op{KindAdd: OpAdd, KindSub: OpSub, KindMul: OpMul, KindDiv: OpDiv, KindMin: OpMin, KindMax: OpMax}[k]
		return b.binary(op, x.id, y.id)
	}
	// One constant operand. A NaN constant makes every op NaN.
	c, n, constLeft := y.c, x.id, false
	if x.isConst() {
		c, n, constLeft = x.c, y.id, true
	}
	if math.IsNaN(c) {
		return konst(math.NaN())
	}
	k32 := float32(c) // the one rounding of a folded constant
	switch k {
	case KindAdd:
		return b.withK(OpAddK, n, k32)
	case KindMul:
		return b.withK(OpMulK, n, k32)
	case KindMin:
		return b.withK(OpMinK, n, k32)
	case KindMax:
		return b.withK(OpMaxK, n, k32)
	case KindSub:
		if constLeft {
			return b.withK(OpKSub, n, k32)
		}
		return b.withK(OpSubK, n, k32)
	}
	if constLeft {
		return b.withK(OpKDiv, n, k32)
	}
	if k32 == 0 { // x / 0 is NaN whatever x is
		return konst(math.NaN())
	}
	return b.withK(OpDivK, n, k32)
}

// Compile turns expressions into one Program that computes them all in
// one pass over the inputs. It folds constant subexpressions in float64
// (by Eval64's rules) and rounds each folded constant to float32 once;
// shares common subexpressions across all the expressions (commutative
// operands put in one order: a + b and b + a are one value); lowers clamp
// to min and max; uses the constant-operand ops where one operand is a
// constant; loads each input once, when first needed; orders the code to
// keep few values live (Sethi-Ullman: the operand needing more registers
// first); and gives a register back as soon as its value is dead, so that
// NumRegs is small and the blocks stay in cache.
func Compile(exprs []*Expr) (*Program, error) {
	if len(exprs) == 0 {
		return nil, errors.New("compile: no expressions")
	}
	b := &builder{memo: map[dnode]int{}}
	outs := make([]int, len(exprs))
	for i, e := range exprs {
		if err := e.Check(); err != nil {
			return nil, fmt.Errorf("compile: expression %d: %v", i+1, err)
		}
		v := b.lower(e)
		if v.isConst() {
			v = b.add(dnode{op: OpConst, a: -1, b: -1, kbits: math.Float32bits(float32(v.c)), in: -1})
		}
		outs[i] = b.unary(OpFinite, v.id).id
	}
	return b.emit(outs)
}

// emit schedules the DAG from the outputs, allocates registers and writes
// the code.
func (b *builder) emit(outs []int) (*Program, error) {
	n := len(b.nodes)
	// need is the Sethi-Ullman number of each node, on the DAG as a tree.
	need := make([]int, n)
	for id, nd := range b.nodes { // operands always precede their users
		switch {
		case nd.a < 0:
			need[id] = 1
		case nd.b < 0:
			need[id] = need[nd.a]
		default:
			l, r := need[nd.a], need[nd.b]
			need[id] = max(l, r)
			if l == r {
				need[id] = l + 1
			}
		}
	}
	scheduled := make([]bool, n)
	var order []int
	var visit func(id int)
	visit = func(id int) {
		if scheduled[id] {
			return
		}
		nd := b.nodes[id]
		first, second := nd.a, nd.b
		if first >= 0 && second >= 0 {
			nf, ns := need[first], need[second]
			if scheduled[first] {
				nf = 0
			}
			if scheduled[second] {
				ns = 0
			}
			if ns > nf {
				first, second = second, first
			}
		}
		if first >= 0 {
			visit(first)
		}
		if second >= 0 {
			visit(second)
		}
		scheduled[id] = true
		order = append(order, id)
	}
	for _, o := range outs {
		visit(o)
	}

	// Inputs: the roles loaded, canonical order.
	var roles []int
	for _, id := range order {
		if b.nodes[id].op == OpLoad {
			roles = append(roles, b.nodes[id].in)
		}
	}
	slices.Sort(roles)
	inputOf := map[int]int{}
	p := &Program{}
	for k, r := range roles {
		inputOf[r] = k
		p.Inputs = append(p.Inputs, Roles[r])
	}

	// Liveness: the position of each value's last use; outputs live on.
	last := make([]int, n)
	for pos, id := range order {
		nd := b.nodes[id]
		last[id] = pos
		if nd.a >= 0 {
			last[nd.a] = pos
		}
		if nd.b >= 0 {
			last[nd.b] = pos
		}
	}
	for _, o := range outs {
		last[o] = len(order)
	}

	reg := make([]int, n)
	var busy []bool
	for pos, id := range order {
		nd := b.nodes[id]
		for _, operand := range []int{nd.a, nd.b} {
			if operand >= 0 && last[operand] == pos {
				busy[reg[operand]] = false
			}
		}
		r := slices.Index(busy, false)
		if r < 0 {
			r = len(busy)
			busy = append(busy, false)
		}
		busy[r] = true
		reg[id] = r
		if r > math.MaxUint16 {
			return nil, fmt.Errorf("compile: the expressions need more than %d registers", math.MaxUint16+1)
		}
		in := Instr{Op: nd.op, Dst: uint16(r), K: math.Float32frombits(nd.kbits)}
		switch {
		case nd.op == OpLoad:
			in.A = uint16(inputOf[nd.in])
		case nd.a >= 0:
			in.A = uint16(reg[nd.a])
			if nd.b >= 0 {
				in.B = uint16(reg[nd.b])
			}
		}
		p.Code = append(p.Code, in)
	}
	p.NumRegs = len(busy)
	for _, o := range outs {
		p.Outputs = append(p.Outputs, reg[o])
	}
	return p, nil
}

// String is the program's disassembly, one instruction a line:
//
//	inputs: in0=red in1=nir
//	registers: 3
//	r0 = load in1 (nir)
//	r1 = load in0 (red)
//	r2 = sub r0 r1
//	...
//	outputs: out0=r0
func (p *Program) String() string {
	var b strings.Builder
	b.WriteString("inputs:")
	for k, r := range p.Inputs {
		fmt.Fprintf(&b, " in%d=%s", k, r)
	}
	fmt.Fprintf(&b, "\nregisters: %d\n", p.NumRegs)
	for _, in := range p.Code {
		b.WriteString(in.String(p))
		b.WriteByte('\n')
	}
	b.WriteString("outputs:")
	for i, r := range p.Outputs {
		fmt.Fprintf(&b, " out%d=r%d", i, r)
	}
	b.WriteByte('\n')
	return b.String()
}

// String disassembles one instruction; p (may be nil) names the inputs.
func (in Instr) String(p *Program) string {
	k := strconv.FormatFloat(float64(in.K), 'g', -1, 32)
	switch in.Op {
	case OpLoad:
		if p != nil && int(in.A) < len(p.Inputs) {
			return fmt.Sprintf("r%d = load in%d (%s)", in.Dst, in.A, p.Inputs[in.A])
		}
		return fmt.Sprintf("r%d = load in%d", in.Dst, in.A)
	case OpConst:
		return fmt.Sprintf("r%d = const %s", in.Dst, k)
	}
	switch in.Op.Regs() {
	case 2:
		return fmt.Sprintf("r%d = %s r%d r%d", in.Dst, in.Op, in.A, in.B)
	}
	if in.Op.HasK() {
		return fmt.Sprintf("r%d = %s r%d %s", in.Dst, in.Op, in.A, k)
	}
	return fmt.Sprintf("r%d = %s r%d", in.Dst, in.Op, in.A)
}

// nan32 is the float32 NaN the program writes.
var nan32 = float32(math.NaN())

// Eval32 runs the program on one pixel: in[k] is the physical float32
// value of input k (role p.Inputs[k]; NaN for nodata), regs is scratch of
// at least NumRegs, and out receives one value per expression. Each op is
// computed in float32 and rounded (IEEE round to nearest even, no fused
// multiply-add); division and square root are correctly rounded. This is
// exactly what every float32 backend computes.
func (p *Program) Eval32(in, regs, out []float32) {
	r := regs[:p.NumRegs]
	for _, c := range p.Code {
		var v float32
		switch c.Op {
		case OpLoad:
			v = in[c.A]
		case OpConst:
			v = c.K
		case OpAdd:
			v = float32(r[c.A] + r[c.B])
		case OpSub:
			v = float32(r[c.A] - r[c.B])
		case OpMul:
			v = float32(r[c.A] * r[c.B])
		case OpDiv:
			v = Div32(r[c.A], r[c.B])
		case OpNeg:
			v = -r[c.A]
		case OpAbs:
			v = float32(math.Abs(float64(r[c.A])))
		case OpSqrt:
			v = Sqrt32(r[c.A])
		case OpMin:
			v = Min32(r[c.A], r[c.B])
		case OpMax:
			v = Max32(r[c.A], r[c.B])
		case OpAddK:
			v = float32(r[c.A] + c.K)
		case OpSubK:
			v = float32(r[c.A] - c.K)
		case OpKSub:
			v = float32(c.K - r[c.A])
		case OpMulK:
			v = float32(r[c.A] * c.K)
		case OpDivK:
			v = float32(r[c.A] / c.K)
		case OpKDiv:
			v = Div32(c.K, r[c.A])
		case OpMinK:
			v = Min32(r[c.A], c.K)
		case OpMaxK:
			v = Max32(r[c.A], c.K)
		case OpFinite:
			v = Finite32(r[c.A])
		default:
			v = nan32
		}
		r[c.Dst] = v
	}
	for i, o := range p.Outputs {
		out[i] = r[o]
	}
}

// Div32 is a / b in float32 under the result rules: NaN when b is zero.
func Div32(a, b float32) float32 {
	if b == 0 {
		return nan32
	}
	return float32(a / b)
}

// Sqrt32 is the float32 square root (correctly rounded: the float64 root
// rounded once to float32 is) under the result rules: NaN below zero.
func Sqrt32(x float32) float32 {
	if x < 0 {
		return nan32
	}
	return float32(math.Sqrt(float64(x)))
}

// Min32 is Min64 in float32.
func Min32(a, b float32) float32 {
	if a != a || b != b {
		return nan32
	}
	if a < b {
		return a
	}
	return b
}

// Max32 is Max64 in float32.
func Max32(a, b float32) float32 {
	if a != a || b != b {
		return nan32
	}
	if a > b {
		return a
	}
	return b
}

// Finite32 is x when finite, else NaN.
func Finite32(x float32) float32 {
	if x > math.MaxFloat32 || x < -math.MaxFloat32 {
		return nan32
	}
	return x
}
