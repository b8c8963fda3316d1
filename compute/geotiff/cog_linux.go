package geotiff

import (
	"errors"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// fder is an output whose file descriptor is known (an *os.File, an
// outfile.Writer).
type fder interface{ Fd() uintptr }

// insertRange opens a gap of n bytes (a multiple of blockAlign) at the
// start of the file behind w without moving its data (ext4 and XFS):
// fallocate's FALLOC_FL_INSERT_RANGE. An error means the caller moves the
// data itself.
func insertRange(w io.WriterAt, n int64) error {
	f, ok := w.(fder)
	if !ok {
		return errors.New("no file descriptor")
	}
	return unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_INSERT_RANGE, 0, n)
}

// blockAlign is the file system's block size for w's file (4096 when
// unknown): insertRange needs multiples of it.
func blockAlign(w io.WriterAt) int {
	if f, ok := w.(fder); ok {
		var st unix.Stat_t
		if unix.Fstat(int(f.Fd()), &st) == nil && st.Blksize >= 512 && st.Blksize <= 1<<20 {
			return int(max(st.Blksize, 4096))
		}
	}
	return 4096
}

// copyRange copies the first n bytes of src to w at off inside the
// kernel (copy_file_range: no trip through the program's memory). An
// error (no descriptor, a short copy, a system without it) means the
// caller copies; what was copied is then written again.
func copyRange(w io.WriterAt, off int64, src *os.File, n int64) error {
	f, ok := w.(fder)
	if !ok || src == nil {
		return errors.New("no file descriptor")
	}
	in, out := int64(0), off
	for in < n {
		k, err := unix.CopyFileRange(int(src.Fd()), &in, int(f.Fd()), &out, int(n-in), 0)
		if err != nil {
			return err
		}
		if k == 0 {
			return errors.New("copy_file_range copied nothing")
		}
	}
	return nil
}
