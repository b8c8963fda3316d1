//go:build !windows

package outfile

import "os"

// createRemoved creates a file in dir and removes it at once: the system
// frees it when it is closed or the program ends (not on Windows, which
// removes no open file).
func createRemoved(dir string) (*os.File, error) {
	f, err := os.CreateTemp(dir, ".canopy-scratch-*")
	if err != nil {
		return nil, err
	}
	os.Remove(f.Name())
	return f, nil
}
