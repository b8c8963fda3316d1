package ui

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// userError says what a system error means in a user's words: the file
// is missing, may not be read or written, the disk is full. Other errors
// are returned as they are (the engine's already name the file and the
// problem).
func userError(err error) error {
	var pe *fs.PathError
	path := ""
	if errors.As(err, &pe) {
		path = pe.Path + ": "
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, fs.ErrNotExist):
		return errors.New(path + "there is no such file or folder")
	case errors.Is(err, fs.ErrPermission):
		return errors.New(path + "you are not allowed to open or write it (permissions)")
	case errors.Is(err, syscall.ENOSPC):
		return errors.New(path + "the disk is full")
	case errors.Is(err, syscall.EISDIR):
		return errors.New(path + "this is a folder, not a file")
	case errors.Is(err, syscall.EROFS):
		return errors.New(path + "the disk is read-only")
	case errors.Is(err, os.ErrDeadlineExceeded):
		return errors.New(path + "the disk did not answer in time")
	}
	return err
}

// explain is userError for any error.
func explain(err error) error { return userError(err) }
