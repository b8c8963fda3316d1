//go:build unix

package hostile

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"canopy/compute"
	"canopy/compute/outfile"
	"canopy/compute/raster"
)

// Limits every case must keep, on the two-core machine the tests run on.
const (
	maxRSS  = 1 << 30          // resident memory of the whole process
	maxTime = 10 * time.Second // CPU time (user + system) of one case's process
	// killAt is the wall time after which a child has hung (a hang waits
	// and costs no CPU time, so the CPU limit cannot see it). It is far
	// above maxTime so that a machine busy with other work never trips it.
	killAt = 5 * time.Minute
)

// report is what a child says about its case, as one JSON line.
type report struct {
	Loaded bool   `json:"loaded"`
	Err    string `json:"err,omitempty"`
	Large  bool   `json:"large,omitempty"` // the estimate said beyond the budget
	Width  int    `json:"width,omitempty"`
	Height int    `json:"height,omitempty"`
}

// TestCorpusChild runs one case as canopy compute does, in a process of
// its own (started by TestCorpus): estimate the load, start the outputs,
// load every band with raster.LoadStored and check they share a grid,
// write the red band through the output set and commit it, or abort the
// outputs on error. It prints its report and exits.
func TestCorpusChild(t *testing.T) {
	red := os.Getenv("CORPUS_RED")
	if red == "" {
		t.Skip("run by TestCorpus")
	}
	// A safety net for the shared machine: a runaway case dies at 4 GiB
	// of address space instead of swapping; the limit checked is RSS.
	// In a memory cgroup the kernel's limit is the one that counts: an
	// address-space cap would hide a reader that reserves gigabytes.
	if os.Getenv("CORPUS_CGROUP") == "" {
		lim := syscall.Rlimit{Cur: 4 << 30, Max: 4 << 30}
		syscall.Setrlimit(syscall.RLIMIT_AS, &lim)
	}
	debug.SetMemoryLimit(maxRSS / 2)
	nir, out := os.Getenv("CORPUS_NIR"), os.Getenv("CORPUS_OUT")
	var rep report
	specs := []string{red}
	if nir != "" {
		specs = append(specs, nir)
	}
	if n, err := estimate(specs); err == nil {
		rep.Large = n.WithPlanes(1).Large()
	}
	set := outfile.NewSet(specs...)
	w, err := set.Create(filepath.Join(out, "ndvi.tif"))
	if err == nil {
		err = func() error {
			roles := []string{"red", "nir"}
			bands := make([]struct {
				in  rasterBand
				err error
			}, len(specs))
			var wg sync.WaitGroup
			for i, s := range specs {
				wg.Go(func() {
					b, g, err := raster.LoadStored(roles[i], s)
					bands[i].in, bands[i].err = rasterBand{b, g}, err
				})
			}
			wg.Wait()
			for _, b := range bands {
				if b.err != nil {
					return b.err
				}
			}
			if len(bands) == 2 {
				if err := raster.CheckSameGrid(bands[0].in.b, bands[1].in.b, bands[0].in.g, bands[1].in.g); err != nil {
					return err
				}
			}
			b := bands[0].in.b
			rep.Width, rep.Height = b.Plane.Width, b.Plane.Height
			res := compute.NewBand(b.Plane.Width, b.Plane.Height)
			res.Geo = bands[0].in.g
			if err := raster.EncodeGeoTIFF(w, res); err != nil {
				return err
			}
			return set.Commit()
		}()
	}
	set.Abort()
	if err != nil {
		rep.Err = err.Error()
	} else {
		rep.Loaded = true
	}
	line, _ := json.Marshal(rep)
	fmt.Printf("CORPUS %s\n", line)
	os.Exit(0)
}

func estimate(specs []string) (raster.Need, error) {
	if len(specs) == 2 {
		return raster.EstimatePair(specs[0], specs[1])
	}
	return raster.Estimate(specs[0])
}

// result is what the parent saw of one child.
type result struct {
	rep      report
	got      bool // the child printed a report
	stderr   string
	exit     int
	signaled string
	wall     time.Duration
	cpu      time.Duration // user + system time of the child
	mem      memUse
	killed   bool
	left     []string // files in the case's output directory afterwards
}

// runCase runs case c in a child process with its own output directory.
func runCase(c Case, out string) result {
	var r result
	ctx, cancel := context.WithTimeout(context.Background(), killAt)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestCorpusChild$", "-test.count=1")
	// Memory as the kernel enforces it: a cgroup of 1 GiB where the system
	// lets the test make one (the child's own address-space cap stays as
	// a net where it does not).
	cg := newCgroup(fmt.Sprintf("canopy-corpus-%d-%s", os.Getpid(), filepath.Base(out)), maxRSS)
	if cg != nil {
		defer cg.remove()
		cg.wrap(cmd)
	}
	cmd.Env = append(os.Environ(), "CORPUS_RED="+c.Red, "CORPUS_NIR="+c.NIR, "CORPUS_OUT="+out, "GOMAXPROCS=2")
	if cg != nil {
		cmd.Env = append(cmd.Env, "CORPUS_CGROUP=1")
	}
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r.wall = time.Since(start)
	r.killed = ctx.Err() != nil
	r.stderr = stderr.String()
	if cmd.ProcessState != nil {
		r.exit = cmd.ProcessState.ExitCode()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			r.signaled = ws.Signal().String()
		}
		r.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	} else if err != nil {
		r.stderr += err.Error()
	}
	r.mem = measure(cmd, cg)
	sc := bufio.NewScanner(strings.NewReader(stdout.String()))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if l, ok := strings.CutPrefix(sc.Text(), "CORPUS "); ok {
			r.got = json.Unmarshal([]byte(l), &r.rep) == nil
		}
	}
	es, _ := os.ReadDir(out)
	for _, e := range es {
		r.left = append(r.left, e.Name())
	}
	return r
}

