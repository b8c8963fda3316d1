package vec

import "math"

// The scalar definitions. Every exported operation is defined by the loop
// here; the AVX2 kernels must give the same float32 bits (NaN payloads
// aside) and compute the tail of every slice. Each arithmetic operation
// rounds to float32 once: the explicit float32 conversions keep the compiler
// from fusing a multiply and an add (the Go spec lets it fuse otherwise).

var nan32 = float32(math.NaN())

func addGo(dst, a, b []float32) {
	a, b = a[:len(dst)], b[:len(dst)]
	for i := range dst {
		dst[i] = a[i] + b[i]
	}
}

func subGo(dst, a, b []float32) {
	a, b = a[:len(dst)], b[:len(dst)]
	for i := range dst {
		dst[i] = a[i] - b[i]
	}
}

func mulGo(dst, a, b []float32) {
	a, b = a[:len(dst)], b[:len(dst)]
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
	a, b = a[:len(dst)], b[:len(dst)]
	for i := range dst {
		dst[i] = div1(a[i], b[i])
	}
}

func minGo(dst, a, b []float32) {
	a, b = a[:len(dst)], b[:len(dst)]
	for i := range dst {
		dst[i] = min1(a[i], b[i])
	}
}

func maxGo(dst, a, b []float32) {
	a, b = a[:len(dst)], b[:len(dst)]
	for i := range dst {
		dst[i] = max1(a[i], b[i])
	}
}

func addKGo(dst, a []float32, k float32) {
	a = a[:len(dst)]
	for i := range dst {
		dst[i] = a[i] + k
	}
}

func subKGo(dst, a []float32, k float32) {
	a = a[:len(dst)]
	for i := range dst {
		dst[i] = a[i] - k
	}
}

func kSubGo(dst, a []float32, k float32) {
	a = a[:len(dst)]
	for i := range dst {
		dst[i] = k - a[i]
	}
}

func mulKGo(dst, a []float32, k float32) {
	a = a[:len(dst)]
	for i := range dst {
		dst[i] = a[i] * k
	}
}

func divKGo(dst, a []float32, k float32) {
	a = a[:len(dst)]
	for i := range dst {
		dst[i] = div1(a[i], k)
	}
}

func kDivGo(dst, a []float32, k float32) {
	a = a[:len(dst)]
	for i := range dst {
		dst[i] = div1(k, a[i])
	}
}

func minKGo(dst, a []float32, k float32) {
	a = a[:len(dst)]
	for i := range dst {
		dst[i] = min1(a[i], k)
	}
}

func maxKGo(dst, a []float32, k float32) {
	a = a[:len(dst)]
	for i := range dst {
		dst[i] = max1(a[i], k)
	}
}

func negGo(dst, a []float32) {
	a = a[:len(dst)]
	for i := range dst {
		dst[i] = -a[i]
	}
}

func absGo(dst, a []float32) {
	a = a[:len(dst)]
	for i := range dst {
		dst[i] = math.Float32frombits(math.Float32bits(a[i]) &^ (1 << 31))
	}
}

func sqrtGo(dst, a []float32) {
	a = a[:len(dst)]
	for i := range dst {
		dst[i] = float32(math.Sqrt(float64(a[i])))
	}
}

func finiteGo(dst, a []float32) {
	a = a[:len(dst)]
	for i := range dst {
		v := a[i]
		if math.IsInf(float64(v), 0) {
			v = nan32
		}
		dst[i] = v
	}
}

// ndvi1 is one pixel of NDVI, written as the plain loop Canopy's go backend
// always had: the quotient computed whatever the sum, then replaced (so
// that the loop runs at the divider's pace, not the branch's).
func ndvi1(red, nir float32) float32 {
	s := nir + red
	q := (nir - red) / s
	if s == 0 {
		q = nan32
	}
	return q
}

func ndviGo(out, red, nir []float32) {
	red, nir = red[:len(out)], nir[:len(out)]
	for i := range out {
		out[i] = ndvi1(red[i], nir[i])
	}
}

// ndFinite1 is one pixel of NDFinite: NaN where the sum is ±0 and where
// the quotient is ±Inf (a NaN from NaN inputs stays as the division gives
// it), found on the quotient's bits, without a float64 conversion.
func ndFinite1(red, nir float32) float32 {
	s := nir + red
	q := (nir - red) / s
	// One test a pixel on the common path: only a quotient that is not a
	// number or infinite (a zero sum gives one of them) looks further.
	if b := math.Float32bits(q); b&0x7f800000 == 0x7f800000 && (s == 0 || b&0x7fffff == 0) {
		q = nan32
	}
	return q
}

// ndFiniteGo runs ndFinite1 four pixels a turn: the loop's own counting
// and bounds checks then cost what the finite check adds, and a pixel costs
// what one of the plain NDVI loop without the finite check does.
func ndFiniteGo(out, red, nir []float32) {
	red, nir = red[:len(out)], nir[:len(out)]
	i := 0
	for ; i < len(out)-3; i += 4 {
		out[i] = ndFinite1(red[i], nir[i])
		out[i+1] = ndFinite1(red[i+1], nir[i+1])
		out[i+2] = ndFinite1(red[i+2], nir[i+2])
		out[i+3] = ndFinite1(red[i+3], nir[i+3])
	}
	for ; i < len(out); i++ {
		out[i] = ndFinite1(red[i], nir[i])
	}
}

// sample is a stored sample type the loads read.
type sample interface {
	uint8 | uint16 | int16 | uint32 | int32 | float32
}

// loadGo converts src into dst: (float32(x) + Add) * Scale + Offset with
// three roundings, or float32(x) alone for an identity conversion; NaN where
// the sample equals the nodata value.
func loadGo[T sample](dst []float32, src []T, c Conv) {
	add, scale, offset, id := c.Add, c.Scale, c.Offset, c.IsIdentity()
	nd, has := c.NoData, c.HasNoData
	src = src[:len(dst)]
	for i, x := range src {
		v := float32(x)
		if !id {
			v = float32(float32(v+add)*scale) + offset
		}
		if has && float64(x) == nd {
			v = nan32
		}
		dst[i] = v
	}
}

func maskNaNGo(dst []float32, mask []uint8) {
	mask = mask[:len(dst)]
	for i := range dst {
		if mask[i] != 0 {
			dst[i] = nan32
		}
	}
}
