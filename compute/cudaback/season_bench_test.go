package cudaback

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

// TestSeasonBench times the season kernels on the GPU when
// CANOPY_SEASON_DIR names the directory where bench/season wrote its cube
// (cube.f32, dates.txt: bench/season/gpu does it): the cube is uploaded
// once as stored (timed several times, beside the pinned host-to-device
// and device copy ceilings), then each model's kernel alone is timed with
// CUDA events, REPEAT (10) times after a first run that compiles it. One
// JSON line per case: median, min and max milliseconds, pixel series per
// second, and the memory ceiling (the device copy bandwidth over the bytes
// each pixel reads and writes). The outputs of a sample of pixels are
// checked against the float64 reference.
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
	b := New()
	defer b.Close()
	info := b.Info()
	if !info.Available {
		t.Fatalf("no CUDA GPU: %s", info.Reason)
	}
	T, P := len(cube.Dates), cube.Pixels
	emit := func(v map[string]any) {
		v["peer"], v["dates"], v["pixels"], v["device"] = "canopy cuda kernel", T, P, info.Device
		line, _ := json.Marshal(v)
		fmt.Println(string(line))
	}
	ceil, err := b.Ceilings(256 << 20)
	if err != nil {
		t.Fatal(err)
	}
	var ups []float64
	var setup time.Duration
	for range max(3, repeat/2) {
		c, tm, err := b.OpenCube(cube)
		if err != nil {
			t.Fatal(err)
		}
		ups = append(ups, tm.Upload.Seconds()*1e3)
		setup = tm.Setup
		c.Close()
	}
	med, lo, hi := seasonbench.Spread(ups)
	bytes := 4 * len(cube.Values)
	emit(map[string]any{"model": "upload", "ms": med, "min_ms": lo, "max_ms": hi, "bytes": bytes, "setup_ms": setup.Seconds() * 1e3,
		"gb_per_s": float64(bytes) / (med / 1e3) / 1e9, "h2d_ceiling_gb_per_s": ceil.H2D, "device_copy_gb_per_s": ceil.DeviceCopy})
	c, _, err := b.OpenCube(cube)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, bm := range models {
		p, err := season.NewPlan(bm.Model, cube.Dates)
		if err != nil {
			t.Fatal(err)
		}
		t1 := time.Now()
		if _, err := c.Compute(p); err != nil { // JIT and warm-up
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
			"series_per_s": float64(P) / (med / 1e3), "first_run_ms": first.Seconds() * 1e3,
			"memory_ceiling_series_per_s": ceil.DeviceCopy * 1e9 / float64(seasonbench.BytesPerPixel(p))})
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
