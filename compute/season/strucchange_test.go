package season_test

import (
	"bytes"
	"encoding/csv"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"canopy/compute/season"
)

// The reference of the MOSUM monitoring: testdata/strucchange/strucchange.R
// ran R's strucchange (mefp, monitor) as bfastmonitor does on 150 sample
// series and wrote their dates and values (series.csv) and the breaks,
// magnitudes and largest |MOSUM|/boundary it found (results.csv).

type rSeries struct {
	id                         string
	order, history             int
	trend, ok                  bool
	h, level, end, start       float64
	brk, magnitude, confidence float64
	dates                      []float64
	values                     []float32
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return rows[1:]
}

func num(t *testing.T, s string) float64 {
	t.Helper()
	if s == "NA" {
		return math.NaN()
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func readStrucchange(t *testing.T, dir string) []*rSeries {
	t.Helper()
	byID := map[string]*rSeries{}
	var all []*rSeries
	for _, r := range readCSV(t, filepath.Join(dir, "results.csv")) {
		s := &rSeries{id: r[0], order: int(num(t, r[1])), trend: r[2] == "1", h: num(t, r[3]), level: num(t, r[4]),
			end: num(t, r[5]), start: num(t, r[6]), history: int(num(t, r[7])), ok: r[8] == "1",
			brk: num(t, r[9]), magnitude: num(t, r[10]), confidence: num(t, r[11])}
		byID[s.id] = s
		all = append(all, s)
	}
	for _, r := range readCSV(t, filepath.Join(dir, "series.csv")) {
		s := byID[r[0]]
		s.dates = append(s.dates, num(t, r[1]))
		s.values = append(s.values, float32(num(t, r[2])))
	}
	return all
}

func (s *rSeries) job(t *testing.T) *season.Job {
	t.Helper()
	m := season.Model{Kind: season.Mosum, Harmonics: s.order, Trend: s.trend, H: s.h, Level: s.level, End: s.end,
		History: season.Period{From: s.dates[0], To: s.start}, Monitor: season.Period{From: s.start, To: math.Inf(1)}}
	p, err := season.NewPlan(m, s.dates)
	if err != nil {
		t.Fatalf("series %s: %v", s.id, err)
	}
	return season.NewJob(p, season.Cube{Dates: s.dates, Pixels: 1, Values: s.values})
}

// TestStrucchange compares the float64 reference and the float32 kernel
// with strucchange on every sample series: whether there is a break and
// its date exactly, the magnitude and the largest |MOSUM|/boundary.
func TestStrucchange(t *testing.T) {
	series := readStrucchange(t, "testdata/strucchange")
	if len(series) < 100 {
		t.Fatalf("%d series; the reference has at least 100", len(series))
	}
	breaks := 0
	for _, s := range series {
		j := s.job(t)
		r := season.Ref(j)
		season.Pixels(j, 0, 1)
		if !s.ok {
			if !math.IsNaN(r.Out[0][0]) || !math.IsNaN(r.Out[2][0]) {
				t.Errorf("series %s: strucchange could not monitor (history of %d), Canopy did", s.id, s.history)
			}
			continue
		}
		if !math.IsNaN(s.brk) {
			breaks++
		}
		same := func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }
		if !same(r.Out[0][0], s.brk) {
			t.Errorf("series %s: break %v (%s), strucchange's %v (%s)", s.id, r.Out[0][0], season.ISODate(r.Out[0][0]), s.brk, season.ISODate(s.brk))
		}
		if !same(float64(j.Out[0][0]), float64(float32(s.brk))) {
			t.Errorf("series %s: float32 break %v, strucchange's %v (margin %.3g)", s.id, j.Out[0][0], s.brk, r.Margin[0])
		}
		if d := math.Abs(r.Out[1][0] - s.magnitude); !(d <= 1e-9) {
			t.Errorf("series %s: magnitude %v, strucchange's %v", s.id, r.Out[1][0], s.magnitude)
		}
		if d := math.Abs(r.Out[2][0] - s.confidence); !(d <= 1e-9*s.confidence) {
			t.Errorf("series %s: largest |MOSUM|/boundary %v, strucchange's %v", s.id, r.Out[2][0], s.confidence)
		}
		if d := math.Abs(float64(j.Out[2][0]) - s.confidence); !(d <= 1e-4*s.confidence) {
			t.Errorf("series %s: float32 largest |MOSUM|/boundary %v, strucchange's %v", s.id, j.Out[2][0], s.confidence)
		}
	}
	t.Logf("%d series, %d with a break, agree with strucchange", len(series), breaks)
}

// TestStrucchangeRerun runs testdata/strucchange/strucchange.R again and
// checks that the committed reference is what strucchange says. It needs
// R with strucchange (Debian r-cran-strucchange, in scripts/setup): it
// skips without, and fails under CANOPY_EXPECT_R=1 (make test sets it).
func TestStrucchangeRerun(t *testing.T) {
	if _, err := exec.LookPath("Rscript"); err != nil || exec.Command("Rscript", "-e", "library(strucchange)").Run() != nil {
		if os.Getenv("CANOPY_EXPECT_R") == "1" {
			t.Fatal("R with strucchange is not installed but CANOPY_EXPECT_R=1: install r-cran-strucchange (scripts/setup)")
		}
		t.Skip("R with strucchange is not installed (Debian r-cran-strucchange)")
	}
	if testing.Short() {
		t.Skip("-short: R takes seconds")
	}
	dir := t.TempDir()
	if out, err := exec.Command("Rscript", "testdata/strucchange/strucchange.R", dir).CombinedOutput(); err != nil {
		t.Fatalf("Rscript: %v: %s", err, out)
	}
	for _, f := range []string{"series.csv", "results.csv"} {
		a, b := readCSV(t, filepath.Join(dir, f)), readCSV(t, filepath.Join("testdata/strucchange", f))
		if len(a) != len(b) {
			t.Fatalf("%s: R wrote %d rows, the committed file has %d", f, len(a), len(b))
		}
		for i := range a {
			for c := range a[i] {
				x, y := num(t, a[i][c]), num(t, b[i][c])
				if !(x == y || math.IsNaN(x) && math.IsNaN(y) || math.Abs(x-y) <= 1e-12*math.Abs(y)) {
					t.Fatalf("%s row %d column %d: R says %s, the committed file %s", f, i+2, c+1, a[i][c], b[i][c])
				}
			}
		}
	}
}
