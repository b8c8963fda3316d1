//go:build !linux && !windows

package outfile

import "os"

// scratch is a file created in dir and removed at once.
func scratch(dir string) (*os.File, error) { return createRemoved(dir) }
