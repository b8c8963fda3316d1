package geotiff

import (
	"encoding/binary"
	"math"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/zstd"

	libdeflate "canopy/native/deflate"
)

// Which DEFLATE compressor runs, measured on realistic tiles (Sentinel-2
// uint16 tiles with predictor 2, float32 NDVI tiles with predictor 3;
// docs/BENCHMARKS.md): for float32 with the floating-point predictor,
// klauspost/compress at level 1 compresses within 1% of level 6's size at
// twice level 6's speed and faster than libdeflate's level 1, so it is
// the default there; for integer samples libdeflate's level 1 makes files
// smaller than zlib's level 6 at twice its speed, so it is the default
// there when linked in. An explicit level runs libdeflate at that level
// when it is linked in (its levels mean what zlib's mean, with smaller
// output), klauspost/compress otherwise.
const (
	floatDefaultLevel = 1
	intDefaultLevel   = 1
	goIntDefaultLevel = 6
)

// deflater compresses whole tiles as zlib streams.
type deflater struct {
	ld    *libdeflate.Compressor
	kp    *flate.Writer // raw DEFLATE: the zlib header and trailer are written here
	out   appender
	level int
}

// HuffmanOnly is the DEFLATE level that codes every byte with Huffman
// codes alone, looking for no repeats: about twice level 1's speed, with
// files about 10% larger for float32 results and about as small as level
// 6's for integer bands (docs/BENCHMARKS.md). canopy fake writes its
// scenes so.
const HuffmanOnly = -1

// newDeflater picks the compressor for a level (0: the default for the
// sample kind).
func newDeflater(level int, float bool) (*deflater, error) {
	d := &deflater{level: level}
	if level == HuffmanOnly {
		w, err := flate.NewWriter(&d.out, flate.HuffmanOnly)
		if err != nil {
			return nil, err
		}
		d.kp = w
		return d, nil
	}
	useLD := libdeflate.Available && (level != 0 || !float)
	switch {
	case level == 0 && float:
		d.level = floatDefaultLevel
	case level == 0 && useLD:
		d.level = intDefaultLevel
	case level == 0:
		d.level = goIntDefaultLevel
	}
	if useLD {
		c, err := libdeflate.NewCompressor(d.level)
		if err != nil {
			return nil, err
		}
		d.ld = c
		return d, nil
	}
	w, err := flate.NewWriter(&d.out, d.level)
	if err != nil {
		return nil, err
	}
	d.kp = w
	return d, nil
}

// compress appends src as a zlib stream to dst.
func (d *deflater) compress(dst, src []byte) ([]byte, error) {
	if d.ld != nil {
		return d.ld.ZlibCompress(dst, src), nil
	}
	// A zlib stream (RFC 1950): the header zlib writes for the level, the
	// raw stream klauspost writes straight after it (no copy), and the
	// Adler-32 of the data, by libdeflate's vectorised routine (Go's
	// hash/adler32 cost a tenth of the compression).
	d.out.b = append(dst, zlibHeader(d.level)...)
	d.kp.Reset(&d.out)
	if _, err := d.kp.Write(src); err != nil {
		return nil, err
	}
	if err := d.kp.Close(); err != nil {
		return nil, err
	}
	out := binary.BigEndian.AppendUint32(d.out.b, libdeflate.Adler32(1, src))
	d.out.b = nil
	return out, nil
}

// zlibHeader is the two bytes Go's and klauspost's zlib writers begin a
// stream with at a level: DEFLATE with a 32 KiB window, the level's
// FLEVEL, and the check bits.
func zlibHeader(level int) []byte {
	var flevel byte
	switch {
	case level == HuffmanOnly || level == flate.HuffmanOnly || level < 2:
		flevel = 0
	case level < 6:
		flevel = 1
	case level == 6:
		flevel = 2
	default:
		flevel = 3
	}
	cmf, flg := byte(0x78), flevel<<6
	flg += byte(31 - (uint16(cmf)<<8|uint16(flg))%31)
	return []byte{cmf, flg}
}

