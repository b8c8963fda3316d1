//go:build unix

package outfile

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func write(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// leftovers lists the temporary files in dir.
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		if strings.HasSuffix(e.Name(), ".tmp") {
			out = append(out, e.Name())
		}
	}
	return out
}

func expect(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil || string(b) != content {
		t.Errorf("%s holds %q (%v), want %q", path, b, err, content)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != mode {
		t.Errorf("%s has mode %v (%v), want %v", path, st.Mode().Perm(), err, mode)
	}
}

func umask() os.FileMode {
	u := syscall.Umask(0)
	syscall.Umask(u)
	return os.FileMode(u)
}

func TestCommit(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.tif"), filepath.Join(dir, "b.png")
	write(t, a, "old a", 0o600)
	s := NewSet()
	wa, err := s.Create(a)
	if err != nil {
		t.Fatal(err)
	}
	wb, err := s.Create(b)
	if err != nil {
		t.Fatal(err)
	}
	tmps := leftovers(t, dir)
	if len(tmps) != 2 || Live() != 2 {
		t.Fatalf("temporary files %v, %d live", tmps, Live())
	}
	for _, n := range tmps {
		if !strings.HasPrefix(n, ".a.tif.") && !strings.HasPrefix(n, ".b.png.") {
			t.Errorf("temporary file %q is not named .NAME.RANDOM.tmp", n)
		}
	}
	fmt.Fprint(wa, "new a")
	io.WriteString(wb, "xxxxx")
	wb.WriteAt([]byte("new b"), 0)
	// Nothing is in place before Commit.
	expect(t, a, "old a", 0o600)
	if _, err := os.Stat(b); err == nil {
		t.Fatal("b exists before Commit")
	}
	if err := s.Commit(); err != nil {
		t.Fatal(err)
	}
	expect(t, a, "new a", 0o600)          // the replaced file's mode
	expect(t, b, "new b", 0o666&^umask()) // a new file's
	if l := leftovers(t, dir); len(l) != 0 || Live() != 0 {
		t.Errorf("left behind: %v, %d live", l, Live())
	}
	s.Abort() // after Commit: nothing
	expect(t, a, "new a", 0o600)
	if _, err := s.Create(filepath.Join(dir, "c")); err == nil {
		t.Error("Create after Commit")
	}
}

// failingEncoder writes half of what it should, then fails, as an
// encoder does when the disk fills or the data is bad.
func failingEncoder(w io.Writer) error {
	w.Write([]byte("half of th"))
	return errors.New("encoder failed")
}

func TestFailurePartWayLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	a, b, c := filepath.Join(dir, "a.tif"), filepath.Join(dir, "b.png"), filepath.Join(dir, "b.pgw")
	write(t, a, "original a", 0o640)
	write(t, b, "original b", 0o604)
	run := func() error {
		s := NewSet()
		defer s.Abort()
		wa, err := s.Create(a)
		if err != nil {
			return err
		}
		io.WriteString(wa, "complete new a")
		wb, err := s.Create(b)
		if err != nil {
			return err
		}
		if err := failingEncoder(wb); err != nil {
			return err
		}
		wc, err := s.Create(c)
		if err != nil {
			return err
		}
		io.WriteString(wc, "world file")
		return s.Commit()
	}
	if err := run(); err == nil || err.Error() != "encoder failed" {
		t.Fatalf("run: %v", err)
	}
	expect(t, a, "original a", 0o640)
	expect(t, b, "original b", 0o604)
	if _, err := os.Stat(c); err == nil {
		t.Error("the world file of a failed run exists")
	}
	if l := leftovers(t, dir); len(l) != 0 || Live() != 0 {
		t.Errorf("left behind: %v, %d live", l, Live())
	}
}

func TestRenameFailsPartWay(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.tif"), filepath.Join(dir, "b.png")
	s := NewSet()
	wa, _ := s.Create(a)
	wb, err := s.Create(b)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(wa, "a")
	io.WriteString(wb, "b")
	os.Remove(wb.tmp) // the second rename will fail
	err = s.Commit()
	if err == nil || !strings.Contains(err.Error(), "written: "+a+"; not written: "+b) {
		t.Fatalf("Commit: %v", err)
	}
	expect(t, a, "a", 0o666&^umask())
	if l := leftovers(t, dir); len(l) != 0 || Live() != 0 {
		t.Errorf("left behind: %v, %d live", l, Live())
	}
	// A path that became a directory before Commit: nothing is written.
	s = NewSet()
	wa, _ = s.Create(a)
	wb, _ = s.Create(b + "2")
	io.WriteString(wa, "a2")
	os.Mkdir(b+"2", 0o755)
	if err := s.Commit(); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Fatalf("Commit: %v", err)
	}
	expect(t, a, "a", 0o666&^umask())
	if l := leftovers(t, dir); len(l) != 0 || Live() != 0 {
		t.Errorf("left behind: %v, %d live", l, Live())
	}
}

