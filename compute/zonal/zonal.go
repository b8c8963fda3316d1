package zonal

import (
	"canopy/compute"
	"canopy/compute/par"
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/paulmach/orb"

	"canopy/compute/vector"
)

// Blocks is a one-band raster read in blocks of whole rows: ReadRows fills
// dst (at least (y1−y0)·Width() values, row-major) with rows [y0, y1).
// NaN marks pixels without a valid value (nodata, masked, 0/0).
type Blocks interface {
	Width() int
	Height() int
	ReadRows(y0, y1 int, dst []float32) error
}

// rowSlicer is a Blocks held in memory whose rows are used in place.
type rowSlicer interface {
	Rows(y0, y1 int) []float32
}

// Plane is an index plane in memory: W×H float32 values, row-major. It is
// a Blocks whose rows are used without copying.
type Plane struct {
	W, H int
	Data []float32
}

// NewPlane wraps data as a w×h plane.
func NewPlane(data []float32, w, h int) (*Plane, error) {
	if w <= 0 || h <= 0 || len(data) != w*h {
		return nil, fmt.Errorf("plane of %d values is not %d×%d", len(data), w, h)
	}
	return &Plane{W: w, H: h, Data: data}, nil
}

// Width returns the number of columns.
func (p *Plane) Width() int { return p.W }

// Height returns the number of rows.
func (p *Plane) Height() int { return p.H }

// ReadRows copies rows [y0, y1) into dst.
func (p *Plane) ReadRows(y0, y1 int, dst []float32) error {
	if y0 < 0 || y1 > p.H || y0 > y1 {
		return fmt.Errorf("rows %d-%d outside a plane of %d rows", y0, y1, p.H)
	}
	copy(dst, p.Rows(y0, y1))
	return nil
}

// Rows returns rows [y0, y1) of the plane itself (not a copy).
func (p *Plane) Rows(y0, y1 int) []float32 {
	return p.Data[y0*p.W : y1*p.W]
}

// Stand is one polygon to summarise, in the raster's map coordinates.
type Stand struct {
	// ID names the stand in the output.
	ID string
	// Geom is an orb.Polygon or orb.MultiPolygon.
	Geom orb.Geometry
}

// StandsFromLayer returns the stands of a layer (already in the raster's
// CRS) named by the attribute idField, or by FID when idField is "".
func StandsFromLayer(l *vector.Layer, idField string) ([]Stand, error) {
	ids, err := l.IDs(idField)
	if err != nil {
		return nil, err
	}
	st := make([]Stand, len(l.Features))
	for i, f := range l.Features {
		st[i] = Stand{ID: ids[i], Geom: f.Geom}
	}
	return st, nil
}

// Classes are value classes for the hectares columns: class 0 is
// v < Breaks[0], class i is Breaks[i−1] ≤ v < Breaks[i], the last is
// v ≥ Breaks[len−1] (compared in float32, as index planes are stored).
// Names has one name more than Breaks. The zero value has no classes.
type Classes struct {
	Breaks []float64
	Names  []string
}

// DefaultClasses are the NDVI classes of the design (compute.NDVIClasses):
// < 0 no vegetation, 0–0.2 bare, 0.2–0.4 sparse, 0.4–0.6 moderate, ≥ 0.6
// dense.
func DefaultClasses() Classes { return ClassesOf(compute.NDVIClasses()) }

// ClassesOf turns a contiguous class table into breaks and names.
func ClassesOf(table []compute.Class) Classes {
	var c Classes
	for i, cl := range table {
		c.Names = append(c.Names, cl.Name)
		if i > 0 {
			c.Breaks = append(c.Breaks, cl.Lo)
		}
	}
	return c
}

// Columns returns the CSV column of each class: "ha_" and the class name
// in lower case with every run of other characters than letters and digits
// made one "_".
func (c Classes) Columns() []string {
	out := make([]string, len(c.Names))
	for i, n := range c.Names {
		var b strings.Builder
		b.WriteString("ha_")
		under := false
		for _, r := range strings.ToLower(n) {
			if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r > 127 {
				b.WriteRune(r)
				under = false
			} else if !under && b.Len() > 3 {
				b.WriteByte('_')
				under = true
			}
		}
		out[i] = strings.TrimRight(b.String(), "_")
	}
	return out
}

