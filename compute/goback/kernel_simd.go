//go:build goexperiment.simd && amd64

package goback

import (
	"simd/archsimd"

	"canopy/compute"
)

// With GOEXPERIMENT=simd (Go 1.26's simd/archsimd) on an AVX2 CPU the Go
// kernel works on 8 pixels at a time: the same operations as Pixel, lane by
// lane, with NaN merged in where the sum is zero or an input is nodata.
var haveAVX2 = archsimd.X86.AVX2()

// SIMD reports whether the Go kernel runs 8-wide AVX2 vectors.
func SIMD() bool { return haveAVX2 }

// clearUpper runs VZEROUPPER. Built with GOEXPERIMENT=simd, the Go 1.26
// runtime restores the full AVX-512 register file after an asynchronous
// preemption, which leaves the upper halves dirty; every legacy-SSE scalar
// instruction after that pays a false dependency (measured: the scalar
// loop 2.3 times slower until the next VZEROUPPER).
func clearUpper() {
	if haveAVX2 {
		archsimd.ClearAVXUpperBits()
	}
}

func ndviSpan(out, red, nir []float32, nd compute.Nodata) {
	if haveAVX2 && len(out) >= 8 {
		k := ndviSpanAVX2(out, red, nir, nd)
		archsimd.ClearAVXUpperBits()
		out, red, nir = out[k:], red[k:], nir[k:]
	}
	ndviSpanScalar(out, red, nir, nd)
}

func ndviSpanAVX2(out, red, nir []float32, nd compute.Nodata) int {
	n := len(out) &^ 7
	red, nir = red[:n], nir[:n]
	zero := archsimd.BroadcastFloat32x8(0)
	nan := archsimd.BroadcastFloat32x8(compute.NaN32)
	if !nd.HasRed && !nd.HasNIR {
		for i := 0; i < n; i += 8 {
			r := archsimd.LoadFloat32x8Slice(red[i : i+8])
			v := archsimd.LoadFloat32x8Slice(nir[i : i+8])
			s := v.Add(r)
			q := v.Sub(r).Div(s)
			q.Merge(nan, s.NotEqual(zero)).StoreSlice(out[i : i+8])
		}
		return n
	}
	rnd := archsimd.BroadcastFloat32x8(nd.Red)
	nnd := archsimd.BroadcastFloat32x8(nd.NIR)
	for i := 0; i < n; i += 8 {
		r := archsimd.LoadFloat32x8Slice(red[i : i+8])
		v := archsimd.LoadFloat32x8Slice(nir[i : i+8])
		s := v.Add(r)
		ok := s.NotEqual(zero)
		if nd.HasRed {
			ok = ok.And(r.NotEqual(rnd))
		}
		if nd.HasNIR {
			ok = ok.And(v.NotEqual(nnd))
		}
		v.Sub(r).Div(s).Merge(nan, ok).StoreSlice(out[i : i+8])
	}
	return n
}
