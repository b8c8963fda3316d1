package stats

import (
	"canopy/compute/par"
	"fmt"
	"math"

	"canopy/compute"
)

// block is the number of pixels a worker takes at a time.
const block = 1 << 16

// Summary describes the valid (finite) pixels of an NDVI plane.
type Summary struct {
	// Min, Max, Mean and Std (the population standard deviation) of the
	// valid pixels; NaN when there is none.
	Min, Max, Mean, Std float64
	// Valid is the number of finite pixels, Total the number of pixels.
	Valid, Total int
	// ValidShare is Valid/Total, 0 for an empty plane.
	ValidShare float64
}

// String formats s on one line for logs and the command line.
func (s Summary) String() string {
	return fmt.Sprintf("min %.4f  max %.4f  mean %.4f  std %.4f  valid %d of %d (%.1f%%)",
		s.Min, s.Max, s.Mean, s.Std, s.Valid, s.Total, 100*s.ValidShare)
}

// moments are the count, mean and sum of squared deviations of some
// values, combined with Chan et al.'s pairwise update.
type moments struct {
	n        int
	mean, m2 float64
	min, max float32
}

func (a *moments) merge(b moments) {
	if b.n == 0 {
		return
	}
	if a.n == 0 {
		*a = b
		return
	}
	n := a.n + b.n
	d := b.mean - a.mean
	a.mean += d * float64(b.n) / float64(n)
	a.m2 += b.m2 + d*d*float64(a.n)*float64(b.n)/float64(n)
	a.n = n
	a.min = min(a.min, b.min)
	a.max = max(a.max, b.max)
}

// blockMoments computes the moments of the finite values of vs in one
// pass, summing deviations from the first finite value so that a constant
// or nearly constant block loses no precision.
func blockMoments(vs []float32) moments {
	m := moments{min: float32(math.Inf(1)), max: float32(math.Inf(-1))}
	i := 0
	for i < len(vs) && vs[i]-vs[i] != 0 {
		i++
	}
	if i == len(vs) {
		return m
	}
	k := float64(vs[i])
	// Two independent sums of each kind halve the add latency chain.
	var s1a, s1b, s2a, s2b float64
	n := 0
	lo, hi := vs[i], vs[i]
	vs = vs[i:]
	j := 0
	for ; j+2 <= len(vs); j += 2 {
		a, b := vs[j], vs[j+1]
		if a-a == 0 { // finite: not NaN, not ±Inf
			d := float64(a) - k
			s1a += d
			s2a += d * d
			n++
			lo, hi = min32(lo, a), max32(hi, a)
		}
		if b-b == 0 {
			d := float64(b) - k
			s1b += d
			s2b += d * d
			n++
			lo, hi = min32(lo, b), max32(hi, b)
		}
	}
	if j < len(vs) {
		if a := vs[j]; a-a == 0 {
			d := float64(a) - k
			s1a += d
			s2a += d * d
			n++
			lo, hi = min32(lo, a), max32(hi, a)
		}
	}
	s1, s2 := s1a+s1b, s2a+s2b
	m.n, m.min, m.max = n, lo, hi
	m.mean = k + s1/float64(n)
	m.m2 = max(0, s2-s1*s1/float64(n))
	return m
}

// min32 and max32 compare numbers known to be finite, without the NaN
// handling of the min and max built-ins.
func min32(a, b float32) float32 {
	if b < a {
		return b
	}
	return a
}

func max32(a, b float32) float32 {
	if b > a {
		return b
	}
	return a
}

// Summarize returns the statistics of the valid pixels of ndvi, in one
// parallel pass without copying it.
func Summarize(ndvi []float32) Summary {
	s := Summary{Total: len(ndvi), Min: math.NaN(), Max: math.NaN(), Mean: math.NaN(), Std: math.NaN()}
	if len(ndvi) == 0 {
		return s
	}
	parts := make([]moments, par.DefaultThreads())
	par.WorkerBlocks(len(ndvi), block, func(w, lo, hi int) {
		parts[w].merge(blockMoments(ndvi[lo:hi]))
	})
	var m moments
	for _, p := range parts {
		m.merge(p)
	}
	s.Valid = m.n
	s.ValidShare = float64(m.n) / float64(len(ndvi))
	if m.n > 0 {
		s.Min, s.Max, s.Mean = float64(m.min), float64(m.max), m.mean
		s.Std = math.Sqrt(m.m2 / float64(m.n))
	}
	return s
}

