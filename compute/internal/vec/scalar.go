package vec

import "math"

// The scalar definitions. Every exported operation is defined by the loop
// here; the AVX2 kernels must give the same float32 bits (NaN payloads
// aside) and compute the tail of every slice. Each arithmetic operation
// rounds to float32 once: the explicit float32 conversions keep the compiler
// from fusing a multiply and an add (the Go spec lets it fuse otherwise).

var nan32 = float32(math.NaN())

func addGo(dst, a, b []float32) {
	for i := range dst {
		dst[i] = a[i] + b[i]
	}
}

func subGo(dst, a, b []float32) {
	for i := range dst {
		dst[i] = a[i] - b[i]
	}
}

func mulGo(dst, a, b []float32) {
	for i := range dst {
		dst[i] = a[i] * b[i]
	}
}

func div1(a, b float32) float32 {
	if b == 0 {
		return nan32
	}
	return a / b
}

func min1(a, b float32) float32 {
	if a != a || b != b {
		return nan32
	}
	if a < b {
		return a
	}
	return b
}

func max1(a, b float32) float32 {
	if a != a || b != b {
		return nan32
	}
	if a > b {
		return a
	}
	return b
}

func divGo(dst, a, b []float32) {
	for i := range dst {
		dst[i] = div1(a[i], b[i])
	}
}

func minGo(dst, a, b []float32) {
	for i := range dst {
		dst[i] = min1(a[i], b[i])
	}
}

func maxGo(dst, a, b []float32) {
	for i := range dst {
		dst[i] = max1(a[i], b[i])
	}
}

func addKGo(dst, a []float32, k float32) {
	for i := range dst {
		dst[i] = a[i] + k
	}
}

func subKGo(dst, a []float32, k float32) {
	for i := range dst {
		dst[i] = a[i] - k
	}
}

func kSubGo(dst, a []float32, k float32) {
	for i := range dst {
		dst[i] = k - a[i]
	}
}

func mulKGo(dst, a []float32, k float32) {
	for i := range dst {
		dst[i] = a[i] * k
	}
}

func divKGo(dst, a []float32, k float32) {
	for i := range dst {
		dst[i] = div1(a[i], k)
	}
}

func kDivGo(dst, a []float32, k float32) {
	for i := range dst {
		dst[i] = div1(k, a[i])
	}
}

func minKGo(dst, a []float32, k float32) {
	for i := range dst {
		dst[i] = min1(a[i], k)
	}
}

func maxKGo(dst, a []float32, k float32) {
	for i := range dst {
		dst[i] = max1(a[i], k)
	}
}

func negGo(dst, a []float32) {
	for i := range dst {
		dst[i] = -a[i]
	}
}

func absGo(dst, a []float32) {
	for i := range dst {
		dst[i] = math.Float32frombits(math.Float32bits(a[i]) &^ (1 << 31))
	}
}

func sqrtGo(dst, a []float32) {
	for i := range dst {
		dst[i] = float32(math.Sqrt(float64(a[i])))
	}
}

func finiteGo(dst, a []float32) {
	for i := range dst {
		v := a[i]
		if math.IsInf(float64(v), 0) {
			v = nan32
		}
		dst[i] = v
	}
}

func ndvi1(red, nir float32) float32 {
	s := nir + red
	if s == 0 {
		return nan32
	}
	return (nir - red) / s
}

func ndviGo(out, red, nir []float32) {
	for i := range out {
		out[i] = ndvi1(red[i], nir[i])
	}
}

// sample is a stored sample type the loads read.
type sample interface {
	uint8 | uint16 | int16 | uint32 | int32 | float32
}

// conv1 is the value of one stored sample under c.
func conv1[T sample](x T, c Conv, identity bool) float32 {
	v := float32(x)
	if !identity {
		v = float32(float32(v+c.Add)*c.Scale) + c.Offset
	}
	if c.HasNoData && float64(x) == c.NoData {
		v = nan32
	}
	return v
}

func loadGo[T sample](dst []float32, src []T, c Conv) {
	id := c.IsIdentity()
	for i := range dst {
		dst[i] = conv1(src[i], c, id)
	}
}

func maskNaNGo(dst []float32, mask []uint8) {
	for i := range dst {
		if mask[i] != 0 {
			dst[i] = nan32
		}
	}
}

func ndviU16Go(out []float32, red, nir []uint16, cr, cn Conv) {
	idr, idn := cr.IsIdentity(), cn.IsIdentity()
	for i := range out {
		out[i] = ndvi1(conv1(red[i], cr, idr), conv1(nir[i], cn, idn))
	}
}
