//go:build !linux && !windows

package geotiff

import "os"

// scratchFile is a file created in dir and removed at once: the system
// frees it when it is closed or the program ends.
func scratchFile(dir string) (*os.File, error) {
	f, err := os.CreateTemp(dir, ".canopy-scratch-*")
	if err != nil {
		return nil, err
	}
	os.Remove(f.Name())
	return f, nil
}
