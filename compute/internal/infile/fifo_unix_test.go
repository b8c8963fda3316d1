//go:build unix

package infile

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestOpenFIFODoesNotBlock(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "pipe.tif")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	done := make(chan error, 1)
	go func() {
		_, _, err := Open(fifo)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "named pipe") {
			t.Errorf("FIFO: %v", err)
		}
	case <-time.After(time.Minute): // a hang, not slowness: the call returns at once
		t.Fatal("Open of a FIFO without a writer blocked")
	}
	// The non-blocking open itself, as used after the stat, returns at
	// once on a FIFO too.
	f, err := openNonBlocking(fifo)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := f.Stat()
	f.Close()
	if Regular(st) == nil {
		t.Error("fstat of the FIFO says regular")
	}
}
