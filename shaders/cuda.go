package shaders

import (
	"bufio"
	"crypto/sha256"
	_ "embed" // for the CUDA source and fat binary below
	"encoding/hex"
	"fmt"
	"strings"
)

//go:generate bash build-cuda.sh

// CUDASource is the CUDA C source of the cuda backend's kernels (ndvi.cu).
//
//go:embed ndvi.cu
var CUDASource string

// CUDAFatbin is ndvi.cu compiled by build-cuda.sh: SASS for sm_75 to sm_120
// and PTX of the newest, loaded with cuModuleLoadData.
//
//go:embed ndvi.fatbin
var CUDAFatbin []byte

// CUDAManifest is ndvi.fatbin.sha256, written by build-cuda.sh: the SHA-256
// of the ndvi.cu and ndvi.fatbin it built together, in sha256sum format.
//
//go:embed ndvi.fatbin.sha256
var CUDAManifest string

// CUDAToolkit is the CUDA version whose nvcc built CUDAFatbin; a driver
// must support it to load the PTX, and build-cuda.sh refuses another nvcc.
const CUDAToolkit = "13.0"

// The kernels in CUDAFatbin and the block size they are compiled for
// (NDVI_BLOCK in ndvi.cu). Both take (red, nir, out CUdeviceptr, n uint64,
// nodataRed, nodataNIR float32, flags int32), flags bit 0 for a red nodata
// value and bit 1 for a NIR one.
const (
	CUDAKernelF32 = "ndvi_f32"
	CUDAKernelU16 = "ndvi_u16"
	CUDABlock     = 256
	// CUDAPixelsPerThreadF32 and CUDAPixelsPerThreadU16 are how many
	// pixels one thread of each kernel computes (the grid's divisor).
	CUDAPixelsPerThreadF32 = 8
	CUDAPixelsPerThreadU16 = 8
)

// CheckCUDAFatbin verifies that the embedded ndvi.cu and ndvi.fatbin are
// the pair CUDAManifest records, so that a kernel edited without running
// build-cuda.sh (or a fat binary from another source) is caught. The
// source is hashed with LF line ends, whatever a checkout made of them.
func CheckCUDAFatbin() error {
	want := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(CUDAManifest))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 2 {
			want[strings.TrimPrefix(f[1], "*")] = f[0]
		}
	}
	for _, c := range []struct {
		name string
		data []byte
	}{{"ndvi.cu", []byte(strings.ReplaceAll(CUDASource, "\r\n", "\n"))}, {"ndvi.fatbin", CUDAFatbin}} {
		w, ok := want[c.name]
		if !ok {
			return fmt.Errorf("shaders/ndvi.fatbin.sha256 has no hash of %s: rebuild with shaders/build-cuda.sh", c.name)
		}
		sum := sha256.Sum256(c.data)
		if got := hex.EncodeToString(sum[:]); got != w {
			return fmt.Errorf("shaders/%s has SHA-256 %s but ndvi.fatbin.sha256 records %s: rebuild ndvi.fatbin with shaders/build-cuda.sh (needs nvcc %s)", c.name, got[:12], w[:min(12, len(w))], CUDAToolkit)
		}
	}
	return nil
}
