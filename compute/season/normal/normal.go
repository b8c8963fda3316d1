// Package normal writes the normal matrix XᵀX of a season-trend model
// (compute/season: intercept, optional trend, K harmonics) over any
// subset of dates as a fixed combination of 6K+3 per-date sums (4K+1
// without the trend), instead of its (p²+p)/2 entries: with θ the date's
// angle in the year, cos jθ·cos kθ = ½(cos (j−k)θ + cos (j+k)θ),
// sin jθ·sin kθ = ½(cos (j−k)θ − cos (j+k)θ), cos jθ·sin kθ =
// ½(sin (k+j)θ + sin (k−j)θ), so that every entry is a sum of Σcos mθ,
// Σsin mθ (m = 0..2K), Στ, Στ², Στ·cos kθ and Στ·sin kθ, τ the trend's
// column. The GPU kernels (cuda, gl) accumulate those sums per pixel over
// its valid dates (39 fused multiply-adds a date for K = 6 with a trend,
// instead of 105) and assemble XᵀX once per pixel.
package normal

import (
	"fmt"
	"math"

	"canopy/compute/season"
)

// Term is one of the sums: Σ over the valid history dates t of Term(t).
type Term func(t int) float64

// Weight is one sum's share of an entry of XᵀX: Weight·(sum number Sum).
type Weight struct {
	Sum    int
	Weight float32
}

// Sums lists the sums that p's XᵀX is made of (the first is the count, the
// Term of every date 1) and how to assemble each entry of its lower
// triangle from them: XᵀX[i][j] = Σ over entry[i][j] of Weight·sum[Sum]
// (i ≥ j). The harmonic columns are those of season's design matrix, from
// the date's fraction of the year; the trend is t − p.TrendOrigin.
func Sums(p *season.Plan) (terms []Term, entry [][][]Weight) {
	m := p.Model
	K := m.Harmonics
	// The angle as season's design matrix takes it: 2π·((m·frac) mod 1).
	angle := func(mm, t int) float64 {
		d := p.Dates[t]
		return 2 * math.Pi * math.Mod(float64(mm)*(d-math.Floor(d)), 1)
	}
	cosm := func(mm int) Term { return func(t int) float64 { return math.Cos(angle(mm, t)) } }
	sinm := func(mm int) Term { return func(t int) float64 { return math.Sin(angle(mm, t)) } }
	tau := func(t int) float64 { return p.Dates[t] - p.TrendOrigin }
	// index of each sum
	idx := map[string]int{}
	add := func(name string, f Term) {
		idx[name] = len(terms)
		terms = append(terms, f)
	}
	add("n", func(int) float64 { return 1 })
	for mm := 1; mm <= 2*K; mm++ {
		add(fmt.Sprintf("C%d", mm), cosm(mm))
		add(fmt.Sprintf("S%d", mm), sinm(mm))
	}
	if m.Trend {
		add("T", tau)
		add("TT", func(t int) float64 { return tau(t) * tau(t) })
		for k := 1; k <= K; k++ {
			c, s := cosm(k), sinm(k)
			add(fmt.Sprintf("TC%d", k), func(t int) float64 { return tau(t) * c(t) })
			add(fmt.Sprintf("TS%d", k), func(t int) float64 { return tau(t) * s(t) })
		}
	}
	// Columns: kind 0 intercept, 1 trend, 2 cos k, 3 sin k.
	type col struct{ kind, k int }
	cols := []col{{0, 0}}
	if m.Trend {
		cols = append(cols, col{1, 0})
	}
	for k := 1; k <= K; k++ {
		cols = append(cols, col{2, k}, col{3, k})
	}
	type wt = Weight
	C := func(mm int, w float32) []wt { // Σ cos mθ, mm ≥ 0
		if mm < 0 {
			mm = -mm
		}
		if mm == 0 {
			return []wt{{Sum: idx["n"], Weight: w}}
		}
		return []wt{{Sum: idx[fmt.Sprintf("C%d", mm)], Weight: w}}
	}
	S := func(mm int, w float32) []wt { // Σ sin mθ
		switch {
		case mm == 0:
			return nil
		case mm < 0:
			return []wt{{Sum: idx[fmt.Sprintf("S%d", -mm)], Weight: -w}}
		}
		return []wt{{Sum: idx[fmt.Sprintf("S%d", mm)], Weight: w}}
	}
	prod := func(a, c col) []wt {
		if a.kind > c.kind {
			a, c = c, a
		}
		switch {
		case a.kind == 0 && c.kind == 0:
			return C(0, 1)
		case a.kind == 0 && c.kind == 1:
			return []wt{{Sum: idx["T"], Weight: 1}}
		case a.kind == 0 && c.kind == 2:
			return C(c.k, 1)
		case a.kind == 0 && c.kind == 3:
			return S(c.k, 1)
		case a.kind == 1 && c.kind == 1:
			return []wt{{Sum: idx["TT"], Weight: 1}}
		case a.kind == 1 && c.kind == 2:
			return []wt{{Sum: idx[fmt.Sprintf("TC%d", c.k)], Weight: 1}}
		case a.kind == 1 && c.kind == 3:
			return []wt{{Sum: idx[fmt.Sprintf("TS%d", c.k)], Weight: 1}}
		case a.kind == 2 && c.kind == 2: // cos j cos k
			return append(C(a.k-c.k, 0.5), C(a.k+c.k, 0.5)...)
		case a.kind == 3 && c.kind == 3: // sin j sin k
			return append(C(a.k-c.k, 0.5), C(a.k+c.k, -0.5)...)
		default: // cos j (a) · sin k (c) = ½(sin (k+j) + sin (k−j))
			return append(S(c.k+a.k, 0.5), S(c.k-a.k, 0.5)...)
		}
	}
	entry = make([][][]wt, len(cols))
	for i := range cols {
		entry[i] = make([][]wt, i+1)
		for j := 0; j <= i; j++ {
			entry[i][j] = prod(cols[i], cols[j])
		}
	}
	return terms, entry
}
