package warp

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"canopy/compute/grid"
	"canopy/compute/par"
)

// Resampling is how a destination pixel's value is taken from the
// source.
type Resampling uint8

// The resamplings, as gdalwarp -r names them.
const (
	Nearest Resampling = iota
	Bilinear
	Cubic
	Average
)

var resamplingNames = [...]string{Nearest: "nearest", Bilinear: "bilinear", Cubic: "cubic", Average: "average"}

// String is the resampling's name ("bilinear").
func (r Resampling) String() string {
	if int(r) < len(resamplingNames) {
		return resamplingNames[r]
	}
	return fmt.Sprintf("Resampling(%d)", uint8(r))
}

// ParseResampling reads a name as String writes it ("near" too, as
// gdalwarp spells it).
func ParseResampling(s string) (Resampling, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "near" {
		return Nearest, nil
	}
	for i, n := range resamplingNames {
		if n == s {
			return Resampling(i), nil
		}
	}
	return 0, fmt.Errorf("unknown resampling %q (nearest, bilinear, cubic, average)", s)
}

// radius is the resampling's filter radius (GDAL's anGWKFilterRadius).
func (r Resampling) radius() int {
	switch r {
	case Bilinear:
		return 1
	case Cubic:
		return 2
	}
	return 0
}

// Plan is where every destination pixel of a grid samples one source:
// the approximate transformer's segments for each destination row, and
// the kernel's scale (how many source pixels a destination pixel spans,
// as gdalwarp measures it over the destination's edges). A plan is
// independent of the source's values and of the backend; every backend
// computes the same positions from it.
type Plan struct {
	Dst        grid.Grid
	SrcW, SrcH int
	Resampling Resampling
	// MaxError is the transformer's error bound in source pixels.
	MaxError float64
	// Segs holds the rows' segments: row r's are Segs[RowStart[r]:RowStart[r+1]].
	// For Nearest, Bilinear and Cubic they place pixel centres (x+0.5,
	// r+0.5); for Average, Segs places top-left corners (x, r) and Far the
	// bottom-right corners (x+1, r+1) of destination pixels.
	Segs     []Segment
	RowStart []int32
	Far      []Segment
	FarStart []int32
	// XScale and YScale are destination pixels per source pixel (below 1
	// when the destination is coarser); XRadius, YRadius the kernel's
	// half-width in source pixels; Use4 is true when both scales are at
	// least 0.95 and bilinear and cubic use their 2×2 and 4×4 formulas.
	XScale, YScale   float64
	XRadius, YRadius int
	Use4             bool
	// Empty is true when no destination pixel falls on the source.
	Empty bool
}

// SourceGrid is where a source lies: its pixel size, its geotransform
// (pixel corner to map, GDAL's order) and its system.
type SourceGrid struct {
	Width, Height int
	Affine        [6]float64
	CRS           string
}

// NewPlan computes the plan of warping a source laid out as src onto
// dst with resampling r and the transformer's error bound maxErr (in
// source pixels; 0 transforms every pixel exactly). Rows are planned on
// all cores, each worker with its own PROJ object.
func NewPlan(dst grid.Grid, src SourceGrid, r Resampling, maxErr float64) (*Plan, error) {
	if err := dst.Check(); err != nil {
		return nil, err
	}
	if src.Width <= 0 || src.Height <= 0 {
		return nil, fmt.Errorf("the source is empty (%d×%d pixels)", src.Width, src.Height)
	}
	if int(r) >= len(resamplingNames) {
		return nil, fmt.Errorf("unknown resampling %d", r)
	}
	if dst.Width > math.MaxInt32 || dst.Height > math.MaxInt32 {
		return nil, errors.New("the destination grid is too large")
	}
	t, err := newTransformer(dst, src.Affine, src.CRS)
	if err != nil {
		return nil, err
	}
	p := &Plan{Dst: dst, SrcW: src.Width, SrcH: src.Height, Resampling: r, MaxError: maxErr}
	if err := p.scale(t); err != nil {
		return nil, err
	}
	if p.Empty {
		return p, nil
	}
	if r == Average {
		p.Segs, p.RowStart, err = planRows(t, dst, 0, 0, maxErr, 0, 0)
		if err == nil {
			p.Far, p.FarStart, err = planRows(t, dst, 1, 1, maxErr, 0, 0)
		}
	} else {
		p.Segs, p.RowStart, err = planRows(t, dst, 0.5, 0.5, maxErr, src.Width, src.Height)
	}
	if err != nil {
		return nil, err
	}
	return p, nil
}

