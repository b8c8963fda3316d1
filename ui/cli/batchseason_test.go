package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestBatchSeasonParts: `canopy batch --shard I/3 composite ...` run for
// the three parts (one empty) in any order (as a Slurm array's tasks finish) writes the
// parts, and the task that finishes the last one merges them into the
// file the whole run writes, byte for byte; a re-run skips every part and
// the merge; Slurm's variables pick the part with --shard env.
func TestBatchSeasonParts(t *testing.T) {
	dir := t.TempDir()
	// 600 rows: two bands of 512 rows, so that one part of three is empty.
	paths, _ := seasonStack(t, dir, 9, 600, 6, time.Date(2019, 2, 1, 0, 0, 0, 0, time.UTC))
	job := append([]string{"composite", "--period", "2019-01/2019-03", "--stat", "max-ndvi", "--backend", "c"}, paths...)
	whole := filepath.Join(dir, "whole.tif")
	if code, _, e := run(t, append(job, "--tif", whole)...); code != 0 {
		t.Fatalf("the whole run: exit %d: %s", code, e)
	}
	if w := loadAll(t, whole); countValued(w[2]) != 9*600 {
		t.Fatal("the whole run has no date of the maximum somewhere")
	}
	out := filepath.Join(dir, "out")
	for k, i := range []int{2, 0, 1} {
		args := append([]string{"batch", "--out", out, "--shard", fmt.Sprintf("%d/3", i)}, job...)
		if i == 1 {
			// The last through Slurm's array variables.
			t.Setenv("SLURM_ARRAY_TASK_ID", "11")
			t.Setenv("SLURM_ARRAY_TASK_MIN", "10")
			t.Setenv("SLURM_ARRAY_TASK_COUNT", "3")
			args = append([]string{"batch", "--out", out, "--shard", "env"}, job...)
		}
		code, o, e := run(t, append(args, "--tif", "alerts.tif")...)
		if code != 0 {
			t.Fatalf("part %d: exit %d: %s", i, code, e)
		}
		merged := strings.Contains(o, "merged 3 parts")
		if merged != (k == 2) {
			t.Errorf("part %d (%d-th to finish): %q", i, k+1, o)
		}
		if exists(partName(filepath.Join(out, "alerts.tif"), i, 3)) != (i > 0) {
			t.Errorf("part %d: a file %v, want one for parts 1 and 2 (part 0 is empty)", i, i > 0)
		}
	}
	a, _ := os.ReadFile(whole)
	b, err := os.ReadFile(filepath.Join(out, "alerts.tif"))
	if err != nil || len(a) == 0 || !bytes.Equal(a, b) {
		t.Fatalf("the merged parts (%d bytes, %v) are not the whole run's file (%d bytes)", len(b), err, len(a))
	}
	// A re-run: its part skipped, the merge done already.
	code, o, e := run(t, append(append([]string{"batch", "--out", out, "--shard", "0/3"}, job...), "--tif", "alerts.tif")...)
	if code != 0 || !strings.Contains(o, "skipped") || !strings.Contains(o, "merged already") {
		t.Errorf("re-run: exit %d, %q %s", code, o, e)
	}
	log, _ := os.ReadFile(filepath.Join(out, "batch.jsonl"))
	if n := strings.Count(string(log), `"status":"done"`); n != 4 {
		t.Errorf("batch.jsonl has %d done lines, want 3 parts and the merge:\n%s", n, log)
	}
	// A batch flag before the job, and a job without --tif.
	for _, c := range []struct {
		args []string
		want string
	}{
		{append([]string{"batch", "--out", out, "--index", "ndmi"}, append(job, "--tif", "x.tif")...), "--index"},
		{append([]string{"batch", "--out", out, "--shard", "0/2"}, job...), "--tif"},
		{append([]string{"batch", "--out", out, "--shard", "0/2"}, append(job, "--tif", "x.tif", "--png", "x.png")...), "--png"},
		{append([]string{"batch", "--out", out, "--shard", "2/2"}, append(job, "--tif", "x.tif")...), "--shard"},
	} {
		code, _, e := run(t, c.args...)
		if code != 2 || !strings.Contains(e, c.want) {
			t.Errorf("%v: exit %d, %q (want a usage line naming %s)", c.args[len(c.args)-3:], code, e, c.want)
		}
	}
}
