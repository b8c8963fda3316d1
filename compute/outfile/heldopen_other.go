//go:build !windows

package outfile

// heldOpen returns err: only Windows refuses to replace a file another
// program holds open.
func heldOpen(err error) error { return err }
