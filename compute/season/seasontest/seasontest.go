// Package seasontest is the conformance suite of the backends that run
// per-pixel models over a stack of dates (season.Runner): random series
// with gaps and breaks, and the edge cases (1 date, every date missing, the
// whole history missing, 400 dates, blocks of 0 and 1 pixels and of sizes
// that fit no work-group), each model checked against the float64
// reference (season.Ref) within the float32 bound of each pixel.
package seasontest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"canopy/compute"
	"canopy/compute/season"
)

// Case is one job of the suite.
type Case struct {
	Name string
	Plan *season.Plan
	Cube season.Cube
}

// Cube makes a random cube of P pixels over T dates spread over
// [from, to) (decimal years): a seasonal curve with a trend and noise per
// pixel, a drop on a random date after breakAfter in about a third of the
// pixels, gap of the dates missing at random (a cloudy date misses most of
// its pixels), and a few pixels missing on every date or on every date
// before breakAfter.
func Cube(seed uint64, T, P int, from, to, breakAfter, gap float64) season.Cube {
	r := rand.New(rand.NewPCG(seed, 0x5ea5))
	dates := make([]float64, T)
	step := (to - from) / float64(T)
	for t := range dates {
		dates[t] = from + step*(float64(t)+0.05+0.9*r.Float64())
	}
	c := season.Cube{Dates: dates, Pixels: P, Values: make([]float32, T*P)}
	cloudy := make([]float64, T)
	for t := range cloudy {
		cloudy[t] = gap * 2 * r.Float64()
	}
	for p := range P {
		base := 0.3 + 0.4*r.Float64()
		amp := 0.05 + 0.25*r.Float64()
		phase := r.Float64()
		trend := 0.02 * r.NormFloat64()
		noise := 0.005 + 0.05*r.Float64()
		drop, at := 0.0, math.Inf(1)
		if r.IntN(3) == 0 {
			drop = 0.05 + 0.4*r.Float64()
			at = breakAfter + (to-breakAfter)*r.Float64()
		}
		kind := r.IntN(50)
		for t, d := range dates {
			v := base + trend*(d-from) + amp*math.Cos(2*math.Pi*(d-phase)) + 0.3*amp*math.Sin(4*math.Pi*(d-phase)) + noise*r.NormFloat64()
			if d >= at {
				v -= drop
			}
			if r.Float64() < cloudy[t] || kind == 0 || (kind == 1 && d < breakAfter) {
				v = math.NaN()
			}
			c.Values[t*P+p] = float32(v)
		}
	}
	return c
}

// Models are the models of the suite over a stack of [from, to) whose
// history ends at split.
func Models(from, split, to float64) []season.Model {
	hist := season.Period{From: from, To: split}
	mon := season.Period{From: split, To: math.Inf(1)}
	all := season.Period{From: from, To: to}
	ms := []season.Model{
		{Kind: season.Composite, Stat: season.Median, Period: all},
		{Kind: season.Composite, Stat: season.Max, Period: season.Period{From: from + 0.3, To: from + 0.7}},
		{Kind: season.Composite, Stat: season.Percentile, Percentile: 90, Period: hist},
		{Kind: season.Composite, Stat: season.Percentile, Percentile: 0, Period: hist},
		{Kind: season.Harmonic, Harmonics: 1, History: all},
		{Kind: season.Harmonic, Harmonics: 2, Trend: true, History: hist},
		{Kind: season.Harmonic, Harmonics: 3, Trend: true, History: all},
		{Kind: season.Harmonic, Harmonics: 6, History: all},
		season.DefaultMosum(hist, mon),
		{Kind: season.Mosum, Harmonics: 2, History: hist, Monitor: mon, H: 0.5, Level: 0.01, End: 10},
		{Kind: season.Mosum, Harmonics: 1, Trend: true, History: hist, Monitor: season.Period{From: split + 0.1, To: to}, H: 1, Level: 0.025, End: 4},
		{Kind: season.Anomaly, Harmonics: 2, History: hist, Monitor: mon, Threshold: 0.08, Direction: season.Down, Run: 3},
		{Kind: season.Anomaly, Harmonics: 1, Trend: true, History: hist, Monitor: mon, Threshold: 0.05, Direction: season.Both, Run: 2},
	}
	return ms
}

