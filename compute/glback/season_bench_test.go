package glback

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"canopy/compute/season"
	"canopy/compute/season/seasonbench"
)

// TestSeasonBench times the season shaders when CANOPY_SEASON_DIR names
// the directory where bench/season wrote its cube (bench/season/gpu does
// it), as cudaback's TestSeasonBench does: the cube uploaded once, each
// model's dispatch alone timed (GL_TIMESTAMP, else the wall clock around
// glFinish) REPEAT (10) times after a first run that compiles the shader.
// One JSON line per case; a sample of pixels checked against the float64
// reference.
func TestSeasonBench(t *testing.T) {
	dir := os.Getenv("CANOPY_SEASON_DIR")
	if dir == "" {
		t.Skip("CANOPY_SEASON_DIR is not set (bench/season/gpu sets it)")
	}
	cube, models, err := seasonbench.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	repeat := 10
	if v, err := strconv.Atoi(os.Getenv("REPEAT")); err == nil && v > 0 {
		repeat = v
	}
	b := newBackend(t)
	info := b.Info()
	T, P := len(cube.Dates), cube.Pixels
	emit := func(v map[string]any) {
		v["peer"], v["dates"], v["pixels"], v["device"] = "canopy gl kernel", T, P, info.Device
		line, _ := json.Marshal(v)
		fmt.Println(string(line))
	}
	c, tm, err := b.OpenCube(cube)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	bytes := 4 * len(cube.Values)
	emit(map[string]any{"model": "upload", "ms": tm.Upload.Seconds() * 1e3, "bytes": bytes, "gb_per_s": float64(bytes) / tm.Upload.Seconds() / 1e9})
	for _, bm := range models {
		p, err := season.NewPlan(bm.Model, cube.Dates)
		if err != nil {
			t.Fatal(err)
		}
		t1 := time.Now()
		if _, err := c.Compute(p); err != nil {
			t.Fatalf("%s: %v", bm.Name, err)
		}
		first := time.Since(t1)
		var ms []float64
		for range repeat {
			k, err := c.Compute(p)
			if err != nil {
				t.Fatal(err)
			}
			ms = append(ms, k.Seconds()*1e3)
		}
		med, lo, hi := seasonbench.Spread(ms)
		emit(map[string]any{"model": bm.Name, "harmonics": p.Model.Harmonics, "ms": med, "min_ms": lo, "max_ms": hi,
			"series_per_s": float64(P) / (med / 1e3), "first_run_ms": first.Seconds() * 1e3})
		out := make([][]float32, len(p.Model.Outputs()))
		for i := range out {
			out[i] = make([]float32, P)
		}
		if _, err := c.Run(p, out); err != nil {
			t.Fatal(err)
		}
		if err := seasonbench.CheckSample(p, cube, out, 4096); err != nil {
			t.Errorf("%s on the bench cube: %v", bm.Name, err)
		}
	}
}
