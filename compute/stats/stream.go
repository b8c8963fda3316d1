package stats

import (
	"math"

	"canopy/compute"
	"canopy/compute/par"
)

// Stream gathers the statistics of an image that arrives block by block
// (the block pipeline's output rows), never holding the image: the
// Summary, a histogram and the class counts of all the blocks added, in
// any order. Its counts (Valid, Total, every histogram bin and class) are
// those of Summarize, Histogram and ClassesOf over the whole plane
// exactly; Min and Max too; Mean and Std agree to rounding (the moments
// are merged in another order).
type Stream struct {
	m     moments
	total int
	bins  int
	lo    float64
	hi    float64
	hist  []int
	table []compute.Class
	cls   []int
	area  float64
}

// NewStream returns an empty stream that counts a histogram of bins bins
// over [lo, hi] (none when Histogram would return nil) and the classes of
// table (none when it is empty) with pixelAreaM2 the ground area of a
// pixel (0 or NaN when unknown), as ClassesOf does.
func NewStream(bins int, lo, hi float64, table []compute.Class, pixelAreaM2 float64) *Stream {
	s := &Stream{bins: bins, lo: lo, hi: hi, table: table, area: pixelAreaM2}
	if Histogram(nil, bins, lo, hi) != nil {
		s.hist = make([]int, bins)
	}
	if len(table) > 0 {
		s.cls = make([]int, len(table))
	}
	return s
}

// Add adds the values of one block.
func (s *Stream) Add(vs []float32) {
	s.total += len(vs)
	parts := make([]moments, par.DefaultThreads())
	par.WorkerBlocks(len(vs), block, func(w, lo, hi int) {
		parts[w].merge(blockMoments(vs[lo:hi]))
	})
	for _, p := range parts {
		s.m.merge(p)
	}
	if s.hist != nil {
		for i, c := range Histogram(vs, s.bins, s.lo, s.hi) {
			s.hist[i] += c
		}
	}
	if s.cls != nil {
		for i, c := range ClassesOf(s.table, vs, 0) {
			s.cls[i] += c.Pixels
		}
	}
}

// Summary is Summarize of every value added.
func (s *Stream) Summary() Summary {
	out := Summary{Total: s.total, Min: math.NaN(), Max: math.NaN(), Mean: math.NaN(), Std: math.NaN()}
	if s.total == 0 {
		return out
	}
	out.Valid = s.m.n
	out.ValidShare = float64(s.m.n) / float64(s.total)
	if s.m.n > 0 {
		out.Min, out.Max, out.Mean = float64(s.m.min), float64(s.m.max), s.m.mean
		out.Std = math.Sqrt(s.m.m2 / float64(s.m.n))
	}
	return out
}

// Histogram is Histogram of every value added (nil when the stream counts
// none).
func (s *Stream) Histogram() []int {
	if s.hist == nil {
		return nil
	}
	return append([]int(nil), s.hist...)
}

// Classes is ClassesOf of every value added (nil when the stream counts
// no classes).
func (s *Stream) Classes() []ClassShare {
	if s.cls == nil {
		return nil
	}
	out := make([]ClassShare, len(s.table))
	valid := 0
	for i := range out {
		out[i].Class, out[i].Index, out[i].Pixels = s.table[i], i, s.cls[i]
		valid += s.cls[i]
	}
	known := s.area > 0 && !math.IsInf(s.area, 0)
	for i := range out {
		out[i].Share, out[i].Hectares = math.NaN(), math.NaN()
		if valid > 0 {
			out[i].Share = float64(out[i].Pixels) / float64(valid)
		}
		if known {
			out[i].Hectares = float64(out[i].Pixels) * s.area / 1e4
		}
	}
	return out
}
