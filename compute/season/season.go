package season

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"canopy/compute"
)

// MaxDates is the most dates a stack may hold.
const MaxDates = 400

// MaxHarmonics is the most harmonics a season-trend model may have: 3 for
// the command line (as bfastmonitor's default order), up to 6 for the
// benchmarks.
const MaxHarmonics = 6

// MaxCoef is the most coefficients a season-trend model has: intercept,
// trend and a cosine and a sine per harmonic.
const MaxCoef = 2 + 2*MaxHarmonics

// Cube is one block of a stack: T dates of the same P pixels. Values is
// date-major, Values[t*P+p] the value of pixel p on date t, float32 with
// NaN where the date is missing for that pixel (masked, nodata, outside the
// product, an index that is not finite). Dates are the dates' decimal years
// (DecimalYear), strictly increasing; the dates of a stack are the same for
// every block.
type Cube struct {
	Dates  []float64
	Pixels int
	Values []float32
}

// Check says what is wrong with c's shape, or nil.
func (c *Cube) Check() error {
	t := len(c.Dates)
	if t < 1 || t > MaxDates {
		return fmt.Errorf("season: a cube has %d dates; it takes 1 to %d", t, MaxDates)
	}
	if c.Pixels < 0 || len(c.Values) != t*c.Pixels {
		return fmt.Errorf("season: a cube of %d dates × %d pixels has %d values", t, c.Pixels, len(c.Values))
	}
	for i, d := range c.Dates {
		if math.IsNaN(d) || math.IsInf(d, 0) || (i > 0 && d <= c.Dates[i-1]) {
			return errors.New("season: a cube's dates must be finite and strictly increasing")
		}
	}
	return nil
}

// Kind is a per-pixel model.
type Kind int

// The models.
const (
	// Composite: one statistic of the valid values of a period.
	Composite Kind = iota
	// Harmonic: the season-trend model fitted by least squares.
	Harmonic
	// Mosum: BFAST-monitor's MOSUM of the residuals over the monitoring
	// period against strucchange's boundary.
	Mosum
	// Anomaly: fordead's rule, an alert after Run successive anomalous
	// residuals, back to normal after Run normal ones.
	Anomaly
)