// Check reports what is wrong with c, or nil.
func (c Classes) Check() error {
	if len(c.Names) == 0 && len(c.Breaks) == 0 {
		return nil
	}
	if len(c.Names) != len(c.Breaks)+1 {
		return fmt.Errorf("classes: %d names for %d breaks; want one name more than breaks", len(c.Names), len(c.Breaks))
	}
	for i, b := range c.Breaks {
		if math.IsNaN(b) || math.IsInf(b, 0) {
			return fmt.Errorf("classes: break %v is not finite", b)
		}
		if i > 0 && float32(b) <= float32(c.Breaks[i-1]) {
			return fmt.Errorf("classes: breaks must increase (%v after %v)", b, c.Breaks[i-1])
		}
	}
	seen := map[string]bool{}
	for i, col := range c.Columns() {
		if col == "ha_" || col == "ha" {
			return fmt.Errorf("classes: name %q gives no column name", c.Names[i])
		}
		if seen[col] {
			return fmt.Errorf("classes: two classes make the column %s", col)
		}
		seen[col] = true
	}
	return nil
}

// Options tune Compute. The zero value is usable: no classes, automatic
// block height and workers, pixel area from the geotransform.
type Options struct {
	// Classes give the hectares columns (DefaultClasses for NDVI).
	Classes Classes
	// BlockRows is the number of raster rows read at a time (0: about
	// 8 MiB of rows).
	BlockRows int
	// Workers is the number of goroutines (0: GOMAXPROCS).
	Workers int
	// PixelAreaHa overrides the area of one pixel in hectares. 0: from the
	// geotransform, |det| / 10 000, which assumes map units of metres.
	PixelAreaHa float64
	// Context, when set, stops Compute between blocks of rows once it is
	// done; Compute then returns its error (context.Canceled) and no
	// results. A window cancels statistics the user no longer wants.
	Context context.Context
	// Progress, when set, is called after each block of rows with the
	// rows summarised so far and the raster's height, on the goroutine
	// that called Compute.
	Progress func(done, total int)
}

// Result is the statistics of one stand. Pixel counts are sums of
// coverage fractions; statistics are weighted by them and are NaN when
// the stand has no valid pixel.
type Result struct {
	ID string
	// Pixels is the covered pixel count inside the raster, nodata
	// included; ValidPixels counts only pixels with a value.
	Pixels, ValidPixels float64
	// AreaHa is Pixels in hectares: the stand's area on the raster.
	// ValidHa is ValidPixels in hectares: the part with a value (not
	// masked, not nodata).
	AreaHa, ValidHa float64
	// Mean, Std (population), Min, Max, Median, P10 and P90 of the valid
	// pixel values, weighted by coverage.
	Mean, Median, Std, Min, Max, P10, P90 float64
	// ClassHa holds the valid hectares per class of Options.Classes.
	ClassHa []float64
}

// standState is a stand being collected.
type standState struct {
	idx    int
	shape  shape
	area   float64 // polygon area in pixels (signed sum of rings)
	pixels float64
	samp   *samples // nil until the stand's first rows
}

