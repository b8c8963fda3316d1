package compute

import (
	"errors"
	"fmt"
	"math"

	"canopy/compute/index"
)

// Kept on the card. A resident session holds one scene's bands where its
// backend computes (a GPU's memory: uploaded once, as stored, so that
// uint16 counts stay uint16) and answers everything a map viewer asks of
// them without moving the bands again: any index (computed from the
// resident bands, the planes kept there too), the statistics of an index
// plane (one fused pass: count, min, max, mean, standard deviation, a
// histogram and class counts) and the screen-sized coloured view of it
// (the colour table, stretch, zoom and pan applied where the plane is).
// Only the view and the statistics come back; Download exports a whole
// plane. Changing the index, the ramp, the stretch, the classes, the zoom
// or the pan re-renders with no upload of the bands.
//
// GPU backends implement Resident; package residentcpu gives every
// backend (the c backend's block interpreter, say) the same session on
// the host, which is also the reference the GPU sessions are tested
// against: its statistics are package stats' (Summarize, Histogram,
// ClassesOf) and its views RenderView's, which equals the window's
// colormap.LUT.RenderView.

// Resident is implemented by backends that can keep a scene's bands on
// their device.
type Resident interface {
	// OpenResident uploads the bands (as stored) and the mask (nil, or
	// one byte a pixel, non-zero masked) and returns the session that
	// holds them. The bands must share one size. Timings: Setup is the
	// one-time work (context, device memory, page-locking the bands),
	// Upload the transfer, Total the upload end to end.
	OpenResident(bands []BandInput, mask []uint8) (ResidentSession, Timings, error)
}

// ResidentSession is one scene kept where its backend computes. A session
// is not safe for concurrent use; each call finishes its work before it
// returns (its Timings are complete). Planes are numbered by their place
// in the last Index call's expressions.
type ResidentSession interface {
	// Size is the scene's width and height in pixels.
	Size() (w, h int)
	// Index computes the indices (names[i] is exprs[i]'s name) from the
	// resident bands in one pass and keeps their planes, replacing the
	// last call's. The result rules are Job's.
	Index(names []string, exprs []*index.Expr) (Timings, error)
	// Stats summarises plane o as StatsRequest asks, in one pass.
	Stats(o int, q StatsRequest) (ResidentStats, Timings, error)
	// Render draws plane o as v says into dst, v.Width*v.Height NRGBA
	// pixels (4 bytes each, row after row, as image.NRGBA's Pix with a
	// stride of 4*v.Width), by RenderView's rule.
	Render(o int, v View, dst []byte) (Timings, error)
	// Download copies the whole of plane o into dst (Width*Height values).
	Download(o int, dst []float32) (Timings, error)
	// Probe returns the value of every plane at pixel (x, y) (column,
	// row), one per index of the last Index call, in its order: what a
	// map's identify tool reads, without downloading a plane.
	Probe(x, y int) ([]float32, error)
	// Close releases the session's memory. The backend stays usable.
	Close() error
}

// StatsRequest is what Stats computes besides the summary (count, min,
// max, mean, standard deviation of the finite values, always computed).
type StatsRequest struct {
	// Bins > 0 asks for a histogram of Bins equal bins over [Lo, Hi], by
	// stats.Histogram's rule: bin i holds Lo + i·(Hi-Lo)/Bins ≤ v <
	// Lo + (i+1)·(Hi-Lo)/Bins, computed in float64 on the float32 value,
	// the last bin also holds v == Hi, values outside are not counted.
	Bins   int
	Lo, Hi float64
	// Classes, when not empty, asks for the pixels in each class of the
	// table (contiguous and ascending, as ClassOf reads it: at most
	// MaxResidentClasses classes) and their area.
	Classes []Class
	// PixelAreaM2 is one pixel's ground area in m² (GeoRef.PixelArea),
	// for the classes' hectares; 0 or NaN when unknown.
	PixelAreaM2 float64
}

