package zonal

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/paulmach/orb"
)

// A stand's series is, date by date, what Compute gives the stand on that
// date's plane (the median bit for bit, the mean within rounding, the
// masked share its pixels less its valid pixels), and its median is the
// weighted quantile of the definition; a stand off the grid has no values
// and is all masked.
func TestStandSeries(t *testing.T) {
	const w, h, T = 37, 29, 9
	P := w * h
	r := rand.New(rand.NewPCG(3, 9))
	cube := make([]float32, T*P)
	for i := range cube {
		cube[i] = float32(r.NormFloat64())
		if r.IntN(5) == 0 {
			cube[i] = float32(math.NaN())
		}
	}
	for p := range P { // a date with nothing valid
		cube[4*P+p] = float32(math.NaN())
	}
	gt := [6]float64{500000, 10, 0, 4000000, 0, -10}
	// A shell with a hole, edges across pixels.
	stand := orb.Polygon{
		{{500033, 3999873}, {500251, 3999861}, {500266, 3999733}, {500041, 3999752}, {500033, 3999873}},
		{{500101, 3999843}, {500102, 3999790}, {500151, 3999800}, {500101, 3999843}},
	}
	cov, err := Coverage(stand, gt, w, h)
	if err != nil {
		t.Fatal(err)
	}
	s, err := StandSeries(cov, cube, w, h, T, false)
	if err != nil {
		t.Fatal(err)
	}
	sm, err := StandSeries(cov, cube, w, h, T, true)
	if err != nil {
		t.Fatal(err)
	}
	for d := range T {
		plane, _ := NewPlane(cube[d*P:(d+1)*P], w, h)
		res, _, err := Compute(plane, gt, []Stand{{ID: "a", Geom: stand}}, Options{Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		z := res[0]
		if math.Abs(s.Values[d]-z.Mean) > 1e-12 || math.Float64bits(sm.Values[d]) != math.Float64bits(z.Median) {
			if !(math.IsNaN(s.Values[d]) && math.IsNaN(z.Mean) && math.IsNaN(sm.Values[d]) && math.IsNaN(z.Median)) {
				t.Fatalf("date %d: mean %v median %v, zonal %v %v", d, s.Values[d], sm.Values[d], z.Mean, z.Median)
			}
		}
		if want := (z.Pixels - z.ValidPixels) / z.Pixels; math.Abs(s.Masked[d]-want) > 1e-12 || math.Abs(s.Pixels-z.Pixels) > 1e-9 || sm.Masked[d] != s.Masked[d] {
			t.Fatalf("date %d: masked %v of %v pixels, zonal %v of %v", d, s.Masked[d], s.Pixels, want, z.Pixels)
		}
		// The definition's weighted median.
		var vals, ws []float64
		for row := range cov.H {
			for col := range cov.W {
				f := cov.Frac[row*cov.W+col]
				if v := cube[d*P+(cov.Y0+row)*w+cov.X0+col]; f > 0 && v == v {
					vals, ws = append(vals, float64(v)), append(ws, f)
				}
			}
		}
		if len(vals) > 0 {
			if m := refQuantile(vals, ws, 0.5); math.Abs(m-sm.Values[d]) > 1e-12 {
				t.Fatalf("date %d: median %v, the definition's %v", d, sm.Values[d], m)
			}
		}
	}
	if s.Masked[4] != 1 || !math.IsNaN(s.Values[4]) || !math.IsNaN(sm.Values[4]) {
		t.Fatalf("the empty date: masked %v, mean %v, median %v", s.Masked[4], s.Values[4], sm.Values[4])
	}
	off, _ := Coverage(orb.Polygon{{{0, 0}, {10, 0}, {10, 10}, {0, 0}}}, gt, w, h)
	o, err := StandSeries(off, cube, w, h, T, true)
	if err != nil || o.Pixels != 0 || o.Masked[0] != 1 || !math.IsNaN(o.Values[0]) {
		t.Fatalf("a stand off the grid: %+v, %v", o, err)
	}
	if _, err := StandSeries(cov, cube[:P], w, h, T, false); err == nil {
		t.Fatal("a short cube was taken")
	}
}
