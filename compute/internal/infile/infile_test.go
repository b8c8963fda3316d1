package infile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	reg := filepath.Join(dir, "a.tif")
	if err := os.WriteFile(reg, []byte("II*\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, st, err := Open(reg)
	if err != nil || st.Size() != 4 {
		t.Fatalf("regular file: %v %v", st, err)
	}
	f.Close()
	link := filepath.Join(dir, "link.tif")
	if err := os.Symlink(reg, link); err != nil {
		t.Fatal(err)
	}
	if f, _, err := Open(link); err != nil {
		t.Errorf("a symlink to a regular file is read through: %v", err)
	} else {
		f.Close()
	}
	loop := filepath.Join(dir, "loop")
	if err := os.Symlink(loop, loop); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Open(loop); err == nil || !strings.Contains(err.Error(), "symbolic links") {
		t.Errorf("symlink loop: %v", err)
	}
	if _, _, err := Open(filepath.Join(dir, "none.tif")); !errors.Is(err, fs.ErrNotExist) || strings.Contains(err.Error(), dir) {
		t.Errorf("missing file: %v (want ErrNotExist, no path)", err)
	}
	if _, _, err := Open(dir); err == nil || err.Error() != "is a directory" {
		t.Errorf("directory: %v", err)
	}
	if runtime.GOOS != "windows" {
		if _, _, err := Open("/dev/null"); err == nil || !strings.Contains(err.Error(), "is a device") {
			t.Errorf("/dev/null: %v", err)
		}
	}
}
