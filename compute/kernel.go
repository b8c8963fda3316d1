package compute

// ndviSpanScalar is the Go kernel over one span of pixels: Pixel applied to every
// element, written so that the compiler drops all bounds checks in the loop.
func ndviSpanScalar(out, red, nir []float32, nd Nodata) {
	red = red[:len(out)]
	nir = nir[:len(out)]
	if !nd.HasRed && !nd.HasNIR {
		for i := range out {
			r, n := red[i], nir[i]
			s := n + r
			q := (n - r) / s
			if s == 0 {
				q = NaN32
			}
			out[i] = q
		}
		return
	}
	for i := range out {
		out[i] = Pixel(red[i], nir[i], nd)
	}
}
