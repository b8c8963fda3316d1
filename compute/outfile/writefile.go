package outfile

import "bufio"

// WriteFile writes one output through fill with the rules of a Set: a
// temporary file beside path, renamed over it only once complete (a
// failure, a full disk or an interrupt never leaves a half-written file
// and never touches an existing one), a replaced file's mode kept, and
// never over a symbolic link, a device or a directory.
func WriteFile(path string, fill func(w *Writer) error) error {
	set := NewSet()
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

// WriteFileBuffered is WriteFile for streaming writers: fill gets a
// buffered writer, flushed before the rename.
func WriteFileBuffered(path string, fill func(w *bufio.Writer) error) error {
	return WriteFile(path, func(f *Writer) error {
		bw := bufio.NewWriterSize(f, 1<<20)
		if err := fill(bw); err != nil {
			return err
		}
		return bw.Flush()
	})
}
