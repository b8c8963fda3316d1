package compute

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"canopy/compute/index"
	"canopy/compute/par"
)

// NaN32 is the quiet float32 NaN every backend writes for invalid pixels.
var NaN32 = math.Float32frombits(0x7fc00000)

// Job is one run of the index engine: bands as stored in, one float32 plane
// per index out. Every backend runs any Job (Backend.RunJob); several indices in one
// job read (or upload) the bands once, and their common subexpressions are
// computed once (index.Compile).
//
// Result rules, the same on every backend: a pixel is NaN in every output
// where any band the program reads is nodata (its stored value equals the
// band's NoData, or is NaN in a float band) or the mask is set; elsewhere
// each band is converted to a physical float32 value with its Radiometry
// ((DN + Add) * Scale + Offset, three roundings) and the program runs as
// index.Program.Eval32 defines it.
type Job struct {
	Width, Height int
	// Bands are the program's inputs: Bands[k] has role Program.Inputs[k].
	Bands []BandInput
	// Mask is nil or Width*Height bytes; a non-zero byte masks the pixel.
	Mask []uint8
	// Names and Exprs are the indices, one per output, as the user named
	// them ("ndvi", or the formula for a custom expression).
	Names []string
	Exprs []*index.Expr
	// Program is Exprs compiled together.
	Program *index.Program
	// Out holds one Width*Height plane per index.
	Out [][]float32
	// Mode is the backend's mode for this run ("" for its default): a
	// per-run argument, never state of the backend.
	Mode string
}

// MissingRoleError is a job whose index needs a band that was not given.
type MissingRoleError struct {
	Index, Role string
	Given       []string
}

func (e *MissingRoleError) Error() string {
	given := "none"
	if len(e.Given) > 0 {
		given = strings.Join(e.Given, ", ")
	}
	return fmt.Sprintf("index %s needs the %s band, which was not given (bands given: %s)", e.Index, e.Role, given)
}

// NewJob compiles the indices (names[i] is exprs[i]'s name) and picks
// their bands by role from bands, in the program's order; it allocates the
// output planes (NewOutput). A role an index needs and bands lack is a
// *MissingRoleError; bands of different sizes are an error naming both.
// Bands no index uses are left out of the job.
func NewJob(bands []BandInput, mask []uint8, names []string, exprs []*index.Expr) (*Job, error) {
	j, err := PlanJob(bands, mask, names, exprs)
	if err != nil {
		return nil, err
	}
	j.Out = make([][]float32, len(exprs))
	for i := range j.Out {
		j.Out[i] = NewOutput(j.Pixels())
	}
	return j, nil
}

// CheckIndices checks the indices of a job or a resident session's Index
// call: at least one, a name each, and every band they read among given
// (the roles of the bands there are; a missing one is a
// *MissingRoleError).
func CheckIndices(names []string, exprs []*index.Expr, given []string) error {
	if len(exprs) == 0 {
		return errors.New("no index to compute")
	}
	if len(names) != len(exprs) {
		return fmt.Errorf("%d index names for %d formulas", len(names), len(exprs))
	}
	for i, e := range exprs {
		for _, r := range e.Roles() {
			if !slices.Contains(given, r) {
				return &MissingRoleError{Index: names[i], Role: r, Given: given}
			}
		}
	}
	return nil
}

// PlanJob is NewJob without the output planes (Out is nil): for callers
// that bring their own (a block pipeline, a GPU backend's host buffers).
func PlanJob(bands []BandInput, mask []uint8, names []string, exprs []*index.Expr) (*Job, error) {
	given := make([]string, 0, len(bands))
	for _, b := range bands {
		given = append(given, b.Role)
	}
	if err := CheckIndices(names, exprs, given); err != nil {
		return nil, err
	}
	p, err := index.Compile(exprs)
	if err != nil {
		return nil, err
	}
	j := &Job{Mask: mask, Names: names, Exprs: exprs, Program: p}
	for _, role := range p.Inputs {
		k := slices.IndexFunc(bands, func(b BandInput) bool { return b.Role == role })
		j.Bands = append(j.Bands, bands[k])
	}
	if len(j.Bands) == 0 {
		// A formula of constants only still has a size: the first band's.
		if len(bands) == 0 {
			return nil, errors.New("no band given")
		}
		j.Width, j.Height = bands[0].Plane.Width, bands[0].Plane.Height
	} else {
		j.Width, j.Height = j.Bands[0].Plane.Width, j.Bands[0].Plane.Height
	}
	for _, b := range j.Bands {
		if err := b.Plane.Check(); err != nil {
			return nil, fmt.Errorf("%s band %s: %w", b.Role, b.Source, err)
		}
		if b.Plane.Width != j.Width || b.Plane.Height != j.Height {
			f := j.Bands[0]
			return nil, SizeMismatch(f.Role, f.Source, f.Plane.Width, f.Plane.Height, b.Role, b.Source, b.Plane.Width, b.Plane.Height)
		}
	}
	if mask != nil && len(mask) != j.Pixels() {
		return nil, fmt.Errorf("mask holds %d pixels, image has %d", len(mask), j.Pixels())
	}
	return j, nil
}

