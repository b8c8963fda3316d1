//go:build unix

package hostile

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/paulmach/orb"

	"canopy/compute/outfile"
	"canopy/compute/vector"
	"canopy/compute/zonal"
)

// The output side of the corpus (issue 26): zonal statistics over stands
// that are hostile to the rasteriser, and the outputs Canopy writes
// (GeoPackage, CSV, the batch journal) put on paths that must not be
// replaced. Each case runs in a process of its own, as the raster corpus
// does: no panic, no hang, at most 1 GiB and 10 s, the refusal words when
// it must be refused, every protected file as it was, nothing left behind.

// outCase is one case: setup makes its files in dir and returns the paths
// that must not change; run is what the child does (a nil error is a
// success); want, when set, is a piece of the error it must give.
type outCase struct {
	name  string
	setup func(dir string) (protected []string, err error)
	run   func(dir string) error
	want  string
}

const drone = 0.05 // a drone orthomosaic's 5 cm pixels

func square(cx, cy, half float64) orb.Polygon {
	return orb.Polygon{{{cx - half, cy + half}, {cx + half, cy + half}, {cx + half, cy - half}, {cx - half, cy - half}, {cx - half, cy + half}}}
}

// zonalCase runs zonal.Compute over an n×n plane of pixel size px (origin
// 500000, 6000000) with the stands, and checks every result is finite.
func zonalCase(n int, px float64, stands ...orb.Geometry) func(string) error {
	return func(string) error {
		p := &zonal.Plane{W: n, H: n, Data: make([]float32, n*n)}
		for i := range p.Data {
			p.Data[i] = float32(i%11) / 10
		}
		var st []zonal.Stand
		for i, g := range stands {
			st = append(st, zonal.Stand{ID: fmt.Sprint(i), Geom: g})
		}
		res, _, err := zonal.Compute(p, [6]float64{500000, px, 0, 6000000, 0, -px}, st, zonal.Options{Classes: zonal.DefaultClasses()})
		if err != nil {
			return err
		}
		for _, r := range res {
			if math.IsNaN(r.Pixels) || math.IsInf(r.Pixels, 0) || r.Pixels < 0 || r.Pixels > float64(n*n)*(1+1e-9) {
				return fmt.Errorf("stand %s: %v pixels on a raster of %d", r.ID, r.Pixels, n*n)
			}
		}
		return nil
	}
}

func ring(cx, cy, r float64, k int) orb.Ring {
	out := make(orb.Ring, k+1)
	for i := range k {
		a := 2 * math.Pi * float64(i) / float64(k)
		out[i] = orb.Point{cx + r*math.Cos(a), cy + r*math.Sin(a)}
	}
	out[k] = out[0]
	return out
}

func standsLayer(dir string) *vector.Layer {
	return &vector.Layer{Name: "stands", Path: filepath.Join(dir, "stands.gpkg"), CRS: "EPSG:32632",
		Features: []vector.Feature{{FID: 1, Geom: square(500050, 5999950, 20)}}}
}

func writeGPKG(dir, path string) error {
	l := standsLayer(dir)
	return vector.WriteGPKG(path, l, []vector.Column{{Name: "mean", Type: "REAL"}}, [][]any{{0.5}})
}

// hostilePaths are the things an output path may be that must not be
// replaced or written through.
func hostilePaths() []struct {
	kind string
	make func(p, victim string) error
	want string
} {
	return []struct {
		kind string
		make func(p, victim string) error
		want string
	}{
		{"symlink", func(p, v string) error { return os.Symlink(v, p) }, "symbolic link"},
		{"dangling-symlink", func(p, v string) error { return os.Symlink(v+".missing", p) }, "symbolic link"},
		{"fifo", func(p, _ string) error { return syscall.Mkfifo(p, 0o644) }, "named pipe"},
		{"folder", func(p, _ string) error { return os.Mkdir(p, 0o755) }, "directory"},
		{"device", func(p, _ string) error { return syscall.Mknod(p, syscall.S_IFCHR|0o666, 1<<8|3) }, "device"},
		{"socket", func(p, _ string) error {
			fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
			if err != nil {
				return err
			}
			defer syscall.Close(fd)
			return syscall.Bind(fd, &syscall.SockaddrUnix{Name: p})
		}, "socket"},
	}
}

