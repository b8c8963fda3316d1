package computetest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"canopy/compute"
	"canopy/compute/index"
	"canopy/compute/index/indextest"
)

// JobCase is one named engine job (outputs allocated, poisoned before
// each run).
type JobCase struct {
	Name string
	Job  *compute.Job
}

// Sizes are the conformance sizes: 1×1, a row, a column, odd and prime
// sides, and sizes that fit no work-group, block or thread count.
var Sizes = [][2]int{{1, 1}, {1, 1000}, {1000, 1}, {7, 3}, {17, 19}, {257, 131}, {1021, 3}, {65537, 1}}

// LargeSizes are left out in -short mode.
var LargeSizes = [][2]int{{1023, 1025}, {2049, 1031}}

// storedBand makes a band of role with type t, w×h, whose physical values
// look like reflectances, with a sprinkle of nodata, zeros and (for float
// bands) NaN and ±Inf.
func storedBand(g *rand.Rand, role string, t compute.DataType, w, h int) compute.BandInput {
	p := compute.NewPlane(t, w, h)
	b := compute.BandInput{Role: role, Plane: p, Radiometry: compute.Identity(), Source: fmt.Sprintf("test %s %s", role, t)}
	n := w * h
	pick := func() int { return g.IntN(20) }
	switch t {
	case compute.U8:
		s := p.U8()
		b.Radiometry = compute.Radiometry{Scale: 1.0 / 255}
		b.NoData, b.HasNoData = 255, true
		for i := range n {
			s[i] = uint8(g.IntN(256))
		}
	case compute.U16:
		// Sentinel-2 L2A from baseline 04.00: (DN - 1000) / 10000, DN 0 nodata.
		s := p.U16()
		b.Radiometry = compute.Radiometry{Add: -1000, Scale: 1e-4}
		b.NoData, b.HasNoData = 0, true
		for i := range n {
			switch pick() {
			case 0:
				s[i] = 0
			case 1:
				s[i] = 1000 // reflectance exactly 0
			case 2:
				s[i] = 65535
			default:
				s[i] = uint16(1000 + g.IntN(9000))
			}
		}
	case compute.I16:
		s := p.I16()
		b.Radiometry = compute.Radiometry{Scale: 1e-4}
		b.NoData, b.HasNoData = -9999, true
		for i := range n {
			switch pick() {
			case 0:
				s[i] = -9999
			case 1:
				s[i] = 0
			default:
				s[i] = int16(g.IntN(12000) - 2000)
			}
		}
	case compute.U32:
		// Landsat Collection 2 style: DN × 2.75e-5 − 0.2, fill 0.
		s := p.U32()
		b.Radiometry = compute.Radiometry{Scale: 2.75e-5, Offset: -0.2}
		b.NoData, b.HasNoData = 0, true
		for i := range n {
			if pick() == 0 {
				s[i] = 0
			} else {
				s[i] = uint32(7273 + g.IntN(36000))
			}
		}
	case compute.I32:
		s := p.I32()
		b.Radiometry = compute.Radiometry{Add: 0.5, Scale: 1e-5, Offset: 0.01}
		for i := range n {
			s[i] = int32(g.IntN(200000) - 50000)
		}
	case compute.F32:
		s := p.F32()
		b.NoData, b.HasNoData = -9999, true
		special := []float32{0, float32(math.Copysign(0, -1)), float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), -9999, 1e-30}
		for i := range n {
			if pick() == 0 {
				s[i] = special[g.IntN(len(special))]
			} else {
				s[i] = float32(g.Float64()*0.8 - 0.05)
			}
		}
	}
	return b
}

var allTypes = []compute.DataType{compute.U8, compute.U16, compute.I16, compute.U32, compute.I32, compute.F32}

func newJob(bands []compute.BandInput, mask []uint8, names []string, exprs []*index.Expr) *compute.Job {
	j, err := compute.NewJob(bands, mask, names, exprs)
	if err != nil {
		panic(err)
	}
	return j
}

