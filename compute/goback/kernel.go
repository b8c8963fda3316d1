package goback

import (
	"canopy/compute"
	"canopy/compute/internal/vec"
)

// ndviSpanScalar is the go backend's kernel over one span of pixels:
// compute.Pixel applied to every element, written so that the compiler
// drops all bounds checks in the loop, never vectorised.
func ndviSpanScalar(out, red, nir []float32, nd compute.Nodata) {
	red = red[:len(out)]
	nir = nir[:len(out)]
	if !nd.HasRed && !nd.HasNIR {
		for i := range out {
			r, n := red[i], nir[i]
			s := n + r
			q := (n - r) / s
			if s == 0 {
				q = compute.NaN32
			}
			out[i] = q
		}
		return
	}
	for i := range out {
		out[i] = compute.Pixel(red[i], nir[i], nd)
	}
}

// ndviPiece is how many pixels one call of the vector kernel takes: an
// assembly routine is not preempted while it runs, so a span is cut into
// pieces the scheduler can interleave.
const ndviPiece = 1 << 14

// ndviSpan is go-parallel's NDVI kernel: compute/internal/vec's NDVI (AVX2
// in Go assembly where the CPU has it, the same operations in Go
// otherwise; no build flag needed), then NaN where a band is nodata.
func ndviSpan(out, red, nir []float32, nd compute.Nodata) {
	red = red[:len(out)]
	nir = nir[:len(out)]
	for lo := 0; lo < len(out); lo += ndviPiece {
		hi := min(lo+ndviPiece, len(out))
		vec.NDVI(out[lo:hi], red[lo:hi], nir[lo:hi])
	}
	if nd.HasRed || nd.HasNIR {
		for i := range out {
			if (nd.HasRed && red[i] == nd.Red) || (nd.HasNIR && nir[i] == nd.NIR) {
				out[i] = compute.NaN32
			}
		}
	}
}
