package colormap

import (
	"canopy/compute/par"
	"fmt"
	"math"
	"strings"
)

// Stretch is the NDVI range [Lo, Hi] a continuous ramp spans.
type Stretch struct {
	Lo, Hi float64
}

// Full is the default stretch, the whole NDVI range [-1, 1].
var Full = Stretch{Lo: -1, Hi: 1}

// Stretch modes accepted by StretchFor.
const (
	StretchFull       = "full"
	StretchMinMax     = "minmax"
	StretchPercentile = "percentile"
)

// StretchModes lists the names StretchFor accepts.
func StretchModes() []string { return []string{StretchFull, StretchMinMax, StretchPercentile} }

// StretchFor returns the stretch named mode for ndvi: "full" ([-1, 1]),
// "minmax" (MinMax) or "percentile" (Percentiles 2–98). It falls back to
// Full, with no error, when the data hold no finite value.
func StretchFor(mode string, ndvi []float32) (Stretch, error) {
	var (
		s  Stretch
		ok bool
	)
	switch strings.ToLower(mode) {
	case "", StretchFull:
		return Full, nil
	case StretchMinMax:
		s, ok = MinMax(ndvi)
	case StretchPercentile:
		s, ok = Percentiles(ndvi, 2, 98)
	default:
		return Full, fmt.Errorf("unknown stretch %q (known: %s)", mode, strings.Join(StretchModes(), ", "))
	}
	if !ok {
		return Full, nil
	}
	return s, nil
}

// Valid reports whether s is a usable range: finite with Lo < Hi.
func (s Stretch) Valid() bool {
	return !math.IsNaN(s.Lo) && !math.IsNaN(s.Hi) && !math.IsInf(s.Lo, 0) && !math.IsInf(s.Hi, 0) && s.Lo < s.Hi
}

// widen makes a degenerate range (a constant image) usable by opening it
// symmetrically.
func widen(lo, hi float64) Stretch {
	if hi <= lo {
		d := math.Max(1e-3, math.Abs(lo)*1e-3)
		lo, hi = lo-d, hi+d
	}
	return Stretch{Lo: lo, Hi: hi}
}

// MinMax returns the range of the finite values of ndvi (NaN and ±Inf are
// left out), widened a little if all values are equal, and false if there
// is no finite value.
func MinMax(ndvi []float32) (Stretch, bool) {
	parts := par.DefaultThreads()
	los := make([]float32, parts)
	his := make([]float32, parts)
	for i := range los {
		los[i], his[i] = float32(math.Inf(1)), float32(math.Inf(-1))
	}
	par.Ranges(len(ndvi), 1<<16, func(p, a, b int) {
		lo, hi := los[p], his[p]
		for _, v := range ndvi[a:b] {
			if v-v != 0 { // NaN or ±Inf
				continue
			}
			lo = min(lo, v)
			hi = max(hi, v)
		}
		los[p], his[p] = lo, hi
	})
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := range los {
		lo = math.Min(lo, float64(los[i]))
		hi = math.Max(hi, float64(his[i]))
	}
	if lo > hi {
		return Full, false
	}
	return widen(lo, hi), true
}

// percentileBins is the resolution of the histogram Percentiles reads its
// bounds from: (max-min)/4096 is far below what a colour ramp shows.
const percentileBins = 4096

// Percentiles returns the range from the pLo-th to the pHi-th percentile
// (0 ≤ pLo < pHi ≤ 100) of the finite values of ndvi, a stretch that
// ignores a few outliers (2 and 98 are customary). It reads the bounds
// from a 4096-bin histogram between the minimum and the maximum, so it
// needs two passes and no copy of the data. It returns false if there is
// no finite value or the percentiles are out of order.
func Percentiles(ndvi []float32, pLo, pHi float64) (Stretch, bool) {
	if !(pLo >= 0 && pLo < pHi && pHi <= 100) {
		return Full, false
	}
	mm, ok := MinMax(ndvi)
	if !ok {
		return Full, false
	}
	lo32 := float32(mm.Lo)
	scale := float32(percentileBins) / float32(mm.Hi-mm.Lo)
	parts := par.DefaultThreads()
	hists := make([][]int, parts)
	par.Ranges(len(ndvi), 1<<16, func(p, a, b int) {
		h := make([]int, percentileBins)
		for _, v := range ndvi[a:b] {
			if v-v != 0 {
				continue
			}
			i := int((v - lo32) * scale)
			h[max(0, min(i, percentileBins-1))]++
		}
		hists[p] = h
	})
	hist := make([]int, percentileBins)
	total := 0
	for _, h := range hists {
		for i, c := range h {
			hist[i] += c
			total += c
		}
	}
	width := (mm.Hi - mm.Lo) / percentileBins
	// edge returns the value below which a fraction q of the values lie,
	// interpolated inside its bin.
	edge := func(q float64) float64 {
		target := q * float64(total)
		cum := 0.0
		for i, c := range hist {
			if c > 0 && cum+float64(c) >= target {
				return mm.Lo + width*(float64(i)+(target-cum)/float64(c))
			}
			cum += float64(c)
		}
		return mm.Hi
	}
	lo, hi := edge(pLo/100), edge(pHi/100)
	return widen(math.Max(lo, mm.Lo), math.Min(hi, mm.Hi)), true
}
