//go:build cgo

package deflate

/*
#cgo LDFLAGS: -ldeflate
#include <libdeflate.h>
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"
)

// Available reports whether libdeflate is linked in.
const Available = true

// Errors of Inflate.
var (
	// ErrCorrupt is data that is not valid DEFLATE.
	ErrCorrupt = errors.New("corrupt DEFLATE data")
	// ErrShort is data that ends before filling the buffer.
	ErrShort = errors.New("DEFLATE data ends early")
	// ErrLong is data that holds more than the buffer.
	ErrLong = errors.New("DEFLATE data holds more than expected")
)

// Adler32 continues the Adler-32 checksum adler (1 to start) over p with
// libdeflate's vectorised routine (the zlib stream's trailer).
func Adler32(adler uint32, p []byte) uint32 {
	if len(p) == 0 {
		return adler
	}
	return uint32(C.libdeflate_adler32(C.uint32_t(adler), unsafe.Pointer(&p[0]), C.size_t(len(p))))
}

// Compressor compresses whole buffers at one level.
type Compressor struct {
	c     *C.struct_libdeflate_compressor
	level int
}

// NewCompressor returns a compressor at level 1 (fastest) to 12 (smallest;
// 6 is zlib's default). Close it when done.
func NewCompressor(level int) (*Compressor, error) {
	if level < 1 || level > 12 {
		return nil, fmt.Errorf("libdeflate level %d: must be 1 to 12", level)
	}
	c := C.libdeflate_alloc_compressor(C.int(level))
	if c == nil {
		return nil, errors.New("libdeflate: out of memory for a compressor")
	}
	return &Compressor{c: c, level: level}, nil
}

// ZlibBound is the most bytes ZlibCompress can write for n input bytes.
func (c *Compressor) ZlibBound(n int) int {
	return int(C.libdeflate_zlib_compress_bound(c.c, C.size_t(n)))
}

// ZlibCompress appends src compressed as a zlib stream to dst and returns
// the extended slice.
func (c *Compressor) ZlibCompress(dst, src []byte) []byte {
	need := c.ZlibBound(len(src))
	if cap(dst)-len(dst) < need {
		nd := make([]byte, len(dst), len(dst)+need)
		copy(nd, dst)
		dst = nd
	}
	out := dst[len(dst):cap(dst)]
	var in unsafe.Pointer
	if len(src) > 0 {
		in = unsafe.Pointer(&src[0])
	}
	n := C.libdeflate_zlib_compress(c.c, in, C.size_t(len(src)), unsafe.Pointer(&out[0]), C.size_t(len(out)))
	if n == 0 {
		panic("deflate: libdeflate_zlib_compress found its bound too small")
	}
	return dst[:len(dst)+int(n)]
}

// Close frees the compressor.
func (c *Compressor) Close() {
	if c.c != nil {
		C.libdeflate_free_compressor(c.c)
		c.c = nil
	}
}

// Decompressor inflates whole buffers.
type Decompressor struct {
	d *C.struct_libdeflate_decompressor
}

// NewDecompressor returns a decompressor. Close it when done.
func NewDecompressor() (*Decompressor, error) {
	d := C.libdeflate_alloc_decompressor()
	if d == nil {
		return nil, errors.New("libdeflate: out of memory for a decompressor")
	}
	return &Decompressor{d: d}, nil
}

// Inflate decompresses the raw DEFLATE data in src into dst, which it
// must fill exactly: ErrShort when the data ends early (dst's first n
// bytes then hold what it gave), ErrLong when it holds more, ErrCorrupt
// when it is not DEFLATE. It returns how many bytes of src the data took.
func (d *Decompressor) Inflate(dst, src []byte) (used, n int, err error) {
	if len(dst) == 0 {
		return 0, 0, nil
	}
	if len(src) == 0 {
		return 0, 0, ErrShort
	}
	var in, out C.size_t
	r := C.libdeflate_deflate_decompress_ex(d.d, unsafe.Pointer(&src[0]), C.size_t(len(src)),
		unsafe.Pointer(&dst[0]), C.size_t(len(dst)), &in, &out)
	switch r {
	case C.LIBDEFLATE_SUCCESS:
		if int(out) < len(dst) {
			return int(in), int(out), ErrShort
		}
		return int(in), int(out), nil
	case C.LIBDEFLATE_INSUFFICIENT_SPACE:
		return 0, len(dst), ErrLong
	case C.LIBDEFLATE_SHORT_OUTPUT:
		return 0, 0, ErrShort
	}
	return 0, 0, ErrCorrupt
}

// Close frees the decompressor.
func (d *Decompressor) Close() {
	if d.d != nil {
		C.libdeflate_free_decompressor(d.d)
		d.d = nil
	}
}