// planRows runs the approximate transformer over every destination row
// y = r + dy at x = i + dx. When srcW > 0, a pixel whose approximate
// position falls just outside the source (less than a pixel past an
// edge) is placed again exactly, as GDAL's GWKCheckAndComputeSrcOffsets
// retries it.
func planRows(t *transformer, dst grid.Grid, dx, dy, maxErr float64, srcW, srcH int) ([]Segment, []int32, error) {
	h := dst.Height
	rows := make([][]Segment, h)
	workers := par.Workers(h)
	spans := par.Split(h, workers, 1)
	errs := make([]error, len(spans))
	proto := *t // what the clones copy: worker 0 uses t itself
	par.ForN(workers, len(spans), func(w int) {
		// Each worker opens its own PROJ object: opening one reads PROJ's
		// database for milliseconds, which one after another on many
		// cores took longer than planning the rows.
		tw := t
		if w > 0 {
			var err error
			if tw, err = proto.clone(); err != nil {
				errs[w] = err
				return
			}
		}
		var buf []Segment
		for r := spans[w][0]; r < spans[w][1]; r++ {
			buf = tw.approxRow(buf[:0], dx, float64(r)+dy, dst.Width, maxErr)
			if srcW > 0 {
				rows[r] = tw.retryEdges(nil, buf, dx, float64(r)+dy, float64(srcW), float64(srcH))
			} else {
				rows[r] = append([]Segment(nil), buf...)
			}
		}
	})
	for _, err := range errs {
		if err != nil {
			return nil, nil, err
		}
	}
	n := 0
	for _, s := range rows {
		n += len(s)
	}
	segs := make([]Segment, 0, n)
	start := make([]int32, h+1)
	for r, s := range rows {
		start[r] = int32(len(segs))
		segs = append(segs, s...)
	}
	start[h] = int32(len(segs))
	return segs, start, nil
}

// scale measures the source window the destination needs as GDAL's
// ComputeSourceWindow does (the destination's edges walked at 21 points
// a side, transformed exactly) and derives the kernel's scale and radius
// as GDALWarpKernel::PerformWarp does, for the whole destination as one
// chunk.
func (p *Plan) scale(t *transformer) error {
	const steps = 21
	step := 1.0 / (steps - 1)
	W, H := float64(p.Dst.Width), float64(p.Dst.Height)
	minX, minY := math.Inf(1), math.Inf(1)
	maxX, maxY := math.Inf(-1), math.Inf(-1)
	n := 0
	add := func(x, y float64) {
		sx, sy, ok := t.point(x, y)
		if !ok {
			return
		}
		n++
		minX, minY = math.Min(minX, sx), math.Min(minY, sy)
		maxX, maxY = math.Max(maxX, sx), math.Max(maxY, sy)
	}
	for f := 0.0; f <= 1.0+step*0.5; f += step {
		add(f*W, 0)
		add(f*W, H)
		add(0, f*H)
		add(W, f*H)
	}
	sw, sh := float64(p.SrcW), float64(p.SrcH)
	if n < 5 {
		return fmt.Errorf("too few points of the destination grid (%d of %d) have a place in the source's system", n, 4*steps)
	}
	if minX > sw || maxX < 0 || minY > sh || maxY < 0 {
		p.Empty = true
		p.XScale, p.YScale = 1, 1
		return nil
	}
	round := func(v float64) float64 {
		if r := math.Round(v); math.Abs(r-v) < 1e-6 {
			return r
		}
		return v
	}
	minX, minY, maxX, maxY = round(minX), round(minY), round(maxX), round(maxY)
	rawX := math.Max(0, math.Min(sw-float64(int(math.Max(0, minX))), maxX-minX))
	rawY := math.Max(0, math.Min(sh-float64(int(math.Max(0, minY))), maxY-minY))
	p.XScale, p.YScale = 1, 1
	if rawX > 0 {
		p.XScale = W / rawX
	}
	if rawY > 0 {
		p.YScale = H / rawY
	}
	p.XScale, p.YScale = snapScale(p.XScale), snapScale(p.YScale)
	p.XRadius, p.YRadius = p.Resampling.radius(), p.Resampling.radius()
	if p.XScale < 1 {
		p.XRadius = int(math.Ceil(float64(p.XRadius) / p.XScale))
	}
	if p.YScale < 1 {
		p.YRadius = int(math.Ceil(float64(p.YRadius) / p.YScale))
	}
	p.Use4 = p.XScale >= 0.95 && p.YScale >= 0.95
	return nil
}

