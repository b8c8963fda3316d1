// Package warp reprojects and resamples bands onto a target grid
// (compute/grid) as gdalwarp does, on every backend.
//
// A Plan holds where each destination pixel samples the source: GDAL's
// approximate transformer run over each destination row (PROJ exact at
// the start, middle and end of the row, linear in between while the
// interpolation misses the middle by at most 0.125 source pixel,
// otherwise the row split in two and each half handled alike; runs of at
// most five pixels transformed point by point), kept as linear segments
// so that every backend computes the same float64 positions from it, and
// the kernel's scale measured over the destination's edges as GDAL's
// ComputeSourceWindow measures it. The resamplings are GDAL's: nearest;
// bilinear on the 2×2 neighbours and cubic (Catmull-Rom) on the 4×4,
// their kernels widened by the scale when the destination pixel is
// coarser than the source (scale below 0.95); average of the source
// pixels under the destination pixel, each weighted by the share of it
// inside. Nodata, NaN and masked source pixels never take part: their
// weights are left out and the rest renormalised (a cubic 4×4 with one
// missing pixel falls back to bilinear, as in GDAL).
//
// The float64 kernel in this file's package is the truth (Reference);
// the backends are go (the reference on one goroutine), go-parallel (the
// same over row blocks on every core) and c (the same arithmetic in C,
// rounding each operation as the Go code does); gl (compute/warp/glwarp)
// and cuda (compute/cudaback) run it as a gather kernel on the GPU.
// Results are stored in
// the source's type: integers rounded half up and clamped, float32
// rounded once. Mosaic fuses inputs in order; MosaicStream does the same
// over inputs still being read, making the plans meanwhile and warping
// each input as it arrives (a Streamer backend, the cuda one, keeps the
// mosaic on the device until the last).
package warp

import (
	"fmt"
	"sort"
	"sync"
	"time"

	"canopy/compute"
	"canopy/compute/grid"
	"canopy/compute/par"
)

// Backend runs the plan's kernel over destination rows.
type Backend interface {
	// Name is the backend's name (go, go-parallel, c, gl, cuda).
	Name() string
	// Warp warps src into dst along plan.
	Warp(plan *Plan, src *Source, dst *Target) error
}

// Mosaicker is a backend that warps several sources into one target in
// one call, in order (the cuda backend keeps the target on the device
// between them); Mosaic uses it where a backend has it.
type Mosaicker interface {
	WarpAll(plans []*Plan, srcs []*Source, dst *Target) error
}

// SetupReporter is a backend whose calls include one-time set-up (a
// GPU's driver, context and kernel compilation): TakeSetup returns the
// set-up time spent since it was last called. Mosaic reports it apart
// from the warp's time.
type SetupReporter interface {
	TakeSetup() time.Duration
}

var (
	mu       sync.Mutex
	backends = map[string]Backend{}
)

// Register makes a backend available by its name.
func Register(b Backend) {
	mu.Lock()
	defer mu.Unlock()
	backends[b.Name()] = b
}

// Get returns the backend called name.
func Get(name string) (Backend, error) {
	mu.Lock()
	defer mu.Unlock()
	if b, ok := backends[name]; ok {
		return b, nil
	}
	return nil, fmt.Errorf("no warp backend %q (warp backends: %s)", name, joinNames())
}