func outCases() []outCase {
	const x, y = 500050.0, 5999950.0 // the centre of a 100 m raster of 2000² drone pixels
	var cs []outCase
	add := func(name string, run func(string) error) {
		cs = append(cs, outCase{name: "zonal/" + name, run: run})
	}
	big := 1e300
	add("far-1e300-east", zonalCase(200, 10, orb.Polygon{{{500100, 5999900}, {big, 5999900}, {big, 5999800}, {500100, 5999800}, {500100, 5999900}}}))
	add("far-1e300-all", zonalCase(200, 10, square(0, 0, big)))
	add("far-1e300-spike", zonalCase(200, 10, orb.Polygon{{{500000, 5999990}, {big, -big}, {500010, 5999980}, {500000, 5999990}}}))
	add("far-1e300-outside", zonalCase(200, 10, square(big, big, 1e290)))
	add("far-minus-1e300", zonalCase(200, 10, orb.Polygon{{{-big, -big}, {500100, 5999900}, {-big, big}, {-big, -big}}}))
	add("max-float64", zonalCase(200, 10, orb.Polygon{{{-math.MaxFloat64, 5999900}, {math.MaxFloat64, 5999900}, {math.MaxFloat64, 5999800}, {-math.MaxFloat64, 5999900}}}))
	add("max-float64-drone", zonalCase(200, drone, square(0, 0, math.MaxFloat64)))
	cs = append(cs, outCase{name: "zonal/smallest-pixels", run: zonalCase(200, 1e-300, square(500000, 6000000, 1e300)), want: "singular"})
	add("nan-vertex", zonalCase(200, 10, orb.Polygon{{{500000, 6000000}, {math.NaN(), 5999900}, {500100, 5999900}, {500000, 6000000}}}))
	add("inf-vertex", zonalCase(200, 10, orb.Polygon{{{500000, 6000000}, {math.Inf(1), 5999900}, {500100, 5999900}, {500000, 6000000}}}))
	add("5km-stand-5cm-raster", zonalCase(2000, drone, square(x, y, 2500)))
	add("50km-stand-5cm-raster", zonalCase(2000, drone, square(x, y, 25000)))
	add("5000km-stand-5cm-raster", zonalCase(2000, drone, square(x, y, 2.5e6)))
	add("5km-multipolygon-5cm-raster", zonalCase(2000, drone, orb.MultiPolygon{square(x, y, 2500), square(x+10, y, 2500), square(x, y+10, 2500)}))
	add("1e6-vertex-ring", zonalCase(500, 0.2, orb.Polygon{ring(x, y, 40, 1_000_000)}))
	add("1e6-vertex-ring-far", zonalCase(500, 0.2, orb.Polygon{ring(x, y, 1e9, 1_000_000)}))
	add("degenerate-point-ring", zonalCase(200, 10, orb.Polygon{{{x, y}, {x, y}, {x, y}, {x, y}}}))
	add("collinear-ring", zonalCase(200, 10, orb.Polygon{{{500000, 6000000}, {500100, 5999900}, {500200, 5999800}, {500000, 6000000}}}))
	var holes orb.Polygon
	holes = append(holes, square(500050, 5999950, 45)[0])
	for i := range 10000 {
		holes = append(holes, square(500010+float64(i%100)*0.8, 5999990-float64(i/100)*0.8, 0.2)[0])
	}
	add("10000-holes", zonalCase(1000, 0.1, holes))
	var many []orb.Geometry
	for i := range 5000 {
		many = append(many, square(500000+float64(i%100), 6000000-float64(i/100)*2, 5))
	}
	add("5000-overlapping-stands", zonalCase(1000, 0.1, many...))

	// GeoPackage, CSV and journal outputs on paths that must not be
	// replaced.
	for _, h := range hostilePaths() {
		cs = append(cs, outCase{
			name: "gpkg/" + h.kind,
			setup: func(dir string) ([]string, error) {
				v := filepath.Join(dir, "victim.txt")
				if err := os.WriteFile(v, []byte("keep me\n"), 0o644); err != nil {
					return nil, err
				}
				return []string{v}, h.make(filepath.Join(dir, "out.gpkg"), v)
			},
			run:  func(dir string) error { return writeGPKG(dir, filepath.Join(dir, "out.gpkg")) },
			want: h.want,
		}, outCase{
			name: "csv-and-gpkg/" + h.kind,
			setup: func(dir string) ([]string, error) {
				v := filepath.Join(dir, "victim.txt")
				c := filepath.Join(dir, "stats.csv")
				os.WriteFile(c, []byte("an older table\n"), 0o644)
				if err := os.WriteFile(v, []byte("keep me\n"), 0o644); err != nil {
					return nil, err
				}
				return []string{v, c}, h.make(filepath.Join(dir, "out.gpkg"), v)
			},
			run: func(dir string) error {
				set := outfile.NewSet()
				defer set.Abort()
				w, err := set.Create(filepath.Join(dir, "stats.csv"))
				if err != nil {
					return err
				}
				w.Write([]byte("id,pixels\n1,2\n"))
				g, err := set.Create(filepath.Join(dir, "out.gpkg"))
				if err != nil {
					return err
				}
				if err := vector.WriteGPKGTo(g, standsLayer(dir), nil, [][]any{{}}); err != nil {
					return err
				}
				return set.Commit()
			},
			want: h.want,
		}, outCase{
			name: "journal/" + h.kind,
			setup: func(dir string) ([]string, error) {
				v := filepath.Join(dir, "victim.txt")
				if err := os.WriteFile(v, []byte("keep me\n"), 0o644); err != nil {
					return nil, err
				}
				return []string{v}, h.make(filepath.Join(dir, "batch.jsonl"), v)
			},
			run: func(dir string) error {
				f, err := outfile.OpenJournal(filepath.Join(dir, "batch.jsonl"))
				if err != nil {
					return err
				}
				defer f.Close()
				_, err = f.Write([]byte("{}\n"))
				return err
			},
			want: strings.Replace(h.want, "dangling-", "", 1),
		})
	}
	inputCase := func(name string, run func(dir, in string) error, want string) outCase {
		return outCase{
			name: name,
			setup: func(dir string) ([]string, error) {
				in := filepath.Join(dir, "stands.gpkg")
				if err := writeGPKG(dir, in); err != nil {
					return nil, err
				}
				link := filepath.Join(dir, "alias.gpkg")
				return []string{in}, os.Link(in, link)
			},
			run:  func(dir string) error { return run(dir, filepath.Join(dir, "stands.gpkg")) },
			want: want,
		}
	}
	cs = append(cs,
		inputCase("gpkg/over-its-own-stands", func(dir, in string) error { return writeGPKG(dir, in) }, "an input of this run"),
		inputCase("gpkg/over-a-hard-link-to-its-stands", func(dir, _ string) error { return writeGPKG(dir, filepath.Join(dir, "alias.gpkg")) }, "an input of this run"),
		inputCase("journal/over-an-input", func(dir, in string) error {
			_, err := outfile.OpenJournal(filepath.Join(dir, "alias.gpkg"), in)
			return err
		}, "an input of this run"),
	)
	return cs
}

