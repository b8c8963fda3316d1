package raster

import (
	"fmt"
)

// Budget is the memory a load may take without Canopy saying so first:
// any input stays within it unless its image really is that large.
const Budget = 1 << 30

// Need is what loading bands will cost, known from the files' headers
// before anything is decoded.
type Need struct {
	// Width and Height are the bands' size in pixels.
	Width, Height int
	// Memory is the bytes the decoded float32 planes and the decoders'
	// buffers take.
	Memory int64
}

// WithPlanes returns n with k more float32 planes of the bands' size (a
// result the caller will allocate).
func (n Need) WithPlanes(k int) Need {
	n.Memory += int64(k) * int64(n.Width) * int64(n.Height) * 4
	return n
}

// Large reports whether the load needs more than Budget.
func (n Need) Large() bool { return n.Memory > Budget }

// String says it in one line: "the bands are 40000x40000 pixels: this
// needs about 18 GiB of memory".
func (n Need) String() string {
	return fmt.Sprintf("the bands are %dx%d pixels: this needs about %s of memory", n.Width, n.Height, Bytes(n.Memory))
}

// Estimate is what Load(spec) will cost.
func Estimate(spec string) (Need, error) {
	h, err := openHeader(spec)
	if err != nil {
		return Need{}, err
	}
	defer h.close()
	return Need{Width: h.w, Height: h.h, Memory: h.memory(1)}, nil
}

// EstimatePair is what LoadPair(redSpec, nirSpec) will cost: both bands'
// planes and decoders (the size is red's; LoadPair refuses bands of
// different sizes).
func EstimatePair(redSpec, nirSpec string) (Need, error) {
	r, err := Estimate(redSpec)
	if err != nil {
		return Need{}, err
	}
	n, err := Estimate(nirSpec)
	if err != nil {
		return Need{}, err
	}
	r.Memory += n.Memory
	return r, nil
}

// Bytes formats a byte count for people in powers of 1024: "812 MiB",
// "1.2 GiB", "18 GiB".
func Bytes(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d bytes", n)
	}
	v, i := float64(n), 0
	for v >= 1024 && i < 5 {
		v /= 1024
		i++
	}
	unit := []string{"", "KiB", "MiB", "GiB", "TiB", "PiB"}[i]
	if v < 10 {
		return fmt.Sprintf("%.1f %s", v, unit)
	}
	return fmt.Sprintf("%.0f %s", v, unit)
}
