package stats

import (
	"canopy/compute"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat"
)

var nan = float32(math.NaN())

// randomPlane returns n values over [-1, 1) with NaN, +Inf and -Inf mixed
// in, and the finite ones as float64.
func randomPlane(n int, seed uint64) ([]float32, []float64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	p := make([]float32, n)
	var finite []float64
	for i := range p {
		switch r := rng.IntN(100); {
		case r < 7:
			p[i] = nan
		case r == 7:
			p[i] = float32(math.Inf(1 - 2*rng.IntN(2)))
		default:
			p[i] = float32(rng.Float64()*2 - 1)
			finite = append(finite, float64(p[i]))
		}
	}
	return p, finite
}

func TestSummarizeMatchesFloat64(t *testing.T) {
	for _, n := range []int{1, 1000, 3*block + 17} {
		p, finite := randomPlane(n, uint64(n))
		s := Summarize(p)
		if s.Total != n || s.Valid != len(finite) || s.ValidShare != float64(len(finite))/float64(n) {
			t.Errorf("n=%d: total %d valid %d share %g, want %d %d", n, s.Total, s.Valid, s.ValidShare, n, len(finite))
		}
		if len(finite) == 0 {
			continue
		}
		mean, std := stat.PopMeanStdDev(finite, nil)
		if math.Abs(s.Mean-mean) > 1e-12 || math.Abs(s.Std-std) > 1e-12 {
			t.Errorf("n=%d: mean %.15g std %.15g, gonum says %.15g %.15g", n, s.Mean, s.Std, mean, std)
		}
		if s.Min != slices.Min(finite) || s.Max != slices.Max(finite) {
			t.Errorf("n=%d: min %g max %g, want %g %g", n, s.Min, s.Max, slices.Min(finite), slices.Max(finite))
		}
	}
}

func TestSummarizeEdgeCases(t *testing.T) {
	isNaN := func(s Summary) bool {
		return math.IsNaN(s.Min) && math.IsNaN(s.Max) && math.IsNaN(s.Mean) && math.IsNaN(s.Std)
	}
	if s := Summarize(nil); s.Total != 0 || s.Valid != 0 || s.ValidShare != 0 || !isNaN(s) {
		t.Errorf("empty: %+v", s)
	}
	allNaN := make([]float32, 2*block+3)
	for i := range allNaN {
		allNaN[i] = nan
	}
	allNaN[5] = float32(math.Inf(1))
	if s := Summarize(allNaN); s.Total != len(allNaN) || s.Valid != 0 || s.ValidShare != 0 || !isNaN(s) {
		t.Errorf("all NaN: %+v", s)
	}
	if s := Summarize([]float32{0.25}); s.Valid != 1 || s.Min != 0.25 || s.Max != 0.25 || s.Mean != 0.25 || s.Std != 0 || s.ValidShare != 1 {
		t.Errorf("one pixel: %+v", s)
	}
	// A large constant plane has exactly zero spread, even across blocks
	// that start on a NaN.
	c := make([]float32, 3*block)
	for i := range c {
		c[i] = 0.7
	}
	c[block] = nan
	if s := Summarize(c); s.Std != 0 || s.Mean != float64(float32(0.7)) || s.Valid != len(c)-1 {
		t.Errorf("constant: %+v", s)
	}
}

