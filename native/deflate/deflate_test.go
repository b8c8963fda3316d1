package deflate

import (
	"bytes"
	"compress/zlib"
	"errors"
	"hash/adler32"
	"io"
	"math/rand/v2"
	"testing"
)

func sample(n int) []byte {
	g := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i/7) ^ byte(g.IntN(4))
	}
	return b
}

func TestRoundTripWithGoZlib(t *testing.T) {
	if !Available {
		t.Skip("built without cgo")
	}
	src := sample(1 << 20)
	for _, level := range []int{1, 6, 12} {
		c, err := NewCompressor(level)
		if err != nil {
			t.Fatal(err)
		}
		z := c.ZlibCompress([]byte("keep"), src)
		c.Close()
		if string(z[:4]) != "keep" {
			t.Fatal("ZlibCompress did not append")
		}
		// Go's zlib reads it, Adler-32 checked.
		r, err := zlib.NewReader(bytes.NewReader(z[4:]))
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(r)
		if err != nil || !bytes.Equal(got, src) {
			t.Fatalf("level %d: Go's zlib reads %d bytes, %v", level, len(got), err)
		}
		// And the decompressor inflates the raw stream.
		d, _ := NewDecompressor()
		dst := make([]byte, len(src))
		used, n, err := d.Inflate(dst, z[6:])
		if err != nil || n != len(src) || used != len(z)-6-4 || !bytes.Equal(dst, src) {
			t.Fatalf("level %d: inflate %d of %d bytes (used %d of %d): %v", level, n, len(src), used, len(z)-6, err)
		}
		// A buffer too small or too large, and garbage.
		if _, _, err := d.Inflate(make([]byte, len(src)-1), z[6:]); !errors.Is(err, ErrLong) {
			t.Errorf("short buffer: %v", err)
		}
		if _, n, err := d.Inflate(make([]byte, len(src)+5), z[6:]); !errors.Is(err, ErrShort) || n != len(src) {
			t.Errorf("long buffer: %d %v", n, err)
		}
		if _, _, err := d.Inflate(dst, z[6:len(z)/2]); !errors.Is(err, ErrShort) && !errors.Is(err, ErrCorrupt) {
			t.Errorf("truncated data: %v", err)
		}
		if _, _, err := d.Inflate(dst, []byte{0xff, 0xff, 0xff, 0xff}); !errors.Is(err, ErrCorrupt) {
			t.Errorf("garbage: %v", err)
		}
		d.Close()
	}
	if _, err := NewCompressor(0); err == nil {
		t.Error("level 0 accepted")
	}
}

// Adler32 equals Go's hash/adler32, in one call or continued over parts.
func TestAdler32(t *testing.T) {
	for _, n := range []int{0, 1, 5551, 5552, 5553, 1 << 20} {
		p := sample(n)
		want := adler32.Checksum(p)
		if got := Adler32(1, p); got != want {
			t.Fatalf("%d bytes: %08x, want %08x", n, got, want)
		}
		if n > 1 {
			if got := Adler32(Adler32(1, p[:n/3]), p[n/3:]); got != want {
				t.Fatalf("%d bytes in two parts: %08x, want %08x", n, got, want)
			}
		}
	}
}
