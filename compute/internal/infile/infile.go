// Package infile opens the files Canopy reads so that a hostile path
// cannot hang or mislead a reader: only regular files are opened, and
// opening never blocks. A FIFO, a socket, a device or a directory gives
// an error saying what the path is, at once, instead of a reader waiting
// forever for a writer on a named pipe or reading /dev/zero without end.
// Every reader of user files (GeoTIFF, PNG, and the archive and metadata
// readers) opens through Open.
package infile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// Open opens path for reading and returns the file and what fstat says
// of it. The path is checked with stat before it is opened (so that
// opening a device has no side effect) and the opened file again with
// fstat (so that a path swapped in between is caught). Errors carry no
// path: callers say "read PATH: " before them.
func Open(path string) (*os.File, fs.FileInfo, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, nil, bare(err)
	}
	if err := Regular(st); err != nil {
		return nil, nil, err
	}
	f, err := openNonBlocking(path)
	if err != nil {
		return nil, nil, bare(err)
	}
	st, err = f.Stat()
	if err == nil {
		err = Regular(st)
	}
	if err != nil {
		f.Close()
		return nil, nil, bare(err)
	}
	return f, st, nil
}

// Regular returns nil for a regular file and an error naming what st is
// otherwise ("is a directory", "is a named pipe (FIFO), not a file").
func Regular(st fs.FileInfo) error {
	m := st.Mode()
	switch {
	case m.IsRegular():
		return nil
	case m.IsDir():
		return syscall.EISDIR // "is a directory"
	case m&fs.ModeNamedPipe != 0:
		return errors.New("is a named pipe (FIFO), not a file")
	case m&fs.ModeSocket != 0:
		return errors.New("is a socket, not a file")
	case m&fs.ModeDevice != 0:
		return errors.New("is a device, not a file")
	}
	return fmt.Errorf("is not a regular file (%v)", m.Type())
}

// bare strips the *PathError wrapper, keeping the reason ("no such file or
// directory", "too many levels of symbolic links"); errors.Is still sees
// fs.ErrNotExist and the like through it.
func bare(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
