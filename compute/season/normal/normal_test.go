package normal

import (
	"math"
	"math/rand/v2"
	"testing"

	"canopy/compute/season"
)

// XᵀX assembled from the sums equals XᵀX from season's design matrix, for
// every harmonic order, with and without the trend, over random subsets of
// random dates.
func TestSumsMatchDesign(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	dates := make([]float64, 60)
	d := 2018.0
	for i := range dates {
		d += 0.01 + 0.05*r.Float64()
		dates[i] = d
	}
	for K := 0; K <= season.MaxHarmonics; K++ {
		for _, trend := range []bool{false, true} {
			m := season.Model{Kind: season.Harmonic, Harmonics: K, Trend: trend, History: season.Period{From: 2018, To: 2030}}
			p, err := season.NewPlan(m, dates)
			if err != nil {
				t.Fatal(err)
			}
			terms, entry := Sums(p)
			if want := 1 + 4*K; !trend && len(terms) != want {
				t.Errorf("K=%d: %d sums, want %d", K, len(terms), want)
			}
			if want := 3 + 6*K; trend && len(terms) != want {
				t.Errorf("K=%d with trend: %d sums, want %d", K, len(terms), want)
			}
			k := p.Coefs
			for range 5 {
				sums := make([]float64, len(terms))
				g := make([]float64, k*k)
				for tt := range dates {
					if r.IntN(3) == 0 {
						continue
					}
					for i, f := range terms {
						sums[i] += f(tt)
					}
					x := p.X[tt*k : (tt+1)*k]
					for i := range k {
						for j := range k {
							g[i*k+j] += x[i] * x[j]
						}
					}
				}
				for i := range k {
					for j := 0; j <= i; j++ {
						var v float64
						for _, e := range entry[i][j] {
							v += float64(e.Weight) * sums[e.Sum]
						}
						if math.Abs(v-g[i*k+j]) > 1e-9*(1+math.Abs(g[i*k+j])) {
							t.Fatalf("K=%d trend=%v: XᵀX[%d][%d] = %v from the sums, %v from X", K, trend, i, j, v, g[i*k+j])
						}
					}
				}
			}
		}
	}
}
