package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"canopy/compute/geotiff"
	"canopy/compute/stack"
)

// TestShardUnion: composite with --shard I/N for N = 1, 2, 3 and monitor
// for N = 2, 3, 4 (the grid is 7 × 1100 pixels, three rows of tiles: one
// part of 4 is empty) write parts whose pixels are, bit for bit, the windows of the
// whole run, and which GDAL (the reference reader) mosaics by their
// georeferencing into the whole, bit for bit.
func TestShardUnion(t *testing.T) {
	dir := t.TempDir()
	const w, h = 7, 1100
	dates := 14
	if testing.Short() {
		dates = 6
	}
	paths, _ := seasonStack(t, dir, w, h, dates, time.Date(2019, 6, 1, 0, 0, 0, 0, time.UTC))
	gdal := true
	for _, tool := range []string{"gdalbuildvrt", "gdal_translate"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CANOPY_EXPECT_GDAL") == "1" {
				t.Fatalf("%s not found but CANOPY_EXPECT_GDAL=1", tool)
			}
			gdal = false
		}
	}
	for _, c := range []struct {
		name  string
		args  []string
		parts []int
	}{
		{"composite", []string{"composite", "--period", "2019-03/2019-09", "--stat", "p90"}, []int{1, 2, 3}},
		{"monitor", []string{"monitor", "--history", "2019-01/2019-05", "--monitor", "2019-06/", "--harmonics", "1", "--trend=false"}, []int{2, 3, 4}},
	} {
		if testing.Short() {
			// The race detector's run (-short): one split, of the
			// composite; the dealing's concurrency is compute/season's.
			if c.name != "composite" {
				continue
			}
			c.parts = []int{2}
		}
		base := append(append([]string(nil), c.args...), "--backend", "c")
		base = append(base, paths...)
		whole := filepath.Join(dir, c.name+".tif")
		if code, _, e := run(t, append(base, "--tif", whole)...); code != 0 {
			t.Fatalf("%s: exit %d: %s", c.name, code, e)
		}
		want := loadAll(t, whole)
		if n := countValued(want[0]); n == 0 {
			t.Fatalf("%s: the whole run has no value", c.name)
		}
		for _, n := range c.parts {
			out := filepath.Join(dir, fmt.Sprintf("%s-%d.tif", c.name, n))
			var parts []string
			for i := range n {
				code, o, e := run(t, append(base, "--tif", out, "--shard", fmt.Sprintf("%d/%d", i, n), "--json")...)
				if code != 0 {
					t.Fatalf("%s part %d/%d: exit %d: %s", c.name, i, n, code, e)
				}
				var rep seasonReport
				if err := json.Unmarshal([]byte(o), &rep); err != nil {
					t.Fatal(err)
				}
				y0, y1 := stack.Part(h, i, n)
				if rep.Part != fmt.Sprintf("%d/%d", i, n) || len(rep.Rows) != 2 || rep.Rows[0] != y0 || rep.Rows[1] != y1 || rep.Width != w || rep.Height != h {
					t.Fatalf("%s part %d/%d: report %+v", c.name, i, n, rep)
				}
				name := partName(out, i, n)
				if y0 == y1 {
					if rep.Tif != "" {
						t.Errorf("%s: the empty part %d/%d wrote %s", c.name, i, n, rep.Tif)
					}
					if _, err := os.Stat(name); err == nil {
						t.Errorf("%s: the empty part %d/%d left %s", c.name, i, n, name)
					}
					continue
				}
				if rep.Tif != name {
					t.Fatalf("%s part %d/%d wrote %q, want %q", c.name, i, n, rep.Tif, name)
				}
				parts = append(parts, name)
				got := loadAll(t, name)
				for b := range want {
					if len(got[b]) != w*(y1-y0) {
						t.Fatalf("%s part %d/%d band %d: %d pixels, want %d", c.name, i, n, b+1, len(got[b]), w*(y1-y0))
					}
					for p, v := range got[b] {
						if u := want[b][y0*w+p]; math.Float32bits(v) != math.Float32bits(u) {
							t.Fatalf("%s part %d/%d band %d pixel (%d, %d): %v, the whole run %v", c.name, i, n, b+1, p%w, y0+p/w, v, u)
						}
					}
				}
			}
			if gdal {
				if a, b := gdalRaw(t, dir, parts...), gdalRaw(t, dir, whole); !bytes.Equal(a, b) {
					t.Errorf("%s: GDAL's mosaic of the %d parts is not the whole run (%d and %d bytes)", c.name, n, len(a), len(b))
				}
			}
		}
	}
}