// Names lists the registered backends, sorted.
func Names() []string {
	mu.Lock()
	defer mu.Unlock()
	var n []string
	for k := range backends {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

func joinNames() string {
	var n []string
	for k := range backends {
		n = append(n, k)
	}
	sort.Strings(n)
	s := ""
	for i, k := range n {
		if i > 0 {
			s += ", "
		}
		s += k
	}
	return s
}

func init() {
	Register(goBackend{})
	Register(goParallel{})
}

// Check reports a source and target that do not fit the plan (every
// backend checks its arguments with it).
func Check(plan *Plan, src *Source, dst *Target) error { return check(plan, src, dst) }

// check reports a source and target that do not fit the plan.
func check(plan *Plan, src *Source, dst *Target) error {
	if err := src.Check(); err != nil {
		return err
	}
	if src.Plane.Width != plan.SrcW || src.Plane.Height != plan.SrcH {
		return fmt.Errorf("%s: the plan is for a %d×%d source, the band is %d×%d", src.Name, plan.SrcW, plan.SrcH, src.Plane.Width, src.Plane.Height)
	}
	if err := dst.Plane.Check(); err != nil {
		return err
	}
	if dst.Plane.Width != plan.Dst.Width || dst.Plane.Height != plan.Dst.Height {
		return fmt.Errorf("the destination plane is %d×%d, the grid %d×%d", dst.Plane.Width, dst.Plane.Height, plan.Dst.Width, plan.Dst.Height)
	}
	if dst.Plane.Type != src.Plane.Type {
		return fmt.Errorf("%s: the destination holds %s, the source %s", src.Name, dst.Plane.Type, src.Plane.Type)
	}
	if dst.Filled != nil && len(dst.Filled) != dst.Plane.Pixels() {
		return fmt.Errorf("the destination's filled map has %d pixels, the plane %d", len(dst.Filled), dst.Plane.Pixels())
	}
	return nil
}

// Reference warps destination rows [r0, r1) of src into dst with the
// float64 kernel, the definition every backend is checked against.
func Reference(plan *Plan, src *Source, dst *Target, r0, r1 int) {
	if plan.Empty {
		return
	}
	switch src.Plane.Type {
	case compute.U8:
		newKernel[uint8](plan, src, dst).rows(r0, r1)
	case compute.U16:
		newKernel[uint16](plan, src, dst).rows(r0, r1)
	case compute.I16:
		newKernel[int16](plan, src, dst).rows(r0, r1)
	case compute.U32:
		newKernel[uint32](plan, src, dst).rows(r0, r1)
	case compute.I32:
		newKernel[int32](plan, src, dst).rows(r0, r1)
	case compute.F32:
		newKernel[float32](plan, src, dst).rows(r0, r1)
	}
}

// goBackend is the reference kernel on one goroutine.
type goBackend struct{}

func (goBackend) Name() string { return "go" }

func (goBackend) Warp(plan *Plan, src *Source, dst *Target) error {
	if err := check(plan, src, dst); err != nil {
		return err
	}
	Reference(plan, src, dst, 0, plan.Dst.Height)
	return nil
}

// goParallel is the reference kernel over blocks of rows on every core.
type goParallel struct{}

func (goParallel) Name() string { return "go-parallel" }

// rowBlock is how many destination rows one task warps.
const rowBlock = 16

func (goParallel) Warp(plan *Plan, src *Source, dst *Target) error {
	if err := check(plan, src, dst); err != nil {
		return err
	}
	par.Blocks(plan.Dst.Height, rowBlock, func(lo, hi int) { Reference(plan, src, dst, lo, hi) })
	return nil
}

// NewTarget allocates the destination plane of plan for sources of type
// t, every pixel set to nodata (NaN or nd for float32; nd for integers),
// with a filled map for a mosaic.
func NewTarget(plan *Plan, t compute.DataType, nd float64, hasND bool) (*Target, error) {
	tg, fill, err := EmptyTarget(plan, t, nd, hasND)
	if err != nil {
		return nil, err
	}
	if !allZero(fill.Data) {
		p := tg.Plane
		switch t {
		case compute.U8:
			fillPlane(p.U8(), fill.U8()[0])
		case compute.U16:
			fillPlane(p.U16(), fill.U16()[0])
		case compute.I16:
			fillPlane(p.I16(), fill.I16()[0])
		case compute.U32:
			fillPlane(p.U32(), fill.U32()[0])
		case compute.I32:
			fillPlane(p.I32(), fill.I32()[0])
		case compute.F32:
			fillPlane(p.F32(), fill.F32()[0])
		}
	}
	return tg, nil
}

// EmptyTarget is NewTarget's target with its plane left zero, for a
// backend that sets it elsewhere (a GPU on the device), and the one-pixel
// plane of the value NewTarget fills it with.
func EmptyTarget(plan *Plan, t compute.DataType, nd float64, hasND bool) (*Target, compute.Plane, error) {
	fill := compute.NewPlane(t, 1, 1)
	if fill.Type.Size() == 0 {
		return nil, fill, fmt.Errorf("unknown sample type %d", t)
	}
	v := nd
	if !hasND {
		v = 0
	}
	switch t {
	case compute.U8:
		fill.U8()[0] = uint8(v)
	case compute.U16:
		fill.U16()[0] = uint16(v)
	case compute.I16:
		fill.I16()[0] = int16(v)
	case compute.U32:
		fill.U32()[0] = uint32(v)
	case compute.I32:
		fill.I32()[0] = int32(v)
	case compute.F32:
		fill.F32()[0] = float32(v)
	}
	n := plan.Dst.Width * plan.Dst.Height
	p := compute.NewPlane(t, plan.Dst.Width, plan.Dst.Height)
	return &Target{Plane: p, NoData: nd, HasNoData: hasND, Filled: make([]uint8, n)}, fill, nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

func fillPlane[T sample](s []T, v T) {
	for i := range s {
		s[i] = v
	}
}

// Mosaic warps inputs onto grid g: each input is a list of bands (every
// input as many, band b of every input of one type), and band b of the
// result takes each pixel from the first input, in the order given, that
// is valid there (its nodata, NaN and mask left out; a pixel an input
// leaves empty is filled by the next). The inputs' grids are planned once
// each, whatever their bands. The result's nodata is the first input's.
// Timings: the plans and the warps.
func Mosaic(g grid.Grid, inputs [][]*Source, r Resampling, maxErr float64, be Backend) ([]*Target, MosaicTimes, error) {
	var tm MosaicTimes
	if sr, ok := be.(SetupReporter); ok {
		sr.TakeSetup() // what earlier calls spent is theirs
	}
	if len(inputs) == 0 || len(inputs[0]) == 0 {
		return nil, tm, fmt.Errorf("no band to mosaic")
	}
	bands := len(inputs[0])
	for _, in := range inputs {
		if len(in) != bands {
			return nil, tm, fmt.Errorf("%s has %d band(s), %s %d: a mosaic needs as many from each input", in[0].Name, len(in), inputs[0][0].Name, bands)
		}
		for b := range in {
			if in[b].Plane.Type != inputs[0][b].Plane.Type {
				return nil, tm, fmt.Errorf("band %d of %s holds %s, of %s %s: a mosaic needs one type a band", b+1, in[b].Name, in[b].Plane.Type, inputs[0][b].Name, inputs[0][b].Plane.Type)
			}
		}
	}
	t0 := time.Now()
	plans := make([]*Plan, len(inputs))
	for i, in := range inputs {
		p, err := NewPlan(g, in[0].Grid, r, maxErr)
		if err != nil {
			return nil, tm, fmt.Errorf("%s: %w", in[0].Name, err)
		}
		plans[i] = p
	}
	tm.Plan = time.Since(t0)
	t1 := time.Now()
	out := make([]*Target, bands)
	for b := range bands {
		s0 := inputs[0][b]
		t, err := NewTarget(plans[0], s0.Plane.Type, s0.NoData, s0.HasNoData)
		if err != nil {
			return nil, tm, err
		}
		if m, ok := be.(Mosaicker); ok {
			srcs := make([]*Source, len(inputs))
			for i, in := range inputs {
				srcs[i] = in[b]
			}
			if err := m.WarpAll(plans, srcs, t); err != nil {
				return nil, tm, err
			}
		} else {
			for i, in := range inputs {
				if err := be.Warp(plans[i], in[b], t); err != nil {
					return nil, tm, fmt.Errorf("%s: %w", in[b].Name, err)
				}
			}
		}
		out[b] = t
	}
	tm.Warp = time.Since(t1)
	if sr, ok := be.(SetupReporter); ok {
		tm.Setup = sr.TakeSetup()
		tm.Warp -= tm.Setup
	}
	return out, tm, nil
}

// MosaicTimes is where a mosaic's time went: the plans, the warps (with
// a GPU's transfers), and a backend's one-time set-up (SetupReporter),
// which is not in Warp.
type MosaicTimes struct {
	Plan, Warp, Setup time.Duration
}
