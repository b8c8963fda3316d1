package cpu

/*
#cgo LDFLAGS: -lm
#include "program.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"unsafe"

	"canopy/compute/index"
)

// Block is the number of pixels each op of the C interpreter handles at a
// time (CANOPY_BLOCK): a program's registers, Block float32 each, stay in
// the core's L1 and L2 cache.
const Block = C.CANOPY_BLOCK

// SampleType is how a band's samples are stored; the numbers are
// compute.DataType's.
type SampleType uint8

// The stored sample types the interpreter reads.
const (
	U8 SampleType = iota + 1
	U16
	I16
	U32
	I32
	F32
)

func (t SampleType) size() int {
	switch t {
	case U8:
		return 1
	case U16, I16:
		return 2
	case U32, I32, F32:
		return 4
	}
	return 0
}

// Band is one input of a program as the C loads read it: the whole plane's
// samples, and how they become physical float32 values.
type Band struct {
	Type SampleType
	// Data holds the samples, row-major, in the machine's byte order.
	Data []byte
	// Radiometry applies ((x + Add) * Scale) + Offset in float32, three
	// roundings; without it the value is float32(x).
	Radiometry         bool
	Add, Scale, Offset float32
	// NoData is the stored value that means "no data" (exact, compared as
	// float64 with the sample); HasNoData false or a NaN NoData: none.
	NoData    float64
	HasNoData bool
}

// nodataLane is the band's nodata value as the 32-bit lane the loads
// compare with, and whether any sample can equal it (a value out of the
// type's range, not integral for an integer type, or not a float32 for a
// float band, never matches).
func (b *Band) nodataLane() (uint32, bool) {
	nd := b.NoData
	if !b.HasNoData || nd != nd {
		return 0, false
	}
	var lo, hi float64
	switch b.Type {
	case U8:
		lo, hi = 0, math.MaxUint8
	case U16:
		lo, hi = 0, math.MaxUint16
	case I16:
		lo, hi = math.MinInt16, math.MaxInt16
	case U32:
		if nd < 0 || nd > math.MaxUint32 || nd != math.Trunc(nd) {
			return 0, false
		}
		return uint32(nd), true
	case I32:
		lo, hi = math.MinInt32, math.MaxInt32
	case F32:
		f := float32(nd)
		if float64(f) != nd {
			return 0, false
		}
		return math.Float32bits(f), true
	default:
		return 0, false
	}
	if nd < lo || nd > hi || nd != math.Trunc(nd) {
		return 0, false
	}
	return uint32(int32(nd)), true
}

// Program is an index program prepared for the C interpreter over one
// job's bands, outputs and mask. It pins the Go memory the C code reads
// and writes until Release; Run may be called from many goroutines at
// once, each with its own scratch, on disjoint pixel ranges.
type Program struct {
	c       C.canopy_program
	code    []C.canopy_instr
	bands   []C.canopy_band
	outs    []*C.float
	outRegs []C.int32_t
	outAt   []C.int32_t
	pixels  int
	pin     runtime.Pinner
	pinned  bool
}

// Prepare readies p to run prog over n pixels: bands[k] is input k, out[o]
// receives output o (n floats each), mask is nil or n bytes (non-zero:
// NaN). stream writes the outputs with streaming stores (for images far
// larger than the cache). It checks everything the C code will index, so
// that Run cannot go out of bounds. p reuses its buffers from an earlier
// job; call Release when the job is done.
func (p *Program) Prepare(prog *index.Program, n int, bands []Band, out [][]float32, mask []uint8, stream bool) error {
	p.Release()
	if prog == nil || n <= 0 {
		return errors.New("cpu program: no program or no pixels")
	}
	if len(bands) != len(prog.Inputs) {
		return fmt.Errorf("cpu program: %d bands for %d inputs", len(bands), len(prog.Inputs))
	}
	if len(out) != len(prog.Outputs) {
		return fmt.Errorf("cpu program: %d output planes for %d outputs", len(out), len(prog.Outputs))
	}
	if mask != nil && len(mask) != n {
		return fmt.Errorf("cpu program: mask holds %d pixels, image has %d", len(mask), n)
	}
	nregs := max(1, prog.NumRegs)
	if nregs > C.CANOPY_MAX_REGS {
		return fmt.Errorf("cpu program: %d registers are too many for the C interpreter (at most %d)", prog.NumRegs, C.CANOPY_MAX_REGS)
	}
	for _, in := range prog.Code {
		if in.Op >= numOps || int(in.Dst) >= nregs {
			return fmt.Errorf("cpu program: bad instruction %s", in.String(prog))
		}
		if in.Op == index.OpLoad {
			if int(in.A) >= len(bands) {
				return fmt.Errorf("cpu program: %s loads a missing input", in.String(prog))
			}
		} else if int(in.A) >= nregs || int(in.B) >= nregs {
			return fmt.Errorf("cpu program: %s reads a missing register", in.String(prog))
		}
	}
	// at[c] is where instruction c of prog went in p.code (-1: fused into
	// a later one).
	at := p.marshal(prog)
	p.bands = p.bands[:0]
	for k := range bands {
		b := &bands[k]
		if b.Type.size() == 0 || len(b.Data) != n*b.Type.size() {
			return fmt.Errorf("cpu program: input %d holds %d bytes, %d pixels of type %d need %d", k, len(b.Data), n, b.Type, n*b.Type.size())
		}
		cb := C.canopy_band{data: unsafe.Pointer(&b.Data[0]), _type: C.int32_t(b.Type),
			add: C.float(b.Add), scale: C.float(b.Scale), offset: C.float(b.Offset)}
		if b.Radiometry {
			cb.flags |= C.CANOPY_RADIOMETRY
		}
		if lane, ok := b.nodataLane(); ok {
			cb.flags |= C.CANOPY_NODATA
			cb.nodata = C.uint32_t(lane)
		}
		p.bands = append(p.bands, cb)
	}
	p.outs, p.outRegs, p.outAt = p.outs[:0], p.outRegs[:0], p.outAt[:0]
	for o, plane := range out {
		if len(plane) != n {
			return fmt.Errorf("cpu program: output %d holds %d pixels, image has %d", o, len(plane), n)
		}
		r := prog.Outputs[o]
		if r < 0 || r >= nregs {
			return fmt.Errorf("cpu program: output %d in missing register %d", o, r)
		}
		p.outs = append(p.outs, (*C.float)(unsafe.Pointer(&plane[0])))
		p.outRegs = append(p.outRegs, C.int32_t(r))
		c := prog.StoringFinite(r)
		if c >= 0 {
			c = at[c]
			p.code[c].store = 1
		}
		p.outAt = append(p.outAt, C.int32_t(c))
	}
	// The C side reads the descriptors, and through them the planes: pin
	// all of it for the job's duration.
	p.pinned = true
	c := C.canopy_program{ncode: C.int32_t(len(p.code)), nregs: C.int32_t(nregs),
		nbands: C.int32_t(len(p.bands)), nout: C.int32_t(len(p.outs))}
	if stream {
		c.stream = 1
	}
	for k := range p.bands {
		p.pin.Pin(p.bands[k].data)
	}
	for _, o := range p.outs {
		p.pin.Pin(o)
	}
	if len(p.code) > 0 {
		p.pin.Pin(&p.code[0])
		c.code = &p.code[0]
	}
	if len(p.bands) > 0 {
		p.pin.Pin(&p.bands[0])
		c.bands = &p.bands[0]
	}
	if len(p.outs) > 0 {
		p.pin.Pin(&p.outs[0])
		p.pin.Pin(&p.outRegs[0])
		p.pin.Pin(&p.outAt[0])
		c.out = &p.outs[0]
		c.outregs = &p.outRegs[0]
		c.outat = &p.outAt[0]
	}
	if mask != nil {
		p.pin.Pin(&mask[0])
		c.mask = (*C.uint8_t)(unsafe.Pointer(&mask[0]))
	}
	p.c = c
	p.pixels = n
	return nil
}

// marshal writes prog's code for C into p.code, fusing each normalised
// difference (a sub, an add of the same two registers and the div of the
// two, in a row, whose partial results are not read again) into one
// CANOPY_OP_ND, which rounds as the three do, and an nd that an output's
// storing finite reads next, with that finite, into CANOPY_OP_ND_STORE
// (then the whole of an NDVI-like index is one pass). It returns where
// each instruction went (-1: fused into a later one).
func (p *Program) marshal(prog *index.Program) []int {
	code := prog.Code
	at := make([]int, len(code))
	p.code = p.code[:0]
	for c := 0; c < len(code); c++ {
		if prog.NDStoreAt(c) {
			at[c], at[c+1], at[c+2] = -1, -1, -1
			at[c+3] = len(p.code)
			p.code = append(p.code, C.canopy_instr{op: opNDStore, dst: C.uint16_t(code[c+3].Dst),
				a: C.uint16_t(code[c].A), b: C.uint16_t(code[c].B)})
			c += 3
			continue
		}
		if prog.NDAt(c) {
			at[c], at[c+1] = -1, -1
			div := code[c+2]
			at[c+2] = len(p.code)
			p.code = append(p.code, C.canopy_instr{op: opND, dst: C.uint16_t(div.Dst),
				a: C.uint16_t(code[c].A), b: C.uint16_t(code[c].B)})
			c += 2
			continue
		}
		in := code[c]
		at[c] = len(p.code)
		p.code = append(p.code, C.canopy_instr{op: C.uint8_t(in.Op), dst: C.uint16_t(in.Dst),
			a: C.uint16_t(in.A), b: C.uint16_t(in.B), k: C.float(in.K)})
	}
	return at
}

// numOps is the number of ops the C interpreter knows.
const numOps = index.Op(C.CANOPY_NUM_OPS)

// ScratchFloats is how many float32 of scratch one Run needs.
func (p *Program) ScratchFloats() int { return int(C.canopy_program_scratch(p.c.nregs)) }

// NewScratch allocates scratch for one worker running p (or any program of
// at most as many registers), aligned to 64 bytes.
func (p *Program) NewScratch() []float32 {
	n := p.ScratchFloats()
	s := make([]float32, n+16)
	off := int((64 - uintptr(unsafe.Pointer(&s[0]))%64) % 64 / 4)
	return s[off : off+n : off+n]
}

// Run runs the program over pixels [lo, hi) in one C call, with scratch of
// at least ScratchFloats floats that no other goroutine uses meanwhile.
func (p *Program) Run(scratch []float32, lo, hi int) error {
	if !p.pinned {
		return errors.New("cpu program: not prepared")
	}
	if lo < 0 || hi > p.pixels || lo > hi {
		return fmt.Errorf("cpu program: pixels [%d, %d) outside [0, %d)", lo, hi, p.pixels)
	}
	if len(scratch) < p.ScratchFloats() {
		return fmt.Errorf("cpu program: scratch of %d floats, %d needed", len(scratch), p.ScratchFloats())
	}
	if lo == hi {
		return nil
	}
	if C.canopy_program_run(&p.c, (*C.float)(unsafe.Pointer(&scratch[0])), C.size_t(lo), C.size_t(hi)) != 0 {
		return errors.New("cpu program: the C interpreter refused the program")
	}
	return nil
}

// Release unpins the job's memory; p may be prepared again.
func (p *Program) Release() {
	if p.pinned {
		p.pin.Unpin()
		p.pinned = false
	}
	// cgo's pointer check scans whole allocations: no stale pointer to a
	// finished job's (now unpinned) planes may stay behind, even past len.
	clear(p.bands[:cap(p.bands)])
	clear(p.outs[:cap(p.outs)])
	p.c = C.canopy_program{}
	p.pixels = 0
}

// CANOPY_NOSIMD set to anything but "" or "0" makes the interpreter run
// its portable C ops, as it does compute/internal/vec's Go loops.
func init() {
	if v := os.Getenv("CANOPY_NOSIMD"); v != "" && v != "0" {
		useScalar(true)
	}
}

// useScalar switches the interpreter to its portable C ops (true) or back
// to the best for this CPU; only while no program runs.
func useScalar(on bool) {
	if on {
		C.canopy_program_use_scalar(1)
	} else {
		C.canopy_program_use_scalar(0)
	}
}

// ProgramISA names the instruction set the C interpreter uses on this CPU
// (avx2 or scalar).
func ProgramISA() string { return C.GoString(C.canopy_program_isa()) }

// cOps pairs every index.Op with the C interpreter's number for it; the
// numbers must agree (program_test checks it).
var cOps = [...]struct {
	op index.Op
	c  int
}{
	{index.OpLoad, C.CANOPY_OP_LOAD}, {index.OpConst, C.CANOPY_OP_CONST},
	{index.OpAdd, C.CANOPY_OP_ADD}, {index.OpSub, C.CANOPY_OP_SUB},
	{index.OpMul, C.CANOPY_OP_MUL}, {index.OpDiv, C.CANOPY_OP_DIV},
	{index.OpNeg, C.CANOPY_OP_NEG}, {index.OpAbs, C.CANOPY_OP_ABS},
	{index.OpSqrt, C.CANOPY_OP_SQRT}, {index.OpMin, C.CANOPY_OP_MIN},
	{index.OpMax, C.CANOPY_OP_MAX}, {index.OpAddK, C.CANOPY_OP_ADDK},
	{index.OpSubK, C.CANOPY_OP_SUBK}, {index.OpKSub, C.CANOPY_OP_KSUB},
	{index.OpMulK, C.CANOPY_OP_MULK}, {index.OpDivK, C.CANOPY_OP_DIVK},
	{index.OpKDiv, C.CANOPY_OP_KDIV}, {index.OpMinK, C.CANOPY_OP_MINK},
	{index.OpMaxK, C.CANOPY_OP_MAXK}, {index.OpFinite, C.CANOPY_OP_FINITE},
}

// The fused ops' numbers.
const (
	opND      = C.CANOPY_OP_ND
	opNDStore = C.CANOPY_OP_ND_STORE
)
