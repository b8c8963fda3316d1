//go:build !cgo

package deflate

import (
	"errors"
	"hash/adler32"
)

// Available reports whether libdeflate is linked in.
const Available = false

var errNoCgo = errors.New("libdeflate needs cgo (built with CGO_ENABLED=0)")

// Errors of Inflate.
var (
	ErrCorrupt = errors.New("corrupt DEFLATE data")
	ErrShort   = errors.New("DEFLATE data ends early")
	ErrLong    = errors.New("DEFLATE data holds more than expected")
)

// Adler32 continues the Adler-32 checksum adler (1 to start) over p (Go's
// hash/adler32 without cgo).
func Adler32(adler uint32, p []byte) uint32 {
	if adler == 1 {
		return adler32.Checksum(p)
	}
	// Continue a running sum: a, b from adler (RFC 1950).
	const mod = 65521
	a, b := adler&0xffff, adler>>16
	for _, c := range p {
		a = (a + uint32(c)) % mod
		b = (b + a) % mod
	}
	return b<<16 | a
}

// Compressor compresses whole buffers at one level (not available).
type Compressor struct{}

// NewCompressor reports that libdeflate is not linked in.
func NewCompressor(level int) (*Compressor, error) { return nil, errNoCgo }

// ZlibBound is not available without cgo.
func (c *Compressor) ZlibBound(n int) int { return 0 }

// ZlibCompress is not available without cgo.
func (c *Compressor) ZlibCompress(dst, src []byte) []byte { panic(errNoCgo) }

// Close does nothing.
func (c *Compressor) Close() {}

// Decompressor inflates whole buffers (not available).
type Decompressor struct{}

// NewDecompressor reports that libdeflate is not linked in.
func NewDecompressor() (*Decompressor, error) { return nil, errNoCgo }

// Inflate is not available without cgo.
func (d *Decompressor) Inflate(dst, src []byte) (used, n int, err error) { return 0, 0, errNoCgo }

// Close does nothing.
func (d *Decompressor) Close() {}