func TestHistogram(t *testing.T) {
	p, finite := randomPlane(2*block+999, 3)
	const bins = 20
	lo, hi := -0.8, 0.9
	got := Histogram(p, bins, lo, hi)
	var in []float64
	for _, v := range finite {
		if v >= lo && v < hi {
			in = append(in, v)
		}
	}
	slices.Sort(in)
	want := stat.Histogram(nil, Edges(bins, lo, hi), in, nil)
	if len(got) != bins {
		t.Fatalf("%d bins, want %d", len(got), bins)
	}
	sum := 0
	for i := range got {
		if float64(got[i]) != want[i] {
			t.Errorf("bin %d: %d, gonum says %g", i, got[i], want[i])
		}
		sum += got[i]
	}
	if sum != len(in) {
		t.Errorf("histogram holds %d values, %d are in range", sum, len(in))
	}
	// Edges: lo is in the first bin, hi in the last, outside and NaN
	// nowhere; a bin edge starts its bin.
	h := Histogram([]float32{-1, 1, 0, 0.5, -1.5, 1.5, nan, float32(math.Inf(1))}, 4, -1, 1)
	if !slices.Equal(h, []int{1, 0, 1, 2}) {
		t.Errorf("edge histogram %v, want [1 0 1 2]", h)
	}
	for _, bad := range []struct {
		bins   int
		lo, hi float64
	}{{0, -1, 1}, {4, 1, -1}, {4, 0, 0}, {4, math.NaN(), 1}, {4, -1, math.Inf(1)}} {
		if h := Histogram(p, bad.bins, bad.lo, bad.hi); h != nil {
			t.Errorf("Histogram(%d, %g, %g) = %v, want nil", bad.bins, bad.lo, bad.hi, h)
		}
	}
	if e := Edges(4, -1, 1); !slices.Equal(e, []float64{-1, -0.5, 0, 0.5, 1}) {
		t.Errorf("edges %v", e)
	}
}

func TestClasses(t *testing.T) {
	p, _ := randomPlane(3*block+5, 11)
	// Put values exactly on the bounds too.
	for i, v := range []float32{0, 0.2, 0.4, 0.6, -1, 1} {
		p[i*1000] = v
	}
	table := compute.NDVIClasses()
	want := make([]int, len(table))
	valid := 0
	for _, v := range p {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			continue
		}
		x := float64(v)
		for i, c := range table {
			if x >= c.Lo && x < c.Hi {
				want[i]++
			}
		}
		valid++
	}
	const area = 100 // 10 m pixels
	got := Classes(p, area)
	if len(got) != len(table) {
		t.Fatalf("%d classes, want %d", len(got), len(table))
	}
	shares := 0.0
	for i, c := range got {
		if c.Class.Name != table[i].Name || c.Pixels != want[i] {
			t.Errorf("class %d %s: %d pixels, want %s %d", i, c.Class.Name, c.Pixels, table[i].Name, want[i])
		}
		if math.Abs(c.Share-float64(want[i])/float64(valid)) > 1e-15 {
			t.Errorf("%s: share %g, want %g", c.Class.Name, c.Share, float64(want[i])/float64(valid))
		}
		if math.Abs(c.Hectares-float64(want[i])*area/1e4) > 1e-9 {
			t.Errorf("%s: %g ha, want %g", c.Class.Name, c.Hectares, float64(want[i])*area/1e4)
		}
		shares += c.Share
	}
	if math.Abs(shares-1) > 1e-12 {
		t.Errorf("shares add up to %g", shares)
	}
	// Unknown area, all NaN, empty.
	for _, c := range Classes(p, 0) {
		if !math.IsNaN(c.Hectares) {
			t.Errorf("%s: %g ha with unknown pixel area", c.Class.Name, c.Hectares)
		}
	}
	for _, in := range [][]float32{nil, {nan, nan}} {
		for _, c := range Classes(in, 100) {
			if c.Pixels != 0 || !math.IsNaN(c.Share) || c.Hectares != 0 {
				t.Errorf("no valid pixels: %+v", c)
			}
		}
	}
	// One pixel of each class, hand-worked.
	one := Classes([]float32{-0.3, 0.1, 0.3, 0.5, 0.9, 0.6}, 400)
	for i, want := range []int{1, 1, 1, 1, 2} {
		if one[i].Pixels != want || one[i].Hectares != float64(want)*0.04 {
			t.Errorf("%s: %d pixels %g ha, want %d, %g", one[i].Class.Name, one[i].Pixels, one[i].Hectares, want, float64(want)*0.04)
		}
	}
}
