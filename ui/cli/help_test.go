package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"canopy/compute"
)

// TestEveryCommandHelp: `canopy CMD --help` (and -h, and `canopy help
// CMD`) starts with the command's synopsis, then two examples of it, then
// its flags, on stdout, exit 0.
func TestEveryCommandHelp(t *testing.T) {
	cmds := []string{"backends", "indices", "scene", "compute", "zonal", "change", "batch", "bench", "fake", "warp", "search", "stack", "composite", "monitor"}
	for _, c := range cmds {
		for _, args := range [][]string{{c, "--help"}, {c, "-h"}, {"help", c}} {
			code, out, e := run(t, args...)
			if code != 0 || e != "" {
				t.Errorf("%v: exit %d, stderr %q", args, code, e)
				continue
			}
			if !strings.HasPrefix(out, "usage: canopy "+c) {
				t.Errorf("%v: starts %q", args, out[:min(len(out), 60)])
			}
			_, ex, ok := strings.Cut(out, "\n\nexamples:\n")
			if !ok {
				t.Errorf("%v: no examples in %q", args, out)
				continue
			}
			lines := strings.Split(ex, "\n")
			if len(lines) < 4 || !strings.HasPrefix(lines[0], "  canopy "+c) || !strings.HasPrefix(lines[1], "  canopy "+c) || lines[2] != "" || lines[3] != "flags:" {
				t.Errorf("%v: examples then flags, got %q", args, lines[:min(len(lines), 4)])
			}
		}
	}
	// Every command that reads bands lists the radiometry flags.
	for _, c := range []string{"compute", "zonal", "change", "batch"} {
		_, out, _ := run(t, c, "--help")
		for _, f := range []string{"-bands", "-scale", "-raw"} {
			if !strings.Contains(out, "\n  "+f+" ") && !strings.Contains(out, "\n  "+f+"\n") {
				t.Errorf("%s --help does not list %s", c, f)
			}
		}
	}
	// bench's help names --resident, and --resident has its own.
	if _, out, _ := run(t, "bench", "--help"); !strings.Contains(out, "-resident") || !strings.Contains(out, "canopy bench --resident") {
		t.Errorf("bench --help does not tell of --resident:\n%s", out)
	}
	if code, out, _ := run(t, "bench", "--resident", "--help"); code != 0 || !strings.HasPrefix(out, "usage: canopy bench --resident") || !strings.Contains(out, "-view") {
		t.Errorf("bench --resident --help: exit %d\n%s", code, out)
	}
	if _, out, _ := run(t, "help"); !strings.Contains(out, "canopy bench --resident") {
		t.Errorf("the usage does not list bench --resident")
	}
}

// TestBenchOtherIndexOnGL: `canopy bench --backends gl --index evi` times
// every gl mode with EVI, verified (it once exited 2: "gl:host times NDVI
// only").
func TestBenchOtherIndexOnGL(t *testing.T) {
	glOrSkip(t)
	code, out, e := run(t, "bench", "--size", "40x24", "--backends", "gl", "--index", "evi", "--repeat", "1", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, e)
	}
	n := 0
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var r compute.BenchResult
		if err := json.Unmarshal([]byte(l), &r); err != nil || !r.Verified || r.Backend != "gl" {
			t.Errorf("line %q: %v", l, err)
		}
		n++
	}
	if n < 2 {
		t.Errorf("%d gl modes timed, want each of them:\n%s", n, out)
	}
}

// TestUnknownRoleSuggests: a typo in a role names the role meant.
func TestUnknownRoleSuggests(t *testing.T) {
	code, _, e := run(t, "compute", "--band", "rde=a.tif", "--nir", "b.tif")
	if code != 2 || !strings.Contains(e, `unknown role "rde": did you mean "red"?`) {
		t.Errorf("exit %d: %s", code, e)
	}
}