// JobCases returns the engine conformance jobs: every catalogue index
// together over bands of every stored type (each role a different type,
// rotated by size) with and without a mask, each index alone on float32
// bands, and random formulas of depth up to 5 over inputs with NaN, ±Inf,
// zeros, tiny and huge values (indextest).
func JobCases(short bool) []JobCase {
	sizes := Sizes
	if !short {
		sizes = append(sizes[:len(sizes):len(sizes)], LargeSizes...)
	}
	cat := index.Catalogue()
	var names []string
	var exprs []*index.Expr
	for _, c := range cat {
		names = append(names, c.Name)
		exprs = append(exprs, c.Expr)
	}
	var cs []JobCase
	for si, sz := range sizes {
		cs = append(cs, sizeCases(si, sz[0], sz[1], names, exprs)...)
	}
	// Each catalogue index alone, on float32 bands: the one-index path.
	g := rand.New(rand.NewPCG(99, 7))
	var fb []compute.BandInput
	for _, role := range index.Roles {
		fb = append(fb, storedBand(g, role, compute.F32, 129, 67))
	}
	for _, c := range cat {
		cs = append(cs, JobCase{c.Name + " alone 129x67", newJob(fb, nil, []string{c.Name}, []*index.Expr{c.Expr})})
	}
	return cs
}

// sizeCases are JobCases' three cases at size w×h, the si-th size: the
// catalogue over bands of every stored type, the same masked, and random
// formulas.
func sizeCases(si, w, h int, names []string, exprs []*index.Expr) []JobCase {
	var cs []JobCase
	g := rand.New(rand.NewPCG(uint64(si), 7))
	var bands []compute.BandInput
	for r, role := range index.Roles {
		bands = append(bands, storedBand(g, role, allTypes[(r+si)%len(allTypes)], w, h))
	}
	cs = append(cs, JobCase{fmt.Sprintf("catalogue %dx%d", w, h), newJob(bands, nil, names, exprs)})
	mask := make([]uint8, w*h)
	for i := range mask {
		if g.IntN(5) == 0 {
			mask[i] = 1 + uint8(g.IntN(200))
		}
	}
	cs = append(cs, JobCase{fmt.Sprintf("catalogue masked %dx%d", w, h), newJob(bands, mask, names, exprs)})
	// Random formulas over float32 planes with the awkward values.
	planes := indextest.RandomInputs(g, w*h)
	var fb []compute.BandInput
	for r, role := range index.Roles {
		fb = append(fb, compute.BandInput{Role: role, Plane: compute.PlaneOf(w, h, planes[r]), Radiometry: compute.Identity(), Source: "random " + role})
	}
	var rn []string
	var re []*index.Expr
	for k := range 4 {
		e := indextest.RandomExpr(g, 1+(k+si)%5)
		rn = append(rn, e.String())
		re = append(re, e)
	}
	cs = append(cs, JobCase{fmt.Sprintf("random formulas %dx%d", w, h), newJob(fb, nil, rn, re)})
	return cs
}

// JobCasesOneLarge is JobCases(true) and, unless short, of the large
// sizes only the largest's masked catalogue (every index, every stored
// type, a mask): for backends whose large-size code paths (several
// chunks, dispatches, transfers) do not depend on the formula, and whose
// large cases are slow (llvmpipe).
func JobCasesOneLarge(short bool) []JobCase {
	cs := JobCases(true)
	if short {
		return cs
	}
	var names []string
	var exprs []*index.Expr
	for _, c := range index.Catalogue() {
		names = append(names, c.Name)
		exprs = append(exprs, c.Expr)
	}
	si := len(Sizes) + len(LargeSizes) - 1
	sz := LargeSizes[len(LargeSizes)-1]
	return append(cs, sizeCases(si, sz[0], sz[1], names, exprs)[1])
}