func (k Kind) String() string {
	switch k {
	case Composite:
		return "composite"
	case Harmonic:
		return "harmonic"
	case Mosum:
		return "mosum"
	case Anomaly:
		return "anomaly"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Stat is a composite's statistic.
type Stat int

// The statistics of a composite.
const (
	// Median of the valid values (the mean of the two middle ones when
	// their number is even), the percentile 50.
	Median Stat = iota
	// Max is the greatest valid value (the maximum-NDVI composite over
	// an NDVI stack); the date output is the date of the first maximum.
	Max
	// Percentile is Model.Percentile of the valid values, linearly
	// interpolated between the order statistics (R's type 7, NumPy's
	// default): h = (n−1)·q/100, x[⌊h⌋] + (h−⌊h⌋)·(x[⌊h⌋+1] − x[⌊h⌋]).
	Percentile
)

// Period is a span of decimal years, From included, To excluded; To may be
// +Inf (to the last date).
type Period struct{ From, To float64 }

// Has says whether the decimal year d is in p.
func (p Period) Has(d float64) bool { return d >= p.From && d < p.To }

// Direction says which residuals the anomaly rule counts.
type Direction int

// The directions of an anomaly.
const (
	// Down counts residuals below the model (observed − fitted < −threshold):
	// a loss of NDVI, NDMI, NBR.
	Down Direction = iota
	// Up counts residuals above it (> threshold): a rise of fordead's CRSWIR.
	Up
	// Both counts |residual| > threshold.
	Both
)

// Model is a per-pixel model and its parameters.
type Model struct {
	Kind Kind

	// Composite: the statistic of the valid values of Period.
	Stat       Stat
	Percentile float64 // 0 to 100, for Stat Percentile
	Period     Period

	// Harmonic, Mosum, Anomaly: the season-trend model, fitted on the
	// valid values of History: y = a + b·(t − t̄) + Σₖ cₖ cos(2πkt) + sₖ sin(2πkt),
	// k = 1..Harmonics, with the trend b only when Trend (t̄: the mean of
	// the stack's dates in History, so that the trend's column is centred).
	Harmonics int
	Trend     bool
	History   Period

	// Mosum, Anomaly: the monitoring period (after the history).
	Monitor Period

	// Mosum: the window as a share of the history's valid observations
	// (0.25, 0.5 or 1; bfastmonitor's h), the significance level (0.001 to
	// 0.05) and the monitoring horizon in multiples of the history
	// (2, 4, 6, 8 or 10; bfastmonitor's end), which pick strucchange's
	// critical value.
	H, Level, End float64

	// Anomaly: a residual is anomalous past Threshold in Direction; Run
	// successive anomalous valid dates raise the alert, Run successive
	// normal ones clear it (fordead: 3).
	Threshold float64
	Direction Direction
	Run       int
}

// DefaultMosum is bfastmonitor's defaults for the MOSUM: h = 0.25,
// level 0.05, end 10, order 3 harmonics with a trend.
func DefaultMosum(history, monitor Period) Model {
	return Model{Kind: Mosum, Harmonics: 3, Trend: true, History: history, Monitor: monitor, H: 0.25, Level: 0.05, End: 10}
}

// Coefs is the number of coefficients of m's season-trend model.
func (m Model) Coefs() int {
	n := 1 + 2*m.Harmonics
	if m.Trend {
		n++
	}
	return n
}

// Check says what is wrong with m, or nil.
func (m Model) Check() error {
	switch m.Kind {
	case Composite:
		if m.Stat < Median || m.Stat > Percentile {
			return fmt.Errorf("season: unknown statistic %d", m.Stat)
		}
		if m.Stat == Percentile && !(m.Percentile >= 0 && m.Percentile <= 100) {
			return fmt.Errorf("season: a percentile is from 0 to 100, not %g", m.Percentile)
		}
		return checkPeriod("period", m.Period)
	case Harmonic, Mosum, Anomaly:
	default:
		return fmt.Errorf("season: unknown model %d", m.Kind)
	}
	if m.Harmonics < 0 || m.Harmonics > MaxHarmonics {
		return fmt.Errorf("season: %d harmonics; a model has 0 to %d", m.Harmonics, MaxHarmonics)
	}
	if err := checkPeriod("history", m.History); err != nil {
		return err
	}
	if m.Kind == Harmonic {
		return nil
	}
	if err := checkPeriod("monitoring period", m.Monitor); err != nil {
		return err
	}
	if m.Monitor.From < m.History.To {
		return errors.New("season: the monitoring period must start after the history ends")
	}
	if m.Kind == Mosum {
		_, err := Critval(m.H, m.End, m.Level)
		return err
	}
	if m.Run < 1 || m.Run > MaxDates {
		return fmt.Errorf("season: the anomaly rule's run is %d dates; it takes 1 to %d", m.Run, MaxDates)
	}
	if !(m.Threshold >= 0) || math.IsInf(m.Threshold, 0) {
		return fmt.Errorf("season: the anomaly threshold must be a finite number ≥ 0, not %g", m.Threshold)
	}
	if m.Direction < Down || m.Direction > Both {
		return fmt.Errorf("season: unknown direction %d", m.Direction)
	}
	return nil
}

func checkPeriod(what string, p Period) error {
	if math.IsNaN(p.From) || math.IsNaN(p.To) || math.IsInf(p.From, 0) || !(p.To > p.From) {
		return fmt.Errorf("season: the %s [%g, %g) is empty or not a span of dates", what, p.From, p.To)
	}
	return nil
}

// Critval is strucchange's critical value of the OLS-MOSUM monitoring test
// (functional "max") for the window h, the horizon end and the level α, as
// mefp interpolates it (R's approx over 1 − α in monitorMECritvalTable).
func Critval(h, end, level float64) (float64, error) {
	hi := slices.Index(critvalH, h)
	if hi < 0 {
		return 0, fmt.Errorf("season: the MOSUM window h = %g is not one strucchange has (0.25, 0.5, 1)", h)
	}
	pi := slices.Index(critvalPeriod, end)
	if pi < 0 {
		return 0, fmt.Errorf("season: the monitoring horizon %g is not one strucchange has (2, 4, 6, 8, 10)", end)
	}
	return approx(critvalLevel, critvalTable[hi][pi][:], 1-level, level)
}

// approx is R's approx(x, y, xout=v)$y (linear, rule 1) for increasing x.
func approx(x, y []float64, v, level float64) (float64, error) {
	n := len(x)
	if !(v >= x[0] && v <= x[n-1]) {
		return 0, fmt.Errorf("season: the level %g is outside strucchange's table (0.001 to 0.05)", level)
	}
	i, j := 0, n-1
	for i < j-1 {
		ij := (i + j) / 2
		if v < x[ij] {
			j = ij
		} else {
			i = ij
		}
	}
	if v == x[j] {
		return y[j], nil
	}
	if v == x[i] {
		return y[i], nil
	}
	return y[i] + (y[j]-y[i])*((v-x[i])/(x[j]-x[i])), nil
}

// Outputs names the planes a model writes, in order (the band descriptions
// of its GeoTIFF):
//
//	Composite:     value, count, date
//	Harmonic:      rmse, count, intercept, [trend,] cos1, sin1, ..., cosK, sinK
//	Mosum/Anomaly: break, magnitude, confidence, count
//
// count is the number of valid observations used (Composite: in the period;
// Harmonic: in the history; Mosum, Anomaly: history and monitoring); date
// and break are decimal years (NaN: none).
func (m Model) Outputs() []string {
	switch m.Kind {
	case Composite:
		return []string{"value", "count", "date"}
	case Harmonic:
		o := []string{"rmse", "count", "intercept"}
		if m.Trend {
			o = append(o, "trend")
		}
		for k := 1; k <= m.Harmonics; k++ {
			o = append(o, fmt.Sprintf("cos%d", k), fmt.Sprintf("sin%d", k))
		}
		return o
	}
	return []string{"break", "magnitude", "confidence", "count"}
}

// Date roles in a Plan.
const (
	// RoleNone: the date takes no part in the model.
	RoleNone uint8 = iota
	// RoleFit: the composite's period, or the season-trend model's history.
	RoleFit
	// RoleMonitor: the monitoring period.
	RoleMonitor
)

// Plan is what a model needs that depends on the dates only, worked out
// once on the host for every block of a stack: the role of each date, the
// design matrix of the season-trend model, strucchange's critical value.
type Plan struct {
	Model Model
	Dates []float64
	// Dates32 are the dates as float32: a backend writes Dates32[t] as the
	// date or break of date t.
	Dates32 []float32
	// Role is each date's role (RoleNone, RoleFit, RoleMonitor).
	Role []uint8
	// Coefs is the number of columns of X (Model.Coefs; 0 for composites).
	Coefs int
	// X is the design matrix, T rows of Coefs, row-major: X[t*Coefs+j] is
	// column j (intercept 1, [trend t − t̄,] cos 2πkt, sin 2πkt for
	// k = 1..K) on date t, computed in float64 from the fraction of the
	// year; X32 is X rounded to float32, what the float32 backends use.
	X   []float64
	X32 []float32
	// TrendOrigin is t̄, the mean of the history's dates.
	TrendOrigin float64
	// Critval is the MOSUM's critical value (Critval(H, End, Level)).
	Critval float64
}

// NewPlan works out m's plan over the dates (decimal years, strictly
// increasing).
func NewPlan(m Model, dates []float64) (*Plan, error) {
	if err := m.Check(); err != nil {
		return nil, err
	}
	c := Cube{Dates: dates}
	if err := c.Check(); err != nil {
		return nil, err
	}
	p := &Plan{Model: m, Dates: slices.Clone(dates), Dates32: make([]float32, len(dates)), Role: make([]uint8, len(dates))}
	for t, d := range dates {
		p.Dates32[t] = float32(d)
		switch {
		case m.Kind == Composite && m.Period.Has(d):
			p.Role[t] = RoleFit
		case m.Kind != Composite && m.History.Has(d):
			p.Role[t] = RoleFit
		case (m.Kind == Mosum || m.Kind == Anomaly) && m.Monitor.Has(d):
			p.Role[t] = RoleMonitor
		}
	}
	if m.Kind == Composite {
		return p, nil
	}
	n := 0
	for t, d := range dates {
		if p.Role[t] == RoleFit {
			p.TrendOrigin += d
			n++
		}
	}
	if n > 0 {
		p.TrendOrigin /= float64(n)
	}
	p.Coefs = m.Coefs()
	p.X = make([]float64, len(dates)*p.Coefs)
	p.X32 = make([]float32, len(p.X))
	for t, d := range dates {
		row := p.X[t*p.Coefs : (t+1)*p.Coefs]
		designRow(row, d, m, p.TrendOrigin)
		for j, v := range row {
			p.X32[t*p.Coefs+j] = float32(v)
		}
	}
	if m.Kind == Mosum {
		p.Critval, _ = Critval(m.H, m.End, m.Level)
	}
	return p, nil
}

// designRow fills the design matrix's row of the date d.
func designRow(row []float64, d float64, m Model, origin float64) {
	row[0] = 1
	j := 1
	if m.Trend {
		row[1] = d - origin
		j = 2
	}
	frac := d - math.Floor(d)
	for k := 1; k <= m.Harmonics; k++ {
		s, c := math.Sincos(2 * math.Pi * math.Mod(float64(k)*frac, 1))
		row[j], row[j+1] = c, s
		j += 2
	}
}

// Job is one block to run: the plan, the block's cube and its output
// planes (len(Plan.Model.Outputs()) planes of Cube.Pixels values each,
// allocated by the caller, NewJob).
type Job struct {
	Plan *Plan
	Cube Cube
	Out  [][]float32
}

// NewJob returns a job of the plan over the cube, with its output planes.
func NewJob(p *Plan, c Cube) *Job {
	j := &Job{Plan: p, Cube: c, Out: make([][]float32, len(p.Model.Outputs()))}
	for i := range j.Out {
		j.Out[i] = make([]float32, c.Pixels)
	}
	return j
}

// Check says what is wrong with j's shape, or nil.
func (j *Job) Check() error {
	if j.Plan == nil {
		return errors.New("season: a job without a plan")
	}
	if err := j.Cube.Check(); err != nil {
		return err
	}
	if !slices.Equal(j.Cube.Dates, j.Plan.Dates) {
		return errors.New("season: the cube's dates are not the plan's")
	}
	if len(j.Out) != len(j.Plan.Model.Outputs()) {
		return fmt.Errorf("season: a %s job writes %d planes, not %d", j.Plan.Model.Kind, len(j.Plan.Model.Outputs()), len(j.Out))
	}
	for _, o := range j.Out {
		if len(o) != j.Cube.Pixels {
			return fmt.Errorf("season: an output plane of %d values for %d pixels", len(o), j.Cube.Pixels)
		}
	}
	return nil
}

// Runner is what a backend implements to run per-pixel models: an optional
// interface of compute.Backend, found by type assertion (RunJob). A runner
// runs the whole job (every pixel of the cube), writes every output plane
// and reports its phases as compute.Backend.RunJob does; it serialises its
// jobs itself.
type Runner interface {
	RunSeries(j *Job) (compute.Timings, error)
}

// Resident is a cube kept on a device (cudaback's and glback's Cube): any
// model of its dates runs on it without uploading it again.
type Resident interface {
	Run(p *Plan, out [][]float32) (compute.Timings, error)
	Close()
}

// RunResident is RunSeries for a backend that keeps cubes on its device:
// open j's cube, run j's plan, close it, the upload counted with the run.
func RunResident[C Resident](open func(Cube) (C, compute.Timings, error), j *Job) (compute.Timings, error) {
	c, t, err := open(j.Cube)
	if err != nil {
		return t, err
	}
	defer c.Close()
	rt, err := c.Run(j.Plan, j.Out)
	rt.Setup += t.Setup
	rt.Upload = t.Upload
	rt.Total += t.Total
	return rt, err
}

// Runs says whether the backend runs per-pixel models.
func Runs(b compute.Backend) bool {
	_, ok := b.(Runner)
	return ok
}

// RunJob checks j and runs it on b.
func RunJob(b compute.Backend, j *Job) (compute.Timings, error) {
	r, ok := b.(Runner)
	if !ok {
		return compute.Timings{}, fmt.Errorf("the %s backend does not run per-pixel models over a stack of dates", b.Name())
	}
	if err := j.Check(); err != nil {
		return compute.Timings{}, err
	}
	return r.RunSeries(j)
}

// DecimalYear is the UTC date's decimal year: its year plus the share of
// that year gone by at the instant (2024-07-01T00:00Z is 2024 + 182/366).
func DecimalYear(t time.Time) float64 {
	t = t.UTC()
	y := t.Year()
	a := time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC)
	b := time.Date(y+1, 1, 1, 0, 0, 0, 0, time.UTC)
	return float64(y) + float64(t.Sub(a))/float64(b.Sub(a))
}

// FromDecimalYear is the instant of a decimal year (DecimalYear's inverse,
// to the second).
func FromDecimalYear(d float64) time.Time {
	y := int(math.Floor(d))
	a := time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC)
	b := time.Date(y+1, 1, 1, 0, 0, 0, 0, time.UTC)
	s := (d - float64(y)) * b.Sub(a).Seconds()
	return a.Add(time.Duration(math.Round(s)) * time.Second)
}

// ISODate is the UTC calendar date (YYYY-MM-DD) of a decimal year, "" for
// NaN.
func ISODate(d float64) string {
	if math.IsNaN(d) || math.IsInf(d, 0) {
		return ""
	}
	return FromDecimalYear(d).Format("2006-01-02")
}
