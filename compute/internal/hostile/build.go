package hostile

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"math"
	"sort"

	"github.com/klauspost/compress/zstd"
)

// TIFF tags and field types the builder writes. They are spelled out here
// rather than taken from the codec, so that the corpus says what a file
// holds independently of how the reader understands it.
const (
	tImageWidth      = 256
	tImageLength     = 257
	tBitsPerSample   = 258
	tCompression     = 259
	tPhotometric     = 262
	tImageDesc       = 270
	tStripOffsets    = 273
	tSamplesPerPixel = 277
	tRowsPerStrip    = 278
	tStripByteCounts = 279
	tPlanarConfig    = 284
	tPredictor       = 317
	tTileWidth       = 322
	tTileLength      = 323
	tTileOffsets     = 324
	tTileByteCounts  = 325
	tSampleFormat    = 339
	tYCbCrSubsamp    = 530
	tPixelScale      = 33550
	tTiepoint        = 33922
	tTransformation  = 34264
	tGeoKeys         = 34735
	tGeoDoubles      = 34736
	tGeoASCII        = 34737
	tGDALNoData      = 42113

	fByte   = 1
	fASCII  = 2
	fShort  = 3
	fLong   = 4
	fDouble = 12
	fLong8  = 16

	cNone     = 1
	cLZW      = 5
	cJPEG     = 7
	cDeflate  = 8
	cPackBits = 32773
	cZSTD     = 50000
	cWebP     = 50001
	cLERC     = 34887
)

// tiff is a TIFF file under construction: data blobs after the header, one
// IFD after the data (its out-of-line values after it), and an optional
// chain of further IFDs.
type tiff struct {
	big, be bool
	data    []byte
	tags    map[uint16]entry
	// next, when not 0, is written as the next-IFD offset; nextSelf
	// points the chain back at this IFD.
	next     uint64
	nextSelf bool
	// headerIFD, when not 0, replaces the first-IFD offset in the header.
	headerIFD uint64
}

type entry struct {
	typ   uint16
	count uint64
	val   []byte // encoded in the file's byte order
}

func newTIFF() *tiff { return &tiff{tags: map[uint16]entry{}} }

// byteOrder reads and appends in one byte order.
type byteOrder interface {
	binary.ByteOrder
	binary.AppendByteOrder
}

func (t *tiff) order() byteOrder {
	if t.be {
		return binary.BigEndian
	}
	return binary.LittleEndian
}

func (t *tiff) dataStart() uint64 {
	if t.big {
		return 16
	}
	return 8
}

// blob appends b to the data area and returns its offset in the file.
func (t *tiff) blob(b []byte) uint64 {
	off := t.dataStart() + uint64(len(t.data))
	t.data = append(t.data, b...)
	return off
}

// ints sets an integer tag of field type typ (byte, short, long, long8).
func (t *tiff) ints(tag, typ uint16, vals ...uint64) {
	o := t.order()
	var b []byte
	for _, v := range vals {
		switch typ {
		case fByte:
			b = append(b, byte(v))
		case fShort:
			b = o.AppendUint16(b, uint16(v))
		case fLong:
			b = o.AppendUint32(b, uint32(v))
		default:
			b = o.AppendUint64(b, v)
		}
	}
	t.tags[tag] = entry{typ, uint64(len(vals)), b}
}

func (t *tiff) short(tag uint16, vals ...uint64) { t.ints(tag, fShort, vals...) }
func (t *tiff) long(tag uint16, vals ...uint64)  { t.ints(tag, fLong, vals...) }

// offsets sets an offset or byte-count array as LONG (LONG8 in BigTIFF).
func (t *tiff) offsets(tag uint16, vals ...uint64) {
	if t.big {
		t.ints(tag, fLong8, vals...)
	} else {
		t.ints(tag, fLong, vals...)
	}
}

func (t *tiff) doubles(tag uint16, vals ...float64) {
	var b []byte
	for _, v := range vals {
		b = t.order().AppendUint64(b, math.Float64bits(v))
	}
	t.tags[tag] = entry{fDouble, uint64(len(vals)), b}
}

func (t *tiff) ascii(tag uint16, s string) {
	t.tags[tag] = entry{fASCII, uint64(len(s) + 1), append([]byte(s), 0)}
}

// raw sets a tag to exactly the given type, count and value bytes, which
// may disagree with each other.
func (t *tiff) raw(tag, typ uint16, count uint64, val []byte) {
	t.tags[tag] = entry{typ, count, val}
}

