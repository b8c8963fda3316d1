//go:build unix

package infile

import (
	"os"
	"syscall"
)

// openNonBlocking opens with O_NONBLOCK, so that a FIFO swapped in after
// the stat cannot block the open; for a regular file the flag changes
// nothing. O_NOCTTY keeps a terminal device from becoming ours.
func openNonBlocking(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
}
