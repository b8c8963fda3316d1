// Package cpu is the cgo bridge to Canopy's C kernels: the block
// interpreter that runs any compiled index program (program.c, Program) and
// the fused NDVI kernel (ndvi.c), compiled with -O3, vectorised with AVX2
// (and SSE2 for NDVI) picked at run time on x86-64, plain C elsewhere. The
// code is compiled as ISO C11, in which GCC does not fuse a multiply and an
// add (-ffp-contract=off, which cgo does not let a package ask for by name),
// so that every operation rounds as the Go definition does. One call runs on
// one thread; the c backend spreads spans over its worker pool.
package cpu

/*
#cgo CFLAGS: -O3 -std=c11
#include "ndvi.h"
*/
import "C"

import "unsafe"

// NDVI writes the NDVI of red and nir into out (red and nir at least as long
// as out). The rule is compute.Pixel's: NaN for nodata and for nir+red == 0.
func NDVI(out, red, nir []float32, redND, nirND float32, hasRed, hasNIR bool) {
	n := len(out)
	if n == 0 || len(red) < n || len(nir) < n {
		return
	}
	nd := C.canopy_nodata{red: C.float(redND), nir: C.float(nirND)}
	if hasRed {
		nd.has_red = 1
	}
	if hasNIR {
		nd.has_nir = 1
	}
	C.canopy_ndvi((*C.float)(unsafe.Pointer(&red[0])), (*C.float)(unsafe.Pointer(&nir[0])),
		(*C.float)(unsafe.Pointer(&out[0])), C.size_t(n), nd)
}

// Copy copies src into dst (min of the lengths) with AVX2 loads and
// streaming stores where the CPU has them (memcpy elsewhere).
func Copy(dst, src []float32) {
	n := min(len(dst), len(src))
	if n == 0 {
		return
	}
	C.canopy_copy((*C.float)(unsafe.Pointer(&dst[0])), (*C.float)(unsafe.Pointer(&src[0])), C.size_t(n))
}

// ISA names the instruction set the kernel uses on this CPU (avx2, sse2,
// scalar).
func ISA() string { return C.GoString(C.canopy_ndvi_isa()) }
