//go:build !linux

package geotiff

import (
	"errors"
	"io"
	"os"
)

// insertRange is Linux's; elsewhere the caller moves the data itself.
func insertRange(w io.WriterAt, n int64) error { return errors.New("not on this system") }

// copyRange is Linux's; elsewhere the caller copies.
func copyRange(w io.WriterAt, off int64, src *os.File, n int64) error {
	return errors.New("not on this system")
}

// blockAlign is 4096 away from Linux.
func blockAlign(w io.WriterAt) int { return 4096 }