// bytes lays the file out.
func (t *tiff) bytes() []byte {
	o := t.order()
	ifd := t.dataStart() + uint64(len(t.data))
	ifd += ifd & 1
	ids := make([]int, 0, len(t.tags))
	for id := range t.tags {
		ids = append(ids, int(id))
	}
	sort.Ints(ids)
	countSize, entrySize, nextSize, inline := 2, 12, 4, 4
	if t.big {
		countSize, entrySize, nextSize, inline = 8, 20, 8, 8
	}
	extra := ifd + uint64(countSize+len(ids)*entrySize+nextSize)
	var dir, ext []byte
	if t.big {
		dir = o.AppendUint64(dir, uint64(len(ids)))
	} else {
		dir = o.AppendUint16(dir, uint16(len(ids)))
	}
	for _, id := range ids {
		e := t.tags[uint16(id)]
		dir = o.AppendUint16(dir, uint16(id))
		dir = o.AppendUint16(dir, e.typ)
		if t.big {
			dir = o.AppendUint64(dir, e.count)
		} else {
			dir = o.AppendUint32(dir, uint32(e.count))
		}
		if len(e.val) <= inline {
			v := make([]byte, inline)
			copy(v, e.val)
			dir = append(dir, v...)
			continue
		}
		at := extra + uint64(len(ext))
		if t.big {
			dir = o.AppendUint64(dir, at)
		} else {
			dir = o.AppendUint32(dir, uint32(at))
		}
		ext = append(ext, e.val...)
		if len(ext)%2 == 1 {
			ext = append(ext, 0)
		}
	}
	next := t.next
	if t.nextSelf {
		next = ifd
	}
	if t.big {
		dir = o.AppendUint64(dir, next)
	} else {
		dir = o.AppendUint32(dir, uint32(next))
	}
	first := ifd
	if t.headerIFD != 0 {
		first = t.headerIFD
	}
	var out []byte
	magic := []byte("II")
	if t.be {
		magic = []byte("MM")
	}
	out = append(out, magic...)
	if t.big {
		out = o.AppendUint16(out, 43)
		out = o.AppendUint16(out, 8)
		out = o.AppendUint16(out, 0)
		out = o.AppendUint64(out, first)
	} else {
		out = o.AppendUint16(out, 42)
		out = o.AppendUint32(out, uint32(first))
	}
	out = append(out, t.data...)
	for uint64(len(out)) < ifd {
		out = append(out, 0)
	}
	out = append(out, dir...)
	return append(out, ext...)
}

// image describes a valid image the builder lays out in strips or tiles.
type image struct {
	w, h, spp  int
	bits       int // 8, 16, 32 or 64
	format     int // 1 unsigned, 2 signed, 3 float
	comp       int
	pred       int
	tw, th     int // tile size; tw == 0 for strips of th rows
	planar     bool
	big, be    bool
	nodata     string
	pixelPoint bool // GTRasterTypeGeoKey = PixelIsPoint
	epsg       int  // 0: no georeferencing
	x0, y0     float64
}

// sample is the value of sample s at (x, y) the corpus images hold.
func sample(x, y, s int) uint64 { return uint64(s*1000 + (x*7+y*13)%900) }

// build makes the TIFF of im, its chunks compressed as im.comp says.
func (im image) build() *tiff {
	t := newTIFF()
	t.big, t.be = im.big, im.be
	o := t.order()
	size := im.bits / 8
	cw, ch := im.w, im.th
	if im.tw > 0 {
		cw = im.tw
	}
	if ch == 0 {
		ch = im.h
	}
	across, down := (im.w+cw-1)/cw, (im.h+ch-1)/ch
	planes, sppChunk := 1, im.spp
	if im.planar {
		planes, sppChunk = im.spp, 1
	}
	var offs, counts []uint64
	for p := range planes {
		for c := range across * down {
			x0, y0 := (c%across)*cw, (c/across)*ch
			rows := ch
			if im.tw == 0 {
				rows = min(ch, im.h-y0)
			}
			var chunk []byte
			for r := range rows {
				row := make([]byte, cw*sppChunk*size)
				for x := range cw {
					for s := range sppChunk {
						band := s
						if im.planar {
							band = p
						}
						var v uint64
						if X, Y := x0+x, y0+r; X < im.w && Y < im.h {
							v = sample(X, Y, band)
						}
						at := row[(x*sppChunk+s)*size:]
						switch {
						case im.format == 3 && size == 4:
							o.PutUint32(at, math.Float32bits(float32(v)))
						case im.format == 3:
							o.PutUint64(at, math.Float64bits(float64(v)))
						case size == 1:
							at[0] = byte(v)
						case size == 2:
							o.PutUint16(at, uint16(v))
						case size == 4:
							o.PutUint32(at, uint32(v))
						default:
							o.PutUint64(at, v)
						}
					}
				}
				if im.pred == 2 {
					horizontal(row, sppChunk, size, o)
				}
				chunk = append(chunk, row...)
			}
			z := compress(im.comp, chunk)
			offs = append(offs, t.blob(z))
			counts = append(counts, uint64(len(z)))
		}
	}
	t.long(tImageWidth, uint64(im.w))
	t.long(tImageLength, uint64(im.h))
	bps := make([]uint64, im.spp)
	sf := make([]uint64, im.spp)
	for i := range bps {
		bps[i], sf[i] = uint64(im.bits), uint64(im.format)
	}
	t.short(tBitsPerSample, bps...)
	t.short(tSampleFormat, sf...)
	t.short(tSamplesPerPixel, uint64(im.spp))
	t.short(tCompression, uint64(im.comp))
	t.short(tPhotometric, 1)
	if im.planar {
		t.short(tPlanarConfig, 2)
	}
	if im.pred != 0 {
		t.short(tPredictor, uint64(im.pred))
	}
	if im.tw > 0 {
		t.long(tTileWidth, uint64(cw))
		t.long(tTileLength, uint64(ch))
		t.offsets(tTileOffsets, offs...)
		t.offsets(tTileByteCounts, counts...)
	} else {
		t.long(tRowsPerStrip, uint64(ch))
		t.offsets(tStripOffsets, offs...)
		t.offsets(tStripByteCounts, counts...)
	}
	if im.nodata != "" {
		t.ascii(tGDALNoData, im.nodata)
	}
	if im.epsg != 0 {
		t.doubles(tPixelScale, 10, 10, 0)
		x, y := im.x0, im.y0
		raster := uint64(1)
		if im.pixelPoint {
			x, y, raster = x+5, y-5, 2
		}
		t.doubles(tTiepoint, 0, 0, 0, x, y, 0)
		t.short(tGeoKeys, 1, 1, 0, 3, 1024, 0, 1, 1, 1025, 0, 1, raster, 3072, 0, 1, uint64(im.epsg))
	}
	return t
}