func countValued(v []float32) int {
	n := 0
	for _, x := range v {
		if x == x {
			n++
		}
	}
	return n
}

// gdalRaw is what GDAL reads of the files placed by their georeferencing
// on one grid (gdalbuildvrt, no nodata), as raw samples (ENVI), with the
// geotransform it gives them.
func gdalRaw(t *testing.T, dir string, files ...string) []byte {
	t.Helper()
	vrt, err := os.CreateTemp(dir, "m-*.vrt")
	if err != nil {
		t.Fatal(err)
	}
	vrt.Close()
	raw := strings.TrimSuffix(vrt.Name(), ".vrt") + ".raw"
	for _, c := range [][]string{
		append([]string{"gdalbuildvrt", "-q", "-overwrite", "-srcnodata", "None", "-vrtnodata", "None", vrt.Name()}, files...),
		{"gdal_translate", "-q", "-of", "ENVI", vrt.Name(), raw},
	} {
		if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v: %s", c, err, out)
		}
	}
	b, err := os.ReadFile(raw)
	if err != nil {
		t.Fatal(err)
	}
	f, err := geotiff.Open(files[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	hdr, _ := os.ReadFile(strings.TrimSuffix(raw, ".raw") + ".hdr")
	// The map info line: where GDAL puts the mosaic's corner.
	for _, l := range strings.Split(string(hdr), "\n") {
		if strings.HasPrefix(l, "map info") || strings.HasPrefix(l, "lines") || strings.HasPrefix(l, "samples") {
			b = append(b, l...)
		}
	}
	return b
}

// TestShardUsage: a bad --shard is one line naming it, and outputs that
// need the whole area are refused with a part.
func TestShardUsage(t *testing.T) {
	dir := t.TempDir()
	paths, _ := seasonStack(t, dir, 4, 4, 3, time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	out := filepath.Join(dir, "o.tif")
	t.Setenv("SLURM_ARRAY_TASK_ID", "")
	t.Setenv("JOB_COMPLETION_INDEX", "")
	for _, c := range []struct {
		shard string
		want  string
		extra []string
	}{
		{"3/3", "--shard", nil},
		{"-1/2", "--shard", nil},
		{"1/0", "--shard", nil},
		{"x", "--shard", nil},
		{"1/2/3", "--shard", nil},
		{"env", "SLURM_ARRAY_TASK_ID", nil},
		{"0/2", "--png", []string{"--png", filepath.Join(dir, "a.png")}},
	} {
		args := append([]string{"monitor", paths[0], "--history", "2019/2019", "--monitor", "2020/", "--tif", out, "--shard", c.shard}, c.extra...)
		code, _, e := run(t, args...)
		if code != 2 || !strings.Contains(e, c.want) || strings.Count(strings.TrimSpace(e), "\n") != 0 {
			t.Errorf("--shard %s: exit %d, %q (want one line naming %s)", c.shard, code, e, c.want)
		}
		code, _, e = run(t, "composite", paths[0], "--period", "2019/2019", "--tif", out, "--shard", c.shard)
		if c.extra == nil && (code != 2 || !strings.Contains(e, c.want)) {
			t.Errorf("composite --shard %s: exit %d, %q", c.shard, code, e)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a refused run wrote its output")
	}
}
