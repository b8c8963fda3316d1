// Package seasonbench is what the GPU backends' season benchmarks share
// (compute/cudaback, compute/glback: TestSeasonBench): the cube bench/season
// writes for its peers (cube.f32, date-major float32; dates.txt), the models
// it times, and the checks and statistics of a run.
package seasonbench

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"canopy/compute/season"
	"canopy/compute/season/seasontest"
)

// Named is a model and its name in the benchmark's output.
type Named struct {
	Name  string
	Model season.Model
}

// Read reads the cube bench/season wrote into dir and returns it with the
// models to time: bench/season's three (harmonic: its harmonics without a
// trend over every date; median: the median composite of every date;
// mosum: bfastmonitor's defaults, the history up to the split) and four
// more (the harmonic fit with a trend, the maximum and 90th percentile
// composites, the anomaly rule).
func Read(dir string) (season.Cube, []Named, error) {
	var c season.Cube
	f, err := os.Open(filepath.Join(dir, "dates.txt"))
	if err != nil {
		return c, nil, err
	}
	defer f.Close()
	split, harm := math.NaN(), 6
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if rest, ok := strings.CutPrefix(line, "#"); ok {
			fs := strings.Fields(rest)
			for i := 0; i+1 < len(fs); i += 2 {
				switch fs[i] {
				case "split":
					split, _ = strconv.ParseFloat(fs[i+1], 64)
				case "harmonics":
					harm, _ = strconv.Atoi(fs[i+1])
				}
			}
			continue
		}
		if line == "" {
			continue
		}
		d, err := strconv.ParseFloat(line, 64)
		if err != nil {
			return c, nil, fmt.Errorf("%s: %v", f.Name(), err)
		}
		c.Dates = append(c.Dates, d)
	}
	if math.IsNaN(split) || len(c.Dates) == 0 {
		return c, nil, fmt.Errorf("%s: no dates, or no split", f.Name())
	}
	raw, err := os.ReadFile(filepath.Join(dir, "cube.f32"))
	if err != nil {
		return c, nil, err
	}
	if len(raw)%(4*len(c.Dates)) != 0 {
		return c, nil, fmt.Errorf("cube.f32: %d bytes is not a whole number of %d dates", len(raw), len(c.Dates))
	}
	c.Values = make([]float32, len(raw)/4)
	for i := range c.Values {
		c.Values[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	c.Pixels = len(c.Values) / len(c.Dates)
	from, to := c.Dates[0], math.Inf(1)
	all := season.Period{From: from, To: to}
	hist, mon := season.Period{From: from, To: split}, season.Period{From: split, To: to}
	return c, []Named{
		{"harmonic", season.Model{Kind: season.Harmonic, Harmonics: harm, History: all}},
		{"median", season.Model{Kind: season.Composite, Stat: season.Median, Period: all}},
		{"mosum", season.DefaultMosum(hist, mon)},
		{"harmonic-trend", season.Model{Kind: season.Harmonic, Harmonics: harm, Trend: true, History: all}},
		{"max", season.Model{Kind: season.Composite, Stat: season.Max, Period: all}},
		{"p90", season.Model{Kind: season.Composite, Stat: season.Percentile, Percentile: 90, Period: all}},
		{"anomaly", season.Model{Kind: season.Anomaly, Harmonics: 3, Trend: true, History: hist, Monitor: mon, Threshold: 0.08, Run: 3}},
	}, nil
}

// Spread is the median, least and greatest of xs.
func Spread(xs []float64) (med, lo, hi float64) {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2], s[0], s[len(s)-1]
}

// BytesPerPixel is what p's kernel reads and writes for one pixel: each
// date it uses (twice for the fits, whose second pass reads them again)
// and its output planes, 4 bytes each.
func BytesPerPixel(p *season.Plan) int {
	read := 0
	for _, r := range p.Role {
		if r != season.RoleNone {
			read++
		}
	}
	if p.Model.Kind != season.Composite {
		read *= 2
	}
	return 4 * (read + len(p.Model.Outputs()))
}

// CheckSample checks the outputs of n pixels spread over the cube against
// the float64 reference (seasontest.Check).
func CheckSample(p *season.Plan, c season.Cube, out [][]float32, n int) error {
	n = min(n, c.Pixels)
	T := len(c.Dates)
	sub := season.Cube{Dates: c.Dates, Pixels: n, Values: make([]float32, T*n)}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = int(uint64(i) * 2654435761 % uint64(c.Pixels))
	}
	for t := range T {
		for i, px := range idx {
			sub.Values[t*n+i] = c.Values[t*c.Pixels+px]
		}
	}
	j := season.NewJob(p, sub)
	for o := range out {
		for i, px := range idx {
			j.Out[o][i] = out[o][px]
		}
	}
	_, err := seasontest.Check(j, season.Ref(j))
	return err
}
