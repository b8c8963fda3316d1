// Package season is the cgo bridge to Canopy's per-pixel models over a
// stack of dates in C (series.c): composites, the harmonic season-trend
// fit, the MOSUM monitoring and the anomaly rule, in float32, eight pixels
// a vector (sixteen where the CPU has AVX-512: the same operations lane by
// lane, so the same bits): the fits assemble XᵀX from per-date sums of
// cos/sin products (compute/season/normal's shortcut, within the
// conformance suite's bound of the Go kernel), the composites and the
// MOSUM's median are sorting networks, the Go kernel's bits; a span's last
// pixels, one at a time, follow the Go kernel's order of operations. It knows nothing of compute: the c backend (compute/cback)
// hands it the cube, the plan and the output planes as plain slices and
// spreads spans of pixels over its worker pool.
package season

/*
#cgo CFLAGS: -O3 -std=c11
#cgo LDFLAGS: -lm
#include "series.h"
*/
import "C"

import (
	"runtime"
	"unsafe"
)

// MaxDates and MaxCoef are the most dates and coefficients the C code
// holds per pixel.
const (
	MaxDates = C.CANOPY_SERIES_MAX_DATES
	MaxCoef  = C.CANOPY_SERIES_MAX_COEF
)

// Job is one block: the fields of compute/season's Plan and Cube (Kind,
// Stat and Direction numbered as there).
type Job struct {
	Kind, Stat, Direction, Run int
	Percentile, Critval        float32
	Threshold                  float32
	H                          float64
	Coefs                      int
	Values                     []float32 // len(Dates32) × Pixels, date-major
	Pixels                     int
	X                          []float32 // len(Dates32) × Coefs
	Dates32                    []float32
	Role                       []uint8
	Out                        [][]float32
}

// Pixels runs the job over the pixels [lo, hi); the caller has checked the
// job's shape (compute/season's Job.Check).
func Pixels(j *Job, lo, hi int) {
	if lo >= hi {
		return
	}
	var pin runtime.Pinner
	defer pin.Unpin()
	ptr := func(s []float32) *C.float {
		if len(s) == 0 {
			return nil
		}
		pin.Pin(&s[0])
		return (*C.float)(unsafe.Pointer(&s[0]))
	}
	out := new([16]*C.float)
	pin.Pin(out)
	for i, o := range j.Out {
		out[i] = ptr(o)
	}
	pin.Pin(&j.Role[0])
	cj := C.canopy_series_job{
		kind: C.int(j.Kind), stat: C.int(j.Stat), direction: C.int(j.Direction), run: C.int(j.Run),
		dates: C.int(len(j.Dates32)), pixels: C.int(j.Pixels), coefs: C.int(j.Coefs),
		percentile: C.float(j.Percentile), critval: C.float(j.Critval), threshold: C.float(j.Threshold),
		h:      C.double(j.H),
		values: ptr(j.Values), x: ptr(j.X), date32: ptr(j.Dates32),
		role: (*C.uchar)(unsafe.Pointer(&j.Role[0])),
		out:  &out[0],
	}
	C.canopy_series_pixels(&cj, C.size_t(lo), C.size_t(hi))
}
