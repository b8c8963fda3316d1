// Package warp is the cgo bridge to Canopy's warp kernel in C (warp.c):
// GDAL's nearest, bilinear, cubic and average resamplings over a plan's
// segments of source positions, in float64, each operation rounded as
// compute/warp's Go reference rounds it (ISO C11, in which GCC does not
// fuse a multiply and an add; FP_CONTRACT OFF for other compilers). The
// C is portable C11 (no intrinsics, no POSIX). One call runs on one
// thread over a span of destination rows; compute/warp spreads spans over
// the cores.
package warp

/*
#cgo CFLAGS: -O3 -std=c11
#cgo LDFLAGS: -lm
#include "warp.h"
*/
import "C"

import (
	"errors"
	"unsafe"
)

// Seg is one run of destination pixels; its layout is compute/warp's
// Segment's (three int32s, padding, four float64s).
type Seg struct {
	Start, N, K0, pad int32
	SX, SY, DX, DY    float64
}

// Params are a warp's numbers (see warp.h).
type Params struct {
	Type                     int
	SrcW, SrcH               int
	NoData                   float64
	HasNoData                bool
	DstW                     int
	DstNoData                float64
	HasDstNoData             bool
	Resampling               int
	Use4                     bool
	XScale, YScale           float64
	XRadius, YRadius, Filter int
}

func b2i(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// Rows warps destination rows [r0, r1). src and dst are the planes'
// bytes; mask and filled may be nil; far and farStart are read for
// average only. segs and far point at arrays laid out as Seg.
func Rows(p *Params, src []byte, mask []uint8, dst []byte, filled []uint8,
	segs unsafe.Pointer, rowStart []int32, far unsafe.Pointer, farStart []int32, r0, r1 int) error {
	if len(src) == 0 || len(dst) == 0 || len(rowStart) == 0 {
		return errors.New("warp: empty input")
	}
	cp := C.canopy_warp_params{
		_type: C.int(p.Type), src_w: C.int(p.SrcW), src_h: C.int(p.SrcH),
		nodata: C.double(p.NoData), has_nodata: b2i(p.HasNoData),
		dst_w: C.int(p.DstW), dst_nodata: C.double(p.DstNoData), has_dst_nodata: b2i(p.HasDstNoData),
		resampling: C.int(p.Resampling), use4: b2i(p.Use4),
		xscale: C.double(p.XScale), yscale: C.double(p.YScale),
		xradius: C.int(p.XRadius), yradius: C.int(p.YRadius), filter_radius: C.int(p.Filter),
	}
	var maskP, filledP *C.uint8_t
	if len(mask) > 0 {
		maskP = (*C.uint8_t)(unsafe.Pointer(&mask[0]))
	}
	if len(filled) > 0 {
		filledP = (*C.uint8_t)(unsafe.Pointer(&filled[0]))
	}
	var farStartP *C.int32_t
	if len(farStart) > 0 {
		farStartP = (*C.int32_t)(unsafe.Pointer(&farStart[0]))
	}
	rc := C.canopy_warp_rows(&cp, unsafe.Pointer(&src[0]), maskP, unsafe.Pointer(&dst[0]), filledP,
		(*C.canopy_seg)(segs), (*C.int32_t)(unsafe.Pointer(&rowStart[0])), (*C.canopy_seg)(far), farStartP, C.int(r0), C.int(r1))
	if rc != 0 {
		return errors.New("warp: out of memory for the kernel's weights")
	}
	return nil
}
