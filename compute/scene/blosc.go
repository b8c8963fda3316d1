package scene

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"
)

// Blosc (version 1 format), as numcodecs writes the chunks of Zarr v2
// arrays: a 16-byte header, the offsets of its blocks, and each block
// compressed whole or split into one stream per byte of the type,
// shuffled by byte or by bit before. This decodes what EOPF products use
// (zstd, with bit shuffle) and zlib; other codecs are refused by name.

const (
	bloscShuffle    = 0x1
	bloscMemcpyed   = 0x2
	bloscBitShuffle = 0x4
	bloscDontSplit  = 0x10
)

// bloscCodecs names Blosc's compressor codes (flags >> 5).
var bloscCodecs = []string{"blosclz", "lz4", "snappy", "zlib", "zstd"}

// zstdDec is one decoder shared by every chunk (DecodeAll is safe for
// concurrent use).
// Its memory is bounded by the largest chunk a product may have.
var zstdDec, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(maxChunk+1<<20))

// unblosc decodes a Blosc buffer whose decoded size must be want bytes.
func unblosc(b []byte, want int) ([]byte, error) {
	if len(b) < 16 {
		return nil, fmt.Errorf("blosc: %d bytes, shorter than its header", len(b))
	}
	version, flags, typesize := b[0], b[2], int(b[3])
	nbytes := int(binary.LittleEndian.Uint32(b[4:]))
	blocksize := int(binary.LittleEndian.Uint32(b[8:]))
	cbytes := int(binary.LittleEndian.Uint32(b[12:]))
	switch {
	case version == 0 || version > 5:
		return nil, fmt.Errorf("blosc: format version %d, not Blosc 1's", version)
	case nbytes != want:
		return nil, fmt.Errorf("blosc: holds %d bytes, the chunk has %d", nbytes, want)
	case cbytes != len(b):
		return nil, fmt.Errorf("blosc: says %d bytes, the chunk file has %d", cbytes, len(b))
	case typesize < 1:
		return nil, fmt.Errorf("blosc: type size 0")
	}
	out := make([]byte, nbytes)
	if flags&bloscMemcpyed != 0 {
		if len(b)-16 < nbytes {
			return nil, fmt.Errorf("blosc: stored data cut short")
		}
		copy(out, b[16:16+nbytes])
		return out, nil
	}
	if nbytes == 0 {
		return out, nil
	}
	if blocksize <= 0 {
		return nil, fmt.Errorf("blosc: block size %d", blocksize)
	}
	if flags&(bloscShuffle|bloscBitShuffle) == bloscShuffle|bloscBitShuffle {
		return nil, fmt.Errorf("blosc: a Blosc 2 extended header, not read")
	}
	blocksize = min(blocksize, nbytes)
	nblocks := (nbytes + blocksize - 1) / blocksize
	if 16+4*nblocks > len(b) {
		return nil, fmt.Errorf("blosc: %d blocks do not fit in %d bytes", nblocks, len(b))
	}
	code := int(flags >> 5)
	if code >= len(bloscCodecs) {
		return nil, fmt.Errorf("blosc: unknown compressor code %d", code)
	}
	tmp := make([]byte, blocksize)
	for i := range nblocks {
		start := int(binary.LittleEndian.Uint32(b[16+4*i:]))
		bsize := min(blocksize, nbytes-i*blocksize)
		leftover := bsize < blocksize
		dst := tmp[:bsize]
		if flags&(bloscShuffle|bloscBitShuffle) == 0 {
			dst = out[i*blocksize : i*blocksize+bsize]
		}
		nsplits := 1
		if flags&bloscDontSplit == 0 && !leftover && typesize <= 16 && bsize%typesize == 0 {
			nsplits = typesize
		}
		if err := bloscBlock(b, start, code, dst, nsplits); err != nil {
			// Writers before the split flag decided the split by other
			// rules: the streams' sizes tell.
			alt := typesize
			if nsplits != 1 {
				alt = 1
			}
			if alt == nsplits || bsize%alt != 0 || bloscBlock(b, start, code, dst, alt) != nil {
				return nil, fmt.Errorf("blosc: block %d: %v", i, err)
			}
		}
		if flags&(bloscShuffle|bloscBitShuffle) == 0 {
			continue
		}
		o := out[i*blocksize : i*blocksize+bsize]
		if flags&bloscBitShuffle != 0 {
			bitUnshuffle(o, dst, typesize, version)
		} else {
			byteUnshuffle(o, dst, typesize)
		}
	}
	return out, nil
}

// bloscBlock decodes the block at start of b into dst (its size), from
// nsplits streams of len(dst)/nsplits bytes each.
func bloscBlock(b []byte, start, code int, dst []byte, nsplits int) error {
	n := len(dst) / nsplits
	p := start
	for s := range nsplits {
		if p < 16 || p+4 > len(b) {
			return fmt.Errorf("stream %d starts outside the chunk", s)
		}
		cs := int(int32(binary.LittleEndian.Uint32(b[p:])))
		p += 4
		if cs < 0 || p+cs > len(b) {
			return fmt.Errorf("stream %d of %d bytes overruns the chunk", s, cs)
		}
		src, part := b[p:p+cs], dst[s*n:(s+1)*n]
		p += cs
		if cs == n {
			copy(part, src) // stored as is
			continue
		}
		var got []byte
		var err error
		switch bloscCodecs[code] {
		case "zstd":
			got, err = zstdDec.DecodeAll(src, part[:0:n])
		case "zlib":
			var r io.ReadCloser
			if r, err = zlib.NewReader(bytes.NewReader(src)); err == nil {
				got, err = io.ReadAll(io.LimitReader(r, int64(n)+1))
				r.Close()
			}
		default:
			return fmt.Errorf("compressor %s is not one Canopy reads (zstd, zlib)", bloscCodecs[code])
		}
		if err != nil {
			return err
		}
		if len(got) != n {
			return fmt.Errorf("stream %d gives %d bytes, want %d", s, len(got), n)
		}
		if &got[0] != &part[0] {
			copy(part, got)
		}
	}
	return nil
}

// byteUnshuffle undoes Blosc's byte shuffle: the block holds byte j of
// every element, then byte j+1, ...; bytes past the last whole element
// are as stored.
func byteUnshuffle(dst, src []byte, ts int) {
	n := len(src) / ts
	for j := range ts {
		row := src[j*n : (j+1)*n]
		for i, v := range row {
			dst[i*ts+j] = v
		}
	}
	copy(dst[n*ts:], src[n*ts:])
}

// bitUnshuffle undoes the bit shuffle (bitshuffle's transpose): for each
// bit k of each byte j of the elements, a row of n/8 bytes holding that
// bit of element i at bit i%8 of byte i/8. Blosc's format version 2
// shuffles only blocks of a multiple of 8 elements (others are stored as
// is); later versions shuffle the multiple of 8 and store the rest.
func bitUnshuffle(dst, src []byte, ts int, version byte) {
	n := len(src) / ts
	if version <= 2 && n%8 != 0 {
		copy(dst, src)
		return
	}
	n -= n % 8
	clear(dst[:n*ts])
	row := n / 8
	for j := range ts {
		for k := range 8 {
			bits := src[(j*8+k)*row : (j*8+k+1)*row]
			for q, v := range bits {
				if v == 0 {
					continue
				}
				for m := range 8 {
					if v>>m&1 != 0 {
						dst[(q*8+m)*ts+j] |= 1 << k
					}
				}
			}
		}
	}
	copy(dst[n*ts:], src[n*ts:])
}