// TestCorpus generates the adversarial corpus and runs every case through
// the loader canopy compute uses, each in a child process, two at a time.
func TestCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("the corpus takes a while (-short)")
	}
	dir := t.TempDir()
	t0 := time.Now()
	cases, err := Generate(dir)
	if err != nil {
		t.Fatal(err)
	}
	gen := time.Since(t0)
	results := make([]result, len(cases))
	sem := make(chan struct{}, max(2, runtime.GOMAXPROCS(0)))
	var wg sync.WaitGroup
	for i, c := range cases {
		out := filepath.Join(dir, fmt.Sprintf("out-%03d", i))
		if err := os.Mkdir(out, 0o755); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			results[i] = runCase(c, out)
		})
	}
	wg.Wait()
	var slowest time.Duration
	var rss int64
	var slowName, fatName string
	loaded := 0
	for i, c := range cases {
		r := results[i]
		if r.cpu > slowest {
			slowest, slowName = r.cpu, c.Name
		}
		if r.mem.peak > rss {
			rss, fatName = r.mem.peak, c.Name
		}
		if r.rep.Loaded {
			loaded++
		}
		t.Run(c.Name, func(t *testing.T) { check(t, c, r) })
	}
	t.Logf("%d cases (%d load, %d refused): generated in %v, run in %v; slowest %v of CPU time (%s), most memory %d MiB (%s)",
		len(cases), loaded, len(cases)-loaded, gen.Round(time.Millisecond), (time.Since(t0) - gen).Round(time.Millisecond),
		slowest.Round(time.Millisecond), slowName, rss>>20, fatName)
}

// check applies the corpus rules to one case's result.
func check(t *testing.T, c Case, r result) {
	switch {
	case r.killed:
		t.Fatalf("hung: still running after %v", killAt)
	case r.signaled != "":
		r.mem.check(t, maxRSS)
		t.Fatalf("killed by %s; stderr:\n%.2000s", r.signaled, r.stderr)
	case strings.Contains(r.stderr, "panic") || strings.Contains(r.stderr, "fatal error") || strings.Contains(r.stderr, "goroutine "):
		t.Fatalf("crashed:\n%.2000s", r.stderr)
	case r.exit != 0 || !r.got:
		t.Fatalf("exit status %d without a report; stderr:\n%.2000s", r.exit, r.stderr)
	}
	if r.cpu > maxTime {
		t.Errorf("took %v of CPU time (at most %v; %v of wall time)", r.cpu.Round(time.Millisecond), maxTime, r.wall.Round(time.Millisecond))
	}
	if !r.rep.Large {
		// Beyond 1 GiB only where the estimate said first that the image
		// is that large.
		r.mem.check(t, maxRSS)
	}
	if r.rep.Loaded {
		if len(r.left) != 1 || r.left[0] != "ndvi.tif" {
			t.Errorf("after a successful run the output directory holds %v, want ndvi.tif alone", r.left)
		}
		if !c.Loads && !c.Either {
			t.Errorf("loaded (%dx%d); want an error containing %q", r.rep.Width, r.rep.Height, c.Want)
		}
		return
	}
	if len(r.left) != 0 {
		t.Errorf("a failed run left %v behind", r.left)
	}
	msg := r.rep.Err
	if c.Loads {
		t.Errorf("refused: %s", msg)
	}
	if strings.ContainsAny(msg, "\n\r") {
		t.Errorf("the error is not one line: %q", msg)
	}
	if len(msg) > 300+len(c.Red)+len(c.NIR)+100 {
		t.Errorf("the error is %d bytes long: %.200q…", len(msg), msg)
	}
	named := false
	for _, s := range []string{c.Red, c.NIR} {
		p, _, _ := raster.ParseSpec(s)
		if s != "" && (strings.Contains(msg, s) || (p != "" && strings.Contains(msg, p))) {
			named = true
		}
	}
	if !named {
		t.Errorf("the error does not name the file: %q", msg)
	}
	if c.Want != "" && !strings.Contains(msg, c.Want) {
		t.Errorf("error %q, want it to contain %q", msg, c.Want)
	}
}

// rasterBand is one loaded band and its georeferencing.
type rasterBand struct {
	b compute.BandInput
	g *compute.GeoRef
}
