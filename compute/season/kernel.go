package season

import (
	"math"
	"slices"
)

// Pixels runs j's model in float32 over the pixels [lo, hi) of its cube
// and writes their outputs: the go backend's kernel (one call over every
// pixel) and go-parallel's (one call per span), and the algorithm every
// float32 backend follows (doc.go).
func Pixels(j *Job, lo, hi int) {
	p := j.Plan
	T := len(p.Dates)
	k := p.Coefs
	s := scratch{y: make([]float32, T), e: make([]float32, T), a: make([]float32, k*k), b: make([]float32, k)}
	for px := lo; px < hi; px++ {
		pixel32(j, px, &s)
	}
}

type scratch struct {
	y, e, a, b []float32
}

var nan32 = float32(math.NaN())

func pixel32(j *Job, px int, s *scratch) {
	p, c := j.Plan, &j.Cube
	m := p.Model
	P := c.Pixels
	T := len(p.Dates)
	for i := range j.Out {
		j.Out[i][px] = nan32
	}
	if m.Kind == Composite {
		n := 0
		best := -1
		for t := range T {
			v := c.Values[t*P+px]
			if p.Role[t] != RoleFit || v != v {
				continue
			}
			s.y[n] = v
			n++
			if best < 0 || v > c.Values[best*P+px] {
				best = t
			}
		}
		j.Out[1][px] = float32(n)
		if n == 0 {
			return
		}
		switch m.Stat {
		case Max:
			j.Out[0][px] = c.Values[best*P+px]
			j.Out[2][px] = p.Dates32[best]
		case Median:
			j.Out[0][px] = quantile32(s.y[:n], 50)
		case Percentile:
			j.Out[0][px] = quantile32(s.y[:n], float32(m.Percentile))
		}
		return
	}
	k := p.Coefs
	X := p.X32
	// The normal equations over the valid history: A = XᵀX (lower
	// triangle), b = Xᵀy.
	clear(s.a)
	clear(s.b)
	n, nm := 0, 0
	for t := range T {
		v := c.Values[t*P+px]
		if v != v {
			continue
		}
		switch p.Role[t] {
		case RoleMonitor:
			nm++
			continue
		case RoleFit:
		default:
			continue
		}
		n++
		x := X[t*k : (t+1)*k]
		for r := range k {
			xr := x[r]
			for q := 0; q <= r; q++ {
				s.a[r*k+q] += xr * x[q]
			}
			s.b[r] += xr * v
		}
	}
	if m.Kind == Harmonic {
		j.Out[1][px] = float32(n)
	} else {
		j.Out[3][px] = float32(n + nm)
	}
	if n < k || !cholesky32(s.a, k) {
		return
	}
	beta := s.b
	cholSolve32(s.a, beta, k)
	// The residuals of the valid history, then of the valid monitoring
	// dates, in date order.
	var rss float32
	ne := 0
	for t := range T {
		v := c.Values[t*P+px]
		if v != v || p.Role[t] == RoleNone {
			continue
		}
		x := X[t*k : (t+1)*k]
		var f float32
		for q := range k {
			f += x[q] * beta[q]
		}
		r := v - f
		s.e[ne] = r
		ne++
		if p.Role[t] == RoleFit {
			rss += r * r
		}
	}
	switch m.Kind {
	case Harmonic:
		j.Out[0][px] = float32(math.Sqrt(float64(rss / float32(n))))
		for q := range k {
			j.Out[2+q][px] = beta[q]
		}
	case Mosum:
		mosum32(j, px, s.e[:ne], n, rss)
	case Anomaly:
		anomaly32(j, px, s.e[:ne], n)
	}
}

// mosum32 is the MOSUM over the residuals e (n of the history, then the
// monitoring's), with a running window sum.
func mosum32(j *Job, px int, e []float32, n int, rss float32) {
	p := j.Plan
	K := int(math.Floor(p.Model.H * float64(n)))
	nm := len(e) - n
	if n <= p.Coefs || K <= 1 || nm == 0 {
		return
	}
	sigma := float32(math.Sqrt(float64(rss / float32(n-p.Coefs))))
	if !(sigma > 0) {
		return
	}
	norm := sigma * float32(math.Sqrt(float64(n)))
	crit := float32(p.Critval)
	var sum float32
	for _, v := range e[n-K : n] {
		sum += v
	}
	var conf float32
	brk := -1
	for i := range nm {
		k := n + i
		sum += e[k] - e[k-K]
		mosum := float32(math.Abs(float64(sum / norm)))
		bound := crit * float32(math.Sqrt(float64(2*logPlus32(float32(k+1)/float32(n)))))
		conf = max(conf, mosum/bound)
		if brk < 0 && mosum > bound {
			brk = i
		}
	}
	if brk >= 0 {
		j.Out[0][px] = monitorDate(j, px, brk)
	}
	j.Out[1][px] = median32(e[n:])
	j.Out[2][px] = conf
}