// horizontal applies predictor 2 to one row in place.
func horizontal(row []byte, spp, size int, o byteOrder) {
	n := len(row) / size
	for i := n - 1; i >= spp; i-- {
		a, b := row[i*size:], row[(i-spp)*size:]
		switch size {
		case 1:
			a[0] -= b[0]
		case 2:
			o.PutUint16(a, o.Uint16(a)-o.Uint16(b))
		case 4:
			o.PutUint32(a, o.Uint32(a)-o.Uint32(b))
		case 8:
			o.PutUint64(a, o.Uint64(a)-o.Uint64(b))
		}
	}
}

// compress encodes a chunk with a TIFF compression.
func compress(comp int, b []byte) []byte {
	switch comp {
	case cDeflate:
		return zlibBytes(b)
	case cLZW:
		return lzwEncode(b)
	case cPackBits:
		return packBits(b)
	case cZSTD:
		return zstdBytes(b)
	}
	return b
}

// The encoders are made once and reset for every chunk (the generator
// runs on one goroutine).
var (
	zlibW *zlib.Writer
	zstdE *zstd.Encoder
)

func zlibBytes(b []byte) []byte {
	var buf bytes.Buffer
	if zlibW == nil {
		zlibW, _ = zlib.NewWriterLevel(&buf, zlib.BestCompression)
	} else {
		zlibW.Reset(&buf)
	}
	zlibW.Write(b)
	zlibW.Close()
	return buf.Bytes()
}

func zstdBytes(b []byte) []byte {
	if zstdE == nil {
		zstdE, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBestCompression), zstd.WithEncoderConcurrency(1))
	}
	return zstdE.EncodeAll(b, nil)
}

// packBits encodes runs of 2 to 128 equal bytes as repeats, the rest as
// literal runs of up to 128 bytes.
func packBits(b []byte) []byte {
	var out []byte
	for i := 0; i < len(b); {
		j := i + 1
		for j < len(b) && j-i < 128 && b[j] == b[i] {
			j++
		}
		if j-i >= 2 {
			out = append(out, byte(int8(1-(j-i))), b[i])
			i = j
			continue
		}
		j = i + 1
		for j < len(b) && j-i < 128 && (j+1 >= len(b) || b[j] != b[j+1]) {
			j++
		}
		out = append(out, byte(j-i-1))
		out = append(out, b[i:j]...)
		i = j
	}
	return out
}

// lzwEncode is TIFF's LZW (MSB first, codes of 9 to 12 bits, the code
// width growing one code early as libtiff does), clearing the table
// before it fills.
func lzwEncode(b []byte) []byte {
	const clearCode, eof = 256, 257
	var out []byte
	var acc uint32
	var nbits uint
	width := uint(9)
	put := func(code int) {
		acc |= uint32(code) << (32 - width - nbits)
		nbits += width
		for nbits >= 8 {
			out = append(out, byte(acc>>24))
			acc <<= 8
			nbits -= 8
		}
	}
	dict := map[uint32]int{}
	emitted := 0 // codes since the last clear
	next := 258
	put(clearCode)
	if len(b) == 0 {
		put(eof)
		if nbits > 0 {
			out = append(out, byte(acc>>24))
		}
		return out
	}
	w := int(b[0])
	grow := func() {
		emitted++
		if 257+emitted+1 >= 1<<width && width < 12 {
			width++
		}
	}
	for _, c := range b[1:] {
		k := uint32(w)<<8 | uint32(c)
		if code, ok := dict[k]; ok {
			w = code
			continue
		}
		put(w)
		grow()
		dict[k] = next
		next++
		w = int(c)
		if next >= 4000 {
			put(clearCode)
			width, emitted, next = 9, 0, 258
			clear(dict)
		}
	}
	put(w)
	grow()
	put(eof)
	if nbits > 0 {
		out = append(out, byte(acc>>24))
	}
	return out
}
