package cback

import (
	"canopy/compute/index"
	"canopy/native/cpu"
)

// cpuOps is the C interpreter's op for every index.Op (program_test
// checks that none is missing).
var cpuOps = [...]cpu.Op{
	index.OpLoad: cpu.OpLoad, index.OpConst: cpu.OpConst,
	index.OpAdd: cpu.OpAdd, index.OpSub: cpu.OpSub,
	index.OpMul: cpu.OpMul, index.OpDiv: cpu.OpDiv,
	index.OpNeg: cpu.OpNeg, index.OpAbs: cpu.OpAbs,
	index.OpSqrt: cpu.OpSqrt, index.OpMin: cpu.OpMin,
	index.OpMax: cpu.OpMax, index.OpAddK: cpu.OpAddK,
	index.OpSubK: cpu.OpSubK, index.OpKSub: cpu.OpKSub,
	index.OpMulK: cpu.OpMulK, index.OpDivK: cpu.OpDivK,
	index.OpKDiv: cpu.OpKDiv, index.OpMinK: cpu.OpMinK,
	index.OpMaxK: cpu.OpMaxK, index.OpFinite: cpu.OpFinite,
}

// badOp is what an index.Op the interpreter does not know becomes: an op
// cpu.Program.Prepare refuses.
const badOp = cpu.Op(255)

func opOf(op index.Op) cpu.Op {
	if int(op) < len(cpuOps) {
		return cpuOps[op]
	}
	return badOp
}

// marshal writes prog as the C interpreter's code, fusing each normalised
// difference (a sub, an add of the same two registers and the div of the
// two, in a row, whose partial results are not read again) into one
// cpu.OpND, which rounds as the three do, and an nd that an output's
// storing finite reads next, with that finite, into cpu.OpNDStore (then
// the whole of an NDVI-like index is one pass); an output whose last
// instruction is a finite is written by it (Store). code's buffers are
// reused.
func marshal(prog *index.Program, code *cpu.Code) {
	pc := prog.Code
	at := make([]int, len(pc)) // where instruction c went (-1: fused into a later one)
	code.Instrs = code.Instrs[:0]
	for c := 0; c < len(pc); c++ {
		if prog.NDStoreAt(c) {
			at[c], at[c+1], at[c+2] = -1, -1, -1
			at[c+3] = len(code.Instrs)
			code.Instrs = append(code.Instrs, cpu.Instr{Op: cpu.OpNDStore, Dst: uint16(pc[c+3].Dst),
				A: uint16(pc[c].A), B: uint16(pc[c].B)})
			c += 3
			continue
		}
		if prog.NDAt(c) {
			at[c], at[c+1] = -1, -1
			at[c+2] = len(code.Instrs)
			code.Instrs = append(code.Instrs, cpu.Instr{Op: cpu.OpND, Dst: uint16(pc[c+2].Dst),
				A: uint16(pc[c].A), B: uint16(pc[c].B)})
			c += 2
			continue
		}
		in := pc[c]
		at[c] = len(code.Instrs)
		code.Instrs = append(code.Instrs, cpu.Instr{Op: opOf(in.Op), Dst: uint16(in.Dst),
			A: uint16(in.A), B: uint16(in.B), K: in.K})
	}
	code.NumRegs = prog.NumRegs
	code.OutRegs, code.OutAt = code.OutRegs[:0], code.OutAt[:0]
	for _, r := range prog.Outputs {
		c := prog.StoringFinite(r)
		if c >= 0 {
			c = at[c]
			code.Instrs[c].Store = true
		}
		code.OutRegs = append(code.OutRegs, r)
		code.OutAt = append(code.OutAt, c)
	}
}