// Cases are the suite's jobs. short keeps them small (the race detector,
// a simulator).
func Cases(short bool) []Case {
	var cs []Case
	add := func(name string, m season.Model, c season.Cube) {
		p, err := season.NewPlan(m, c.Dates)
		if err != nil {
			panic(fmt.Sprintf("seasontest: %s: %v", name, err))
		}
		cs = append(cs, Case{Name: name, Plan: p, Cube: c})
	}
	P := 3000
	if short {
		P = 700
	}
	big := Cube(1, 48, P, 2019, 2023, 2022, 0.3)
	for i, m := range Models(2019, 2022, 2023) {
		add(fmt.Sprintf("random/%d-%s", i, m.Kind), m, big)
	}
	// Fewer dates, a shorter history: anomalies with confidences below 1.
	short2 := Cube(11, 24, 300, 2019, 2021, 2020, 0.3)
	for i, m := range Models(2019, 2020, 2021) {
		add(fmt.Sprintf("random-24/%d-%s", i, m.Kind), m, short2)
	}
	// Edge cases.
	one := Cube(2, 1, 37, 2020, 2021, 2020.5, 0.3)
	dense := Cube(3, 400, 61, 2016, 2024, 2022, 0.3)
	dry := Cube(4, 23, 129, 2020, 2022, 2021, 0)
	hole := Cube(5, 30, 33, 2019, 2022, 2021, 0.3)
	for i := range hole.Dates {
		if hole.Dates[i] < 2021 {
			for p := range hole.Pixels {
				hole.Values[i*hole.Pixels+p] = float32(math.NaN())
			}
		}
	}
	gone := Cube(6, 12, 17, 2020, 2021, 2020.6, 0.3)
	for i := range gone.Values {
		gone.Values[i] = float32(math.NaN())
	}
	empty := Cube(7, 10, 0, 2020, 2021, 2020.5, 0.3)
	single := Cube(8, 40, 1, 2019, 2022, 2021, 0.2)
	for i, m := range Models(2019, 2021, 2022) {
		name := fmt.Sprintf("%d-%s", i, m.Kind)
		add("dates=1/"+name, m, one)
		add("dates=400/"+name, Models(2016, 2022, 2024)[i], dense)
		add("no-gaps/"+name, Models(2020, 2021, 2022)[i], dry)
		add("history-missing/"+name, m, hole)
		add("all-missing/"+name, Models(2020, 2020.6, 2021)[i], gone)
		add("pixels=0/"+name, Models(2020, 2020.5, 2021)[i], empty)
		add("pixels=1/"+name, m, single)
	}
	return cs
}

// Run runs every case on b and checks it against the reference.
func Run(t *testing.T, b compute.Backend) {
	t.Helper()
	if !season.Runs(b) {
		t.Fatalf("%s does not implement season.Runner", b.Name())
	}
	cases := Cases(testing.Short())
	differ, pixels := 0, 0
	for _, c := range cases {
		j := season.NewJob(c.Plan, c.Cube)
		for i := range j.Out {
			for p := range j.Out[i] {
				j.Out[i][p] = 12345 // every element must be written
			}
		}
		if _, err := season.RunJob(b, j); err != nil {
			t.Errorf("%s: %s: %v", b.Name(), c.Name, err)
			continue
		}
		d, err := Check(j, season.Ref(j))
		if err != nil {
			t.Errorf("%s: %s: %v", b.Name(), c.Name, err)
		}
		differ += d
		pixels += c.Cube.Pixels
	}
	if float64(differ) > 0.001*float64(pixels) {
		t.Errorf("%s: break dates differ from the reference's on %d of %d pixels (at most 0.1 %%)", b.Name(), differ, pixels)
	}
	t.Logf("%s: %d cases, break dates differ from the reference's on %d of %d pixels, each within the bound of its decision", b.Name(), len(cases), differ, pixels)
}

// u is float32's unit roundoff.
const u = 1.0 / (1 << 24)

// IllConditioned is the least cond(XᵀX)·u at which a pixel's fit is not
// checked: float32's normal equations lose every digit near there.
const IllConditioned = 1e-3

