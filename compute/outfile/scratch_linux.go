package outfile

import (
	"os"

	"golang.org/x/sys/unix"
)

// scratch is a file with no name in dir (O_TMPFILE), or one created and
// removed at once where the file system lacks O_TMPFILE.
func scratch(dir string) (*os.File, error) {
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o600)
	if err == nil {
		return os.NewFile(uintptr(fd), dir+"/(scratch)"), nil
	}
	return createRemoved(dir)
}