func TestRefuses(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "red.tif")
	write(t, in, "red", 0o644)
	odd := filepath.Join(dir, "x.tif:1") // a file literally named so
	write(t, odd, "x", 0o644)
	multi := filepath.Join(dir, "multi.tif")
	write(t, multi, "multi", 0o644)
	hard := filepath.Join(dir, "hard.tif")
	if err := os.Link(in, hard); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.tif")
	os.Symlink(filepath.Join(dir, "nowhere.tif"), link)
	inLink := filepath.Join(dir, "in-link.tif")
	os.Symlink(in, inLink)
	fifo := filepath.Join(dir, "pipe.tif")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	subLink := filepath.Join(dir, "sublink")
	os.Symlink(sub, subLink)

	s := NewSet(in, odd, multi+":3", filepath.Join(dir, "missing.tif"))
	defer s.Abort()
	for _, c := range []struct{ path, want string }{
		{in, "refusing to overwrite " + in + ", an input of this run"},
		{filepath.Join(dir, ".", "red.tif"), "an input of this run"},
		{hard, "an input of this run"},
		{odd, "refusing to overwrite " + odd + ", an input"},
		{multi, "refusing to overwrite " + multi + ", an input"},
		{link, "is a symbolic link; refusing to write through it"},
		{inLink, "is a symbolic link"},
		{fifo, "is a named pipe (FIFO), not a regular file; refusing to replace it"},
		{"/dev/null", "is a device, not a regular file; refusing to replace it"},
		{sub, "is a directory"},
		{filepath.Join(dir, "nodir", "out.tif"), "no such file or directory"},
		{"", "empty output path"},
	} {
		if _, err := s.Create(c.path); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Create(%q) = %v, want %q", c.path, err, c.want)
		}
	}
	// Two outputs of one run at one file, however named.
	if _, err := s.Create(filepath.Join(sub, "ndvi.tif")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(sub, "ndvi.tif"), filepath.Join(sub, "..", "sub", "ndvi.tif"), filepath.Join(subLink, "ndvi.tif")} {
		if _, err := s.Create(p); err == nil || !strings.Contains(err.Error(), "the same file as the output") {
			t.Errorf("second output %s: %v", p, err)
		}
	}
	other := filepath.Join(dir, "other.tif")
	write(t, other, "o", 0o644)
	otherHard := filepath.Join(dir, "other-hard.tif")
	os.Link(other, otherHard)
	if _, err := s.Create(other); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(otherHard); err == nil || !strings.Contains(err.Error(), "the same file as the output") {
		t.Errorf("hard link of an output: %v", err)
	}
	s.Abort()
	expect(t, in, "red", 0o644)
	if l := leftovers(t, dir); len(l) != 0 || Live() != 0 {
		t.Errorf("left behind: %v, %d live", l, Live())
	}
}

// TestSignalChild is the child process of TestSignals: it starts an
// output, says so, and waits to be killed (or commits first).
func TestSignalChild(t *testing.T) {
	path := os.Getenv("OUTFILE_CHILD")
	if path == "" {
		t.Skip("run by TestSignals")
	}
	s := NewSet()
	w, err := s.Create(path)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(3)
	}
	w.Write(make([]byte, 1<<20))
	if os.Getenv("OUTFILE_COMMIT") != "" {
		if err := s.Commit(); err != nil {
			fmt.Println("error", err)
			os.Exit(3)
		}
	}
	fmt.Println("ready")
	time.Sleep(time.Minute)
	os.Exit(4)
}

