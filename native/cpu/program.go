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
)

// Block is the number of pixels each op of the C interpreter handles at a
// time (CANOPY_BLOCK): a program's registers, Block float32 each, stay in
// the core's L1 and L2 cache.
const Block = C.CANOPY_BLOCK

// SampleType is how a band's samples are stored (compute/cback maps
// compute.DataType onto it).
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

// Op is one operation of the C interpreter (program.h's CANOPY_OP_*): the
// operations of an index program, numbered as compute/index numbers them,
// and two fused ones.
type Op uint8

// The interpreter's operations. Each writes register Dst from registers A
// and B and the constant K (a load reads band A; a constant is K).
const (
	OpLoad Op = C.CANOPY_OP_LOAD
	// OpConst sets Dst to K.
	OpConst  Op = C.CANOPY_OP_CONST
	OpAdd    Op = C.CANOPY_OP_ADD
	OpSub    Op = C.CANOPY_OP_SUB
	OpMul    Op = C.CANOPY_OP_MUL
	OpDiv    Op = C.CANOPY_OP_DIV
	OpNeg    Op = C.CANOPY_OP_NEG
	OpAbs    Op = C.CANOPY_OP_ABS
	OpSqrt   Op = C.CANOPY_OP_SQRT
	OpMin    Op = C.CANOPY_OP_MIN
	OpMax    Op = C.CANOPY_OP_MAX
	OpAddK   Op = C.CANOPY_OP_ADDK
	OpSubK   Op = C.CANOPY_OP_SUBK
	OpKSub   Op = C.CANOPY_OP_KSUB
	OpMulK   Op = C.CANOPY_OP_MULK
	OpDivK   Op = C.CANOPY_OP_DIVK
	OpKDiv   Op = C.CANOPY_OP_KDIV
	OpMinK   Op = C.CANOPY_OP_MINK
	OpMaxK   Op = C.CANOPY_OP_MAXK
	OpFinite Op = C.CANOPY_OP_FINITE
	// OpND is a normalised difference, (A - B) / (A + B) rounded as the
	// sub, add and div it stands for.
	OpND Op = C.CANOPY_OP_ND
	// OpNDStore is OpND followed by a storing finite: it writes the
	// outputs whose OutAt is this instruction (Store is set).
	OpNDStore Op = C.CANOPY_OP_ND_STORE
)

// NumOps is the number of unfused operations (OpLoad to OpFinite).
const NumOps = int(C.CANOPY_NUM_OPS)

// Instr is one instruction of a Code.
type Instr struct {
	Op        Op
	Dst, A, B uint16
	K         float32
	// Store, on an OpFinite or OpNDStore, writes the result straight to
	// the outputs whose OutAt is this instruction instead of register Dst
	// (which no later instruction reads).
	Store bool
}

// Code is a program in the interpreter's terms, over registers of Block
// float32 each: Instrs in order, then output o is register OutRegs[o], or
// was written by instruction OutAt[o] (a storing finite; -1: none).
type Code struct {
	Instrs  []Instr
	NumRegs int
	OutRegs []int
	OutAt   []int
}

func (in Instr) String() string {
	return fmt.Sprintf("op %d r%d <- (%d, %d, k %g, store %v)", in.Op, in.Dst, in.A, in.B, in.K, in.Store)
}

// Program is a Code prepared for the C interpreter over one job's bands,
// outputs and mask. It pins the Go memory the C code reads and writes
// until Release; Run may be called from many goroutines at once, each
// with its own scratch, on disjoint pixel ranges.
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

// Prepare readies p to run code over n pixels: bands[k] is band k of the
// loads, out[o] receives output o (n floats each), mask is nil or n bytes
// (non-zero: NaN). stream writes the outputs with streaming stores (for
// images far larger than the cache). It checks everything the C code will
// index, so that Run cannot go out of bounds. p reuses its buffers from an
// earlier job; call Release when the job is done.
func (p *Program) Prepare(code *Code, n int, bands []Band, out [][]float32, mask []uint8, stream bool) error {
	p.Release()
	if code == nil || n <= 0 {
		return errors.New("cpu program: no program or no pixels")
	}
	if len(out) != len(code.OutRegs) || len(code.OutAt) != len(code.OutRegs) {
		return fmt.Errorf("cpu program: %d output planes for %d outputs (%d stored by an instruction)", len(out), len(code.OutRegs), len(code.OutAt))
	}
	if mask != nil && len(mask) != n {
		return fmt.Errorf("cpu program: mask holds %d pixels, image has %d", len(mask), n)
	}
	nregs := max(1, code.NumRegs)
	if nregs > C.CANOPY_MAX_REGS {
		return fmt.Errorf("cpu program: %d registers are too many for the C interpreter (at most %d)", code.NumRegs, C.CANOPY_MAX_REGS)
	}
	p.code = p.code[:0]
	for _, in := range code.Instrs {
		if (int(in.Op) >= NumOps && in.Op != OpND && in.Op != OpNDStore) || int(in.Dst) >= nregs {
			return fmt.Errorf("cpu program: bad instruction %s", in)
		}
		if in.Op == OpLoad {
			if int(in.A) >= len(bands) {
				return fmt.Errorf("cpu program: %s loads a missing band", in)
			}
		} else if int(in.A) >= nregs || int(in.B) >= nregs {
			return fmt.Errorf("cpu program: %s reads a missing register", in)
		}
		if (in.Store && in.Op != OpFinite && in.Op != OpNDStore) || (in.Op == OpNDStore && !in.Store) {
			return fmt.Errorf("cpu program: %s: only a finite stores, and a fused nd store always does", in)
		}
		ci := C.canopy_instr{op: C.uint8_t(in.Op), dst: C.uint16_t(in.Dst), a: C.uint16_t(in.A), b: C.uint16_t(in.B), k: C.float(in.K)}
		if in.Store {
			ci.store = 1
		}
		p.code = append(p.code, ci)
	}
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
		r := code.OutRegs[o]
		if r < 0 || r >= nregs {
			return fmt.Errorf("cpu program: output %d in missing register %d", o, r)
		}
		at := code.OutAt[o]
		if at >= len(code.Instrs) || at < -1 || (at >= 0 && !code.Instrs[at].Store) {
			return fmt.Errorf("cpu program: output %d stored by instruction %d, which does not store", o, at)
		}
		p.outs = append(p.outs, (*C.float)(unsafe.Pointer(&plane[0])))
		p.outRegs = append(p.outRegs, C.int32_t(r))
		p.outAt = append(p.outAt, C.int32_t(at))
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
		UseScalar(true)
	}
}

// UseScalar switches the interpreter to its portable C ops (true) or back
// to the best for this CPU, only while no program runs: the tests run
// both (CANOPY_NOSIMD does it for a whole process).
func UseScalar(on bool) {
	if on {
		C.canopy_program_use_scalar(1)
	} else {
		C.canopy_program_use_scalar(0)
	}
}

// ProgramISA names the instruction set the C interpreter uses on this CPU
// (avx2 or scalar).
func ProgramISA() string { return C.GoString(C.canopy_program_isa()) }