// Pixels returns Width*Height.
func (j *Job) Pixels() int { return j.Width * j.Height }

// Check returns an error when the job is malformed: backends call it first.
func (j *Job) Check() error {
	if j == nil || j.Program == nil {
		return errors.New("job has no program")
	}
	if j.Width <= 0 || j.Height <= 0 {
		return fmt.Errorf("image size %dx%d: both sides must be positive", j.Width, j.Height)
	}
	if len(j.Bands) != len(j.Program.Inputs) {
		return fmt.Errorf("job has %d bands, its program reads %d", len(j.Bands), len(j.Program.Inputs))
	}
	for k, b := range j.Bands {
		if b.Role != j.Program.Inputs[k] {
			return fmt.Errorf("job band %d is %s, its program reads %s there", k, b.Role, j.Program.Inputs[k])
		}
		if err := b.Plane.Check(); err != nil {
			return fmt.Errorf("%s band: %w", b.Role, err)
		}
		if b.Plane.Width != j.Width || b.Plane.Height != j.Height {
			return fmt.Errorf("%s band is %dx%d, job is %dx%d", b.Role, b.Plane.Width, b.Plane.Height, j.Width, j.Height)
		}
	}
	if j.Mask != nil && len(j.Mask) != j.Pixels() {
		return fmt.Errorf("mask holds %d pixels, image has %d", len(j.Mask), j.Pixels())
	}
	if len(j.Out) != len(j.Program.Outputs) {
		return fmt.Errorf("job has %d output planes for %d indices", len(j.Out), len(j.Program.Outputs))
	}
	for i, o := range j.Out {
		if len(o) != j.Pixels() {
			return fmt.Errorf("output %d holds %d pixels, image has %d", i, len(o), j.Pixels())
		}
	}
	return nil
}

// Bytes is what one run reads and writes: every band's stored bytes, the
// mask, and every output plane, for bandwidth figures.
func (j *Job) Bytes() int {
	n := len(j.Mask) + 4*len(j.Out)*j.Pixels()
	for _, b := range j.Bands {
		n += len(b.Plane.Data)
	}
	return n
}

// Value32 is input k of pixel i as every float32 backend sees it: the
// physical value in float32 (three roundings), NaN where the band is
// nodata there. The mask is not applied.
func (j *Job) Value32(k, i int) float32 {
	b := &j.Bands[k]
	dn := b.Plane.At(i)
	if math.IsNaN(dn) || (b.HasNoData && dn == b.NoData) {
		return NaN32
	}
	r := b.Radiometry
	if r.IsIdentity() {
		return float32(dn)
	}
	v := float32(dn) + float32(r.Add)
	v = v * float32(r.Scale)
	return v + float32(r.Offset)
}

// Value64 is input k of pixel i in float64: the truth's view of the band.
func (j *Job) Value64(k, i int) float64 {
	b := &j.Bands[k]
	dn := b.Plane.At(i)
	if math.IsNaN(dn) || (b.HasNoData && dn == b.NoData) {
		return math.NaN()
	}
	return b.Radiometry.Apply64(dn)
}

// Masked reports whether pixel i is masked.
func (j *Job) Masked(i int) bool { return j.Mask != nil && j.Mask[i] != 0 }

// Reference64 is the float64 truth of output o at pixel i: index.Expr.Eval64
// over the bands' float64 physical values, NaN where masked.
func (j *Job) Reference64(o, i int) float64 {
	if j.Masked(i) {
		return math.NaN()
	}
	var v [index.NumRoles]float64
	for k, role := range j.Program.Inputs {
		v[index.RoleIndex(role)] = j.Value64(k, i)
	}
	return j.Exprs[o].Eval64(&v)
}

// RunJob checks j and runs it on b.
func RunJob(b Backend, j *Job) (Timings, error) {
	if err := j.Check(); err != nil {
		return Timings{}, err
	}
	t, err := b.RunJob(j)
	if err != nil {
		return t, fmt.Errorf("%s: %w", b.Name(), err)
	}
	return t, nil
}

// JobTolerance is the error VerifyJob accepts without asking why,
// relative to max(1, |ref|): a catalogue index is a handful of float32
// operations on reflectances, each rounding by at most 6e-8 relative. A
// larger error (or NaN in one result only) is still right where the
// formula's float32 error bound allows it (index.Bound, on the float32
// inputs, for a GPU's arithmetic: division within 2 ulp, subnormals
// flushed), as next to a zero denominator; anything else is wrong.
const JobTolerance = 1e-5

// gpuArith is the loosest float32 arithmetic a backend may use.
var gpuArith = index.Arith{U: 0x1p-24, DivU: 0x1p-22, Tiny: 0x1p-126}

