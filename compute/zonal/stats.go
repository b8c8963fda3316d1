package zonal

import (
	"math"
	"slices"
)

// samples are the valid pixels of one stand: the value (as an order-
// preserving key of its float32 bits) and its coverage weight.
type samples struct {
	keys []uint32
	ws   []float64
}

func (s *samples) add(v float32, w float64) {
	if v == 0 {
		v = 0 // −0 sorts and classifies as 0
	}
	s.keys = append(s.keys, floatKey(v))
	s.ws = append(s.ws, w)
}

func (s *samples) len() int { return len(s.keys) }

// floatKey maps a float32 to a uint32 that sorts as the float does
// (negative values flipped, positive ones with the sign bit set).
func floatKey(v float32) uint32 {
	b := math.Float32bits(v)
	if b&0x80000000 != 0 {
		return ^b
	}
	return b | 0x80000000
}

func keyFloat(k uint32) float32 {
	if k&0x80000000 != 0 {
		return math.Float32frombits(k &^ 0x80000000)
	}
	return math.Float32frombits(^k)
}

// sortScratch is a worker's reusable buffer for the radix sort.
type sortScratch struct {
	keys []uint32
	ws   []float64
}

// sort orders the samples by value, stably (equal values keep raster
// order): an LSD radix sort on 8-bit digits that skips the digits all keys
// share; insertion order for short inputs.
func (s *samples) sort(sc *sortScratch) {
	n := len(s.keys)
	if n < 64 {
		for i := 1; i < n; i++ {
			k, w := s.keys[i], s.ws[i]
			j := i
			for j > 0 && s.keys[j-1] > k {
				s.keys[j], s.ws[j] = s.keys[j-1], s.ws[j-1]
				j--
			}
			s.keys[j], s.ws[j] = k, w
		}
		return
	}
	var hist [4][256]int
	for _, k := range s.keys {
		hist[0][k&0xff]++
		hist[1][(k>>8)&0xff]++
		hist[2][(k>>16)&0xff]++
		hist[3][k>>24]++
	}
	sc.keys = slices.Grow(sc.keys[:0], n)[:n]
	sc.ws = slices.Grow(sc.ws[:0], n)[:n]
	src, dst := s, &samples{keys: sc.keys, ws: sc.ws}
	for d := 0; d < 4; d++ {
		h := &hist[d]
		shift := uint(8 * d)
		if h[(src.keys[0]>>shift)&0xff] == n {
			continue // every key has this digit
		}
		var pos [256]int
		sum := 0
		for i := range h {
			pos[i] = sum
			sum += h[i]
		}
		dk, dw := dst.keys, dst.ws
		for i, k := range src.keys {
			b := (k >> shift) & 0xff
			p := pos[b]
			dk[p], dw[p] = k, src.ws[i]
			pos[b] = p + 1
		}
		src, dst = dst, src
	}
	if src != s {
		copy(s.keys, src.keys)
		copy(s.ws, src.ws)
	}
}

// summary is what a stand's sorted samples give.
type summary struct {
	valid                                 float64
	mean, median, std, min, max, p10, p90 float64
	class                                 []float64 // weight per class
}

// summarise computes the weighted statistics of sorted samples: mean and
// population standard deviation weighted by coverage, min and max, the
// weighted quantiles (see quantiles), and the weight in each class.
// breakKeys are the class breaks as float keys, ascending.
func (s *samples) summarise(breakKeys []uint32) summary {
	out := summary{class: make([]float64, len(breakKeys)+1)}
	n := len(s.keys)
	if n == 0 {
		nan := math.NaN()
		out.mean, out.median, out.std, out.min, out.max, out.p10, out.p90 = nan, nan, nan, nan, nan, nan, nan
		return out
	}
	var sw, swx float64
	for i, k := range s.keys {
		w := s.ws[i]
		sw += w
		swx += w * float64(keyFloat(k))
	}
	mean := swx / sw
	var ss float64
	for i, k := range s.keys {
		d := float64(keyFloat(k)) - mean
		ss += s.ws[i] * d * d
	}
	out.valid = sw
	out.mean = mean
	out.std = math.Sqrt(ss / sw)
	out.min = float64(keyFloat(s.keys[0]))
	out.max = float64(keyFloat(s.keys[n-1]))
	q := s.quantiles(sw, []float64{0.5, 0.1, 0.9})
	out.median, out.p10, out.p90 = q[0], q[1], q[2]
	// Classes are contiguous runs of the sorted keys.
	lo := 0
	for c := range out.class {
		hi := n
		if c < len(breakKeys) {
			bk := breakKeys[c]
			hi = lo + sortSearch(n-lo, func(i int) bool { return s.keys[lo+i] >= bk })
		}
		var w float64
		for i := lo; i < hi; i++ {
			w += s.ws[i]
		}
		out.class[c] = w
		lo = hi
	}
	return out
}

func sortSearch(n int, f func(int) bool) int {
	lo, hi := 0, n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if !f(m) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// quantiles returns the weighted quantiles qs of sorted samples whose
// weights sum to sw, by the weighted form of the linear (type 7, NumPy's
// default) estimator that exactextract uses: element i of n (from 0) sits
// at S_i = i·w_i + (n−1)·Σ_{j<i} w_j, the quantile q is at q·(n−1)·sw,
// and the value is interpolated linearly between the elements around it.
// With equal weights S_i = n·i and this is NumPy's percentile exactly.
func (s *samples) quantiles(sw float64, qs []float64) []float64 {
	n := len(s.keys)
	out := make([]float64, len(qs))
	nm1 := float64(n - 1)
	targets := make([]float64, len(qs))
	for j, q := range qs {
		targets[j] = q * nm1 * sw
		out[j] = math.NaN()
	}
	done := 0
	var cum, prevS float64
	for i := 0; i < n && done < len(qs); i++ {
		si := float64(i)*s.ws[i] + nm1*cum
		cum += s.ws[i]
		for j, t := range targets {
			if !math.IsNaN(out[j]) || si <= t {
				continue
			}
			// First element past the target: interpolate from i − 1.
			x := float64(keyFloat(s.keys[i]))
			if i == 0 {
				out[j] = x
			} else {
				xl := float64(keyFloat(s.keys[i-1]))
				out[j] = xl + (t-prevS)*(x-xl)/(si-prevS)
			}
			done++
		}
		prevS = si
	}
	for j := range out {
		if math.IsNaN(out[j]) {
			out[j] = float64(keyFloat(s.keys[n-1]))
		}
	}
	return out
}
