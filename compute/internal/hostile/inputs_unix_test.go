//go:build unix

package hostile

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
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
	quickCPU     = time.Second      // user + system time of a refusal that names a limit (Quick)
	inputKillAt  = 5 * time.Minute  // a case still running then has hung (waiting, not working: the CPU limit bounds work)
	inputWorkers = 2
)

// cgroup is a memory cgroup made for one case.
type cgroup struct {
	dir    string
	peak   string // the file holding the peak usage
	events string // the file counting the OOM killer's kills (oom_kill N)
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
		var dir, limitFile, peak, events string
		switch {
		case parts[0] == "0" && parts[1] == "":
			dir = filepath.Join("/sys/fs/cgroup", parts[2])
			if _, err := os.Stat(filepath.Join(dir, "memory.max")); err != nil {
				dir = filepath.Join("/sys/fs/cgroup/unified", parts[2])
			}
			limitFile, peak, events = "memory.max", "memory.peak", "memory.events"
		case strings.Contains(","+parts[1]+",", ",memory,"):
			dir = filepath.Join("/sys/fs/cgroup/memory", parts[2])
			limitFile, peak, events = "memory.limit_in_bytes", "memory.max_usage_in_bytes", "memory.oom_control"
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
		return &cgroup{dir: child, peak: filepath.Join(child, peak), events: filepath.Join(child, events)}
	}
	return nil
}

func (c *cgroup) peakBytes() int64 {
	b, _ := os.ReadFile(c.peak)
	v, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return v
}

// oomKills is how many processes the kernel killed in the cgroup for
// want of memory (-1 when the system does not say).
func (c *cgroup) oomKills() int {
	b, err := os.ReadFile(c.events)
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "oom_kill "); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return -1
}

// wrap makes cmd (not started) start in the cgroup: a shell joins it,
// then becomes the command.
func (c *cgroup) wrap(cmd *exec.Cmd) {
	cmd.Args = append([]string{"/bin/sh", "-c", `echo $$ > "$0/cgroup.procs" && exec "$@"`, c.dir, cmd.Path}, cmd.Args[1:]...)
	cmd.Path = "/bin/sh"
}

func (c *cgroup) remove() {
	for range 50 {
		if os.Remove(c.dir) == nil {
			return
		}
		time.Sleep(20 * time.Millisecond) // the exited child leaves it
	}
}

// memUse is the memory one case's process used, as the kernel counts it:
// its cgroup's peak (anonymous memory and page cache together: at the
// limit the kernel reclaims the cache, and kills only when it cannot) and
// the kills of the OOM killer in it. Without a cgroup, the peak resident
// size getrusage gives, only a bound: Linux counts the forking test's
// resident size against the child until the child runs its program.
type memUse struct {
	cgroup bool // measured in a memory cgroup of its own
	peak   int64
	ooms   int
}

// measure reads what cmd (run, in cg when cg is not nil) used.
func measure(cmd *exec.Cmd, cg *cgroup) memUse {
	var m memUse
	if cg != nil {
		return memUse{cgroup: true, peak: cg.peakBytes(), ooms: cg.oomKills()}
	}
	if ps := cmd.ProcessState; ps != nil {
		if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
			m.peak = int64(ru.Maxrss) * 1024 // kilobytes on Linux
			if runtime.GOOS == "darwin" {
				m.peak = int64(ru.Maxrss)
			}
		}
	}
	return m
}

// check fails t when the process went past limit: killed by the kernel at
// its cgroup's limit or, without a cgroup, resident beyond it.
func (m memUse) check(t *testing.T, limit int64) {
	t.Helper()
	if m.ooms > 0 {
		t.Errorf("the kernel killed it at the %d MiB memory limit of its cgroup (cgroup peak %d MiB)", limit>>20, m.peak>>20)
	}
	if !m.cgroup && m.peak > limit {
		t.Errorf("used %d MiB of memory (at most %d)", m.peak>>20, limit>>20)
	}
}

// inputResult is what the parent saw of one case.
type inputResult struct {
	exit     int
	signaled string
	stderr   string
	wall     time.Duration
	cpu      time.Duration
	mem      memUse
	killed   bool
	left     []string
}