// Compute returns the coverage-weighted statistics of every stand over the
// raster src with geotransform gt (GDAL order; rotated and sheared grids
// are handled), in stand order, and warnings (one line each) for stands
// outside the raster, partly outside, with no valid pixel, or with an
// invalid geometry (computed anyway; see docs/ZONAL.md). It reads src once,
// top to bottom, a block of rows at a time; memory is the block buffers,
// the stands' edges and 12 bytes per covered valid pixel of the stands
// that are open in the current block.
func Compute(src Blocks, gt [6]float64, stands []Stand, opt Options) ([]Result, []string, error) {
	if len(stands) == 0 {
		return nil, nil, errors.New("zonal statistics: the stands layer is empty")
	}
	if err := opt.Classes.Check(); err != nil {
		return nil, nil, err
	}
	a, err := newAffine(gt)
	if err != nil {
		return nil, nil, fmt.Errorf("zonal statistics: %v", err)
	}
	w, h := src.Width(), src.Height()
	if w <= 0 || h <= 0 {
		return nil, nil, fmt.Errorf("zonal statistics: the raster is %d×%d", w, h)
	}
	pixHa := opt.PixelAreaHa
	if pixHa <= 0 {
		pixHa = math.Abs(a.det) / 10000
	}
	workers := opt.Workers
	if workers <= 0 {
		workers = par.DefaultThreads()
	}
	blockRows := opt.BlockRows
	if blockRows <= 0 {
		blockRows = max(1, (8<<20)/(4*w))
	}
	blockRows = min(blockRows, h)
	breakKeys := make([]uint32, len(opt.Classes.Breaks))
	for i, b := range opt.Classes.Breaks {
		breakKeys[i] = floatKey(float32(b))
	}
	nclass := len(opt.Classes.Names)

	results := make([]Result, len(stands))
	notes := make([][]string, len(stands))
	nan := math.NaN()
	empty := func(i int) {
		results[i] = Result{ID: stands[i].ID, Mean: nan, Median: nan, Std: nan, Min: nan, Max: nan, P10: nan, P90: nan, ClassHa: make([]float64, nclass)}
	}

	// Prepare the stands (in parallel: validation sorts every edge).
	states := make([]*standState, len(stands))
	par.ForN(workers, len(stands), func(i int) {
		st := stands[i]
		empty(i)
		if err := vector.Validate(st.Geom); err != nil && !isEmptyGeom(st.Geom) {
			notes[i] = append(notes[i], "invalid geometry: "+err.Error()+"; its coverage is computed with |winding| (see docs/ZONAL.md)")
		}
		if isEmptyGeom(st.Geom) {
			notes[i] = append(notes[i], "empty geometry: no statistics")
			return
		}
		s, err := prepare(st.Geom, a, w, h)
		switch {
		case errors.Is(err, errOutside):
			notes[i] = append(notes[i], "outside the raster: no statistics")
			return
		case err != nil:
			notes[i] = append(notes[i], err.Error()+": no statistics")
			return
		}
		states[i] = &standState{idx: i, shape: s, area: pixelArea(st.Geom, a)}
	})
	order := make([]*standState, 0, len(stands))
	for _, s := range states {
		if s != nil {
			order = append(order, s)
		}
	}
	sort.SliceStable(order, func(i, j int) bool { return order[i].shape.r0 < order[j].shape.r0 })

	// Blocks are read one ahead of the one being summarised.
	type block struct {
		y0, y1 int
		data   []float32
		err    error
	}
	slicer, inPlace := src.(rowSlicer)
	free := make(chan []float32, 2)
	if !inPlace {
		free <- make([]float32, blockRows*w)
		free <- make([]float32, blockRows*w)
	}
	filled := make(chan block, 1)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		defer close(filled)
		for y0 := 0; y0 < h; y0 += blockRows {
			y1 := min(h, y0+blockRows)
			b := block{y0: y0, y1: y1}
			if inPlace {
				b.data = slicer.Rows(y0, y1)
			} else {
				select {
				case buf := <-free:
					b.data = buf[:(y1-y0)*w]
				case <-stop:
					return
				}
				if err := src.ReadRows(y0, y1, b.data); err != nil {
					b.err = fmt.Errorf("zonal statistics: read rows %d-%d: %v", y0, y1, err)
				}
			}
			select {
			case filled <- b:
			case <-stop:
				return
			}
			if b.err != nil {
				return
			}
		}
	}()

	scratch := make([]worker, workers)
	var active []*standState
	next := 0
	for b := range filled {
		if b.err != nil {
			return nil, nil, b.err
		}
		if opt.Context != nil {
			if err := opt.Context.Err(); err != nil {
				return nil, nil, err
			}
		}
		for next < len(order) && order[next].shape.r0 < b.y1 {
			active = append(active, order[next])
			next++
		}
		par.WorkerBlocksN(len(scratch), len(active), 1, func(k, i, _ int) {
			s, wk := active[i], &scratch[k]
			wk.collect(s, b.data, w, b.y0, b.y1)
			if s.shape.r1 <= b.y1 {
				wk.finish(s, &results[s.idx], breakKeys, pixHa)
			}
		})
		kept := active[:0]
		for _, s := range active {
			if s.shape.r1 > b.y1 {
				kept = append(kept, s)
			}
		}
		clear(active[len(kept):])
		active = kept
		if !inPlace {
			free <- b.data[:cap(b.data)]
		}
		if opt.Progress != nil {
			opt.Progress(b.y1, h)
		}
	}
	for _, s := range states {
		if s == nil {
			continue
		}
		r := results[s.idx]
		switch {
		case r.Pixels == 0:
			notes[s.idx] = append(notes[s.idx], "covers no part of any pixel (zero area): no statistics")
		case r.ValidPixels == 0:
			notes[s.idx] = append(notes[s.idx], "no valid pixel (all nodata): no statistics")
		}
		if s.area > 0 && r.Pixels < s.area*(1-1e-9) && r.Pixels > 0 {
			notes[s.idx] = append(notes[s.idx], fmt.Sprintf("%.1f%% of its area lies outside the raster", 100*(1-r.Pixels/s.area)))
		}
	}
	var warnings []string
	for i, ns := range notes {
		for _, n := range ns {
			warnings = append(warnings, fmt.Sprintf("stand %s: %s", stands[i].ID, n))
		}
	}
	return results, warnings, nil
}

// worker holds one goroutine's scratch buffers.
type worker struct {
	acc    []float64
	lo, hi []int
	sc     sortScratch
}

