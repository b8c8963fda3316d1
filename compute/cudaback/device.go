package cudaback

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"

	"canopy/native/cuda"
)

// Device describes the GPU the backend runs on.
type Device struct {
	Name string `json:"name"`
	// Major and Minor are the compute capability (9.0 for Hopper).
	Major int `json:"cc_major"`
	Minor int `json:"cc_minor"`
	// Memory is the device memory in bytes.
	Memory uint64 `json:"memory_bytes"`
	// SMs is the number of multiprocessors, CopyEngines the number of
	// asynchronous copy engines (2 or more copy both ways at once).
	SMs         int `json:"sms"`
	CopyEngines int `json:"copy_engines"`
	// Driver is the CUDA version the driver supports (13000 for 13.0).
	Driver int `json:"driver_cuda"`
	// DriverRelease is the NVIDIA driver's version ("580.159.04") where the
	// system reports it, else empty.
	DriverRelease string `json:"driver_release,omitempty"`
	// Library is the driver library loaded; Kernel says where the kernels
	// come from (PTX generated per job, compiled by the driver).
	Library string `json:"library"`
	Kernel  string `json:"kernel"`
}

// String is the device line `canopy backends` shows.
func (d Device) String() string {
	drv := "CUDA " + cuda.VersionString(d.Driver)
	if d.DriverRelease != "" {
		drv = d.DriverRelease + ", " + drv
	}
	return fmt.Sprintf("%s (compute %d.%d, %.1f GiB, %d SMs, %d copy engines; driver %s)",
		d.Name, d.Major, d.Minor, float64(d.Memory)/(1<<30), d.SMs, d.CopyEngines, drv)
}

// defaultDriver opens libcuda once per process; it is never closed.
var defaultDriver = sync.OnceValues(cuda.Open)

// openDriver returns the process's driver, or for tests a driver from the
// given libraries.
func openDriver(libs []string) (*cuda.Driver, error) {
	if libs == nil {
		return defaultDriver()
	}
	var err error = &cuda.LoadError{Library: "the CUDA driver", Msg: "no library names given"}
	for _, l := range libs {
		var d *cuda.Driver
		if d, err = cuda.Load(l); err == nil {
			if err = d.Init(); err == nil {
				return d, nil
			}
			d.Close()
		}
	}
	return nil, err
}

var releaseRe = regexp.MustCompile(`\b\d{3,}\.\d+(\.\d+)?\b`)

// driverRelease reads the NVIDIA kernel module's version on Linux.
func driverRelease() string {
	b, err := os.ReadFile("/proc/driver/nvidia/version")
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return releaseRe.FindString(line)
}

// reason turns an error from opening the device into the one sentence
// `canopy backends` shows.
func reason(err error, dev *Device) string {
	var le *cuda.LoadError
	if errors.As(err, &le) {
		if le.Symbol != "" {
			return fmt.Sprintf("the NVIDIA driver is too old: %s has no %s (Canopy needs a driver for CUDA 11 or newer)", le.Library, le.Symbol)
		}
		if strings.Contains(le.Msg, "No such file") {
			return fmt.Sprintf("no NVIDIA CUDA driver on this computer (%s not found)", le.Library)
		}
		return fmt.Sprintf("no NVIDIA CUDA driver: cannot load %s (%s)", le.Library, le.Msg)
	}
	code, ok := cuda.Code(err)
	if !ok {
		return err.Error()
	}
	switch code {
	case cuda.ErrNoDevice:
		return "no CUDA GPU: the NVIDIA driver is installed but finds no device"
	case cuda.ErrStubLibrary:
		return "the CUDA library found is the toolkit's link stub, not the NVIDIA driver: install the driver"
	case cuda.ErrInsufficientDriver, cuda.ErrSystemDriverMismatch, cuda.ErrCompatNotSupportedOnDevice:
		return "the NVIDIA driver cannot run CUDA here (its kernel module and library disagree or are too old): " + err.Error()
	case cuda.ErrNoBinaryForGPU, cuda.ErrUnsupportedPTXVersion, cuda.ErrInvalidPTX, cuda.ErrInvalidImage:
		if dev != nil && dev.Major > 0 && dev.Major*10+dev.Minor < 75 {
			return fmt.Sprintf("the GPU %s (compute capability %d.%d) is older than Canopy's CUDA kernels support (7.5, Turing, and newer)", dev.Name, dev.Major, dev.Minor)
		}
		drv := "?"
		if dev != nil {
			drv = cuda.VersionString(dev.Driver)
		}
		return fmt.Sprintf("the NVIDIA driver (CUDA %s) cannot compile Canopy's CUDA kernels (PTX) for this GPU: update the driver (%v)", drv, err)
	}
	return "CUDA cannot start: " + err.Error()
}
