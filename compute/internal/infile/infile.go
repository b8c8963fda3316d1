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
	"io"
	"io/fs"
	"os"
	"strings"
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

// Check reports, without opening it, whether path is a regular file (or a
// symbolic link to one): for readers that open by path themselves, such
// as SQLite, which would block on a FIFO.
func Check(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return bare(err)
	}
	return Regular(st)
}

// TooLarge is the error of ReadFile for a file larger than its limit.
type TooLarge struct {
	Size, Limit int64
}

func (e *TooLarge) Error() string {
	return fmt.Sprintf("is %s, more than the %s Canopy reads from such a file", Bytes(e.Size), Bytes(e.Limit))
}

// ReadFile reads a whole regular file of at most limit bytes, opened as
// Open does; a larger file gives a *TooLarge at once, before anything is
// read (and a file that grows past limit while it is read, too).
func ReadFile(path string, limit int64) ([]byte, error) {
	f, st, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st.Size() > limit {
		return nil, &TooLarge{Size: st.Size(), Limit: limit}
	}
	b := make([]byte, 0, st.Size()+1)
	for {
		if int64(len(b)) > limit {
			return nil, &TooLarge{Size: int64(len(b)), Limit: limit}
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := f.Read(b[len(b):min(int64(cap(b)), limit+1)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return nil, bare(err)
		}
	}
}

// Bytes writes a size for people: "900 bytes", "16 MiB", "1.5 GiB".
func Bytes(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d bytes", n)
	case n < 1<<20:
		return trimZero(float64(n)/(1<<10)) + " KiB"
	case n < 1<<30:
		return trimZero(float64(n)/(1<<20)) + " MiB"
	}
	return trimZero(float64(n)/(1<<30)) + " GiB"
}

func trimZero(v float64) string {
	s := fmt.Sprintf("%.1f", v)
	return strings.TrimSuffix(s, ".0")
}
