//go:build unix

package ui

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestBadSessionFiles: a session file that is missing, a FIFO, a device,
// a folder, too large, damaged or of another version gives one line naming
// it and exit status 1 (a failed run), at once: never a hang on a FIFO,
// never a read of /dev/zero without end.
func TestBadSessionFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe.canopy.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	big := filepath.Join(dir, "big.canopy.json")
	os.WriteFile(big, append([]byte(`{"version":1,"expr":"`), bytes.Repeat([]byte("a"), maxSession)...), 0o644)
	junk := filepath.Join(dir, "junk.canopy.json")
	os.WriteFile(junk, []byte("\x00\x01 not json"), 0o644)
	v9 := filepath.Join(dir, "v9.canopy.json")
	os.WriteFile(v9, []byte(`{"version":9}`), 0o644)
	deep := filepath.Join(dir, "deep.canopy.json")
	os.WriteFile(deep, []byte(`{"version":1,"after":`+strings.Repeat(`{"after":`, 100000)+`null`+strings.Repeat(`}`, 100001)), 0o644)
	for _, c := range []struct{ path, want string }{
		{filepath.Join(dir, "missing.canopy.json"), "there is no such file"},
		{fifo, "is a named pipe (FIFO), not a file"},
		{"/dev/zero", "is a device, not a file"},
		{dir, "folder"},
		{big, "more than the 16 MiB"},
		{junk, "not a Canopy session file"},
		{v9, "version 9"},
		{deep, "not a Canopy session file"},
	} {
		var out, errb bytes.Buffer
		done := make(chan int, 1)
		go func() { done <- run([]string{"--session", c.path}, &out, &errb) }()
		var code int
		select {
		case code = <-done:
		case <-time.After(time.Minute):
			t.Fatalf("%s: still reading after a minute", c.path)
		}
		msg := strings.TrimSuffix(errb.String(), "\n")
		if code != 1 || strings.Contains(msg, "\n") || !strings.Contains(msg, c.path) || !strings.Contains(msg, c.want) {
			t.Errorf("%s: exit %d, stderr %q; want 1 and one line naming it and saying %q", c.path, code, msg, c.want)
		}
	}
}
