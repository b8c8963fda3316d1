package outfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// OpenJournal opens a journal that a run appends to, line by line, and
// reads back on the next run (batch's DIR/batch.jsonl): it is created
// when missing and appended to otherwise, so it cannot be all or none,
// but it follows the other rules of the package. A symbolic link, a FIFO,
// a device, a socket or a directory at path is refused, not written
// through or waited on, and so is a file that is one of inputs (the same
// file, whatever the name). The file is opened for reading and appending;
// what it held is read through it, from offset 0.
func OpenJournal(path string, inputs ...string) (*os.File, error) {
	if path == "" {
		return nil, errors.New("write: empty journal path")
	}
	pre, err := os.Lstat(path)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("write %s: %w", path, bare(err))
	}
	if exists {
		if err := replaceable(pre); err != nil {
			return nil, fmt.Errorf("write %s: %s", path, appendable(err))
		}
	}
	// No following a link put there meanwhile, no waiting on a FIFO.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND|journalFlags, 0o666)
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", path, bare(err))
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = replaceable(st)
		if err == nil {
			err = errors.New("is not a regular file")
		}
		err = errors.New(appendable(err))
	}
	if err == nil && exists && !os.SameFile(pre, st) {
		err = errors.New("changed while it was being opened; refusing to write")
	}
	if err == nil {
		s := NewSet(inputs...)
		for _, in := range s.inputs {
			if os.SameFile(st, in.st) {
				err = fmt.Errorf("refusing to write the journal over %s, an input of this run", in.name)
			}
		}
	}
	if err != nil {
		f.Close()
		if !exists {
			os.Remove(path)
		}
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	return f, nil
}

// appendable words a refusal of replaceable for a file that is appended
// to.
func appendable(err error) string {
	return replaceWords.Replace(err.Error())
}

var replaceWords = strings.NewReplacer("refusing to replace it", "refusing to write to it")