// VerifyJob compares every output of j with the float64 truth
// (Reference64, evaluated a block of pixels at a time with the same
// float64 operations), pixel by pixel on all cores, one Report per output.
// It allocates no image-sized memory.
func VerifyJob(j *Job) []Report {
	reps := make([]Report, len(j.Out))
	n := j.Pixels()
	for o := range j.Out {
		got := j.Out[o]
		if len(got) != n {
			reps[o] = Report{Pixels: n, NaNMismatch: n, Bounded: true}
			continue
		}
		parts := make([]Report, par.Workers(n))
		parts = parts[:par.Ranges(n, 1<<14, func(w, lo, hi int) {
			rep := Report{Worst: -1}
			var scratch refScratch
			refs := make([]float64, refBlock)
			explained := func(i int, g float64) bool {
				if j.Masked(i) {
					return false
				}
				var px [index.NumRoles]float64
				for r := range px {
					px[r] = math.NaN()
				}
				for k, role := range j.Program.Inputs {
					px[index.RoleIndex(role)] = float64(j.Value32(k, i))
				}
				return index.Bound(j.Exprs[o], &px, gpuArith).Agrees(g)
			}
			p := refBlock
			for i := lo; i < hi; i++ {
				if p == refBlock {
					j.reference64Block(o, i, refs[:min(refBlock, hi-i)], &scratch)
					p = 0
				}
				ref := refs[p]
				p++
				g := float64(got[i])
				rn, gn := math.IsNaN(ref), math.IsNaN(g)
				if rn {
					rep.NaN++
				}
				if rn != gn {
					if explained(i, g) {
						rep.Conditioned++
						continue
					}
					if rep.NaNMismatch == 0 {
						rep.Worst = i
					}
					rep.NaNMismatch++
					continue
				}
				if rn {
					continue
				}
				scale := math.Abs(ref) // max(1, |ref|): ref is a number here
				if scale < 1 {
					scale = 1
				}
				e := math.Abs(g-ref) / scale
				if e > JobTolerance {
					if explained(i, g) {
						rep.Conditioned++
					} else {
						if rep.Wrong == 0 && rep.NaNMismatch == 0 {
							rep.Worst = i
						}
						rep.Wrong++
					}
				}
				if e > rep.MaxAbsErr {
					rep.MaxAbsErr = e
				}
			}
			parts[w] = rep
		})]
		rep := Report{Pixels: n, Worst: -1, Tol: JobTolerance, Bounded: true}
		for _, p := range parts {
			if (p.NaNMismatch > 0 || p.Wrong > 0) && rep.NaNMismatch == 0 && rep.Wrong == 0 {
				rep.Worst = p.Worst
			}
			rep.MaxAbsErr = math.Max(rep.MaxAbsErr, p.MaxAbsErr)
			rep.NaNMismatch += p.NaNMismatch
			rep.NaN += p.NaN
			rep.Conditioned += p.Conditioned
			rep.Wrong += p.Wrong
		}
		reps[o] = rep
	}
	return reps
}

// SizeMismatch is the error for two bands of one computation that are not
// the same size, in a user's words: "the bands are not the same size: red
// B04.tif is 10980×10980 pixels, nir B8A.tif is 5490×5490; the bands of one
// computation must share a grid".
func SizeMismatch(roleA, srcA string, wa, ha int, roleB, srcB string, wb, hb int) error {
	return fmt.Errorf("the bands are not the same size: %s %s is %d×%d pixels, %s %s is %d×%d; the bands of one computation must share a grid",
		roleA, srcA, wa, ha, roleB, srcB, wb, hb)
}

// JobStreamer is an engine that overlaps consecutive jobs, such as the
// blocks of an image in compute/pipeline: the upload of one job, the
// kernel of the one before and the download of the one before that at
// once, on several buffers and streams (the cuda backend).
type JobStreamer interface {
	// StreamJobs opens a stream in which up to depth jobs are in flight.
	StreamJobs(depth int) (JobStream, error)
}

// StreamDepthHinter is a JobStreamer that knows how many jobs in flight
// serve it best: the block pipeline's depth when Options.StreamDepth is
// left at 0 (the gl backend, whose one command queue gains nothing past
// two).
type StreamDepthHinter interface {
	StreamDepthHint() int
}

// JobStream is an open stream of jobs; its calls come from one goroutine.
// Jobs complete in the order they were submitted.
type JobStream interface {
	// Submit queues j behind the jobs in flight and returns without
	// waiting for it. j's bands, mask and outputs must be left alone until
	// Wait has returned it. With depth jobs in flight it is an error: Wait
	// first.
	Submit(j *Job) error
	// Wait waits for the oldest job in flight and returns its phases.
	Wait() (Timings, error)
	// Close waits for the jobs in flight and releases the stream.
	Close() error
}