// collect adds the stand's pixels in block rows [by0, by1) (data holds
// those rows, width w).
func (wk *worker) collect(s *standState, data []float32, w, by0, by1 int) {
	sh := &s.shape
	rs, re := max(sh.r0, by0), min(sh.r1, by1)
	if rs >= re {
		return
	}
	cw := sh.c1 - sh.c0
	stride := cw + 2
	n := (re - rs) * stride
	if cap(wk.acc) < n {
		wk.acc = make([]float64, n)
	}
	acc := wk.acc[:n]
	nr := re - rs
	if cap(wk.lo) < nr {
		wk.lo, wk.hi = make([]int, nr), make([]int, nr)
	}
	lo, hi := wk.lo[:nr], wk.hi[:nr]
	for i := range lo {
		lo[i], hi[i] = cw, 0
	}
	sh.accumulate(acc, stride, rs, re, lo, hi)
	if s.samp == nil {
		s.samp = getSamples()
		if est := s.sampleHint(); cap(s.samp.inner) < est {
			s.samp.inner = make([]uint32, 0, est)
		}
	}
	samp := s.samp
	inner, ek, ew := samp.inner, samp.edgeK, samp.edgeW
	pixels := s.pixels
	for r := rs; r < re; r++ {
		l, h := lo[r-rs], hi[r-rs]
		if l >= h {
			continue
		}
		row := acc[(r-rs)*stride+l : (r-rs+1)*stride]
		vals := data[(r-by0)*w+sh.c0+l : (r-by0)*w+sh.c0+h]
		var sum float64
		for c, v := range vals {
			sum += row[c]
			cov := math.Abs(sum)
			if cov < 1e-12 {
				continue
			}
			if cov > 1-1e-12 { // interior (rounding of the running sum aside)
				pixels++
				if v == v {
					inner = append(inner, floatKey(v))
				}
				continue
			}
			pixels += cov
			if v == v {
				ek = append(ek, floatKey(v))
				ew = append(ew, cov)
			}
		}
		clear(row[:min(len(row), h-l+1)])
	}
	samp.inner, samp.edgeK, samp.edgeW = inner, ek, ew
	s.pixels = pixels
}

// maxSampleHint caps the samples reserved for a stand before its pixels
// are read (16 Mi values, 64 MiB): a larger stand grows its buffer as it
// goes, so that what is reserved is never more than what is found.
const maxSampleHint = 1 << 24

// sampleHint is how many samples to reserve for a stand: its area in
// pixels, but no more than the cells of its window on the raster (a 5 km
// stand over a 5 cm raster is 10¹⁰ pixels of area and only the raster's
// cells of samples) and no more than maxSampleHint.
func (s *standState) sampleHint() int {
	sh := &s.shape
	n := float64(sh.c1-sh.c0) * float64(sh.r1-sh.r0)
	if a := s.area; a >= 0 && a < n { // false for NaN
		n = a
	}
	return int(math.Min(n, maxSampleHint)) + 16
}

// finish summarises a stand whose last row has been read and frees its
// samples.
func (wk *worker) finish(s *standState, r *Result, breakKeys []uint32, pixHa float64) {
	if s.samp == nil {
		s.samp = getSamples()
	}
	s.samp.sort(&wk.sc)
	sum := s.samp.summarise(breakKeys)
	r.Pixels = s.pixels
	r.ValidPixels = sum.valid
	r.AreaHa = s.pixels * pixHa
	r.ValidHa = sum.valid * pixHa
	r.Mean, r.Median, r.Std, r.Min, r.Max, r.P10, r.P90 = sum.mean, sum.median, sum.std, sum.min, sum.max, sum.p10, sum.p90
	for i := range r.ClassHa {
		r.ClassHa[i] = sum.class[i] * pixHa
	}
	putSamples(s.samp)
	s.samp = nil
	// The scratch grows to the largest stand; let a huge one go.
	if cap(wk.sc.keys) > 1<<22 {
		wk.sc = sortScratch{}
	}
}

// pixelArea is the area of g in pixels: shells minus holes (+Inf when it
// is too large for a float64).
func pixelArea(g orb.Geometry, a affine) float64 {
	if v := pixelArea1(g, a); !math.IsNaN(v) {
		return v
	}
	return math.Inf(1)
}

func pixelArea1(g orb.Geometry, a affine) float64 {
	var total float64
	for _, p := range asMulti(g) {
		for ri, r := range p {
			var s float64
			n := len(r)
			for i := range r {
				x0, y0 := a.toPixel(r[i])
				x1, y1 := a.toPixel(r[(i+1)%n])
				s += x0*y1 - x1*y0
			}
			s = math.Abs(s) / 2
			if ri > 0 {
				s = -s
			}
			total += s
		}
	}
	return total
}

func asMulti(g orb.Geometry) orb.MultiPolygon {
	switch g := g.(type) {
	case orb.Polygon:
		return orb.MultiPolygon{g}
	case orb.MultiPolygon:
		return g
	}
	return nil
}

func isEmptyGeom(g orb.Geometry) bool {
	for _, p := range asMulti(g) {
		if len(p) > 0 && len(p[0]) > 0 {
			return false
		}
	}
	return true
}
