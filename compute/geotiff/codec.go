package geotiff

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/zstd"
	"golang.org/x/image/tiff/lzw"
)

// errShort reports compressed data that ends before the chunk is complete.
var errShort = errors.New("compressed data ends early")

// decoder decompresses chunks; one per worker goroutine.
type decoder struct {
	comp int
	br   bytes.Reader
	fr   io.ReadCloser // reused DEFLATE reader
	zd   *zstd.Decoder // shared, safe for concurrent DecodeAll
}

// decompress expands src into dst, which it fills completely.
func (d *decoder) decompress(dst, src []byte) error {
	switch d.comp {
	case compNone:
		if len(src) < len(dst) {
			return errShort
		}
		copy(dst, src)
		return nil
	case compPackBits:
		return unpackBits(dst, src)
	case compLZW:
		d.br.Reset(src)
		r := lzw.NewReader(&d.br, lzw.MSB, 8)
		defer r.Close()
		return readFull(r, dst)
	case compAdobeDflt, compDeflate:
		// A zlib stream: a 2-byte header, raw DEFLATE, an Adler-32 trailer.
		// Only the chunk's bytes are needed, so the raw stream is inflated
		// and the trailer (past the data) is not checked, as libtiff does.
		if len(src) < 2 || (uint16(src[0])<<8|uint16(src[1]))%31 != 0 || src[0]&0x0f != 8 {
			return errors.New("not a zlib stream")
		}
		if src[1]&0x20 != 0 {
			return errors.New("zlib stream needs a preset dictionary")
		}
		d.br.Reset(src[2:])
		if d.fr == nil {
			d.fr = flate.NewReader(&d.br)
		} else if err := d.fr.(flate.Resetter).Reset(&d.br, nil); err != nil {
			return err
		}
		return readFull(d.fr, dst)
	case compZSTD:
		out, err := d.zd.DecodeAll(src, dst[:0])
		if err != nil {
			return err
		}
		if len(out) < len(dst) {
			return errShort
		}
		if &out[0] != &dst[0] {
			copy(dst, out)
		}
		return nil
	}
	return fmt.Errorf("unsupported compression %s", compressionName(d.comp))
}

func readFull(r io.Reader, dst []byte) error {
	_, err := io.ReadFull(r, dst)
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		return errShort
	}
	return err
}

// unpackBits decodes PackBits data into dst, which it fills completely.
func unpackBits(dst, src []byte) error {
	o := 0
	for o < len(dst) {
		if len(src) == 0 {
			return errShort
		}
		n := int(int8(src[0]))
		src = src[1:]
		switch {
		case n >= 0:
			n++
			if n > len(src) {
				return errShort
			}
			n = min(n, len(dst)-o)
			copy(dst[o:], src[:n])
			src = src[n:]
			o += n
		case n != -128:
			if len(src) == 0 {
				return errShort
			}
			b := src[0]
			src = src[1:]
			for end := min(o+1-n, len(dst)); o < end; o++ {
				dst[o] = b
			}
		}
	}
	return nil
}

// undoHorizontal reverses predictor 2 in place: each sample of a row was
// stored as the difference from the sample stride positions before it.
// Samples are size bytes wide, in the file's byte order.
func undoHorizontal(buf []byte, rowSamples, stride, size int, bigEndian bool) {
	rowBytes := rowSamples * size
	for r := 0; r+rowBytes <= len(buf); r += rowBytes {
		row := buf[r : r+rowBytes]
		switch {
		case size == 1:
			for i := stride; i < len(row); i++ {
				row[i] += row[i-stride]
			}
		case size == 2 && !bigEndian && stride == 1:
			var acc uint16
			for i := 0; i+1 < len(row); i += 2 {
				acc += uint16(row[i]) | uint16(row[i+1])<<8
				row[i], row[i+1] = byte(acc), byte(acc>>8)
			}
		case size == 2 && !bigEndian:
			for i := 2 * stride; i+1 < len(row); i += 2 {
				binary.LittleEndian.PutUint16(row[i:], binary.LittleEndian.Uint16(row[i:])+binary.LittleEndian.Uint16(row[i-2*stride:]))
			}
		case size == 2:
			for i := 2 * stride; i+1 < len(row); i += 2 {
				binary.BigEndian.PutUint16(row[i:], binary.BigEndian.Uint16(row[i:])+binary.BigEndian.Uint16(row[i-2*stride:]))
			}
		case size == 4 && !bigEndian:
			for i := 4 * stride; i+3 < len(row); i += 4 {
				binary.LittleEndian.PutUint32(row[i:], binary.LittleEndian.Uint32(row[i:])+binary.LittleEndian.Uint32(row[i-4*stride:]))
			}
		case size == 4:
			for i := 4 * stride; i+3 < len(row); i += 4 {
				binary.BigEndian.PutUint32(row[i:], binary.BigEndian.Uint32(row[i:])+binary.BigEndian.Uint32(row[i-4*stride:]))
			}
		case size == 8 && !bigEndian:
			for i := 8 * stride; i+7 < len(row); i += 8 {
				binary.LittleEndian.PutUint64(row[i:], binary.LittleEndian.Uint64(row[i:])+binary.LittleEndian.Uint64(row[i-8*stride:]))
			}
		case size == 8:
			for i := 8 * stride; i+7 < len(row); i += 8 {
				binary.BigEndian.PutUint64(row[i:], binary.BigEndian.Uint64(row[i:])+binary.BigEndian.Uint64(row[i-8*stride:]))
			}
		}
	}
}

// undoFloatPredictor reverses predictor 3 in place. Each row was stored as
// the bytes of its samples split by significance (all most significant
// bytes first), then differenced bytewise with the given stride. The
// result is left in little-endian order whatever the file's order, as
// libtiff leaves it in native order. tmp must hold one row.
func undoFloatPredictor(buf, tmp []byte, rowSamples, stride, size int) {
	rowBytes := rowSamples * size
	tmp = tmp[:rowBytes]
	for r := 0; r+rowBytes <= len(buf); r += rowBytes {
		row := buf[r : r+rowBytes]
		for i := stride; i < len(row); i++ {
			row[i] += row[i-stride]
		}
		copy(tmp, row)
		switch size {
		case 4:
			p0, p1, p2, p3 := tmp[:rowSamples], tmp[rowSamples:2*rowSamples], tmp[2*rowSamples:3*rowSamples], tmp[3*rowSamples:4*rowSamples]
			for k := range p0 {
				o := row[4*k : 4*k+4]
				o[3], o[2], o[1], o[0] = p0[k], p1[k], p2[k], p3[k]
			}
		default:
			for k := 0; k < rowSamples; k++ {
				for b := 0; b < size; b++ {
					row[k*size+size-1-b] = tmp[b*rowSamples+k]
				}
			}
		}
	}
}
