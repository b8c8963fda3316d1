package remote

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// nginx serves dir with Debian's nginx (scripts/nginx-range) and returns
// its URL and a function that reads its access log: one line per request,
// METHOD URI RANGE STATUS BYTES. The test is skipped where nginx is not
// installed (it fails instead under CANOPY_EXPECT_NGINX=1, which make test
// sets, as it sets CANOPY_EXPECT_GDAL for the GDAL cross-checks).
func nginx(t *testing.T, dir string) (string, func() []string) {
	t.Helper()
	if _, err := exec.LookPath("nginx"); err != nil {
		if _, err := os.Stat("/usr/sbin/nginx"); err != nil {
			if os.Getenv("CANOPY_EXPECT_NGINX") == "1" {
				t.Fatal("nginx is not installed but CANOPY_EXPECT_NGINX=1 (scripts/setup installs it)")
			}
			t.Skip("nginx (Debian nginx) is not installed")
		}
	}
	script, _ := filepath.Abs("../../scripts/nginx-range")
	out, err := exec.Command(script, "start", dir).Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("scripts/nginx-range: %v: %s", err, msg)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 3 {
		t.Fatalf("scripts/nginx-range printed %q", out)
	}
	t.Cleanup(func() { exec.Command(script, "stop", lines[2]).Run() })
	return lines[0], func() []string {
		b, _ := os.ReadFile(lines[1])
		s := strings.TrimSpace(string(b))
		if s == "" {
			return nil
		}
		return strings.Split(s, "\n")
	}
}

// TestNginx: the counts and pixels of TestWindowRequests hold against a
// real web server, nginx, counted by its own access log.
func TestNginx(t *testing.T) {
	data := windowCOG(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "b.tif"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	u, log := nginx(t, dir)
	c := New(testOptions())
	local, rem, f := openBoth(t, c, u+"/b.tif", data)
	// nginx logs a request when it has sent the answer, which the client
	// may read first: wait for the lines the File's own count says.
	settled := func(want int64) []string {
		var l []string
		for range 500 {
			if l = log(); int64(len(l)) >= want {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		return l
	}
	l := settled(1)
	if len(l) != 1 || !strings.HasPrefix(l[0], "GET /b.tif bytes=0-32767 206 32768") {
		t.Fatalf("opening: nginx logged %q, want one 32 KiB range", l)
	}
	got := window(t, rem, 300, 200, 900, 700)
	samePlanes(t, window(t, local, 300, 200, 900, 700), got)
	l = settled(f.Stats().Requests)
	if int64(len(l)) != f.Stats().Requests || len(l)-1 > 3 {
		t.Fatalf("the window: nginx logged %d requests (the File sent %d), want at most 3 after the header:\n%s", len(l)-1, f.Stats().Requests-1, strings.Join(l, "\n"))
	}
	var sent int64
	for _, line := range l {
		fields := strings.Fields(line)
		if fields[len(fields)-2] != "206" {
			t.Fatalf("nginx answered %q", line)
		}
		n, _ := strconv.ParseInt(fields[len(fields)-1], 10, 64)
		sent += n
	}
	if sent != f.Stats().Bytes || sent >= int64(len(data))/2 {
		t.Fatalf("nginx sent %d bytes, the File counted %d, of a %d-byte file", sent, f.Stats().Bytes, len(data))
	}
	// nginx's ETag is the File's validator: a changed file is refused.
	if f.ver.val.etag == "" {
		t.Fatal("nginx gave no ETag")
	}
	if err := os.WriteFile(filepath.Join(dir, "b.tif"), bytes.Repeat([]byte{1}, len(data)+10), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := f.ReadAt(make([]byte, 10), int64(len(data))-100)
	oneLine(t, err, "changed on the server")
}
