package outfile

import (
	"errors"
	"fmt"
	"syscall"
)

// heldOpen adds what a person can do to the error Windows gives when a
// file cannot be replaced because another program holds it open (an
// output open in QGIS or Excel): os.Rename is MoveFileEx with
// MOVEFILE_REPLACE_EXISTING there, which fails with "Access is denied"
// for such a file. The temporary file is removed and nothing is replaced.
func heldOpen(err error) error {
	if errors.Is(err, syscall.ERROR_ACCESS_DENIED) || errors.Is(err, syscall.Errno(32) /* ERROR_SHARING_VIOLATION */) ||
		errors.Is(err, syscall.Errno(33) /* ERROR_LOCK_VIOLATION */) {
		return fmt.Errorf("%w (is the file open in another program, or read-only? close it there and run again)", err)
	}
	return err
}
