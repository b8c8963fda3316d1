//go:build unix

package geotiff

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestOpenNonRegular(t *testing.T) {
	dir := t.TempDir()
	if _, err := Open(dir); err == nil || err.Error() != "read "+dir+": is a directory" {
		t.Errorf("directory: %v", err)
	}
	fifo := filepath.Join(dir, "pipe.tif")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := Open(fifo)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "read "+fifo+": is a named pipe") {
			t.Errorf("FIFO: %v", err)
		}
	case <-time.After(time.Minute): // a hang, not slowness: the call returns at once
		t.Fatal("Open blocked on a FIFO")
	}
	os.Remove(fifo)
}