// Tolerance is the float32 bound of a pixel's fitted values (β, residuals,
// rmse, magnitude): 16·Coefs·cond(XᵀX)·u·S, S the largest |value| of the
// pixel's history and residuals, plus T·u·S for the sums over the dates.
func Tolerance(j *season.Job, r *season.Reference, px int) float64 {
	p := j.Plan
	s := max(r.Scale[px], r.ResMax[px], 1e-3)
	if p.Model.Kind == season.Composite {
		return 4 * u * s
	}
	cond := max(r.Cond[px], 1)
	return 16*float64(p.Coefs)*cond*u*s + float64(len(p.Dates))*u*s
}

// ratioTolerance is the bound of a MOSUM's |MOSUM|/boundary.
func ratioTolerance(j *season.Job, r *season.Reference, px int, conf float64) float64 {
	d := Tolerance(j, r, px)
	sigma := r.Sigma[px]
	n := float64(r.Out[3][px]) // n + nm; the history's n is at most that
	K := float64(r.Window[px])
	return (K*d+float64(len(j.Plan.Dates))*u*r.ResMax[px])/(sigma*math.Sqrt(n/2)*j.Plan.Critval) + 2*conf*d/sigma + 1e-6
}

// Check compares a job's outputs with the reference: counts exactly, every
// value within its pixel's bound, and each break date that differs within
// the bound of its decision; it returns how many break dates differ (Run
// asks that they be at most 0.1 % of the suite's pixels).
func Check(j *season.Job, r *season.Reference) (int, error) {
	p := j.Plan
	m := p.Model
	names := m.Outputs()
	P := j.Cube.Pixels
	var errs []string
	bad := func(px int, format string, a ...any) {
		if len(errs) < 8 {
			errs = append(errs, fmt.Sprintf("pixel %d: ", px)+fmt.Sprintf(format, a...))
		} else if len(errs) == 8 {
			errs = append(errs, "...")
		}
	}
	breaksDiffer := 0
	for px := range P {
		ill := r.Cond[px]*u > IllConditioned
		tol := Tolerance(j, r, px)
		breakDiffers := false
		if m.Kind == season.Mosum || m.Kind == season.Anomaly {
			g, w := float64(j.Out[0][px]), r.Out[0][px]
			same := g == float64(float32(w)) || (math.IsNaN(g) && math.IsNaN(w))
			if !same {
				breakDiffers = true
				breaksDiffer++
				var near bool
				if m.Kind == season.Mosum {
					near = r.Margin[px] <= ratioTolerance(j, r, px, r.Out[2][px])
				} else {
					near = r.Margin[px] <= tol
				}
				if !near && !ill {
					bad(px, "break %v, the reference's %v, %.3g from its decision (bound %.3g)", g, w, r.Margin[px], tol)
				}
			}
		}
		for i, name := range names {
			g, w := float64(j.Out[i][px]), r.Out[i][px]
			switch {
			case g == 12345:
				bad(px, "%s was not written", name)
				continue
			case name == "count":
				if g != w {
					bad(px, "count %v, want %v", g, w)
				}
				continue
			case name == "break":
				continue
			case breakDiffers:
				continue // magnitude and confidence follow the break
			case math.IsNaN(g) != math.IsNaN(w):
				if !ill {
					bad(px, "%s %v, want %v", name, g, w)
				}
				continue
			case math.IsNaN(w):
				continue
			}
			b := tol
			switch name {
			case "date":
				b = 0
				w = float64(float32(w))
			case "confidence":
				if m.Kind == season.Anomaly {
					b = 2 * u * math.Abs(w) // a ratio of two counts
				} else {
					b = ratioTolerance(j, r, px, w)
				}
			case "intercept", "trend", "cos1", "sin1", "cos2", "sin2", "cos3", "sin3", "cos4", "sin4", "cos5", "sin5", "cos6", "sin6":
				b = tol * 4
			}
			if m.Kind != season.Composite && ill {
				continue
			}
			if !(math.Abs(g-w) <= b) {
				bad(px, "%s %v, want %v (|error| %.3g > bound %.3g, cond %.3g)", name, g, w, math.Abs(g-w), b, r.Cond[px])
			}
		}
	}
	if len(errs) > 0 {
		return breaksDiffer, fmt.Errorf("%d problems: %v", len(errs), errs)
	}
	return breaksDiffer, nil
}