// snapScale rounds a downsampling scale whose reciprocal is within 0.05
// of a whole number to that number's reciprocal, as GDAL does.
func snapScale(s float64) float64 {
	if s < 1 {
		r := 1 / s
		if n := int(r + 0.5); math.Abs(r-float64(n)) < 0.05 {
			return 1 / float64(n)
		}
	}
	return s
}

// Segments returns row r's segments (pixel centres or, for Average, top-left corners).
func (p *Plan) Segments(r int) []Segment { return p.Segs[p.RowStart[r]:p.RowStart[r+1]] }

// FarSegments returns row r's bottom-right corners (Average only).
func (p *Plan) FarSegments(r int) []Segment { return p.Far[p.FarStart[r]:p.FarStart[r+1]] }

// retry reports whether GDAL transforms the pixel at (x, y) again exactly:
// outside the source of w×h pixels, but by less than a pixel.
func retry(x, y, w, h float64) bool {
	if x < 0 || y < 0 {
		return x > -1 && y > -1
	}
	if x+1e-10 > w || y+1e-10 > h {
		return x < w+1 && y < h+1
	}
	return false
}

// retryEdges appends segs to out with every pixel that retry picks
// placed exactly as a segment of its own (the rest of its run cut around
// it, keeping the run's parameters).
func (t *transformer) retryEdges(out, segs []Segment, x0, y, w, h float64) []Segment {
	for _, s := range segs {
		if s.N == 1 && s.DX == 0 && s.DY == 0 {
			// Already exact; GDAL's retry gives the same point.
			out = append(out, s)
			continue
		}
		// The run is linear: only its pixels near the source's edges can
		// be retried: those that may lie within a pixel of the source
		// and are not surely inside it.
		k0, k1 := s.Span(-1, w+1, -1, h+1)
		if k0 > k1 {
			out = append(out, s)
			continue
		}
		fk := float64(s.K0)
		ax, ay := s.SX+float64(s.DX*fk), s.SY+float64(s.DY*fk)
		ix0, ix1 := inner(ax, s.DX, 0, w-1e-9, int(s.N))
		iy0, iy1 := inner(ay, s.DY, 0, h-1e-9, int(s.N))
		in0, in1 := max(ix0, iy0), min(ix1, iy1)
		cut := int32(0) // first pixel of s not yet emitted
		for k := int32(k0); k <= int32(k1); k++ {
			if in0 <= in1 && int(k) == in0 {
				k = int32(in1) // surely inside: no retry
				continue
			}
			px, py := s.Pos(int(k))
			if !retry(px, py, w, h) {
				continue
			}
			if k > cut {
				out = append(out, Segment{Start: s.Start + cut, N: k - cut, K0: s.K0 + cut, SX: s.SX, SY: s.SY, DX: s.DX, DY: s.DY})
			}
			i := int(s.Start + k)
			ex, ey, ok := t.point(x0+float64(i), y)
			out = appendPoint(out, i, [2]float64{ex, ey}, ok)
			cut = k + 1
		}
		if cut < s.N {
			out = append(out, Segment{Start: s.Start + cut, N: s.N - cut, K0: s.K0 + cut, SX: s.SX, SY: s.SY, DX: s.DX, DY: s.DY})
		}
	}
	return out
}
