package cuda

import "fmt"

// Result is a CUresult, the status every driver function returns.
type Result int

// The CUresult values Canopy tells apart (cuda.h's CUDA_ERROR_*).
const (
	Success                        Result = 0
	ErrInvalidValue                Result = 1
	ErrOutOfMemory                 Result = 2
	ErrNotInitialized              Result = 3
	ErrStubLibrary                 Result = 34
	ErrInsufficientDriver          Result = 35
	ErrNoDevice                    Result = 100
	ErrInvalidDevice               Result = 101
	ErrInvalidImage                Result = 200
	ErrNoBinaryForGPU              Result = 209
	ErrInvalidPTX                  Result = 218
	ErrUnsupportedPTXVersion       Result = 222
	ErrHostMemoryAlreadyRegistered Result = 712
	ErrNotPermitted                Result = 800
	ErrNotSupported                Result = 801
	ErrSystemDriverMismatch        Result = 803
	ErrCompatNotSupportedOnDevice  Result = 804
)

// Error is a driver call that returned something other than CUDA_SUCCESS.
type Error struct {
	// Func is the driver function, as exported by the library
	// ("cuMemAlloc_v2").
	Func string
	// Code is the CUresult.
	Code Result
	// Name and Text are the driver's cuGetErrorName and cuGetErrorString.
	Name, Text string
}

func (e *Error) Error() string {
	if e.Name == "" {
		return fmt.Sprintf("%s failed with CUresult %d", e.Func, int(e.Code))
	}
	return fmt.Sprintf("%s: %s (%s)", e.Func, e.Text, e.Name)
}

// LoadError is a driver library that could not be opened, or that lacks a
// function Canopy needs (a driver older than CUDA 11).
type LoadError struct {
	// Library is the file name tried ("libcuda.so.1").
	Library string
	// Symbol is the missing function, empty when the library itself could
	// not be opened.
	Symbol string
	// Msg is the system loader's message when the library could not be
	// opened.
	Msg string
}

func (e *LoadError) Error() string {
	if e.Symbol != "" {
		return fmt.Sprintf("%s has no %s: the NVIDIA driver is older than Canopy needs (CUDA 11 or newer)", e.Library, e.Symbol)
	}
	return fmt.Sprintf("cannot load %s: %s", e.Library, e.Msg)
}

// Code returns the CUresult carried by err (an *Error, possibly wrapped),
// or Success and false when err is not a driver error.
func Code(err error) (Result, bool) {
	var e *Error
	if asError(err, &e) {
		return e.Code, true
	}
	return Success, false
}

// VersionString formats a cuDriverGetVersion number (13000) as "13.0".
func VersionString(v int) string {
	return fmt.Sprintf("%d.%d", v/1000, v%1000/10)
}