// Histogram counts the valid pixels of ndvi in bins equal bins over
// [lo, hi]: bin i holds lo + i·(hi-lo)/bins ≤ v < lo + (i+1)·(hi-lo)/bins,
// and the last bin also holds v == hi. Values outside [lo, hi] and
// non-finite values are not counted. It returns nil when bins < 1 or
// [lo, hi] is not a finite range with lo < hi.
func Histogram(ndvi []float32, bins int, lo, hi float64) []int {
	if bins < 1 || !(lo < hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return nil
	}
	scale := float64(bins) / (hi - lo)
	parts := make([][]int, par.DefaultThreads())
	par.WorkerBlocks(len(ndvi), block, func(w, a, b int) {
		h := parts[w]
		if h == nil {
			h = make([]int, bins)
			parts[w] = h
		}
		for _, v := range ndvi[a:b] {
			x := float64(v)
			if !(x >= lo && x <= hi) { // also NaN
				continue
			}
			h[min(int((x-lo)*scale), bins-1)]++
		}
	})
	out := make([]int, bins)
	for _, h := range parts {
		for i, c := range h {
			out[i] += c
		}
	}
	return out
}

// Edges returns the bins+1 bin edges Histogram uses for bins over
// [lo, hi], for axis labels.
func Edges(bins int, lo, hi float64) []float64 {
	if bins < 1 {
		return nil
	}
	e := make([]float64, bins+1)
	for i := range e {
		e[i] = lo + float64(i)*(hi-lo)/float64(bins)
	}
	e[bins] = hi
	return e
}

// valid returns idx for a finite v and 0 (the slot of NaN) for ±Inf.

// ClassShare is how much of an NDVI plane falls in one class of a class
// table (compute.NDVIClasses by default).
type ClassShare struct {
	// Class is the class: its name and bounds.
	Class compute.Class
	// Index is the class's place in its table (the pictures colour it by
	// that).
	Index int
	// Pixels is the number of valid pixels in the class.
	Pixels int
	// Share is Pixels over all valid pixels, NaN when there is none.
	Share float64
	// Hectares is the ground area of the class, NaN when the pixel area
	// is unknown.
	Hectares float64
}

// Classes returns, for each class of compute.NDVIClasses in order, the
// valid pixels of ndvi that fall in it, their share of all valid pixels
// and, when pixelAreaM2 (the ground area of one pixel in m², from
// compute.GeoRef.PixelArea) is positive and finite, their area in
// hectares; pass 0 or NaN when the area is unknown.
func Classes(ndvi []float32, pixelAreaM2 float64) []ClassShare {
	return ClassesOf(compute.NDVIClasses(), ndvi, pixelAreaM2)
}

// ClassesOf is Classes for any table of at most 255 contiguous ascending
// classes.
func ClassesOf(table []compute.Class, ndvi []float32, pixelAreaM2 float64) []ClassShare {
	const slots = 256
	if len(table) == 0 || len(table) >= slots {
		return nil
	}
	upper := make([]float32, len(table)-1)
	for i := range upper {
		upper[i] = float32(table[i].Hi)
	}
	parts := make([][slots]int, par.DefaultThreads())
	par.WorkerBlocks(len(ndvi), block, func(w, a, b int) {
		src := ndvi[a:b]
		// Invalid pixels are counted in slot 0 and ignored; class i is
		// slot i+1. Four tallies break the dependency between successive
		// increments of the same class, the common case in a map.
		var h [4][slots]int
		slot := func(v float32) uint8 {
			if v-v != 0 {
				return 0
			}
			i := 0
			for i < len(upper) && v >= upper[i] {
				i++
			}
			return uint8(i + 1)
		}
		j := 0
		for ; j+4 <= len(src); j += 4 {
			h[0][slot(src[j])]++
			h[1][slot(src[j+1])]++
			h[2][slot(src[j+2])]++
			h[3][slot(src[j+3])]++
		}
		for ; j < len(src); j++ {
			h[0][slot(src[j])]++
		}
		for i := range slots {
			parts[w][i] += h[0][i] + h[1][i] + h[2][i] + h[3][i]
		}
	})
	out := make([]ClassShare, len(table))
	valid := 0
	for i := range out {
		out[i].Class, out[i].Index = table[i], i
		for _, p := range parts {
			out[i].Pixels += p[i+1]
		}
		valid += out[i].Pixels
	}
	known := pixelAreaM2 > 0 && !math.IsInf(pixelAreaM2, 0)
	for i := range out {
		out[i].Share, out[i].Hectares = math.NaN(), math.NaN()
		if valid > 0 {
			out[i].Share = float64(out[i].Pixels) / float64(valid)
		}
		if known {
			out[i].Hectares = float64(out[i].Pixels) * pixelAreaM2 / 1e4
		}
	}
	return out
}