// MaxResidentClasses is the most classes a resident session counts in
// its statistics pass.
const MaxResidentClasses = 32

// MaxResidentBins is the most histogram bins a resident session counts.
const MaxResidentBins = 1 << 20

// Check reports a request no session can answer.
func (q StatsRequest) Check() error {
	if q.Bins < 0 || q.Bins > MaxResidentBins {
		return fmt.Errorf("histogram of %d bins: 0 (none) to %d", q.Bins, MaxResidentBins)
	}
	if q.Bins > 0 && (!(q.Lo < q.Hi) || math.IsInf(q.Lo, 0) || math.IsInf(q.Hi, 0)) {
		return fmt.Errorf("histogram range [%g, %g] must be finite with low < high", q.Lo, q.Hi)
	}
	if len(q.Classes) > MaxResidentClasses {
		return fmt.Errorf("%d classes: at most %d", len(q.Classes), MaxResidentClasses)
	}
	for i := 1; i < len(q.Classes)-1; i++ {
		if !(float32(q.Classes[i].Hi) >= float32(q.Classes[i-1].Hi)) {
			return fmt.Errorf("class %q ends at %g, below the class before it (%g): classes must ascend", q.Classes[i].Name, q.Classes[i].Hi, q.Classes[i-1].Hi)
		}
	}
	return nil
}

// ResidentStats are the statistics of one plane: the numbers of
// stats.Summarize, stats.Histogram and stats.ClassesOf.
type ResidentStats struct {
	// Min, Max, Mean and Std (population) of the finite values; NaN when
	// there is none.
	Min, Max, Mean, Std float64
	// Valid is the number of finite values, Total the number of pixels.
	Valid, Total int
	// Histogram holds the counts of the request's bins (nil when none
	// was asked for).
	Histogram []int
	// Classes holds, per class of the request, its pixels, their share of
	// the valid pixels (NaN when none is valid) and their area in
	// hectares (NaN when the pixel area is unknown).
	Classes []ClassCount
}

// ClassCount is one class's part of a plane.
type ClassCount struct {
	Pixels   int
	Share    float64
	Hectares float64
}

// ClassCounts turns pixel counts per class into ClassCounts with shares
// and hectares, as stats.ClassesOf computes them.
func ClassCounts(pixels []int, pixelAreaM2 float64) []ClassCount {
	out := make([]ClassCount, len(pixels))
	valid := 0
	for _, p := range pixels {
		valid += p
	}
	known := pixelAreaM2 > 0 && !math.IsInf(pixelAreaM2, 0)
	for i, p := range pixels {
		out[i] = ClassCount{Pixels: p, Share: math.NaN(), Hectares: math.NaN()}
		if valid > 0 {
			out[i].Share = float64(p) / float64(valid)
		}
		if known {
			out[i].Hectares = float64(p) * pixelAreaM2 / 1e4
		}
	}
	return out
}

// View is how a plane is drawn on screen: its colour table and the
// viewport, by RenderView's rule.
type View struct {
	Table ColorTable
	// X0, Y0 is the image point at the view's top-left corner; Zoom is
	// screen pixels per image pixel.
	X0, Y0, Zoom float64
	// Width and Height are the view's size in screen pixels.
	Width, Height int
}

// ColorTable maps a value to a colour, as data: the window's colour ramp,
// stretch and classes (colormap.LUT.Table builds it) in a form every
// backend can hold.
type ColorTable struct {
	// RGBA holds the colours as little-endian packed NRGBA (R in the low
	// byte, A in the high): entry 0 is the colour of NaN, then the ramp's
	// N = len(RGBA)-1 steps, or one entry per class.
	RGBA []uint32
	// Upper, for a class table, holds the float32 upper bounds of every
	// class but the last: a value's class is the number of leading bounds
	// it is not below (ClassOf's rule), its colour RGBA[1+class]. Nil for
	// a continuous ramp.
	Upper []float32
	// Lo and Scale place a value on a continuous ramp: f = (v - Lo) *
	// Scale in float32; the colour is RGBA[1+int(f)] for 0 ≤ f < N,
	// RGBA[N] above, RGBA[1] below.
	Lo, Scale float32
}

