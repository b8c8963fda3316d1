package season

import (
	"math"
	"slices"
)

// Reference is the float64 truth of a job: every output plane computed in
// float64 from the cube's float32 values and the float64 design matrix
// (Householder QR, as R's lm), with what a checker needs to bound a
// float32 backend's error pixel by pixel.
type Reference struct {
	// Out are the output planes, as Model.Outputs names them.
	Out [][]float64
	// Cond is the condition number of the pixel's normal matrix XᵀX over
	// its valid history (+Inf when the history does not determine the
	// model; 1 for composites).
	Cond []float64
	// Scale is the largest |value| of the pixel's valid values in the
	// period or history (0 when there are none).
	Scale []float64
	// Sigma is the residuals' standard deviation over the history,
	// √(RSS/(n−p)) (NaN when n ≤ p); ResMax the largest |residual| over
	// history and monitoring.
	Sigma, ResMax []float64
	// Window is the MOSUM's window K = ⌊h·n⌋.
	Window []int
	// Margin is how near the pixel's break decision is to flipping: for
	// Mosum, the least ||MOSUM| − boundary| / boundary over the monitoring
	// dates up to the break (all of them when there is none); for Anomaly,
	// the least | ±residual − threshold | over the monitoring dates; +Inf
	// when there is no decision to make.
	Margin []float64
}

// Ref computes the float64 reference of j.
func Ref(j *Job) *Reference {
	p, c := j.Plan, j.Cube
	P := c.Pixels
	names := p.Model.Outputs()
	r := &Reference{Out: make([][]float64, len(names)), Cond: make([]float64, P), Scale: make([]float64, P),
		Sigma: make([]float64, P), ResMax: make([]float64, P), Window: make([]int, P), Margin: make([]float64, P)}
	for i := range r.Out {
		r.Out[i] = make([]float64, P)
	}
	T := len(c.Dates)
	y := make([]float64, T)
	for px := range P {
		for t := range T {
			y[t] = float64(c.Values[t*P+px])
		}
		refPixel(p, y, r, px)
	}
	return r
}

func refPixel(p *Plan, y []float64, r *Reference, px int) {
	m := p.Model
	set := func(i int, v float64) { r.Out[i][px] = v }
	for i := range r.Out {
		set(i, math.NaN())
	}
	r.Cond[px], r.Sigma[px], r.Margin[px] = 1, math.NaN(), math.Inf(1)
	var fit, mon []int // the valid dates
	for t, v := range y {
		if math.IsNaN(v) {
			continue
		}
		switch p.Role[t] {
		case RoleFit:
			fit = append(fit, t)
			r.Scale[px] = max(r.Scale[px], math.Abs(v))
		case RoleMonitor:
			mon = append(mon, t)
		}
	}
	n := len(fit)
	if m.Kind == Composite {
		set(1, float64(n))
		if n == 0 {
			return
		}
		v := make([]float64, n)
		for i, t := range fit {
			v[i] = y[t]
		}
		switch m.Stat {
		case Max:
			best := 0
			for i := range v {
				if v[i] > v[best] {
					best = i
				}
			}
			set(0, v[best])
			set(2, p.Dates[fit[best]])
		case Median:
			set(0, quantile(v, 50))
		case Percentile:
			set(0, quantile(v, m.Percentile))
		}
		return
	}
	k := p.Coefs
	if m.Kind == Harmonic {
		set(1, float64(n))
	} else {
		set(3, float64(n+len(mon)))
	}
	if n < k {
		r.Cond[px] = math.Inf(1)
		return
	}
	X := make([]float64, n*k)
	Y := make([]float64, n)
	for i, t := range fit {
		copy(X[i*k:(i+1)*k], p.X[t*k:(t+1)*k])
		Y[i] = y[t]
	}
	beta, cond := leastSquares(X, Y, n, k)
	r.Cond[px] = cond
	if beta == nil {
		return
	}
	resid := func(t int) float64 {
		s := 0.0
		for j := range k {
			s += p.X[t*k+j] * beta[j]
		}
		return y[t] - s
	}
	rss := 0.0
	e := make([]float64, 0, n+len(mon))
	for _, t := range fit {
		v := resid(t)
		e = append(e, v)
		rss += v * v
		r.ResMax[px] = max(r.ResMax[px], math.Abs(v))
	}
	for _, t := range mon {
		v := resid(t)
		e = append(e, v)
		r.ResMax[px] = max(r.ResMax[px], math.Abs(v))
	}
	if n > k {
		r.Sigma[px] = math.Sqrt(rss / float64(n-k))
	}
	switch m.Kind {
	case Harmonic:
		set(0, math.Sqrt(rss/float64(n)))
		for j := range k {
			set(2+j, beta[j])
		}
	case Mosum:
		refMosum(p, e, n, mon, r, px)
	case Anomaly:
		refAnomaly(p, e, n, mon, r, px)
	}
}

