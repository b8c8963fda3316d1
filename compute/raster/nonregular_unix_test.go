//go:build unix

package raster

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"canopy/compute"
)

func TestNonRegularInputs(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "red.tif")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	done := make(chan error, 1)
	go func() {
		_, _, err := LoadPair(fifo, "/dev/zero")
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "read "+fifo+": is a named pipe (FIFO), not a file") || !strings.Contains(err.Error(), "read /dev/zero: is a device, not a file") {
			t.Errorf("FIFO and device: %v", err)
		}
	case <-time.After(time.Minute): // a hang, not slowness: the call returns at once
		t.Fatal("LoadPair blocked on a FIFO")
	}
	if _, err := Count(fifo); err == nil || !strings.Contains(err.Error(), "named pipe") {
		t.Errorf("Count of a FIFO: %v", err)
	}
}

func TestWriteGeoTIFFSafe(t *testing.T) {
	dir := t.TempDir()
	b := &compute.Band{Width: 2, Height: 1, Data: []float32{0.5, -0.5}}
	path := filepath.Join(dir, "ndvi.tif")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteGeoTIFF(path, b); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("replaced file has mode %v, want 0600 as before", st.Mode().Perm())
	}
	target := filepath.Join(dir, "target.tif")
	os.WriteFile(target, []byte("keep"), 0o644)
	link := filepath.Join(dir, "link.tif")
	os.Symlink(target, link)
	for _, p := range []string{link, "/dev/null", dir} {
		if err := WriteGeoTIFF(p, b); err == nil || !strings.Contains(err.Error(), "write "+p+": ") {
			t.Errorf("WriteGeoTIFF(%s): %v", p, err)
		}
	}
	if c, _ := os.ReadFile(target); string(c) != "keep" {
		t.Error("the symlink's target was replaced")
	}
	if st, err := os.Lstat("/dev/null"); err != nil || st.Mode()&os.ModeDevice == 0 {
		t.Fatal("/dev/null is no longer a device")
	}
}