func logPlus32(x float32) float32 {
	if x <= math.E {
		return 1
	}
	return float32(math.Log(float64(x)))
}

// monitorDate is the date of the pixel's i-th valid monitoring date.
func monitorDate(j *Job, px, i int) float32 {
	p, c := j.Plan, &j.Cube
	for t := range p.Dates {
		if p.Role[t] == RoleMonitor && c.Values[t*c.Pixels+px] == c.Values[t*c.Pixels+px] {
			if i == 0 {
				return p.Dates32[t]
			}
			i--
		}
	}
	return nan32
}

// anomaly32 is fordead's rule over the monitoring residuals e[n:].
func anomaly32(j *Job, px int, e []float32, n int) {
	m := j.Plan.Model
	thr := float32(m.Threshold)
	mres := e[n:]
	start := -1
	runA, runN, first := 0, 0, 0
	for i, v := range mres {
		if signed32(v, m.Direction) > thr {
			if runA == 0 {
				first = i
			}
			runA++
			runN = 0
			if start < 0 && runA >= m.Run {
				start = first
			}
		} else {
			runN++
			runA = 0
			if start >= 0 && runN >= m.Run {
				start = -1
			}
		}
	}
	if start < 0 {
		return
	}
	a := 0
	for _, v := range mres[start:] {
		if signed32(v, m.Direction) > thr {
			a++
		}
	}
	j.Out[0][px] = monitorDate(j, px, start)
	j.Out[1][px] = median32(mres[start:])
	j.Out[2][px] = float32(a) / float32(len(mres)-start)
}

func signed32(v float32, d Direction) float32 {
	switch d {
	case Down:
		return -v
	case Up:
		return v
	}
	return float32(math.Abs(float64(v)))
}

// cholesky32 factors the lower triangle of a (k×k, row-major) in place into
// L (A = LLᵀ); false when a pivot is not positive (the history does not
// determine the model).
func cholesky32(a []float32, k int) bool {
	for c := range k {
		d := a[c*k+c]
		for q := range c {
			d -= a[c*k+q] * a[c*k+q]
		}
		if !(d > 0) {
			return false
		}
		d = float32(math.Sqrt(float64(d)))
		a[c*k+c] = d
		for r := c + 1; r < k; r++ {
			v := a[r*k+c]
			for q := range c {
				v -= a[r*k+q] * a[c*k+q]
			}
			a[r*k+c] = v / d
		}
	}
	return true
}

// cholSolve32 solves LLᵀx = b in place.
func cholSolve32(l, b []float32, k int) {
	for r := range k {
		v := b[r]
		for q := range r {
			v -= l[r*k+q] * b[q]
		}
		b[r] = v / l[r*k+r]
	}
	for r := k - 1; r >= 0; r-- {
		v := b[r]
		for q := r + 1; q < k; q++ {
			v -= l[q*k+r] * b[q]
		}
		b[r] = v / l[r*k+r]
	}
}

// quantile32 is R's type 7 in float32 over v (sorted in place).
func quantile32(v []float32, q float32) float32 {
	slices.Sort(v)
	h := float32(len(v)-1) * q / 100
	lo := int(h)
	if lo >= len(v)-1 {
		return v[len(v)-1]
	}
	return v[lo] + (h-float32(lo))*(v[lo+1]-v[lo])
}

// median32 is the median of v in float32 (v is sorted in place): the
// middle value, or the mean of the two middle ones, a + (b − a)/2.
func median32(v []float32) float32 {
	if len(v) == 0 {
		return nan32
	}
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	a, b := v[n/2-1], v[n/2]
	return a + (b-a)/2
}

// PixelSpan turns a span [lo, hi) of a pool's range over P·T elements (a
// pixel's series counts T, for the pool's share of the work) into the span
// of pixels it owns: consecutive spans own consecutive pixels, every pixel
// exactly once.
func PixelSpan(lo, hi, T int) (int, int) { return (lo + T - 1) / T, (hi + T - 1) / T }
