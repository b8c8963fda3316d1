// Package cpu is the cgo bridge to Canopy's C NDVI kernel (ndvi.c): compiled
// with -O3, vectorised with AVX2 or SSE2 picked at run time on x86-64 (plain
// C elsewhere), multi-threaded with OpenMP, writing with streaming stores.
package cpu

/*
#cgo CFLAGS: -O3 -fopenmp -std=gnu11
#cgo LDFLAGS: -fopenmp
#include "ndvi.h"
*/
import "C"

import "unsafe"

// NDVI writes the NDVI of red and nir into out (all the same length) using
// up to threads OS threads (0: all) and returns the number used. The rule is
// compute.Pixel's: NaN for nodata and for nir+red == 0.
func NDVI(red, nir, out []float32, redND, nirND float32, hasRed, hasNIR bool, threads int) int {
	n := len(out)
	if n == 0 || len(red) < n || len(nir) < n {
		return 0
	}
	nd := C.canopy_nodata{red: C.float(redND), nir: C.float(nirND)}
	if hasRed {
		nd.has_red = 1
	}
	if hasNIR {
		nd.has_nir = 1
	}
	return int(C.canopy_ndvi((*C.float)(unsafe.Pointer(&red[0])), (*C.float)(unsafe.Pointer(&nir[0])),
		(*C.float)(unsafe.Pointer(&out[0])), C.size_t(n), nd, C.int(threads)))
}

// ISA names the instruction set the kernel uses on this CPU (avx2, sse2,
// scalar).
func ISA() string { return C.GoString(C.canopy_ndvi_isa()) }

// MaxThreads is the number of threads the kernel uses by default.
func MaxThreads() int { return int(C.canopy_max_threads()) }
