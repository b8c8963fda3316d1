package cudaback

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"canopy/compute/season"
	"canopy/compute/season/seasontest"
)

// seasonBenchModels are the models bench/season times, by name.
func seasonBenchModels(dates []float64) map[string]season.Model {
	all := season.Period{From: math.Inf(-1), To: math.Inf(1)}
	hist := season.Period{From: math.Inf(-1), To: 2019.5}
	mon := season.Period{From: 2019.5, To: math.Inf(1)}
	return map[string]season.Model{
		"harmonic":  {Kind: season.Harmonic, Harmonics: 6, Trend: true, History: all},
		"median":    {Kind: season.Composite, Stat: season.Median, Period: all},
		"max":       {Kind: season.Composite, Stat: season.Max, Period: all},
		"p90":       {Kind: season.Composite, Stat: season.Percentile, Percentile: 90, Period: all},
		"monitor":   season.DefaultMosum(hist, mon),
		"monitor-6": {Kind: season.Mosum, Harmonics: 6, Trend: true, History: hist, Monitor: mon, H: 0.25, Level: 0.05, End: 10},
		"anomaly":   {Kind: season.Anomaly, Harmonics: 3, Trend: true, History: hist, Monitor: mon, Threshold: 0.08, Run: 3},
	}
}

// TestSeasonBench times the season kernels on the GPU when
// CANOPY_SEASON_BENCH is set (bench/season/run sets it): a cube of
// CANOPY_SEASON_DATES (48) dates × CANOPY_SEASON_SIDE² (2048²) pixels,
// 30 % gaps, uploaded once as stored; each model's kernel is timed with
// CUDA events, REPEAT (10) times after a warm-up. One JSON line per case:
// the median, min and max milliseconds and pixel series per second, and
// for the upload its GB/s beside the pinned host-to-device ceiling; the
// device copy bandwidth gives each model's memory ceiling (its bytes read
// and written per pixel).
func TestSeasonBench(t *testing.T) {
	if os.Getenv("CANOPY_SEASON_BENCH") == "" {
		t.Skip("CANOPY_SEASON_BENCH is not set (bench/season/run sets it)")
	}
	envInt := func(name string, def int) int {
		if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
			return v
		}
		return def
	}
	T, side, repeat := envInt("CANOPY_SEASON_DATES", 48), envInt("CANOPY_SEASON_SIDE", 2048), envInt("REPEAT", 10)
	b := New()
	defer b.Close()
	info := b.Info()
	if !info.Available {
		t.Fatalf("no CUDA GPU: %s", info.Reason)
	}
	t0 := time.Now()
	cube := seasontest.Cube(1, T, side*side, 2018, 2020, 2019.5, 0.3)
	t.Logf("cube of %d dates × %d² pixels made in %v", T, side, time.Since(t0))
	P := cube.Pixels
	emit := func(v map[string]any) {
		v["backend"], v["dates"], v["pixels"], v["device"] = "cuda", T, P, info.Device
		line, _ := json.Marshal(v)
		fmt.Println(string(line))
	}
	ceil, err := b.Ceilings(256 << 20)
	if err != nil {
		t.Fatal(err)
	}
	// The upload as stored, several times (each OpenCube page-locks the
	// values, reported as Setup, and uploads them once).
	var ups []float64
	for range max(3, repeat/2) {
		c, tm, err := b.OpenCube(cube)
		if err != nil {
			t.Fatal(err)
		}
		ups = append(ups, tm.Upload.Seconds()*1e3)
		c.Close()
	}
	med, lo, hi := spread(ups)
	bytes := 4 * len(cube.Values)
	emit(map[string]any{"model": "upload", "ms": med, "min_ms": lo, "max_ms": hi, "bytes": bytes,
		"gb_per_s": float64(bytes) / (med / 1e3) / 1e9, "h2d_ceiling_gb_per_s": ceil.H2D, "device_copy_gb_per_s": ceil.DeviceCopy})
	c, _, err := b.OpenCube(cube)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	models := seasonBenchModels(cube.Dates)
	names := []string{"harmonic", "median", "max", "p90", "monitor", "monitor-6", "anomaly"}
	for _, name := range names {
		p, err := season.NewPlan(models[name], cube.Dates)
		if err != nil {
			t.Fatal(err)
		}
		t1 := time.Now()
		if _, err := c.Compute(p); err != nil { // JIT and warm-up
			t.Fatalf("%s: %v", name, err)
		}
		jit := time.Since(t1)
		var ms []float64
		for range repeat {
			k, err := c.Compute(p)
			if err != nil {
				t.Fatal(err)
			}
			ms = append(ms, k.Seconds()*1e3)
		}
		med, lo, hi := spread(ms)
		// Memory ceiling: the dates the model reads (twice for the fits:
		// the second pass reads them again) and its output planes.
		read := 0
		for _, r := range p.Role {
			if r != season.RoleNone {
				read++
			}
		}
		if models[name].Kind != season.Composite {
			read *= 2
		}
		perPixel := 4 * (read + len(models[name].Outputs()))
		emit(map[string]any{"model": name, "k": p.Model.Harmonics, "ms": med, "min_ms": lo, "max_ms": hi,
			"series_per_s": float64(P) / (med / 1e3), "first_run_ms": jit.Seconds() * 1e3,
			"memory_ceiling_series_per_s": ceil.DeviceCopy * 1e9 / float64(perPixel)})
	}
	// Correctness on the bench cube: a sample of pixels against the
	// float64 reference.
	for _, name := range names {
		if name == "anomaly" {
			continue // seasontest bounds its confidence as a MOSUM's (GPU-NOTES.md)
		}
		p, _ := season.NewPlan(models[name], cube.Dates)
		out := make([][]float32, len(p.Model.Outputs()))
		for i := range out {
			out[i] = make([]float32, P)
		}
		if _, err := c.Run(p, out); err != nil {
			t.Fatal(err)
		}
		sample := season.Cube{Dates: cube.Dates, Pixels: 4096, Values: make([]float32, T*4096)}
		idx := make([]int, 4096)
		for i := range idx {
			idx[i] = (i * 1031) % P
		}
		j := season.NewJob(p, sample)
		for tt := range T {
			for i, px := range idx {
				sample.Values[tt*4096+i] = cube.Values[tt*P+px]
			}
		}
		for o := range out {
			for i, px := range idx {
				j.Out[o][i] = out[o][px]
			}
		}
		if _, err := seasontest.Check(j, season.Ref(j)); err != nil {
			t.Errorf("%s on the bench cube: %v", name, err)
		}
	}
}

// spread is the median, least and greatest of xs.
func spread(xs []float64) (med, lo, hi float64) {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2], s[0], s[len(s)-1]
}
