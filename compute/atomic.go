package compute

import (
	"bufio"
	"os"
	"path/filepath"
)

// WriteFileAtomic writes a file through fill into a temporary file in the
// same directory and renames it over path once complete, so a failure (a
// full disk, an encoder error) never leaves a half-written file and never
// touches an existing one. The file gets mode 0644.
func WriteFileAtomic(path string, fill func(f *os.File) error) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err = fill(f); err != nil {
		return err
	}
	if err = f.Chmod(0o644); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// WriteFileAtomicBuffered is WriteFileAtomic for streaming writers: fill
// gets a buffered writer, flushed before the rename.
func WriteFileAtomicBuffered(path string, fill func(w *bufio.Writer) error) error {
	return WriteFileAtomic(path, func(f *os.File) error {
		bw := bufio.NewWriterSize(f, 1<<20)
		if err := fill(bw); err != nil {
			return err
		}
		return bw.Flush()
	})
}
