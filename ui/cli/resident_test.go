package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// canopy bench --resident --json prints one line per backend and step,
// then the agreement of each session with the first host session's.
func TestBenchResidentJSON(t *testing.T) {
	code, out, e := run(t, "bench", "--resident", "--size", "97x61", "--view", "40x30", "--backends", "c,go-parallel", "--repeat", "2", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, e)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 9 {
		t.Fatalf("want 9 lines (2 backends x 4 steps, the agreement), got %d: %q", len(lines), out)
	}
	steps := map[string]int{}
	for _, l := range lines[:8] {
		var r ResidentStep
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		steps[r.Step]++
		if r.Width != 97 || r.Height != 61 || r.View != "40x30" || r.Repeat != 2 || !(r.Total.Median > 0) || r.Total.Min > r.Total.Max {
			t.Errorf("bad line %s", l)
		}
		if r.Step == "first_view" && !(r.Index.Median > 0 && r.Stats.Median > 0 && r.Render.Median > 0) {
			t.Errorf("first view without its phases: %s", l)
		}
	}
	for _, s := range []string{"first_view", "index_change", "ramp_change", "zoom_pan"} {
		if steps[s] != 2 {
			t.Errorf("step %s: %d lines", s, steps[s])
		}
	}
	var a ResidentAgreement
	if err := json.Unmarshal([]byte(lines[8]), &a); err != nil {
		t.Fatal(err)
	}
	if a.Step != "agreement" || a.Backend != "go-parallel" || a.Reference != "c" || !a.Histogram || !a.Classes || a.ViewMaxLevels != 0 {
		t.Errorf("agreement %s", lines[8])
	}
}

func TestBenchResidentUsage(t *testing.T) {
	for _, args := range [][]string{
		{"bench", "--resident", "--repeat", "0"},
		{"bench", "--resident", "--view", "wide"},
		{"bench", "--resident", "--backends", "nosuch"},
	} {
		if code, _, _ := run(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}

// canopy bench --resident with gl: its session on the card (llvmpipe in
// CI) agrees with the c backend's host session: histogram, classes,
// min/max exact, mean and std within 1e-6, the same view.
func TestBenchResidentGL(t *testing.T) {
	glOrSkip(t)
	code, out, e := run(t, "bench", "--resident", "--size", "301x173", "--view", "64x48", "--backends", "gl,c", "--repeat", "1", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, e)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 9 {
		t.Fatalf("want 9 lines (2 backends x 4 steps, the agreement), got %d: %q", len(lines), out)
	}
	gl := 0
	for _, l := range lines[:8] {
		var r ResidentStep
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		if r.Backend == "gl" {
			gl++
			if r.Step == "first_view" && !(r.Upload.Median > 0 && r.Index.Median > 0 && r.Stats.Median > 0 && r.Render.Median > 0) {
				t.Errorf("gl's first view without its phases: %s", l)
			}
		}
	}
	if gl != 4 {
		t.Errorf("%d gl lines, want 4: %q", gl, out)
	}
	var a ResidentAgreement
	if err := json.Unmarshal([]byte(lines[8]), &a); err != nil {
		t.Fatal(err)
	}
	if a.Step != "agreement" || a.Backend != "gl" || a.Reference != "c" || !a.Valid || !a.Histogram || !a.Classes || !a.MinMax ||
		a.MeanRelErr > 1e-6 || a.StdRelErr > 1e-6 || a.ViewMaxLevels > 1 {
		t.Errorf("agreement %s", lines[8])
	}
}