// outReport is what a child says about its case.
type outReport struct {
	Err string `json:"err,omitempty"`
}

// TestOutputsChild runs one output case (started by TestOutputs).
func TestOutputsChild(t *testing.T) {
	name, dir := os.Getenv("HOSTILE_OUT_CASE"), os.Getenv("HOSTILE_OUT_DIR")
	if name == "" {
		t.Skip("run by TestOutputs")
	}
	lim := syscall.Rlimit{Cur: 4 << 30, Max: 4 << 30}
	syscall.Setrlimit(syscall.RLIMIT_AS, &lim)
	debug.SetMemoryLimit(maxRSS / 2)
	var rep outReport
	found := false
	for _, c := range outCases() {
		if c.name == name {
			found = true
			if err := c.run(dir); err != nil {
				rep.Err = err.Error()
			}
		}
	}
	if !found {
		rep.Err = "no case " + name
	}
	line, _ := json.Marshal(rep)
	fmt.Printf("OUTCASE %s\n", line)
	os.Exit(0)
}

func sum(p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		return "unreadable: " + err.Error()
	}
	h := sha256.Sum256(b)
	return fmt.Sprintf("%x", h[:8])
}

// TestOutputs runs every output case in a child process.
func TestOutputs(t *testing.T) {
	if testing.Short() {
		t.Skip("the output corpus takes a while (-short)")
	}
	cases := outCases()
	t.Logf("%d output cases", len(cases))
	var rss int64
	var fat, slow string
	var slowCPU time.Duration
	inCgroup := 0
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			var protected []string
			if c.setup != nil {
				p, err := c.setup(dir)
				if err != nil {
					if errors.Is(err, syscall.EPERM) {
						t.Skipf("setup: %v (a device node needs root)", err)
					}
					t.Fatalf("setup: %v", err)
				}
				protected = p
			}
			sums := map[string]string{}
			for _, p := range protected {
				sums[p] = sum(p)
			}
			before, _ := os.ReadDir(dir)
			ctx, cancel := context.WithTimeout(context.Background(), killAt)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestOutputsChild$", "-test.count=1")
			// Memory as the kernel enforces it, as for the inputs.
			cg := newCgroup(fmt.Sprintf("canopy-out-%d-%d", os.Getpid(), i), maxRSS)
			if cg != nil {
				defer cg.remove()
				cg.wrap(cmd)
			}
			cmd.Env = append(os.Environ(), "HOSTILE_OUT_CASE="+c.name, "HOSTILE_OUT_DIR="+dir, "GOMAXPROCS=2")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			t0 := time.Now()
			cmd.Run()
			wall := time.Since(t0)
			cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			m := measure(cmd, cg)
			m.check(t, maxRSS)
			if m.peak > rss {
				rss, fat = m.peak, c.name
			}
			if m.cgroup {
				inCgroup++
			}
			if cpu > slowCPU {
				slowCPU, slow = cpu, c.name
			}
			switch {
			case ctx.Err() != nil:
				t.Fatalf("hung: still running after %v", killAt)
			case strings.Contains(stderr.String(), "panic") || strings.Contains(stderr.String(), "fatal error"):
				t.Fatalf("crashed:\n%.2000s", stderr.String())
			}
			var rep outReport
			got := false
			sc := bufio.NewScanner(&stdout)
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				if l, ok := strings.CutPrefix(sc.Text(), "OUTCASE "); ok {
					got = json.Unmarshal([]byte(l), &rep) == nil
				}
			}
			if !got {
				t.Fatalf("no report (exit %d):\n%.2000s", cmd.ProcessState.ExitCode(), stderr.String())
			}
			if cpu > maxTime {
				t.Errorf("took %v of CPU time (at most %v; %v of wall time)", cpu.Round(time.Millisecond), maxTime, wall.Round(time.Millisecond))
			}
			switch {
			case c.want == "" && rep.Err != "":
				t.Errorf("failed: %s", rep.Err)
			case c.want != "" && !strings.Contains(rep.Err, c.want):
				t.Errorf("error %q, want it to contain %q", rep.Err, c.want)
			}
			if strings.ContainsAny(rep.Err, "\n\r") {
				t.Errorf("the error is not one line: %q", rep.Err)
			}
			for p, s := range sums {
				if sum(p) != s {
					t.Errorf("%s was changed", p)
				}
			}
			if c.want != "" {
				after, _ := os.ReadDir(dir)
				if len(after) != len(before) {
					var names []string
					for _, e := range after {
						names = append(names, e.Name())
					}
					t.Errorf("a refused run changed the folder: %v", names)
				}
			}
			if m, _ := filepath.Glob(filepath.Join(dir, ".*.tmp")); len(m) > 0 {
				t.Errorf("left %v", m)
			}
		})
	}
	t.Logf("%d cases (%d in a 1 GiB memory cgroup): most CPU %v (%s), highest peak %d MiB (%s)", len(cases), inCgroup, slowCPU.Round(time.Millisecond), slow, rss>>20, fat)
}