// refMosum is strucchange's OLS-MOSUM monitoring over the residuals e of
// the n valid history dates then the valid monitoring dates mon.
func refMosum(p *Plan, e []float64, n int, mon []int, r *Reference, px int) {
	m := p.Model
	K := int(math.Floor(m.H * float64(n)))
	r.Window[px] = K
	sigma := r.Sigma[px]
	if n <= p.Coefs || K <= 1 || !(sigma > 0) || len(mon) == 0 {
		return
	}
	norm := sigma * math.Sqrt(float64(n))
	conf := 0.0
	brk := -1
	margin := math.Inf(1)
	for i := range mon {
		k := n + i // 0-based index of the observation
		s := 0.0
		for _, v := range e[k-K+1 : k+1] {
			s += v
		}
		mosum := math.Abs(s / norm)
		bound := p.Critval * math.Sqrt(2*logPlus(float64(k+1)/float64(n)))
		conf = max(conf, mosum/bound)
		if brk < 0 {
			margin = min(margin, math.Abs(mosum-bound)/bound)
			if mosum > bound {
				brk = mon[i]
			}
		}
	}
	r.Margin[px] = margin
	if brk >= 0 {
		r.Out[0][px] = p.Dates[brk]
	}
	r.Out[1][px] = median(e[n:])
	r.Out[2][px] = conf
}

// logPlus is strucchange's: log x, but 1 where x ≤ e.
func logPlus(x float64) float64 {
	if x <= math.E {
		return 1
	}
	return math.Log(x)
}

