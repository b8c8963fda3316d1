package compute

import "math"

// NaN32 is the quiet float32 NaN every backend writes for invalid pixels.
var NaN32 = math.Float32frombits(0x7fc00000)

// Pixel is the float32 NDVI kernel for one pixel, the definition every
// backend follows: NaN for nodata and for NIR + Red == 0, else
// (NIR - Red) / (NIR + Red) in float32.
func Pixel(r, n float32, nd Nodata) float32 {
	if (nd.HasRed && r == nd.Red) || (nd.HasNIR && n == nd.NIR) {
		return NaN32
	}
	s := n + r
	if s == 0 {
		return NaN32
	}
	return (n - r) / s
}

// Reference64 is the float64 truth for one pixel: the same rule evaluated in
// float64 from the float32 inputs. It returns NaN where Pixel must be NaN.
func Reference64(r, n float32, nd Nodata) float64 {
	if (nd.HasRed && r == nd.Red) || (nd.HasNIR && n == nd.NIR) {
		return math.NaN()
	}
	R, N := float64(r), float64(n)
	s := N + R
	if s == 0 {
		return math.NaN()
	}
	return (N - R) / s
}