func TestSignals(t *testing.T) {
	for _, c := range []struct {
		sig    syscall.Signal
		commit bool
		code   int
	}{{syscall.SIGINT, false, 130}, {syscall.SIGTERM, false, 143}, {syscall.SIGINT, true, -1}} {
		t.Run(fmt.Sprintf("%v/commit=%v", c.sig, c.commit), func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "ndvi.tif")
			write(t, out, "before", 0o644)
			cmd := exec.Command(os.Args[0], "-test.run=^TestSignalChild$")
			cmd.Env = append(os.Environ(), "OUTFILE_CHILD="+out)
			if c.commit {
				cmd.Env = append(cmd.Env, "OUTFILE_COMMIT=1")
			}
			stdout, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			line, _ := bufio.NewReader(stdout).ReadString('\n')
			if line != "ready\n" {
				cmd.Process.Kill()
				t.Fatalf("child said %q", line)
			}
			if l := leftovers(t, dir); len(l) != map[bool]int{false: 1, true: 0}[c.commit] {
				t.Errorf("temporary files while the child writes: %v", l)
			}
			cmd.Process.Signal(c.sig)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(2 * time.Minute): // a hang, not slowness
				cmd.Process.Kill()
				t.Fatal("the child did not exit on the signal")
			}
			ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
			if c.code >= 0 && cmd.ProcessState.ExitCode() != c.code {
				t.Errorf("exit status %d (%v), want %d", cmd.ProcessState.ExitCode(), ws, c.code)
			}
			if c.code < 0 && !(ws.Signaled() && ws.Signal() == c.sig) {
				t.Errorf("after Commit the handler should be gone and the signal kill the child: %v", ws)
			}
			if l := leftovers(t, dir); len(l) != 0 {
				t.Errorf("left behind after the signal: %v", l)
			}
			want := "before"
			if c.commit {
				want = string(make([]byte, 1<<20))
			}
			if b, _ := os.ReadFile(out); string(b) != want {
				t.Errorf("output holds %d bytes, want %d", len(b), len(want))
			}
		})
	}
}

// TestNotifyContextChild is the child process of TestNotifyContext: a
// run under NotifyContext that starts an output, says so and waits for
// its context; then either tries to commit and exits as the cause says
// (OUTFILE_RUN=stops) or says it was cancelled and never stops
// (OUTFILE_RUN=stuck), for the second signal to end it.
func TestNotifyContextChild(t *testing.T) {
	path := os.Getenv("OUTFILE_CHILD")
	if path == "" || os.Getenv("OUTFILE_RUN") == "" {
		t.Skip("run by TestNotifyContext")
	}
	ctx, stop := NotifyContext(t.Context())
	defer stop()
	s := NewSet()
	w, err := s.Create(path)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(3)
	}
	w.Write(make([]byte, 1<<20))
	fmt.Println("ready")
	<-ctx.Done()
	var se SignalError
	if !errors.As(context.Cause(ctx), &se) || !errors.Is(context.Cause(ctx), ErrInterrupted) {
		fmt.Println("cause", context.Cause(ctx))
		os.Exit(3)
	}
	if os.Getenv("OUTFILE_RUN") == "stuck" {
		fmt.Println("cancelled")
		select {}
	}
	fmt.Println("commit:", s.Commit(), Live())
	stop()
	os.Exit(se.ExitCode())
}

// TestNotifyContext: under NotifyContext the first SIGINT or SIGTERM
// cancels the run's context with the signal as the cause and no commit
// goes through (the run removes its temporary file and exits 128 + the
// signal by itself); a second signal to a run that does not stop removes
// the temporary file and exits at once.
func TestNotifyContext(t *testing.T) {
	for _, c := range []struct {
		run string
		sig syscall.Signal
	}{{"stops", syscall.SIGINT}, {"stops", syscall.SIGTERM}, {"stuck", syscall.SIGINT}} {
		t.Run(c.run+"/"+c.sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "ndvi.tif")
			write(t, out, "before", 0o644)
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestNotifyContextChild$")
			cmd.Env = append(os.Environ(), "OUTFILE_CHILD="+out, "OUTFILE_RUN="+c.run)
			stdout, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			r := bufio.NewReader(stdout)
			if line, _ := r.ReadString('\n'); line != "ready\n" {
				cmd.Process.Kill()
				t.Fatalf("child said %q", line)
			}
			if l := leftovers(t, dir); len(l) != 1 {
				t.Errorf("temporary files while the child writes: %v", l)
			}
			cmd.Process.Signal(c.sig)
			line, _ := r.ReadString('\n')
			if c.run == "stuck" {
				if line != "cancelled\n" {
					t.Errorf("after the first signal the child said %q", line)
				}
				cmd.Process.Signal(c.sig)
			} else if want := "commit: write " + out + ": interrupted 0\n"; line != want {
				t.Errorf("the commit after the signal: %q, want %q", line, want)
			}
			io.Copy(io.Discard, r)
			cmd.Wait()
			if code, want := cmd.ProcessState.ExitCode(), 128+int(c.sig); code != want {
				t.Errorf("exit status %d (%v), want %d", code, cmd.ProcessState, want)
			}
			if l := leftovers(t, dir); len(l) != 0 {
				t.Errorf("left behind: %v", l)
			}
			if b, _ := os.ReadFile(out); string(b) != "before" {
				t.Errorf("the output was replaced: %d bytes", len(b))
			}
		})
	}
}