// appender is an io.Writer appending to b.
type appender struct{ b []byte }

func (a *appender) Write(p []byte) (int, error) {
	a.b = append(a.b, p...)
	return len(p), nil
}

func (d *deflater) close() {
	if d.ld != nil {
		d.ld.Close()
	}
}

// canonicalNaN is the bits every NaN is written as: GDAL's and NumPy's
// quiet NaN.
const canonicalNaN = 0x7fc00000

// tileEncoder turns one tile of float32 samples (spp pixel-interleaved
// bands) into its compressed bytes: samples little-endian, every NaN as
// canonicalNaN, the floating-point predictor applied row by row, then
// compressed. Each goroutine has its own.
type tileEncoder struct {
	comp     Compression
	spp, ts  int
	pred     int
	tile     []byte
	tmp      []byte
	out      []byte
	deflater *deflater
	zstd     *zstd.Encoder
}

func newTileEncoder(comp Compression, level int, typ SampleType, spp, ts, pred int) (*tileEncoder, error) {
	return newTileEncoderOn(nil, comp, level, typ, spp, ts, pred)
}

// newTileEncoderOn is newTileEncoder laying its tiles out in the buffers
// of share (nil: its own), an encoder of the same tile shape that is never
// used at the same time (a COG's full resolution and overviews take turns).
func newTileEncoderOn(share *tileEncoder, comp Compression, level int, typ SampleType, spp, ts, pred int) (*tileEncoder, error) {
	e := &tileEncoder{comp: comp, spp: spp, ts: ts, pred: pred}
	if share != nil && len(share.tile) == ts*ts*spp*typ.Size() {
		e.tile, e.tmp = share.tile, share.tmp
	} else {
		e.tile, e.tmp = make([]byte, ts*ts*spp*typ.Size()), make([]byte, ts*spp*typ.Size())
	}
	if comp == NoCompression {
		e.pred = 1
	}
	switch comp {
	case Deflate:
		d, err := newDeflater(level, typ.Float())
		if err != nil {
			return nil, err
		}
		e.deflater = d
	case ZSTD:
		lvl := zstd.SpeedDefault
		if level > 0 {
			lvl = zstd.EncoderLevelFromZstd(level)
		}
		z, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(lvl), zstd.WithEncoderConcurrency(1))
		if err != nil {
			return nil, err
		}
		e.zstd = z
	}
	return e, nil
}

// fill lays out columns [x0, x0+vw) of the first rows rows of the bands
// (each of width w) as the tile, zero elsewhere. With the floating-point
// predictor each row is laid out straight in its byte planes (the
// predictor's first step) and differenced in compress.
func (e *tileEncoder) fill(bands [][]float32, w, x0, vw, rows int) {
	rowBytes := e.ts * e.spp * 4
	if e.pred != 3 {
		clear(e.tile)
		for r := range rows {
			dst := e.tile[r*rowBytes:]
			for b, band := range bands {
				src := band[r*w+x0:][:vw]
				o := 4 * b
				for _, v := range src {
					bits := math.Float32bits(v)
					if v != v {
						bits = canonicalNaN
					}
					binary.LittleEndian.PutUint32(dst[o:], bits)
					o += 4 * e.spp
				}
			}
		}
		return
	}
	n := e.ts * e.spp // samples in a row
	used := vw * e.spp
	for r := range e.ts {
		row := e.tile[r*rowBytes : (r+1)*rowBytes]
		if r >= rows {
			clear(row)
			continue
		}
		p0, p1, p2, p3 := row[:n], row[n:2*n], row[2*n:3*n], row[3*n:4*n]
		if e.spp == 1 {
			src := bands[0][r*w+x0:][:vw]
			p0, p1, p2, p3 = p0[:len(src)], p1[:len(src)], p2[:len(src)], p3[:len(src)]
			for x, v := range src {
				bits := math.Float32bits(v)
				if v != v {
					bits = canonicalNaN
				}
				p0[x], p1[x], p2[x], p3[x] = byte(bits>>24), byte(bits>>16), byte(bits>>8), byte(bits)
			}
			p0, p1, p2, p3 = row[:n], row[n:2*n], row[2*n:3*n], row[3*n:4*n]
		}
		for b, band := range bands {
			if e.spp == 1 {
				break
			}
			src := band[r*w+x0:][:vw]
			for x, v := range src {
				bits := math.Float32bits(v)
				if v != v {
					bits = canonicalNaN
				}
				k := x*e.spp + b
				p0[k], p1[k], p2[k], p3[k] = byte(bits>>24), byte(bits>>16), byte(bits>>8), byte(bits)
			}
		}
		if used < n {
			clear(p0[used:])
			clear(p1[used:])
			clear(p2[used:])
			clear(p3[used:])
		}
	}
}