// refAnomaly is fordead's rule over the monitoring residuals.
func refAnomaly(p *Plan, e []float64, n int, mon []int, r *Reference, px int) {
	m := p.Model
	mres := e[n:]
	margin := math.Inf(1)
	start := -1 // the index in mres of the standing alert's first date
	runA, runN, first := 0, 0, 0
	for i, v := range mres {
		d := signed(v, m.Direction)
		margin = min(margin, math.Abs(d-m.Threshold))
		if d > m.Threshold {
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
	r.Margin[px] = margin
	if start < 0 {
		return
	}
	r.Out[0][px] = p.Dates[mon[start]]
	r.Out[1][px] = median(mres[start:])
	a := 0
	for _, v := range mres[start:] {
		if signed(v, m.Direction) > m.Threshold {
			a++
		}
	}
	r.Out[2][px] = float64(a) / float64(len(mres)-start)
}

func signed(v float64, d Direction) float64 {
	switch d {
	case Down:
		return -v
	case Up:
		return v
	}
	return math.Abs(v)
}

// quantile is R's type 7 over v (sorted in place).
func quantile(v []float64, q float64) float64 {
	slices.Sort(v)
	h := float64(len(v)-1) * q / 100
	lo := int(math.Floor(h))
	if lo >= len(v)-1 {
		return v[len(v)-1]
	}
	return v[lo] + (h-float64(lo))*(v[lo+1]-v[lo])
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	w := slices.Clone(v)
	slices.Sort(w)
	n := len(w)
	if n%2 == 1 {
		return w[n/2]
	}
	return (w[n/2-1] + w[n/2]) / 2
}

// leastSquares solves min ‖Xβ − Y‖ (X n×k row-major, n ≥ k) by Householder
// QR and returns β and the condition number of XᵀX; β is nil when X does
// not have full rank (a pivot of R under 1e-10 of the largest column norm).
func leastSquares(X, Y []float64, n, k int) ([]float64, float64) {
	a := slices.Clone(X)
	b := slices.Clone(Y)
	colmax := 0.0
	for j := range k {
		s := 0.0
		for i := range n {
			s += a[i*k+j] * a[i*k+j]
		}
		colmax = max(colmax, math.Sqrt(s))
	}
	for j := range k {
		norm := 0.0
		for i := j; i < n; i++ {
			norm += a[i*k+j] * a[i*k+j]
		}
		norm = math.Sqrt(norm)
		if norm <= 1e-10*colmax {
			return nil, math.Inf(1)
		}
		alpha := -math.Copysign(norm, a[j*k+j])
		v := make([]float64, n-j)
		for i := j; i < n; i++ {
			v[i-j] = a[i*k+j]
		}
		v[0] -= alpha
		vv := 0.0
		for _, x := range v {
			vv += x * x
		}
		for c := j; c < k; c++ {
			s := 0.0
			for i := j; i < n; i++ {
				s += v[i-j] * a[i*k+c]
			}
			s = 2 * s / vv
			for i := j; i < n; i++ {
				a[i*k+c] -= s * v[i-j]
			}
		}
		s := 0.0
		for i := j; i < n; i++ {
			s += v[i-j] * b[i]
		}
		s = 2 * s / vv
		for i := j; i < n; i++ {
			b[i] -= s * v[i-j]
		}
	}
	beta := make([]float64, k)
	for j := k - 1; j >= 0; j-- {
		s := b[j]
		for c := j + 1; c < k; c++ {
			s -= a[j*k+c] * beta[c]
		}
		beta[j] = s / a[j*k+j]
	}
	// cond(XᵀX) = cond(RᵀR): the eigenvalues of RᵀR by Jacobi.
	R := make([]float64, k*k)
	for i := range k {
		for j := i; j < k; j++ {
			R[i*k+j] = a[i*k+j]
		}
	}
	G := make([]float64, k*k)
	for i := range k {
		for j := range k {
			s := 0.0
			for l := 0; l <= min(i, j); l++ {
				s += R[l*k+i] * R[l*k+j]
			}
			G[i*k+j] = s
		}
	}
	ev := jacobiEigen(G, k)
	lo, hi := math.Inf(1), 0.0
	for _, e := range ev {
		lo, hi = min(lo, e), max(hi, e)
	}
	if !(lo > 0) {
		return beta, math.Inf(1)
	}
	return beta, hi / lo
}

// jacobiEigen returns the eigenvalues of the symmetric k×k matrix a
// (overwritten) by cyclic Jacobi rotations.
func jacobiEigen(a []float64, k int) []float64 {
	for sweep := 0; sweep < 100; sweep++ {
		off := 0.0
		for i := range k {
			for j := i + 1; j < k; j++ {
				off += a[i*k+j] * a[i*k+j]
			}
		}
		if off < 1e-30 {
			break
		}
		for p := range k {
			for q := p + 1; q < k; q++ {
				apq := a[p*k+q]
				if apq == 0 {
					continue
				}
				theta := (a[q*k+q] - a[p*k+p]) / (2 * apq)
				t := math.Copysign(1, theta) / (math.Abs(theta) + math.Sqrt(theta*theta+1))
				c := 1 / math.Sqrt(t*t+1)
				s := t * c
				for r := range k {
					arp, arq := a[r*k+p], a[r*k+q]
					a[r*k+p], a[r*k+q] = c*arp-s*arq, s*arp+c*arq
				}
				for r := range k {
					apr, aqr := a[p*k+r], a[q*k+r]
					a[p*k+r], a[q*k+r] = c*apr-s*aqr, s*apr+c*aqr
				}
			}
		}
	}
	ev := make([]float64, k)
	for i := range k {
		ev[i] = a[i*k+i]
	}
	return ev
}