// MaxColorTable is the most entries a ColorTable may hold.
const MaxColorTable = 1 << 16

// Discrete reports whether t maps classes rather than a continuous ramp.
func (t ColorTable) Discrete() bool { return t.Upper != nil }

// Check reports a table no renderer can use.
func (t ColorTable) Check() error {
	if len(t.RGBA) < 2 || len(t.RGBA) > MaxColorTable {
		return fmt.Errorf("colour table of %d entries: 2 to %d (NaN's and at least one colour)", len(t.RGBA), MaxColorTable)
	}
	if t.Discrete() {
		if len(t.Upper)+2 != len(t.RGBA) {
			return fmt.Errorf("colour table of %d classes has %d colours, needs %d", len(t.Upper)+1, len(t.RGBA)-1, len(t.Upper)+1)
		}
		return nil
	}
	if t.Lo != t.Lo || t.Scale != t.Scale || math.IsInf(float64(t.Lo), 0) || math.IsInf(float64(t.Scale), 0) {
		return fmt.Errorf("colour table stretch (lo %g, scale %g) must be finite", t.Lo, t.Scale)
	}
	return nil
}

// Entry is the index into RGBA of v's colour.
func (t ColorTable) Entry(v float32) int {
	if t.Upper != nil {
		if v != v {
			return 0
		}
		i := 0
		for i < len(t.Upper) && v >= t.Upper[i] {
			i++
		}
		return 1 + i
	}
	n := len(t.RGBA) - 1
	f := (v - t.Lo) * t.Scale
	switch {
	case f >= 0 && f < float32(n):
		return 1 + int(f)
	case f >= float32(n):
		return n
	case f < 0:
		return 1
	}
	return 0 // NaN
}

// Check reports a view no renderer can draw: a bad table or size. A zoom
// that is not a positive number is not an error: the view is transparent.
func (v View) Check() error {
	if v.Width <= 0 || v.Height <= 0 || v.Width > 1<<15 || v.Height > 1<<15 {
		return fmt.Errorf("view of %dx%d screen pixels: each side 1 to %d", v.Width, v.Height, 1<<15)
	}
	return v.Table.Check()
}

// Drawable reports whether v shows anything: a positive finite zoom and
// a corner that is a number. RenderView leaves a view that is not
// drawable transparent.
func (v View) Drawable() bool {
	return v.Zoom > 0 && !math.IsInf(v.Zoom, 0) && !math.IsNaN(v.X0) && !math.IsNaN(v.Y0)
}

// MaxViewSamples is the most samples per axis RenderView takes for one
// screen pixel when zoomed out.
const MaxViewSamples = 3

// ViewSamples is the supersampling RenderView uses at zoom: 1 when
// zoom ≥ 1, else min(ceil(1/zoom), MaxViewSamples) samples per axis.
func ViewSamples(zoom float64) int {
	if zoom >= 1 {
		return 1
	}
	return int(min(math.Ceil(1/zoom-1e-9), MaxViewSamples))
}

// ViewSampleOffset is where sample k of s sits inside a screen pixel,
// (k + 0.5) / s: sample k of screen column sx reads image column
// floor(X0 + (sx + ViewSampleOffset(k, s)) / Zoom).
func ViewSampleOffset(k, s int) float64 { return (float64(k) + 0.5) / float64(s) }

// ErrPixel is the error a session returns for a probe of pixel (x, y)
// outside its w×h image.
func ErrPixel(x, y, w, h int) error {
	return fmt.Errorf("pixel (%d, %d) is outside the %dx%d image", x, y, w, h)
}