// RunJobsOneLarge is RunJobs over JobCasesOneLarge.
func RunJobsOneLarge(t *testing.T, b compute.Backend, exact bool) {
	t.Helper()
	if !available(t, b) {
		return
	}
	check(t, b, JobCasesOneLarge(testing.Short()), exact)
}

// Eval32Job is the float32 definition of j's outputs at pixel i
// (index.Program.Eval32 over Job.Value32 inputs, NaN where masked), what a
// CPU backend must produce exactly.
func Eval32Job(j *compute.Job, i int, in, regs, out []float32) {
	if j.Masked(i) {
		for o := range out {
			out[o] = compute.NaN32
		}
		return
	}
	for k := range j.Bands {
		in[k] = j.Value32(k, i)
	}
	j.Program.Eval32(in, regs, out)
}

// RunJobs checks b on every JobCase. With exact set (the CPU backends),
// every output must equal the float32 definition (Eval32Job) exactly:
// NaN in the same pixels, other values == (so -0 and +0 agree). Without
// it (GPUs, whose division and square root may not be correctly rounded),
// each value must agree with the float64 truth within the error bound
// (index.Bound) for that arithmetic, with NaN in exactly the same pixels. The
// outputs are poisoned before each run so that an unwritten pixel shows.
func RunJobs(t *testing.T, b compute.Backend, exact bool) {
	t.Helper()
	if !available(t, b) {
		return
	}
	check(t, b, JobCases(testing.Short()), exact)
}

// available reports whether b can run here; when it cannot, t is skipped
// (or failed: a GPU backend with CANOPY_EXPECT_GPU set).
func available(t *testing.T, b compute.Backend) bool {
	t.Helper()
	info := b.Info()
	if !info.Available {
		if info.GPU {
			SkipUnlessGPU(t, false, b.Name()+": "+info.Reason)
		}
		t.Skipf("%s backend unavailable here: %s", b.Name(), info.Reason)
	}
	return true
}

// check runs every case on b, each in a subtest, and checks its outputs.
func check(t *testing.T, b compute.Backend, cases []JobCase, exact bool) {
	t.Helper()
	gpuArith := index.Arith{U: 0x1p-24, DivU: 0x1p-22, Tiny: 0x1p-126}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			j := c.Job
			for _, o := range j.Out {
				for i := range o {
					o[i] = 12345
				}
			}
			if _, err := compute.RunJob(b, j); err != nil {
				t.Fatalf("%s: %v", b.Name(), err)
			}
			in := make([]float32, len(j.Bands))
			regs := make([]float32, j.Program.NumRegs)
			want := make([]float32, len(j.Out))
			bad := 0
			for i := range j.Pixels() {
				Eval32Job(j, i, in, regs, want)
				for o := range j.Out {
					got := j.Out[o][i]
					var ok bool
					if exact {
						ok = got == want[o] || (got != got && want[o] != want[o])
					} else {
						ok = agrees(j, o, i, got, gpuArith)
					}
					if !ok {
						bad++
						if bad <= 3 {
							t.Errorf("%s: %s pixel %d: got %g, want %g (truth %g); inputs %v", b.Name(), j.Names[o], i, got, want[o], j.Reference64(o, i), in)
						}
					}
				}
			}
			if bad > 0 {
				t.Fatalf("%s: %d wrong values", b.Name(), bad)
			}
		})
	}
}

func agrees(j *compute.Job, o, i int, got float32, a index.Arith) bool {
	if j.Masked(i) {
		return got != got
	}
	var px [index.NumRoles]float64
	for r := range px {
		px[r] = math.NaN()
	}
	for k, role := range j.Program.Inputs {
		// The float32 inputs, as the device sees them.
		px[index.RoleIndex(role)] = float64(j.Value32(k, i))
	}
	v := index.Bound(j.Exprs[o], &px, a)
	if !v.Determinate {
		return true
	}
	return v.Agrees(float64(got))
}
