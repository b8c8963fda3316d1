//go:build windows

package usererr

import (
	"errors"
	"os"
	"syscall"
)

// windowsWords explains the Windows errors that have no POSIX errno for
// explainOS to match, "" for any other. The one Windows gives most often
// to foresters: a file that another program holds open (a map open in
// QGIS, a table in Excel) cannot be replaced. os.Rename is MoveFileEx
// with MOVEFILE_REPLACE_EXISTING there, and it answers ERROR_ACCESS_DENIED
// for such a file; a file that is not read-only is then taken to be held
// open rather than forbidden.
func windowsWords(err error, path string, write bool) string {
	is := func(codes ...syscall.Errno) bool {
		for _, c := range codes {
			if errors.Is(err, c) {
				return true
			}
		}
		return false
	}
	const (
		accessDenied     = syscall.Errno(5)
		writeProtect     = syscall.Errno(19)
		sharingViolation = syscall.Errno(32)
		lockViolation    = syscall.Errno(33)
		handleDiskFull   = syscall.Errno(39)
		diskFull         = syscall.Errno(112)
		nameTooLong      = syscall.Errno(206)
		userMappedFile   = syscall.Errno(1224)
	)
	switch {
	case is(sharingViolation, lockViolation, userMappedFile):
		return "the file is in use by another program; close it there and try again"
	case is(accessDenied) && write && path != "":
		if st, e := os.Stat(path); e == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o200 != 0 {
			return "the file is open in another program (Windows does not replace it then); close it there and try again, or choose another name"
		}
	case is(handleDiskFull, diskFull):
		return "the disk is full; free some space or choose another place"
	case is(writeProtect):
		return "the disk is write-protected; choose another place"
	case is(nameTooLong):
		return "the name is too long; choose a shorter one"
	}
	return ""
}
