//go:build !(goexperiment.simd && amd64)

package goback

import "canopy/compute"

// SIMD reports whether the Go kernel runs 8-wide AVX2 vectors; this build
// (without GOEXPERIMENT=simd on amd64) runs the scalar loop.
func SIMD() bool { return false }

func ndviSpan(out, red, nir []float32, nd compute.Nodata) { ndviSpanScalar(out, red, nir, nd) }

func clearUpper() {}
