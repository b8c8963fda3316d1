package zonal

import (
	"math"
	"slices"
	"sync"
)

// samples are the valid pixels of one stand, values kept as order-
// preserving keys of their float32 bits: the fully covered pixels (weight
// 1, most of them) as keys alone, the partly covered ones with their
// weights.
type samples struct {
	inner []uint32
	edgeK []uint32
	edgeW []float64
}

// add records value v with coverage weight w (0 < w ≤ 1).
func (s *samples) add(v float32, w float64) {
	if w == 1 {
		s.inner = append(s.inner, floatKey(v))
		return
	}
	s.edgeK = append(s.edgeK, floatKey(v))
	s.edgeW = append(s.edgeW, w)
}

func (s *samples) len() int { return len(s.inner) + len(s.edgeK) }

// samplePool recycles sample buffers between stands.
var samplePool = sync.Pool{New: func() any { return new(samples) }}

func getSamples() *samples { return samplePool.Get().(*samples) }

func putSamples(s *samples) {
	if cap(s.inner) > 1<<24 || cap(s.edgeK) > 1<<22 {
		return // let a huge stand's buffers go
	}
	s.inner, s.edgeK, s.edgeW = s.inner[:0], s.edgeK[:0], s.edgeW[:0]
	samplePool.Put(s)
}

