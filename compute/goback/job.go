package goback

import (
	"time"

	"canopy/compute"
	"canopy/compute/index"
	"canopy/compute/internal/vec"
)

// RunJob runs any index job with the plain loop: one pixel at a time, each
// band converted and the program evaluated op by op in float32
// (index.Program.Eval32), the definition the other backends follow.
func (*goBackend) RunJob(j *compute.Job) (compute.Timings, error) {
	if err := j.Check(); err != nil {
		return compute.Timings{}, err
	}
	t0 := time.Now()
	in := make([]float32, len(j.Bands))
	regs := make([]float32, j.Program.NumRegs)
	out := make([]float32, len(j.Out))
	for i := range j.Pixels() {
		if j.Masked(i) {
			for o := range j.Out {
				j.Out[o][i] = compute.NaN32
			}
			continue
		}
		for k := range j.Bands {
			in[k] = j.Value32(k, i)
		}
		j.Program.Eval32(in, regs, out)
		for o, v := range out {
			j.Out[o][i] = v
		}
	}
	k := time.Since(t0)
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
	p.prog.prepare(j, p.run.Workers())
	t0 := time.Now()
	p.run.RunTask(j.Pixels(), &p.prog)
	t.Kernel = time.Since(t0)
	t.Total = t.Kernel
	p.prog.j = nil
	return t, nil
}

// blockProgram is a job's program as a par.Task: each worker takes a
// scratch register file from the free list, runs its span block by block,
// and gives it back, so that a run allocates nothing once the register
// files are big enough.
type blockProgram struct {
	j *compute.Job
	// ndvi is set for a job that is NDVI alone over float32 bands stored
	// as reflectance: the hand-written kernel (vec.NDVI) runs it in one
	// pass instead of the program's five, with the same operations in the
	// same order, so the same numbers (BenchmarkNDVIJob keeps it honest).
	ndvi    bool
	convs   []vec.Conv
	scratch chan []float32
	size    int
}

func (b *blockProgram) prepare(j *compute.Job, workers int) {
	b.j = j
	b.ndvi = isNDVI(j)
	b.convs = b.convs[:0]
	for _, band := range j.Bands {
		r := band.Radiometry
		b.convs = append(b.convs, vec.Conv{Add: float32(r.Add), Scale: float32(r.Scale), Offset: float32(r.Offset), NoData: band.NoData, HasNoData: band.HasNoData})
	}
	need := max(1, j.Program.NumRegs) * BlockPixels
	if b.scratch == nil || cap(b.scratch) < workers || b.size < need {
		b.scratch = make(chan []float32, workers)
		for range workers {
			b.scratch <- make([]float32, need)
		}
		b.size = need
	}
}

// Do runs the program over pixels [lo, hi).
func (b *blockProgram) Do(lo, hi int) {
	j := b.j
	if b.ndvi {
		ndviJob(j, lo, hi)
		return
	}
	s := <-b.scratch
	defer func() { b.scratch <- s }()
	p := j.Program
	regs := make([][]float32, 0, 64)
	for lo < hi {
		n := min(BlockPixels, hi-lo)
		regs = regs[:0]
		for r := range p.NumRegs {
			regs = append(regs, s[r*BlockPixels:r*BlockPixels+n])
		}
		runBlock(j, b.convs, regs, lo, lo+n)
		for o, r := range p.Outputs {
			dst := j.Out[o][lo : lo+n]
			copy(dst, regs[r])
			if j.Mask != nil {
				vec.MaskNaN(dst, j.Mask[lo:lo+n])
			}
		}
		lo += n
	}
}