// ErrPlane is the error a session returns for plane o when it holds n
// planes.
func ErrPlane(o, n int) error {
	if n == 0 {
		return errors.New("no index computed yet: call Index first")
	}
	return fmt.Errorf("plane %d asked for, %d computed", o, n)
}

// StatsMerger builds a ResidentStats from the per-block partial results a
// session's statistics pass leaves on the card: each block's count, mean,
// sum of squared deviations (M2), minimum, maximum and class counts above
// each inner bound, merged in block order with Chan et al.'s update (as
// stats.Summarize merges its blocks'), so that every backend's mean and
// standard deviation come out alike.
type StatsMerger struct {
	cnt      int
	mean, m2 float64
	lo, hi   float32
	above    []int
}

// NewStatsMerger starts a merge for q.
func NewStatsMerger(q StatsRequest) *StatsMerger {
	return &StatsMerger{lo: float32(math.Inf(1)), hi: float32(math.Inf(-1)), above: make([]int, max(0, len(q.Classes)-1))}
}

// Above adds one block's count of valid pixels above inner class bound i.
func (m *StatsMerger) Above(i, n int) { m.above[i] += n }

// Bounds is the number of inner class bounds.
func (m *StatsMerger) Bounds() int { return len(m.above) }

// Add merges one block's moments: n valid pixels of this mean, sum of
// squared deviations m2, minimum and maximum (a block of none adds
// nothing).
func (m *StatsMerger) Add(n int, mean, m2 float64, lo, hi float32) {
	if n == 0 {
		return
	}
	m.lo, m.hi = min(m.lo, lo), max(m.hi, hi)
	if m.cnt == 0 {
		m.cnt, m.mean, m.m2 = n, mean, m2
		return
	}
	tot := m.cnt + n
	d := mean - m.mean
	m.mean += d * float64(n) / float64(tot)
	m.m2 += m2 + d*d*float64(m.cnt)*float64(n)/float64(tot)
	m.cnt = tot
}

// Result is the merged statistics of a plane of total pixels, with the
// histogram hist (nil when q asked for none).
func (m *StatsMerger) Result(q StatsRequest, hist []int, total int) ResidentStats {
	r := ResidentStats{Total: total, Min: math.NaN(), Max: math.NaN(), Mean: math.NaN(), Std: math.NaN(), Histogram: hist}
	r.Valid = m.cnt
	if m.cnt > 0 {
		r.Min, r.Max, r.Mean = float64(m.lo), float64(m.hi), m.mean
		r.Std = math.Sqrt(max(0, m.m2) / float64(m.cnt))
	}
	if len(q.Classes) > 0 {
		px := make([]int, len(q.Classes))
		prev := m.cnt
		for i, a := range m.above {
			px[i] = prev - a
			prev = a
		}
		px[len(px)-1] = prev
		r.Classes = ClassCounts(px, q.PixelAreaM2)
	}
	return r
}

// CheckResidentBands checks what a session is opened on: at least one
// band, every plane well formed and of one size, and a mask of one byte a
// pixel or none. It returns the size.
func CheckResidentBands(bands []BandInput, mask []uint8) (w, h int, err error) {
	if len(bands) == 0 {
		return 0, 0, errors.New("no band given")
	}
	w, h = bands[0].Plane.Width, bands[0].Plane.Height
	for _, b := range bands {
		if err := b.Plane.Check(); err != nil {
			return 0, 0, fmt.Errorf("%s band %s: %w", b.Role, b.Source, err)
		}
		if b.Plane.Width != w || b.Plane.Height != h {
			return 0, 0, fmt.Errorf("band size mismatch: %s is %dx%d, %s is %dx%d", bands[0].Role, w, h, b.Role, b.Plane.Width, b.Plane.Height)
		}
	}
	if mask != nil && len(mask) != w*h {
		return 0, 0, fmt.Errorf("mask holds %d pixels, image has %d", len(mask), w*h)
	}
	return w, h, nil
}