// floatKey maps a float32 to a uint32 that sorts as the float does
// (negative values flipped, positive ones with the sign bit set; −0 is 0,
// so that it sorts and classifies as 0).
func floatKey(v float32) uint32 {
	b := math.Float32bits(v)
	if b == 0x80000000 {
		return 0x80000000
	}
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

// sortScratch is a worker's reusable buffer for the radix sorts.
type sortScratch struct {
	keys []uint32
	ws   []float64
}

// sort orders both lists by value, stably (equal values keep raster
// order).
func (s *samples) sort(sc *sortScratch) {
	sortKeys(s.inner, sc)
	sortPairs(s.edgeK, s.edgeW, sc)
}

// histograms counts the four 8-bit digits of keys.
func histograms(keys []uint32) *[4][256]uint32 {
	var h [4][256]uint32
	for _, k := range keys {
		h[0][k&0xff]++
		h[1][(k>>8)&0xff]++
		h[2][(k>>16)&0xff]++
		h[3][k>>24]++
	}
	return &h
}

// sortKeys is an LSD radix sort on 8-bit digits that skips the digits all
// keys share; insertion sort for short inputs.
func sortKeys(keys []uint32, sc *sortScratch) {
	n := len(keys)
	if n < 64 {
		for i := 1; i < n; i++ {
			k, j := keys[i], i
			for j > 0 && keys[j-1] > k {
				keys[j] = keys[j-1]
				j--
			}
			keys[j] = k
		}
		return
	}
	hist := histograms(keys)
	sc.keys = slices.Grow(sc.keys[:0], n)[:n]
	src, dst := keys, sc.keys
	for d := 0; d < 4; d++ {
		h := &hist[d]
		shift := uint(8 * d)
		if h[(src[0]>>shift)&0xff] == uint32(n) {
			continue
		}
		var pos [256]uint32
		var sum uint32
		for i := range h {
			pos[i] = sum
			sum += h[i]
		}
		for _, k := range src {
			b := (k >> shift) & 0xff
			dst[pos[b]] = k
			pos[b]++
		}
		src, dst = dst, src
	}
	if &src[0] != &keys[0] {
		copy(keys, src)
	}
}

// sortPairs sorts keys and their weights together, stably.
func sortPairs(keys []uint32, ws []float64, sc *sortScratch) {
	n := len(keys)
	if n < 64 {
		for i := 1; i < n; i++ {
			k, w, j := keys[i], ws[i], i
			for j > 0 && keys[j-1] > k {
				keys[j], ws[j] = keys[j-1], ws[j-1]
				j--
			}
			keys[j], ws[j] = k, w
		}
		return
	}
	hist := histograms(keys)
	sc.keys = slices.Grow(sc.keys[:0], n)[:n]
	sc.ws = slices.Grow(sc.ws[:0], n)[:n]
	sk, sw, dk, dw := keys, ws, sc.keys, sc.ws
	for d := 0; d < 4; d++ {
		h := &hist[d]
		shift := uint(8 * d)
		if h[(sk[0]>>shift)&0xff] == uint32(n) {
			continue
		}
		var pos [256]uint32
		var sum uint32
		for i := range h {
			pos[i] = sum
			sum += h[i]
		}
		for i, k := range sk {
			b := (k >> shift) & 0xff
			p := pos[b]
			dk[p], dw[p] = k, sw[i]
			pos[b] = p + 1
		}
		sk, sw, dk, dw = dk, dw, sk, sw
	}
	if &sk[0] != &keys[0] {
		copy(keys, sk)
		copy(ws, sw)
	}
}

// summary is what a stand's sorted samples give.
type summary struct {
	valid                                 float64
	mean, median, std, min, max, p10, p90 float64
	class                                 []float64 // weight per class
}

// summarise computes, in one pass over the sorted samples (the two lists
// merged; on equal values fully covered pixels come first), the weighted
// mean, min, max, median, 10th and 90th percentiles and the weight in each
// class, then the population standard deviation in a second pass.
// breakKeys are the class breaks as float keys, ascending. Runs of fully
// covered pixels are handled whole: within one, the quantile positions
// S_i grow by n per element and class bounds are found by binary search.
//
// The quantile q is exactextract's weighted form of the linear (type 7,
// NumPy's default) estimator: element i of n (from 0) in sorted order sits
// at S_i = i·w_i + (n−1)·Σ_{j<i} w_j, the quantile is at q·(n−1)·Σw, and
// its value is interpolated linearly between the elements around it. With
// equal weights S_i = n·i, which is NumPy's percentile exactly.
func (s *samples) summarise(breakKeys []uint32) summary {
	out := summary{class: make([]float64, len(breakKeys)+1)}
	n := s.len()
	if n == 0 {
		nan := math.NaN()
		out.mean, out.median, out.std, out.min, out.max, out.p10, out.p90 = nan, nan, nan, nan, nan, nan, nan
		return out
	}
	inner, ek, ew := s.inner, s.edgeK, s.edgeW
	total := float64(len(inner))
	for _, w := range ew {
		total += w
	}
	nm1 := float64(n - 1)
	fn := float64(n)
	targets := [3]float64{0.1 * nm1 * total, 0.5 * nm1 * total, 0.9 * nm1 * total}
	var qv [3]float64
	nextQ := 0
	nb := len(breakKeys)
	class, classStart := 0, 0.0
	var swx, cum, prevS, prevX float64
	i, ii, ei := 0, 0, 0
	for ii < len(inner) || ei < len(ek) {
		if ei < len(ek) && (ii >= len(inner) || ek[ei] < inner[ii]) {
			// One partly covered pixel.
			key, w := ek[ei], ew[ei]
			ei++
			x := float64(keyFloat(key))
			if i == 0 {
				out.min = x
			}
			for class < nb && key >= breakKeys[class] {
				out.class[class] = cum - classStart
				classStart = cum
				class++
			}
			si := float64(i)*w + nm1*cum
			for nextQ < 3 && si > targets[nextQ] {
				if i == 0 {
					qv[nextQ] = x
				} else {
					qv[nextQ] = prevX + (targets[nextQ]-prevS)*(x-prevX)/(si-prevS)
				}
				nextQ++
			}
			swx += w * x
			cum += w
			prevS, prevX = si, x
			i++
			continue
		}
		// A run of fully covered pixels, up to the next partly covered one.
		lim := uint32(math.MaxUint32)
		if ei < len(ek) {
			lim = ek[ei]
		}
		r0 := ii
		var sx float64
		for ii < len(inner) && inner[ii] <= lim {
			sx += float64(keyFloat(inner[ii]))
			ii++
		}
		run := inner[r0:ii]
		L := len(run)
		if i == 0 {
			out.min = float64(keyFloat(run[0]))
		}
		for class < nb && breakKeys[class] <= run[L-1] {
			bk := breakKeys[class]
			p := sortSearch(L, func(t int) bool { return run[t] >= bk })
			c := cum + float64(p)
			out.class[class] = c - classStart
			classStart = c
			class++
		}
		S := func(t int) float64 { return float64(i+t) + nm1*(cum+float64(t)) }
		for nextQ < 3 {
			tg := targets[nextQ]
			t := 0
			if s0 := S(0); tg >= s0 {
				t = int(math.Min(float64(L), (tg-s0)/fn+1))
			}
			for t > 0 && S(t-1) > tg {
				t--
			}
			for t < L && S(t) <= tg {
				t++
			}
			if t >= L {
				break
			}
			x := float64(keyFloat(run[t]))
			switch {
			case i+t == 0:
				qv[nextQ] = x
			case t == 0:
				qv[nextQ] = prevX + (tg-prevS)*(x-prevX)/(S(0)-prevS)
			default:
				px, ps := float64(keyFloat(run[t-1])), S(t-1)
				qv[nextQ] = px + (tg-ps)*(x-px)/(S(t)-ps)
			}
			nextQ++
		}
		swx += sx
		prevS, prevX = S(L-1), float64(keyFloat(run[L-1]))
		cum += float64(L)
		i += L
	}
	for ; nextQ < 3; nextQ++ {
		qv[nextQ] = prevX
	}
	out.class[class] = cum - classStart
	out.max = prevX
	out.valid = total
	mean := swx / total
	var ss float64
	for _, k := range inner {
		d := float64(keyFloat(k)) - mean
		ss += d * d
	}
	for j, k := range ek {
		d := float64(keyFloat(k)) - mean
		ss += ew[j] * d * d
	}
	out.mean = mean
	out.std = math.Sqrt(ss / total)
	out.p10, out.median, out.p90 = qv[0], qv[1], qv[2]
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
