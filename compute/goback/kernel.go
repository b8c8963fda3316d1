package goback

import "canopy/compute"

// ndviSpanScalar is the Go kernel over one span of pixels: Pixel applied to every
// element, written so that the compiler drops all bounds checks in the loop.
func ndviSpanScalar(out, red, nir []float32, nd compute.Nodata) {
	// In pieces, each after a VZEROUPPER (see clearUpper): the Go runtime's
	// preemption signal can leave the vector registers' upper halves dirty
	// in the middle of a long loop.
	const piece = 1 << 14
	for len(out) > piece {
		clearUpper()
		ndviScalar(out[:piece], red[:piece], nir[:piece], nd)
		out, red, nir = out[piece:], red[piece:], nir[piece:]
	}
	clearUpper()
	ndviScalar(out, red, nir, nd)
}

func ndviScalar(out, red, nir []float32, nd compute.Nodata) {
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
