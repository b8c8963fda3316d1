package cuda

import (
	"errors"
	"runtime"
)

// DefaultLibraries are the driver library names Open tries on this system:
// libcuda.so.1 on Linux (the unversioned libcuda.so is often the toolkit's
// link stub, which cannot run anything), nvcuda.dll on Windows, none
// elsewhere.
func DefaultLibraries() []string {
	switch runtime.GOOS {
	case "linux", "freebsd":
		return []string{"libcuda.so.1"}
	case "windows":
		return []string{"nvcuda.dll"}
	}
	return nil
}

// Open loads the first of DefaultLibraries that opens, and initialises the
// driver (cuInit). It returns the error of the last library tried.
func Open() (*Driver, error) {
	names := DefaultLibraries()
	if len(names) == 0 {
		return nil, &LoadError{Library: "the CUDA driver", Msg: "NVIDIA's CUDA driver does not exist for " + runtime.GOOS}
	}
	var err error
	for _, name := range names {
		var d *Driver
		d, err = Load(name)
		if err != nil {
			continue
		}
		if err = d.Init(); err != nil {
			d.Close()
			return nil, err
		}
		return d, nil
	}
	return nil, err
}

func asError(err error, target **Error) bool { return errors.As(err, target) }
