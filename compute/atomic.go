package compute

import (
	"bufio"

	"canopy/compute/outfile"
)

// WriteFileAtomic writes one output through fill with the rules of
// compute/outfile: a temporary file beside path, renamed over it only once
// complete (a failure, a full disk or an interrupt never leaves a
// half-written file and never touches an existing one), a replaced file's
// mode kept, and never over a symbolic link, a device or a directory.
func WriteFileAtomic(path string, fill func(w *outfile.Writer) error) error {
	set := outfile.NewSet()
	defer set.Abort()
	w, err := set.Create(path)
	if err != nil {
		return err
	}
	if err := fill(w); err != nil {
		return err
	}
	return set.Commit()
}

// WriteFileAtomicBuffered is WriteFileAtomic for streaming writers: fill
// gets a buffered writer, flushed before the rename.
func WriteFileAtomicBuffered(path string, fill func(w *bufio.Writer) error) error {
	return WriteFileAtomic(path, func(f *outfile.Writer) error {
		bw := bufio.NewWriterSize(f, 1<<20)
		if err := fill(bw); err != nil {
			return err
		}
		return bw.Flush()
	})
}
