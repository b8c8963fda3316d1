package cli

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"canopy/compute/raster"
)

func readBatchLog(t *testing.T, dir string) []batchLine {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "batch.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ls []batchLine
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var l batchLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("%v in %q", err, sc.Text())
		}
		ls = append(ls, l)
	}
	return ls
}

func TestBatchDoneSkippedFailedAndEqualToCompute(t *testing.T) {
	in := t.TempDir()
	var scenes []string
	for i, x0 := range []float64{600000, 610000, 620000} {
		p := filepath.Join(in, "flight"+string(rune('a'+i))+".tif")
		date(t, p, 24, 16, x0, uint16(100*i), 2, 2, 8, 8)
		scenes = append(scenes, p)
	}
	bad := filepath.Join(in, "broken.tif")
	os.WriteFile(bad, []byte("II*\x00not a tiff at all"), 0o644)
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, e := run(t, "batch", "--out", out, "--index", "ndvi,savi", "--raw", "--progress", "off", in)
	if code != 1 || !strings.Contains(e, "1 of 4 scenes failed") {
		t.Fatalf("exit %d: %s %s", code, stdout, e)
	}
	ls := readBatchLog(t, out)
	status := map[string]string{}
	for _, l := range ls {
		status[l.Scene] = l.Status
	}
	for _, s := range scenes {
		if status[s] != "done" {
			t.Errorf("%s: %q", s, status[s])
		}
		// The output equals canopy compute on the same scene.
		want := filepath.Join(t.TempDir(), "c.tif")
		if code, _, e := run(t, "compute", "--scene", s, "--index", "ndvi,savi", "--raw", "--tif", want); code != 0 {
			t.Fatal(e)
		}
		for b := 1; b <= 2; b++ {
			g, err1 := raster.Load(outputName(out, s) + ":" + string(rune('0'+b)))
			w, err2 := raster.Load(want + ":" + string(rune('0'+b)))
			if err1 != nil || err2 != nil || len(g.Data) != len(w.Data) {
				t.Fatalf("%v %v", err1, err2)
			}
			for i := range g.Data {
				if g.Data[i] != w.Data[i] && !(g.Data[i] != g.Data[i] && w.Data[i] != w.Data[i]) {
					t.Fatalf("%s band %d pixel %d: batch %g, compute %g", s, b, i, g.Data[i], w.Data[i])
				}
			}
		}
	}
	if status[bad] != "failed" {
		t.Errorf("broken scene: %q", status[bad])
	}
	// A re-run skips every scene that is done, and the broken one fails alone again.
	code, _, _ = run(t, "batch", "--out", out, "--index", "ndvi,savi", "--raw", "--progress", "off", in)
	if code != 1 {
		t.Errorf("re-run exit %d", code)
	}
	ls = readBatchLog(t, out)[len(ls):]
	for _, l := range ls {
		want := "skipped"
		if l.Scene == bad {
			want = "failed"
		}
		if l.Status != want {
			t.Errorf("re-run %s: %s, want %s", l.Scene, l.Status, want)
		}
	}
	// Other settings are another fingerprint: computed again.
	code, _, _ = run(t, "batch", "--out", out, "--index", "ndvi", "--progress", "off", scenes[0])
	if l := readBatchLog(t, out); code != 0 || l[len(l)-1].Status != "done" {
		t.Errorf("new settings: exit %d, %+v", code, l[len(l)-1])
	}
}

func TestBatchShardsAreDisjointAndCover(t *testing.T) {
	var args []string
	for i := range 7 {
		args = append(args, filepath.Join(t.TempDir(), "missing"+string(rune('a'+i))+".tif"))
	}
	all, err := expandScenes(args, "")
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	for i := range 3 {
		out := t.TempDir()
		run(t, append([]string{"batch", "--out", out, "--shard", string(rune('0'+i)) + "/3", "--progress", "off"}, args...)...)
		for _, l := range readBatchLog(t, out) {
			if slices.Contains(seen, l.Scene) {
				t.Errorf("%s in two shards", l.Scene)
			}
			seen = append(seen, l.Scene)
			if l.Shard != string(rune('0'+i))+"/3" {
				t.Errorf("line %+v in shard %d", l, i)
			}
		}
	}
	slices.Sort(seen)
	if !slices.Equal(seen, all) {
		t.Errorf("shards cover %v, want %v", seen, all)
	}
}

func TestParseShard(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, c := range []struct {
		spec string
		env  map[string]string
		i, n int
		ok   bool
	}{
		{"", nil, 0, 1, true},
		{"2/5", nil, 2, 5, true},
		{"5/5", nil, 0, 0, false},
		{"x", nil, 0, 0, false},
		{"env", map[string]string{"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_COUNT": "4"}, 3, 4, true},
		{"env", map[string]string{"SLURM_ARRAY_TASK_ID": "11", "SLURM_ARRAY_TASK_MIN": "10", "SLURM_ARRAY_TASK_COUNT": "4"}, 1, 4, true},
		{"env", map[string]string{"JOB_COMPLETION_INDEX": "2", "CANOPY_SHARDS": "3"}, 2, 3, true},
		{"env", map[string]string{"JOB_COMPLETION_INDEX": "2"}, 0, 0, false},
		{"env", nil, 0, 0, false},
	} {
		i, n, err := parseShard(c.spec, env(c.env))
		if (err == nil) != c.ok || (c.ok && (i != c.i || n != c.n)) {
			t.Errorf("%q %v: %d/%d %v", c.spec, c.env, i, n, err)
		}
	}
}
