//go:build !unix

package infile

import "os"

// openNonBlocking opens path; on systems without O_NONBLOCK the stat
// before and after the open are the checks.
func openNonBlocking(path string) (*os.File, error) { return os.Open(path) }
