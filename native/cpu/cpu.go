// Package cpu is the cgo bridge to Canopy's C kernels: the block
// interpreter that runs any compiled index program (program.c, Program)
// and the host copy the CPU backends are measured against (copy.c),
// compiled with -O3, vectorised with AVX2 picked at run time on x86-64,
// plain C elsewhere. The code is compiled as ISO C11, in which GCC does not
// fuse a multiply and an add (-ffp-contract=off, which cgo does not let a
// package ask for by name), so that every operation rounds as the Go
// definition does. One call runs on one thread; the c backend spreads
// spans over its worker pool.
package cpu

/*
#cgo CFLAGS: -O3 -std=c11
#include "copy.h"
*/
import "C"

import "unsafe"

// Copy copies src into dst (min of the lengths) with AVX2 loads and
// streaming stores where the CPU has them (memcpy elsewhere).
func Copy(dst, src []float32) {
	n := min(len(dst), len(src))
	if n == 0 {
		return
	}
	C.canopy_copy((*C.float)(unsafe.Pointer(&dst[0])), (*C.float)(unsafe.Pointer(&src[0])), C.size_t(n))
}