// compress returns the tile's compressed bytes, valid until the next
// call.
func (e *tileEncoder) compress() ([]byte, error) {
	var err error
	e.out, err = e.compressTo(e.out[:0])
	return e.out, err
}

// compressTo is compress appending the tile's bytes to dst instead of the
// encoder's own buffer.
func (e *tileEncoder) compressTo(dst []byte) ([]byte, error) {
	if e.pred == 3 {
		rowBytes := e.ts * e.spp * 4
		for r := 0; r < len(e.tile); r += rowBytes {
			differenceBytes(e.tile[r:r+rowBytes], e.spp)
		}
	}
	return e.encode(dst)
}

// encode appends the tile (predicted) compressed to dst.
func (e *tileEncoder) encode(dst []byte) ([]byte, error) {
	switch e.comp {
	case Deflate:
		return e.deflater.compress(dst, e.tile)
	case ZSTD:
		return e.zstd.EncodeAll(e.tile, dst), nil
	default:
		return append(dst, e.tile...), nil
	}
}

// differenceBytes replaces each byte of row from stride on with its
// difference from the byte stride before it (mod 256), in place: the
// floating-point predictor's second step. Eight bytes at a time from the
// end, each byte's subtraction kept from borrowing from its neighbour.
func differenceBytes(row []byte, stride int) {
	const hi = 0x8080808080808080
	i := len(row) - 8
	for ; i >= stride; i -= 8 {
		x := binary.LittleEndian.Uint64(row[i:])
		y := binary.LittleEndian.Uint64(row[i-stride:])
		binary.LittleEndian.PutUint64(row[i:], ((x|hi)-(y&^hi))^((x^^y)&hi))
	}
	for j := min(i+7, len(row)-1); j >= stride; j-- {
		row[j] -= row[j-stride]
	}
}

// applyFloatPredictorStride applies predictor 3 to one little-endian row
// of pixels of stride samples of size bytes, as libtiff does: the bytes
// of all the row's samples split by significance (most significant plane
// first), then each byte differenced with the byte stride positions
// before it. tmp must hold the row.
func applyFloatPredictorStride(row, tmp []byte, size, stride int) {
	n := len(row) / size
	tmp = tmp[:len(row)]
	if size == 4 {
		p0, p1, p2, p3 := tmp[:n], tmp[n:2*n], tmp[2*n:3*n], tmp[3*n:4*n]
		for k := range p0 {
			s := row[4*k : 4*k+4]
			p0[k], p1[k], p2[k], p3[k] = s[3], s[2], s[1], s[0]
		}
	} else {
		for k := 0; k < n; k++ {
			for b := 0; b < size; b++ {
				tmp[b*n+k] = row[k*size+size-1-b]
			}
		}
	}
	copy(row[:stride], tmp[:stride])
	for i := stride; i < len(tmp); i++ {
		row[i] = tmp[i] - tmp[i-stride]
	}
}
