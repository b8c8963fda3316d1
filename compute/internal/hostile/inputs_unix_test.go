//go:build unix

package hostile

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Limits every input case keeps, measured the way the kernel enforces
// them where it can: each case runs in a memory cgroup of its own limited
// to 1 GiB (cgroup v2, or v1's memory controller), and its peak is the
// cgroup's; where no cgroup can be made, the peak resident size.
const (
	inputMemory  = 1 << 30
	inputCPU     = 10 * time.Second // user + system time of the case
	inputKillAt  = 5 * time.Minute  // a case still running then has hung (waiting, not working: the CPU limit bounds work)
	inputWorkers = 2
)

// cgroup is a memory cgroup made for one case.
type cgroup struct {
	dir  string
	peak string // the file holding the peak usage
}

// newCgroup makes a memory cgroup limited to limit bytes beside the
// test's own, or returns nil when this system does not let it.
func newCgroup(name string, limit int64) *cgroup {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil
	}
	for _, l := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(l, ":", 3)
		if len(parts) != 3 {
			continue
		}
		var dir, limitFile, peak string
		switch {
		case parts[0] == "0" && parts[1] == "":
			dir = filepath.Join("/sys/fs/cgroup", parts[2])
			if _, err := os.Stat(filepath.Join(dir, "memory.max")); err != nil {
				dir = filepath.Join("/sys/fs/cgroup/unified", parts[2])
			}
			limitFile, peak = "memory.max", "memory.peak"
		case strings.Contains(","+parts[1]+",", ",memory,"):
			dir = filepath.Join("/sys/fs/cgroup/memory", parts[2])
			limitFile, peak = "memory.limit_in_bytes", "memory.max_usage_in_bytes"
		default:
			continue
		}
		child := filepath.Join(dir, name)
		if os.Mkdir(child, 0o755) != nil {
			continue
		}
		if os.WriteFile(filepath.Join(child, limitFile), []byte(strconv.FormatInt(limit, 10)), 0o644) != nil {
			os.Remove(child)
			continue
		}
		if _, err := os.Stat(filepath.Join(child, peak)); err != nil {
			os.Remove(child)
			continue
		}
		return &cgroup{dir: child, peak: filepath.Join(child, peak)}
	}
	return nil
}

func (c *cgroup) peakBytes() int64 {
	b, _ := os.ReadFile(c.peak)
	v, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return v
}

func (c *cgroup) remove() {
	for range 50 {
		if os.Remove(c.dir) == nil {
			return
		}
		time.Sleep(20 * time.Millisecond) // the exited child leaves it
	}
}

// inputResult is what the parent saw of one case.
type inputResult struct {
	exit     int
	signaled string
	stderr   string
	wall     time.Duration
	cpu      time.Duration
	peak     int64
	cgroup   bool
	killed   bool
	left     []string
}

// buildCanopy builds the terminal's binary (the nogui build) into dir.
func buildCanopy(t *testing.T, dir string) string {
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("the module root: %v", err)
	}
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goBin); err != nil {
		if goBin, err = exec.LookPath("go"); err != nil {
			t.Fatal("no go command to build canopy with")
		}
	}
	bin := filepath.Join(dir, "canopy")
	cmd := exec.Command(goBin, "build", "-tags", "nogui", "-o", bin, ".")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func runInput(bin string, c InputCase, out string, id int) inputResult {
	var r inputResult
	args := make([]string, len(c.Args))
	for i, a := range c.Args {
		args[i] = a
		if strings.HasPrefix(a, "OUT/") || a == "OUT" {
			args[i] = out + strings.TrimPrefix(a, "OUT")
		}
	}
	cg := newCgroup(fmt.Sprintf("canopy-hostile-%d-%d", os.Getpid(), id), inputMemory)
	ctx, cancel := context.WithTimeout(context.Background(), inputKillAt)
	defer cancel()
	var cmd *exec.Cmd
	if cg != nil {
		// The shell puts itself in the cgroup, then becomes canopy.
		cmd = exec.CommandContext(ctx, "/bin/sh", append([]string{"-c", `echo $$ > "$0/cgroup.procs" && exec "$@"`, cg.dir, bin}, args...)...)
		defer cg.remove()
	} else {
		cmd = exec.CommandContext(ctx, bin, args...)
	}
	cmd.Env = append(os.Environ(), "GOMAXPROCS=2", "GOMEMLIMIT=")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	cmd.Run()
	r.wall = time.Since(start)
	r.killed = ctx.Err() != nil
	r.stderr = stderr.String()
	if ps := cmd.ProcessState; ps != nil {
		r.exit = ps.ExitCode()
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			r.signaled = ws.Signal().String()
		}
		r.cpu = ps.UserTime() + ps.SystemTime()
		if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
			r.peak = int64(ru.Maxrss) * 1024
			if runtime.GOOS == "darwin" {
				r.peak = int64(ru.Maxrss)
			}
		}
	}
	if cg != nil {
		r.peak, r.cgroup = cg.peakBytes(), true
	}
	es, _ := os.ReadDir(out)
	for _, e := range es {
		r.left = append(r.left, e.Name())
	}
	return r
}

