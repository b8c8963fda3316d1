package outfile

import "os"

// Scratch creates a scratch file in dir (os.TempDir() when dir is ""): a
// file for the program's own use while it runs, never an output, that the
// system frees when it is closed or when the program ends, however it
// ends. It is a file with no name on Linux (O_TMPFILE), one that Windows
// deletes when its handle is closed, and elsewhere (or where the file
// system lacks O_TMPFILE) one removed as soon as it is created.
func Scratch(dir string) (*os.File, error) {
	if dir == "" {
		dir = os.TempDir()
	}
	return scratch(dir)
}