// runBlock runs every instruction over pixels [lo, hi) into regs.
func runBlock(j *compute.Job, convs []vec.Conv, r [][]float32, lo, hi int) {
	for _, c := range j.Program.Code {
		d := r[c.Dst]
		switch c.Op {
		case index.OpLoad:
			load(d, j.Bands[c.A].Plane, convs[c.A], lo, hi)
		case index.OpConst:
			for i := range d {
				d[i] = c.K
			}
		case index.OpAdd:
			vec.Add(d, r[c.A], r[c.B])
		case index.OpSub:
			vec.Sub(d, r[c.A], r[c.B])
		case index.OpMul:
			vec.Mul(d, r[c.A], r[c.B])
		case index.OpDiv:
			vec.Div(d, r[c.A], r[c.B])
		case index.OpNeg:
			vec.Neg(d, r[c.A])
		case index.OpAbs:
			vec.Abs(d, r[c.A])
		case index.OpSqrt:
			vec.Sqrt(d, r[c.A])
		case index.OpMin:
			vec.Min(d, r[c.A], r[c.B])
		case index.OpMax:
			vec.Max(d, r[c.A], r[c.B])
		case index.OpAddK:
			vec.AddK(d, r[c.A], c.K)
		case index.OpSubK:
			vec.SubK(d, r[c.A], c.K)
		case index.OpKSub:
			vec.KSub(d, r[c.A], c.K)
		case index.OpMulK:
			vec.MulK(d, r[c.A], c.K)
		case index.OpDivK:
			vec.DivK(d, r[c.A], c.K)
		case index.OpKDiv:
			vec.KDiv(d, r[c.A], c.K)
		case index.OpMinK:
			vec.MinK(d, r[c.A], c.K)
		case index.OpMaxK:
			vec.MaxK(d, r[c.A], c.K)
		case index.OpFinite:
			vec.Finite(d, r[c.A])
		default:
			panic("goback: unknown op " + c.Op.String())
		}
	}
}

// load converts samples [lo, hi) of p into dst.
func load(dst []float32, p compute.Plane, c vec.Conv, lo, hi int) {
	switch p.Type {
	case compute.U8:
		vec.LoadU8(dst, p.U8()[lo:hi], c)
	case compute.U16:
		vec.LoadU16(dst, p.U16()[lo:hi], c)
	case compute.I16:
		vec.LoadI16(dst, p.I16()[lo:hi], c)
	case compute.U32:
		vec.LoadU32(dst, p.U32()[lo:hi], c)
	case compute.I32:
		vec.LoadI32(dst, p.I32()[lo:hi], c)
	case compute.F32:
		vec.LoadF32(dst, p.F32()[lo:hi], c)
	default:
		panic("goback: unknown sample type " + p.Type.String())
	}
}

var ndviExpr = index.MustParse("(nir - red) / (nir + red)")

// isNDVI reports whether j is NDVI alone over float32 bands with no
// radiometry to apply (Bands[0] is red, Bands[1] nir: the program's
// canonical order).
func isNDVI(j *compute.Job) bool {
	if len(j.Exprs) != 1 || !j.Exprs[0].Equal(ndviExpr) || len(j.Bands) != 2 {
		return false
	}
	for _, b := range j.Bands {
		if b.Plane.Type != compute.F32 || !b.Radiometry.IsIdentity() {
			return false
		}
	}
	return j.Bands[0].Role == "red" && j.Bands[1].Role == "nir"
}

// ndviJob is NDVI over pixels [lo, hi) with the hand-written kernel, in
// pieces the scheduler can interleave: (nir − red) / (nir + red), NaN
// where the sum is zero, then NaN where a band is nodata, where the result
// is not finite, and where the mask is set, as the program does.
func ndviJob(j *compute.Job, lo, hi int) {
	red, nir, out := j.Bands[0].Plane.F32(), j.Bands[1].Plane.F32(), j.Out[0]
	rb, nb := &j.Bands[0], &j.Bands[1]
	for a := lo; a < hi; a += ndviPiece {
		z := min(a+ndviPiece, hi)
		o, r, n := out[a:z], red[a:z], nir[a:z]
		vec.NDVI(o, r, n)
		if rb.HasNoData || nb.HasNoData {
			for i := range o {
				if (rb.HasNoData && float64(r[i]) == rb.NoData) || (nb.HasNoData && float64(n[i]) == nb.NoData) {
					o[i] = compute.NaN32
				}
			}
		}
		vec.Finite(o, o)
		if j.Mask != nil {
			vec.MaskNaN(o, j.Mask[a:z])
		}
	}
}
