//go:build !unix

package outfile

// journalFlags: the checks before and after opening stand for the flags
// Unix has.
const journalFlags = 0