// buildCanopy builds the terminal's binary (the nogui build) into dir,
// or the whole app's (with the window) when gui is set.
func buildCanopy(t *testing.T, dir string, gui bool) string {
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
	if gui {
		bin = filepath.Join(dir, "canopy-gui")
		cmd = exec.Command(goBin, "build", "-o", bin, ".")
	}
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func runInput(bins map[bool]string, c InputCase, out string, id int) inputResult {
	var r inputResult
	bin := bins[c.GUI]
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
	cmd := exec.CommandContext(ctx, bin, args...)
	if cg != nil {
		cg.wrap(cmd)
		defer cg.remove()
	}
	cmd.Env = append(os.Environ(), "GOMAXPROCS=2", "GOMEMLIMIT=")
	if c.GUI {
		// A display that does not exist: the window's cases are refused
		// before it would open.
		cmd.Env = append(cmd.Env, "DISPLAY=hostile.invalid:0", "WAYLAND_DISPLAY=")
	}
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
	}
	r.mem = measure(cmd, cg)
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
// CANOPY_HOSTILE_REPORT=FILE writes each case's measurements there;
// CANOPY_HOSTILE_CASES=REGEXP runs only the cases whose names match.
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
	if re := os.Getenv("CANOPY_HOSTILE_CASES"); re != "" {
		m, err := regexp.Compile(re)
		if err != nil {
			t.Fatalf("CANOPY_HOSTILE_CASES: %v", err)
		}
		cases = slices.DeleteFunc(cases, func(c InputCase) bool { return !m.MatchString(c.Name) })
	}
	bins := map[bool]string{false: buildCanopy(t, dir, false)}
	if slices.ContainsFunc(cases, func(c InputCase) bool { return c.GUI }) {
		bins[true] = buildCanopy(t, dir, true)
	}
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
			results[i] = runInput(bins, c, out, i)
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
		fmt.Fprintf(report, "case\texit\tcpu_s\twall_s\tpeak_mib\tmeasured_by\toom_kills\tstderr\n")
	}
	var fat, slow string
	var fatPeak int64
	var slowCPU time.Duration
	cg := 0
	for i, c := range cases {
		r := results[i]
		if r.mem.peak > fatPeak {
			fatPeak, fat = r.mem.peak, c.Name
		}
		if r.cpu > slowCPU {
			slowCPU, slow = r.cpu, c.Name
		}
		by := "rusage"
		if r.mem.cgroup {
			by, cg = "cgroup", cg+1
		}
		if report != nil {
			fmt.Fprintf(report, "%s\t%d\t%.2f\t%.2f\t%d\t%s\t%d\t%.200q\n", c.Name, r.exit, r.cpu.Seconds(), r.wall.Seconds(), r.mem.peak>>20, by, r.mem.ooms, strings.TrimSpace(r.stderr))
		}
		t.Run(c.Name, func(t *testing.T) { checkInput(t, c, r) })
	}
	t.Logf("%d cases (%d in a 1 GiB memory cgroup): generated in %v, run in %v; most CPU %v (%s), highest peak %d MiB (%s)",
		len(cases), cg, gen.Round(time.Millisecond), (time.Since(t0) - gen).Round(time.Millisecond), slowCPU.Round(time.Millisecond), slow, fatPeak>>20, fat)
}

func checkInput(t *testing.T, c InputCase, r inputResult) {
	switch {
	case r.killed:
		t.Fatalf("hung: still running after %v", inputKillAt)
	case r.signaled != "":
		r.mem.check(t, inputMemory)
		t.Fatalf("killed by %s (peak %d MiB); stderr:\n%.2000s", r.signaled, r.mem.peak>>20, r.stderr)
	case strings.Contains(r.stderr, "panic") || strings.Contains(r.stderr, "fatal error") || strings.Contains(r.stderr, "goroutine "):
		t.Fatalf("crashed:\n%.2000s", r.stderr)
	}
	if r.cpu > inputCPU {
		t.Errorf("took %v of CPU (at most %v)", r.cpu.Round(time.Millisecond), inputCPU)
	}
	r.mem.check(t, inputMemory)
	if c.Either && r.exit == 0 {
		return
	}
	if c.Quick && r.cpu > quickCPU {
		t.Errorf("refused after %v of CPU; a refusal that names a limit comes within %v", r.cpu.Round(time.Millisecond), quickCPU)
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
