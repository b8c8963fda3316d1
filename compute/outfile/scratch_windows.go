package outfile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// CreateFile's FILE_FLAG_DELETE_ON_CLOSE and FILE_ATTRIBUTE_TEMPORARY.
const (
	fileFlagDeleteOnClose  = 0x04000000
	fileAttributeTemporary = 0x00000100
)

// scratch is a file in dir that Windows deletes when its handle is
// closed, by Close or by the end of the process however it ends (Ctrl+C,
// a crash): Windows removes no open file, so a file created and removed at
// once, as elsewhere, would stay behind in the user's folder.
func scratch(dir string) (*os.File, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	var rb [8]byte
	for range 100 {
		if _, err := rand.Read(rb[:]); err != nil {
			return nil, err
		}
		name := filepath.Join(abs, ".canopy-scratch-"+hex.EncodeToString(rb[:]))
		long := name
		if len(long) >= 248 && !strings.HasPrefix(long, `\\`) {
			long = `\\?\` + long // past MAX_PATH, as Go's os package does
		}
		p, err := syscall.UTF16PtrFromString(long)
		if err != nil {
			return nil, err
		}
		h, err := syscall.CreateFile(p, syscall.GENERIC_READ|syscall.GENERIC_WRITE, 0, nil,
			syscall.CREATE_NEW, fileAttributeTemporary|fileFlagDeleteOnClose, 0)
		if errors.Is(err, syscall.ERROR_FILE_EXISTS) || errors.Is(err, syscall.ERROR_ALREADY_EXISTS) {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "create", Path: name, Err: err}
		}
		return os.NewFile(uintptr(h), name), nil
	}
	return nil, &os.PathError{Op: "create", Path: filepath.Join(abs, ".canopy-scratch-*"), Err: os.ErrExist}
}
