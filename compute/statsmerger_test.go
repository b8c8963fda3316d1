package compute

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Merging blocks' partials gives the whole plane's count, min, max, mean,
// standard deviation and class counts, whatever the blocks (empty ones
// included).
func TestStatsMergerEqualsWholePlane(t *testing.T) {
	g := rand.New(rand.NewPCG(7, 8))
	v := make([]float32, 10007)
	for i := range v {
		v[i] = float32(g.NormFloat64()*0.3 + 0.4)
	}
	q := StatsRequest{Classes: []Class{{Name: "a", Lo: -1, Hi: 0.2}, {Name: "b", Lo: 0.2, Hi: 0.6}, {Name: "c", Lo: 0.6, Hi: 2}}, PixelAreaM2: 100}
	bounds := []float32{0.2, 0.6}
	m := NewStatsMerger(q)
	for lo := 0; lo < len(v); {
		hi := min(len(v), lo+g.IntN(700))
		var n int
		var mean, m2 float64
		bl, bh := float32(math.Inf(1)), float32(math.Inf(-1))
		for _, x := range v[lo:hi] {
			n++
			d := float64(x) - mean
			mean += d / float64(n)
			m2 += d * (float64(x) - mean)
			bl, bh = min(bl, x), max(bh, x)
		}
		for i, b := range bounds {
			c := 0
			for _, x := range v[lo:hi] {
				if x >= b {
					c++
				}
			}
			m.Above(i, c)
		}
		m.Add(n, mean, m2, bl, bh)
		lo = hi
	}
	r := m.Result(q, nil, len(v))
	var sum float64
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range v {
		sum += float64(x)
		lo, hi = math.Min(lo, float64(x)), math.Max(hi, float64(x))
	}
	mean := sum / float64(len(v))
	var ss float64
	for _, x := range v {
		ss += (float64(x) - mean) * (float64(x) - mean)
	}
	std := math.Sqrt(ss / float64(len(v)))
	if r.Valid != len(v) || r.Total != len(v) || r.Min != lo || r.Max != hi {
		t.Fatalf("count %d/%d, min %g max %g; want %d, %g, %g", r.Valid, r.Total, r.Min, r.Max, len(v), lo, hi)
	}
	if math.Abs(r.Mean-mean) > 1e-12 || math.Abs(r.Std-std)/std > 1e-12 {
		t.Errorf("mean %g std %g, want %g %g", r.Mean, r.Std, mean, std)
	}
	want := [3]int{}
	for _, x := range v {
		switch {
		case x >= 0.6:
			want[2]++
		case x >= 0.2:
			want[1]++
		default:
			want[0]++
		}
	}
	for i, c := range r.Classes {
		if c.Pixels != want[i] {
			t.Errorf("class %d: %d pixels, want %d", i, c.Pixels, want[i])
		}
	}
	if e := NewStatsMerger(q).Result(q, nil, 5); e.Valid != 0 || !math.IsNaN(e.Mean) || !math.IsNaN(e.Min) {
		t.Errorf("no valid pixel: %+v", e)
	}
}