// TestInputCorpus runs every case of GenerateInputs through the canopy
// binary, two at a time, each in a process (and a 1 GiB memory cgroup) of
// its own: no panic, no hang, at most 1 GiB and 10 s of CPU, one line on
// stderr naming the file, the documented exit status, nothing written.
// CANOPY_HOSTILE_REPORT=FILE writes each case's measurements there.
func TestInputCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("the input corpus takes a while (-short)")
	}
	dir := t.TempDir()
	t0 := time.Now()
	cases, err := GenerateInputs(filepath.Join(dir, "in"))
	if err != nil {
		t.Fatal(err)
	}
	gen := time.Since(t0)
	bin := buildCanopy(t, dir)
	results := make([]inputResult, len(cases))
	sem := make(chan struct{}, inputWorkers)
	var wg sync.WaitGroup
	for i, c := range cases {
		out := filepath.Join(dir, fmt.Sprintf("out-%03d", i))
		if err := os.Mkdir(out, 0o755); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			results[i] = runInput(bin, c, out, i)
		})
	}
	wg.Wait()
	var report *bufio.Writer
	if p := os.Getenv("CANOPY_HOSTILE_REPORT"); p != "" {
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		report = bufio.NewWriter(f)
		defer report.Flush()
		fmt.Fprintf(report, "case\texit\tcpu_s\twall_s\tpeak_mib\tmeasured_by\tstderr\n")
	}
	var fat, slow string
	var fatPeak int64
	var slowCPU time.Duration
	cg := 0
	for i, c := range cases {
		r := results[i]
		if r.peak > fatPeak {
			fatPeak, fat = r.peak, c.Name
		}
		if r.cpu > slowCPU {
			slowCPU, slow = r.cpu, c.Name
		}
		by := "rusage"
		if r.cgroup {
			by, cg = "cgroup", cg+1
		}
		if report != nil {
			fmt.Fprintf(report, "%s\t%d\t%.2f\t%.2f\t%d\t%s\t%.200q\n", c.Name, r.exit, r.cpu.Seconds(), r.wall.Seconds(), r.peak>>20, by, strings.TrimSpace(r.stderr))
		}
		t.Run(c.Name, func(t *testing.T) { checkInput(t, c, r) })
	}
	t.Logf("%d cases (%d in a 1 GiB memory cgroup): generated in %v, run in %v; most CPU %v (%s), most memory %d MiB (%s)",
		len(cases), cg, gen.Round(time.Millisecond), (time.Since(t0) - gen).Round(time.Millisecond), slowCPU.Round(time.Millisecond), slow, fatPeak>>20, fat)
}

func checkInput(t *testing.T, c InputCase, r inputResult) {
	switch {
	case r.killed:
		t.Fatalf("hung: still running after %v", inputKillAt)
	case r.signaled != "":
		t.Fatalf("killed by %s (peak %d MiB); stderr:\n%.2000s", r.signaled, r.peak>>20, r.stderr)
	case strings.Contains(r.stderr, "panic") || strings.Contains(r.stderr, "fatal error") || strings.Contains(r.stderr, "goroutine "):
		t.Fatalf("crashed:\n%.2000s", r.stderr)
	}
	if r.cpu > inputCPU {
		t.Errorf("took %v of CPU (at most %v)", r.cpu.Round(time.Millisecond), inputCPU)
	}
	if r.peak > inputMemory {
		t.Errorf("used %d MiB of memory (at most %d)", r.peak>>20, inputMemory>>20)
	}
	if c.Either && r.exit == 0 {
		return
	}
	msg := strings.TrimSuffix(r.stderr, "\n")
	if r.exit != c.Exit {
		t.Errorf("exit status %d, want %d; stderr %.300q", r.exit, c.Exit, msg)
	}
	if len(r.left) != 0 {
		t.Errorf("a failed run left %v behind", r.left)
	}
	if msg == "" || strings.ContainsAny(msg, "\r\n") {
		t.Errorf("stderr is not one line: %.500q", msg)
	}
	if len(msg) > 1200 {
		t.Errorf("the line is %d bytes long: %.200q…", len(msg), msg)
	}
	if c.Names != "" && !strings.Contains(msg, c.Names) && !strings.Contains(msg, filepath.Base(c.Names)) {
		t.Errorf("the line does not name %s: %.300q", c.Names, msg)
	}
	if c.Want != "" && !strings.Contains(msg, c.Want) {
		t.Errorf("the line %.300q does not say %q", msg, c.Want)
	}
}
