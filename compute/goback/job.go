package goback

import (
	"time"

	"canopy/compute"
	"canopy/compute/index"
	"canopy/compute/internal/vec"
)

// RunJob runs any index job as the plain loop: the block program (the
// same fused program go-parallel runs) on the calling goroutine, each
// operation a plain Go loop over a block of pixels (vec.Loops: no
// assembly, whatever the CPU).
func (g *goBackend) RunJob(j *compute.Job) (compute.Timings, error) {
	if err := j.Check(); err != nil {
		return compute.Timings{}, err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.prog.ops = &vec.Loops
	g.prog.prepare(j, 1)
	t0 := time.Now()
	g.prog.Do(0, j.Pixels())
	k := time.Since(t0)
	g.prog.j = nil
	return compute.Timings{Kernel: k, Total: k}, nil
}

// BlockPixels is how many pixels the block program handles at a time: its
// registers (a few blocks of float32) stay in the core's L1 and L2 cache
// while every operation passes over them, numexpr's way.
const BlockPixels = 2048

// RunJob runs any index job as a block program on every core: the job's
// program runs op by op over blocks of BlockPixels pixels, each op one
// vectorised pass (compute/internal/vec: AVX2 where the CPU has it), the
// bands read as stored and converted in the load. The results equal the
// go backend's bit for bit.
func (p *GoParallel) RunJob(j *compute.Job) (compute.Timings, error) {
	if err := j.Check(); err != nil {
		return compute.Timings{}, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var t compute.Timings
	t.Setup = p.run.Start()
	p.prog.ops = &vec.Kernels
	p.prog.prepare(j, p.run.Workers())
	t0 := time.Now()
	p.run.RunTask(j.Pixels(), &p.prog)
	t.Kernel = time.Since(t0)
	t.Total = t.Kernel
	p.prog.j = nil
	return t, nil
}

// blockProgram is a job's program as a par.Task: each worker takes a
// register file from the free list, runs its span block by block, and
// gives it back, so that a run allocates nothing once the register files
// are big enough.
//
// The program runs fused (index.Program.Fusions), as the c backend's does:
// float32 bands with nothing to convert are read in place, a normalised
// difference is one pass (vec.NDVI), and an output's last finite writes the
// output plane itself; an NDVI job is then a single pass from the bands to
// the output. Outputs of vec.StreamPixels or more whose job does not fit
// in the last-level cache (vec.CacheBytes), with no mask to apply after the
// store, are written with streaming stores. None of it changes a bit of the
// results.
type blockProgram struct {
	j       *compute.Job
	ops     *vec.Ops       // the operations: vec.Kernels or vec.Loops
	prog    *index.Program // whose plan fuse is
	fuse    index.FusionPlan
	convs   []vec.Conv
	direct  []bool // band k is read in place
	scratch chan *registers
	size    int
	// stream: the outputs are written with streaming stores (a plane of
	// vec.StreamPixels or more whose bands and outputs do not fit in the
	// last-level cache, no mask to apply after the store).
	stream bool
	// onePass: the fused program writes no register (its bands are read
	// in place, its operations are fused stores: NDVI on float32 bands)
	// and there is no mask to apply after the store, so a span runs as
	// one block, without the blocks' set-up (the old scalar loop's pace).
	onePass bool
}

// registers is one worker's register file: own[r] is register r's
// scratch, cur[r] where its values are now (its scratch, or a band read in
// place).
type registers struct {
	s        []float32
	own, cur [][]float32
}

func (b *blockProgram) prepare(j *compute.Job, workers int) {
	b.j = j
	b.stream = j.Mask == nil && j.Pixels() >= vec.StreamPixels && jobBytes(j) > vec.CacheBytes()
	if b.prog != j.Program {
		// A compiled program does not change: its plan is kept for the
		// next run of it (a run then allocates nothing).
		b.fuse, b.prog = j.Program.Fusions(), j.Program
	}
	b.convs, b.direct = b.convs[:0], b.direct[:0]
	for _, band := range j.Bands {
		r := band.Radiometry
		b.convs = append(b.convs, vec.Conv{Add: float32(r.Add), Scale: float32(r.Scale), Offset: float32(r.Offset), NoData: band.NoData, HasNoData: band.HasNoData})
		b.direct = append(b.direct, band.Plane.Type == compute.F32 && r.IsIdentity() && !band.HasNoData)
	}
	b.onePass = j.Mask == nil
	for c, in := range j.Program.Code {
		switch b.fuse.Kind[c] {
		case index.FuseSkip, index.FuseStore, index.FuseNDStore:
			continue
		case index.FuseNone:
			if in.Op == index.OpLoad && b.direct[in.A] {
				continue
			}
		}
		b.onePass = false
	}
	nregs := max(1, j.Program.NumRegs)
	need := nregs * BlockPixels
	if b.scratch == nil || cap(b.scratch) < workers || b.size < need {
		b.scratch = make(chan *registers, workers)
		for range workers {
			b.scratch <- &registers{s: make([]float32, need)}
		}
		b.size = need
	}
}

// jobBytes is what a job reads and writes: its bands as stored and its
// float32 outputs.
func jobBytes(j *compute.Job) int64 {
	n := int64(j.Pixels())
	var b int64
	for _, band := range j.Bands {
		b += n * int64(band.Plane.Type.Size())
	}
	return b + 4*n*int64(len(j.Out))
}

// Do runs the program over pixels [lo, hi).
func (b *blockProgram) Do(lo, hi int) {
	j := b.j
	rf := <-b.scratch
	defer func() { b.scratch <- rf }()
	p := j.Program
	for lo < hi {
		n := min(BlockPixels, hi-lo)
		if b.onePass {
			n = hi - lo
		}
		rf.own, rf.cur = rf.own[:0], rf.cur[:0]
		for r := range p.NumRegs {
			if b.onePass {
				rf.own = append(rf.own, nil) // not written
				continue
			}
			rf.own = append(rf.own, rf.s[r*BlockPixels:r*BlockPixels+n])
		}
		rf.cur = append(rf.cur, rf.own...)
		b.runBlock(rf, lo, lo+n)
		for o, r := range p.Outputs {
			if b.fuse.OutAt[o] >= 0 {
				continue
			}
			dst := j.Out[o][lo : lo+n]
			copy(dst, rf.cur[r])
			if j.Mask != nil {
				b.ops.MaskNaN(dst, j.Mask[lo:lo+n])
			}
		}
		lo += n
	}
}

// store writes the outputs instruction c writes, NaN where the mask is
// set: finite(nd(a, b)) when nd is set, finite(a) otherwise.
func (b *blockProgram) store(c, lo, hi int, a, bb []float32, nd bool) {
	j := b.j
	for o, at := range b.fuse.OutAt {
		if at != c {
			continue
		}
		dst := j.Out[o][lo:hi]
		switch {
		case nd && b.stream:
			b.ops.NDFiniteStream(dst, bb, a)
		case nd:
			b.ops.NDFinite(dst, bb, a)
		case b.stream:
			b.ops.FiniteStream(dst, a)
		default:
			b.ops.Finite(dst, a)
		}
		if j.Mask != nil {
			b.ops.MaskNaN(dst, j.Mask[lo:hi])
		}
	}
}

// runBlock runs the fused program over pixels [lo, hi) into rf.
func (b *blockProgram) runBlock(rf *registers, lo, hi int) {
	j := b.j
	own, r := rf.own, rf.cur
	for c, in := range j.Program.Code {
		d := own[in.Dst]
		switch b.fuse.Kind[c] {
		case index.FuseSkip:
			continue
		case index.FuseND:
			b.ops.NDVI(d, r[b.fuse.B[c]], r[b.fuse.A[c]])
			r[in.Dst] = d
			continue
		case index.FuseNDStore:
			b.store(c, lo, hi, r[b.fuse.A[c]], r[b.fuse.B[c]], true)
			continue
		case index.FuseStore:
			b.store(c, lo, hi, r[in.A], nil, false)
			continue
		}
		switch in.Op {
		case index.OpLoad:
			if b.direct[in.A] {
				r[in.Dst] = j.Bands[in.A].Plane.F32()[lo:hi]
				continue
			}
			b.load(d, j.Bands[in.A].Plane, b.convs[in.A], lo, hi)
		case index.OpConst:
			for i := range d {
				d[i] = in.K
			}
		case index.OpAdd:
			b.ops.Add(d, r[in.A], r[in.B])
		case index.OpSub:
			b.ops.Sub(d, r[in.A], r[in.B])
		case index.OpMul:
			b.ops.Mul(d, r[in.A], r[in.B])
		case index.OpDiv:
			b.ops.Div(d, r[in.A], r[in.B])
		case index.OpNeg:
			b.ops.Neg(d, r[in.A])
		case index.OpAbs:
			b.ops.Abs(d, r[in.A])
		case index.OpSqrt:
			b.ops.Sqrt(d, r[in.A])
		case index.OpMin:
			b.ops.Min(d, r[in.A], r[in.B])
		case index.OpMax:
			b.ops.Max(d, r[in.A], r[in.B])
		case index.OpAddK:
			b.ops.AddK(d, r[in.A], in.K)
		case index.OpSubK:
			b.ops.SubK(d, r[in.A], in.K)
		case index.OpKSub:
			b.ops.KSub(d, r[in.A], in.K)
		case index.OpMulK:
			b.ops.MulK(d, r[in.A], in.K)
		case index.OpDivK:
			b.ops.DivK(d, r[in.A], in.K)
		case index.OpKDiv:
			b.ops.KDiv(d, r[in.A], in.K)
		case index.OpMinK:
			b.ops.MinK(d, r[in.A], in.K)
		case index.OpMaxK:
			b.ops.MaxK(d, r[in.A], in.K)
		case index.OpFinite:
			b.ops.Finite(d, r[in.A])
		default:
			panic("goback: unknown op " + in.Op.String())
		}
		r[in.Dst] = d
	}
}

// load converts samples [lo, hi) of p into dst.
func (b *blockProgram) load(dst []float32, p compute.Plane, c vec.Conv, lo, hi int) {
	switch p.Type {
	case compute.U8:
		b.ops.LoadU8(dst, p.U8()[lo:hi], c)
	case compute.U16:
		b.ops.LoadU16(dst, p.U16()[lo:hi], c)
	case compute.I16:
		b.ops.LoadI16(dst, p.I16()[lo:hi], c)
	case compute.U32:
		b.ops.LoadU32(dst, p.U32()[lo:hi], c)
	case compute.I32:
		b.ops.LoadI32(dst, p.I32()[lo:hi], c)
	case compute.F32:
		b.ops.LoadF32(dst, p.F32()[lo:hi], c)
	default:
		panic("goback: unknown sample type " + p.Type.String())
	}
}
