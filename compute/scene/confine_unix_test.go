//go:build unix

package scene

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestProductReadsOnlyItself: a Landsat MTL naming a band file outside
// its folder ("../../etc/passwd", an absolute path, a symbolic link that
// leads out) is refused, and a band file that is a FIFO gives an error at
// once instead of a read that waits forever.
func TestProductReadsOnlyItself(t *testing.T) {
	src := fx(t, lsID)
	outside := filepath.Join(t.TempDir(), "secret.TIF")
	b4, err := os.ReadFile(filepath.Join(src, lsID+"_SR_B4.TIF"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(outside, b4, 0o644)
	for _, c := range []struct {
		name string
		edit func(dir string) string // returns the band 4 file name the MTL gives
		want string
	}{
		{"dot-dot", func(string) string { return "../../etc/passwd" }, "a file outside its folder: refused"},
		{"dot-dot-to-a-real-tif", func(dir string) string {
			rel, _ := filepath.Rel(dir, outside)
			return filepath.ToSlash(rel)
		}, "a file outside its folder: refused"},
		{"symlink-out", func(dir string) string {
			os.Symlink(outside, filepath.Join(dir, "link.TIF"))
			return "link.TIF"
		}, "is a link to a file outside the product folder: refused"},
		{"fifo", func(dir string) string {
			if err := syscall.Mkfifo(filepath.Join(dir, "pipe.TIF"), 0o644); err != nil {
				t.Skip("mkfifo:", err)
			}
			return "pipe.TIF"
		}, "is a named pipe (FIFO), not a file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), lsID)
			copyTree(t, src, dir)
			for _, ext := range []string{"json", "xml"} {
				os.Remove(filepath.Join(dir, lsID+"_MTL."+ext))
			}
			mtl := filepath.Join(dir, lsID+"_MTL.txt")
			b, _ := os.ReadFile(mtl)
			name := c.edit(dir)
			s := strings.Replace(string(b), lsID+"_SR_B4.TIF", name, 1)
			if s == string(b) {
				t.Fatal("the MTL does not name band 4")
			}
			os.WriteFile(mtl, []byte(s), 0o644)
			done := make(chan error, 1)
			go func() {
				sc, err := Open(dir)
				if err == nil {
					sc.Close()
				}
				done <- err
			}()
			select {
			case err := <-done:
				oneLine(t, c.name, err, c.want)
			case <-time.After(time.Minute):
				t.Fatal("Open blocked")
			}
		})
	}
	// A FIFO given as the product itself: a zip, a tar, a STAC item, a TIF.
	for _, name := range []string{"S2A_MSIL2A.zip", "LC08.tar", "item.json", "ortho.tif"} {
		p := filepath.Join(t.TempDir(), name)
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Skip("mkfifo:", err)
		}
		done := make(chan error, 1)
		go func() { _, err := Open(p); done <- err }()
		select {
		case err := <-done:
			oneLine(t, name, err, "is a named pipe (FIFO), not a file")
		case <-time.After(time.Minute):
			t.Fatalf("%s: Open of a FIFO blocked", name)
		}
	}
}

// TestNoFileLeft: opening STAC items, good and bad, again and again keeps
// no file open (the fuzzer ran out of file descriptors: every item's JSON
// stayed open).
func TestNoFileLeft(t *testing.T) {
	fds := func() int {
		es, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skip("no /proc/self/fd:", err)
		}
		return len(es)
	}
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte("000000000000000000000000000000000000000 000"), 0o644)
	noBand := filepath.Join(dir, "noband.json")
	os.WriteFile(noBand, []byte(`{"type":"Feature","assets":{"thumbnail":{"href":"t.png"}}}`), 0o644)
	before := fds()
	for range 300 {
		for _, p := range []string{bad, noBand} {
			if s, err := Open(p); err == nil {
				s.Close()
			}
		}
	}
	if after := fds(); after > before+5 {
		t.Errorf("%d files open after 600 failed opens, %d before", after, before)
	}
}
