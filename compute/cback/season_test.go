package cback_test

import (
	"math"
	"runtime"
	"testing"

	"canopy/compute/cback"
	"canopy/compute/season"
	"canopy/compute/season/seasontest"
	cseason "canopy/native/season"
)

// TestSeries runs the per-pixel models' conformance suite on the C code.
func TestSeries(t *testing.T) {
	b := cback.New(0)
	defer b.Close()
	seasontest.Run(t, b)
}

// TestSeriesEqualsGo checks the C code against the Go kernel. Its
// one-pixel path (each pixel run alone here) gives the Go kernel's numbers
// bit for bit: the same float32 operations in the same order. Its SIMD
// lanes (the backend's run) give the composites and every count bit for
// bit, but assemble a fit's XᵀX from per-date sums of cos/sin products
// (compute/season/normal's shortcut, as the GPU kernels), which rounds
// differently from the Go kernel's entry-by-entry sums: those fitted values
// are held to the reference within the conformance suite's bound by
// TestSeries, not to the Go kernel's bits. Only on amd64, where Go never
// fuses a multiply and an add (it does on arm64).
func TestSeriesEqualsGo(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("Go fuses multiply-adds on " + runtime.GOARCH)
	}
	b := cback.New(0)
	defer b.Close()
	differ, total := 0, 0
	compare := func(c seasontest.Case, path string, want, got *season.Job, all bool) {
		names := c.Plan.Model.Outputs()
		for i := range want.Out {
			if !all && c.Plan.Model.Kind != season.Composite && names[i] != "count" {
				continue
			}
			for p, w := range want.Out[i] {
				g := got.Out[i][p]
				total++
				if math.Float32bits(g) != math.Float32bits(w) && !(g != g && w != w) && !(g == 0 && w == 0) {
					if differ++; differ <= 5 {
						t.Errorf("%s (%s): %s of pixel %d: c %v, go %v", c.Name, path, names[i], p, g, w)
					}
				}
			}
		}
	}
	for _, c := range seasontest.Cases(testing.Short()) {
		want, got, one := season.NewJob(c.Plan, c.Cube), season.NewJob(c.Plan, c.Cube), season.NewJob(c.Plan, c.Cube)
		season.Pixels(want, 0, c.Cube.Pixels)
		if _, err := season.RunJob(b, got); err != nil {
			t.Fatal(err)
		}
		compare(c, "lanes", want, got, false)
		p, m := c.Plan, c.Plan.Model
		cj := &cseason.Job{Kind: int(m.Kind), Stat: int(m.Stat), Direction: int(m.Direction), Run: m.Run,
			Percentile: float32(m.Percentile), Critval: float32(p.Critval), Threshold: float32(m.Threshold), H: m.H,
			Coefs: p.Coefs, Values: c.Cube.Values, Pixels: c.Cube.Pixels, X: p.X32, Dates32: p.Dates32, Role: p.Role, Out: one.Out}
		for px := range c.Cube.Pixels {
			cseason.Pixels(cj, px, px+1)
		}
		compare(c, "one pixel", want, one, true)
	}
	if differ > 0 {
		t.Errorf("%d of %d values differ", differ, total)
	}
}

// BenchmarkSeries times the c backend's models on 65536 pixels × 48 dates
// (bench/season runs the same against NumPy and numba).
func BenchmarkSeries(b *testing.B) {
	be := cback.New(0)
	defer be.Close()
	seriesBenchmarks(b, func(j *season.Job) {
		if _, err := season.RunJob(be, j); err != nil {
			b.Fatal(err)
		}
	})
}

func seriesBenchmarks(b *testing.B, run func(j *season.Job)) {
	cube := seasontest.Cube(1, 48, 1<<16, 2020, 2021.33, 2021, 0.3)
	all := season.Period{From: 2020, To: 2021.34}
	for _, m := range []struct {
		name  string
		model season.Model
	}{
		{"harmonic6", season.Model{Kind: season.Harmonic, Harmonics: 6, History: all}},
		{"median", season.Model{Kind: season.Composite, Stat: season.Median, Period: all}},
		{"mosum", season.DefaultMosum(season.Period{From: 2020, To: 2021}, season.Period{From: 2021, To: 2022})},
	} {
		b.Run(m.name, func(b *testing.B) {
			p, err := season.NewPlan(m.model, cube.Dates)
			if err != nil {
				b.Fatal(err)
			}
			j := season.NewJob(p, cube)
			b.ReportAllocs()
			for b.Loop() {
				run(j)
			}
			b.ReportMetric(float64(cube.Pixels)*float64(b.N)/b.Elapsed().Seconds(), "series/s")
		})
	}
}
