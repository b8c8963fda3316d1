package compute

import (
	"os"

	"canopy/compute/internal/infile"
)

// OpenInput opens a file a user named for reading, the way every reader of
// Canopy's does: only a regular file (or a symbolic link to one) is
// opened, and opening never blocks, so that a FIFO, a socket, a device or
// a folder gives an error at once ("is a named pipe (FIFO), not a file")
// instead of a read that waits forever or never ends. The error does not
// name the path: callers say it first.
func OpenInput(path string) (*os.File, error) {
	f, _, err := infile.Open(path)
	return f, err
}

// ReadInput reads a whole file a user named, opened as OpenInput does,
// refusing at once a file larger than limit bytes ("is 2 GiB, more than
// the 16 MiB Canopy reads from such a file").
func ReadInput(path string, limit int64) ([]byte, error) {
	return infile.ReadFile(path, limit)
}
