package hostile

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"canopy/compute"
	"canopy/compute/geotiff"
)

// base is a small valid image: 64×48 uint16, DEFLATE in 16×16 tiles,
// UTM 33N.
func base() image {
	return image{w: 64, h: 48, spp: 1, bits: 16, format: 1, comp: cDeflate, tw: 16, th: 16, epsg: 32633, x0: 600000, y0: 5300000}
}

// strips is base in strips of 8 rows.
func strips() image {
	im := base()
	im.tw, im.th = 0, 8
	return im
}

// ifdAt returns the first-IFD offset a classic TIFF's header gives.
func ifdAt(b []byte) int { return int(binary.LittleEndian.Uint32(b[4:])) }

// miniIFD is a one-entry classic IFD (NewSubfileType = 1) pointing at next.
func miniIFD(next uint64) []byte {
	b := binary.LittleEndian.AppendUint16(nil, 1)
	b = binary.LittleEndian.AppendUint16(b, 254)
	b = binary.LittleEndian.AppendUint16(b, fLong)
	b = binary.LittleEndian.AppendUint32(b, 1)
	b = binary.LittleEndian.AppendUint32(b, 1)
	return binary.LittleEndian.AppendUint32(b, uint32(next))
}

// chain puts n further IFDs in t's data, chained after t's own IFD.
func chain(t *tiff, n int) {
	at := make([]uint64, n)
	for i := range at {
		at[i] = t.dataStart() + uint64(len(t.data)) + uint64(18*i)
	}
	for i := range n {
		next := uint64(0)
		if i+1 < n {
			next = at[i+1]
		}
		t.blob(miniIFD(next))
	}
	t.next = at[0]
}

func (g *gen) structure() {
	g.bad("header/empty", nil, "not a GeoTIFF or PNG file")
	g.bad("header/3-bytes", []byte("II*"), "not a GeoTIFF or PNG file")
	g.bad("header/7-bytes", []byte("II*\x00\x08\x00\x00"), "only 7 bytes long")
	g.bad("header/no-image", []byte("II*\x00\x00\x00\x00\x00"), "holds no image")
	g.bad("header/bigtiff-bad", append([]byte("II+\x00\x04\x00\x00\x00"), make([]byte, 8)...), "bad BigTIFF header")

	t := base().build()
	t.headerIFD = 1 << 30
	g.bad("ifd/offset-past-end", t.bytes(), "the file ends early")
	t.headerIFD = 4
	g.bad("ifd/offset-in-header", t.bytes(), "points into the file header")
	b := base().build().bytes()
	g.bad("ifd/truncated", b[:ifdAt(b)+40], "the file ends early")
	t = base().build()
	empty := t.blob([]byte{0, 0, 0, 0, 0, 0})
	t.headerIFD = empty
	g.bad("ifd/no-entries", t.bytes(), "an image directory is empty")
	t = base().build()
	t.big = true
	b = t.bytes()
	binary.LittleEndian.PutUint64(b[binary.LittleEndian.Uint64(b[8:]):], 1<<40)
	g.bad("ifd/bigtiff-2^40-entries", b, "impossibly long")
	t = base().build()
	t.nextSelf = true
	g.bad("ifd/loop-self", t.bytes(), "loops back on itself")
	// Two IFDs pointing at each other: the image's and one in the data.
	t = base().build()
	second := t.blob(make([]byte, 18))
	ifd := t.dataStart() + uint64(len(t.data))
	ifd += ifd & 1
	copy(t.data[second-t.dataStart():], miniIFD(ifd))
	t.next = second
	g.bad("ifd/loop-two", t.bytes(), "loops back on itself")
	t = base().build()
	chain(t, 5000)
	g.bad("ifd/chain-5000", t.bytes(), "goes on past 4096")
	t = base().build()
	chain(t, 4000)
	g.ok("ifd/chain-4000", t.bytes())
	t = base().build()
	t.blob([]byte{0, 0, 0, 0, 0, 0})
	t.next = t.dataStart() + uint64(len(t.data)) - 6
	g.bad("ifd/empty-overview", t.bytes(), "an image directory is empty")

	for _, v := range []struct {
		name    string
		big, be bool
	}{{"valid/classic-le", false, false}, {"valid/classic-be", false, true}, {"valid/bigtiff-le", true, false}, {"valid/bigtiff-be", true, true}} {
		im := base()
		im.big, im.be = v.big, v.be
		g.ok(v.name, im.build().bytes())
	}
	for _, c := range []int{cNone, cLZW, cPackBits, cZSTD} {
		im := strips()
		im.comp = c
		g.ok("valid/strips-"+compName(c), im.build().bytes())
	}
	im := base()
	im.spp, im.planar = 4, true
	g.add(Case{Name: "valid/planar-4-bands", Red: g.file("valid-planar.tif", im.build().bytes()) + ":3", Loads: true})
	im.planar = false
	g.add(Case{Name: "valid/chunky-4-bands", Red: g.file("valid-chunky.tif", im.build().bytes()) + ":4", Loads: true})
	g.add(Case{Name: "spec/band-5-of-4", Red: g.file("valid-chunky-5.tif", im.build().bytes()) + ":5", Want: "band 5 does not exist"})
	g.add(Case{Name: "spec/no-band-of-4", Red: g.file("valid-chunky-0.tif", im.build().bytes()), Want: "pick one as"})
	g.add(Case{Name: "spec/band-0", Red: g.file("valid-b0.tif", base().build().bytes()) + ":0", Want: "numbered from 1"})
	g.add(Case{Name: "spec/band-70000", Red: g.file("valid-b70000.tif", base().build().bytes()) + ":70000", Want: "out of range"})
}

func compName(c int) string {
	return map[int]string{cNone: "none", cLZW: "lzw", cDeflate: "deflate", cPackBits: "packbits", cZSTD: "zstd"}[c]
}

func (g *gen) tags() {
	del := func(name string, tag uint16, want string) {
		t := base().build()
		delete(t.tags, tag)
		g.bad(name, t.bytes(), want)
	}
	del("tags/missing-width", tImageWidth, "missing ImageWidth")
	del("tags/missing-tile-offsets", tTileOffsets, "missing TileOffsets")
	del("tags/missing-tile-counts", tTileByteCounts, "missing TileByteCounts")
	size := func(name string, w, h uint64, want string) {
		t := base().build()
		t.long(tImageWidth, w)
		t.long(tImageLength, h)
		g.bad(name, t.bytes(), want)
	}
	size("size/width-0", 0, 48, "is not a usable size")
	size("size/height-0", 64, 0, "is not a usable size")
	size("size/width-2^31+1", 1<<31+1, 48, "is not a usable size")
	size("size/2^31-squared", 1<<31, 1<<31, "is not a usable size")
	size("size/2^40-pixels", 1<<20, 1<<20, "is not a usable size")
	size("size/100000-squared", 100000, 100000, "could hold")
	size("size/320x48-12-tiles", 320, 48, "TileOffsets has 12 entries, the image needs 60")

	typed := func(name string, tag, typ uint16, count uint64, val []byte, want string) {
		t := strips().build()
		t.raw(tag, typ, count, val)
		g.bad(name, t.bytes(), want)
	}
	d8 := binary.LittleEndian.AppendUint64(nil, math.Float64bits(64))
	typed("types/width-double", tImageWidth, fDouble, 1, d8, "want an unsigned integer")
	typed("types/width-ascii", tImageWidth, fASCII, 3, []byte("64\x00"), "want an unsigned integer")
	typed("types/offsets-double", tStripOffsets, fDouble, 6, bytesRepeat(d8, 6), "want an unsigned integer")
	typed("types/width-type-99", tImageWidth, 99, 1, []byte{64, 0, 0, 0}, "unknown field type 99")
	typed("types/width-type-0", tImageWidth, 0, 1, []byte{64, 0, 0, 0}, "unknown field type 0")
	typed("counts/strip-offsets-2^30", tStripOffsets, fLong, 1<<30, []byte{8, 0, 0, 0}, "StripOffsets has 1073741824 entries, the image needs 6")
	typed("counts/bits-per-sample-2^31", tBitsPerSample, fShort, 1<<31, []byte{16, 0, 0, 0}, "claims more values than the file holds")
	typed("counts/geokeys-2^32-1", tGeoKeys, fShort, 1<<32-1, []byte{8, 0, 0, 0}, "claims more values than the file holds")
	t := base().build()
	t.long(tTileOffsets, 8, 8, 8)
	g.bad("counts/tile-offsets-3-of-12", t.bytes(), "has 3 entries, the image needs 12")

	text := func(name string, tag uint16, s string, loads bool, want string) {
		t := base().build()
		t.ascii(tag, s)
		if loads {
			g.ok(name, t.bytes())
		} else {
			g.bad(name, t.bytes(), want)
		}
	}
	text("ascii/nodata-1MB-digits", tGDALNoData, strings.Repeat("7", 1<<20-100)+"x", false, "is not a number")
	text("ascii/nodata-2MB", tGDALNoData, strings.Repeat(" ", 2<<20), false, "bytes long")
	text("ascii/nodata-binary", tGDALNoData, "\x01\x02\xff\xfe", false, "is not a number")
	text("ascii/geoascii-2MB", tGeoASCII, strings.Repeat("WGS 84|", 300000), false, "GeoAsciiParams is")
	text("ascii/description-1MB", tImageDesc, strings.Repeat("forest ", 150000), true, "")
	text("ascii/nodata-nan", tGDALNoData, "nan", true, "")
	text("ascii/nodata-1e999", tGDALNoData, "1e999", true, "")

	geom := func(name string, f func(t *tiff), loads bool, want string) {
		t := strips().build()
		if strings.Contains(name, "tile") {
			t = base().build()
		}
		f(t)
		if loads {
			g.ok(name, t.bytes())
		} else {
			g.bad(name, t.bytes(), want)
		}
	}
	geom("strips/rows-per-strip-0", func(t *tiff) { t.long(tRowsPerStrip, 0) }, false, "RowsPerStrip is 0")
	geom("strips/rows-per-strip-2^32-1", func(t *tiff) { t.long(tRowsPerStrip, 1<<32-1) }, false, "StripOffsets has 6 entries, the image needs 1")
	geom("tiles/tile-width-0", func(t *tiff) { t.long(tTileWidth, 0) }, false, "is not usable")
	geom("tiles/tile-2^20", func(t *tiff) { t.long(tTileWidth, 1<<20); t.long(tTileLength, 1<<20) }, false, "too large to decode")
	geom("tiles/tile-row-128MB", func(t *tiff) { t.long(tTileWidth, 1<<26); t.long(tTileLength, 1) }, false, "more than the 64 MiB a row may have")

	im := base()
	im.tw, im.th = 17, 17 // not a multiple of 16: libtiff warns, GDAL reads it
	g.ok("tiles/17x17", im.build().bytes())
	im.tw, im.th = 1, 1
	g.ok("tiles/1x1-3072-tiles", im.build().bytes())

	kind := func(name string, f func(t *tiff), want string) {
		t := strips().build()
		f(t)
		g.bad(name, t.bytes(), want)
	}
	kind("samples/12-bit", func(t *tiff) { t.short(tBitsPerSample, 12) }, "unsupported sample type: 12-bit")
	kind("samples/1-bit", func(t *tiff) { t.short(tBitsPerSample, 1) }, "unsupported sample type: 1-bit")
	kind("samples/complex", func(t *tiff) { t.short(tBitsPerSample, 32); t.short(tSampleFormat, 6) }, "complex")
	kind("samples/float16", func(t *tiff) { t.short(tSampleFormat, 3) }, "16-bit floating-point")
	kind("samples/mixed-depths", func(t *tiff) { t.short(tSamplesPerPixel, 2); t.short(tBitsPerSample, 8, 16) }, "bands with different BitsPerSample")
	kind("samples/spp-0", func(t *tiff) { t.short(tSamplesPerPixel, 0) }, "SamplesPerPixel 0")
	kind("samples/spp-65535", func(t *tiff) { t.short(tSamplesPerPixel, 65535) }, "")
	kind("compression/jpeg", func(t *tiff) { t.short(tCompression, cJPEG) }, "unsupported compression JPEG")
	kind("compression/webp", func(t *tiff) { t.short(tCompression, cWebP) }, "unsupported compression WebP")
	kind("compression/lerc", func(t *tiff) { t.short(tCompression, cLERC) }, "unsupported compression LERC")
	kind("compression/12345", func(t *tiff) { t.short(tCompression, 12345) }, "unsupported compression code 12345")
	kind("predictor/9", func(t *tiff) { t.short(tPredictor, 9) }, "unsupported predictor 9")
	kind("predictor/float-on-uint16", func(t *tiff) { t.short(tPredictor, 3) }, "floating-point predictor (3) on uint16")
	kind("layout/planar-3", func(t *tiff) { t.short(tPlanarConfig, 3) }, "PlanarConfiguration 3")
	kind("layout/ycbcr-2x2", func(t *tiff) { t.short(tPhotometric, 6); t.short(tYCbCrSubsamp, 2, 2) }, "YCbCr subsampling 2x2")
	kind("offsets/strip-past-end", func(t *tiff) {
		e := t.tags[tStripOffsets]
		binary.LittleEndian.PutUint32(e.val[4:], 1<<24)
	}, "the file ends early")
	kind("offsets/count-past-end", func(t *tiff) {
		e := t.tags[tStripByteCounts]
		binary.LittleEndian.PutUint32(e.val[4:], 1<<24)
	}, "the file ends early")
	kind("offsets/offset-2^32-1", func(t *tiff) {
		e := t.tags[tStripOffsets]
		binary.LittleEndian.PutUint32(e.val, 1<<32-1)
	}, "the file ends early")
	kind("offsets/uncompressed-short", func(t *tiff) {
		t.short(tCompression, cNone)
	}, "needs 1024")
	t = base().build()
	t.big = true
	t.offsets(tTileOffsets, 1<<64-10, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16)
	g.bad("offsets/bigtiff-overflow", t.bytes(), "the file ends early")
}

// written is a valid file from the project's own writer.
func written(opt geotiff.WriteOptions) []byte {
	w, h := 200, 150
	data := make([]uint16, w*h)
	for i := range data {
		data[i] = uint16(i*7919) % 10000
	}
	dir, err := os.MkdirTemp("", "hostile-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	p := filepath.Join(dir, "w.tif")
	g := &compute.GeoRef{PixelScale: []float64{10, 10, 0}, Tiepoints: []float64{0, 0, 0, 600000, 5300000, 0},
		GeoKeyDirectory: []uint16{1, 1, 0, 1, 3072, 0, 1, 32633}}
	if err := geotiff.WriteBands(p, w, h, [][]uint16{data}, g, opt); err != nil {
		panic(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		panic(err)
	}
	return b
}

func (g *gen) truncated() {
	for _, v := range []struct {
		name string
		opt  geotiff.WriteOptions
	}{{"deflate", geotiff.WriteOptions{TileSize: 32}}, {"zstd", geotiff.WriteOptions{Compression: geotiff.ZSTD, TileSize: 64}}, {"none-bigtiff", geotiff.WriteOptions{Compression: geotiff.NoCompression, BigTIFF: true, TileSize: 64}}} {
		b := written(v.opt)
		g.ok("truncated/"+v.name+"-whole", b)
		for _, frac := range []float64{0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99} {
			n := int(float64(len(b)) * frac)
			g.bad("truncated/"+v.name+"-"+itoa(int(frac*100))+"pct", b[:n], "")
		}
		g.bad("truncated/"+v.name+"-minus-1", b[:len(b)-1], "the file ends early")
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var s []byte
	for ; n > 0; n /= 10 {
		s = append([]byte{byte('0' + n%10)}, s...)
	}
	return string(s)
}

func (g *gen) corrupted() {
	files := [][]byte{written(geotiff.WriteOptions{TileSize: 32}), strips().build().bytes()}
	for i := range 24 {
		src := files[i%2]
		b := append([]byte(nil), src...)
		r := rand.New(rand.NewPCG(uint64(i), 13))
		for range 1 + i%8 {
			k := r.IntN(len(b))
			b[k] ^= byte(1 + r.IntN(255))
		}
		g.either("corrupt/flip-"+itoa(i+1), b)
	}
}

// shared is a w×h image of 256² tiles of the given compression whose
// tiles all point at the bytes of one tile.
func shared(w, h, bits, comp int) []byte {
	t := newTIFF()
	raw := make([]byte, 256*256*bits/8)
	z := compress(comp, raw)
	off := t.blob(z)
	n := ((w + 255) / 256) * ((h + 255) / 256)
	offs, counts := make([]uint64, n), make([]uint64, n)
	for i := range offs {
		offs[i], counts[i] = off, uint64(len(z))
	}
	t.long(tImageWidth, uint64(w))
	t.long(tImageLength, uint64(h))
	t.short(tBitsPerSample, uint64(bits))
	t.short(tCompression, uint64(comp))
	t.short(tPhotometric, 1)
	t.long(tTileWidth, 256)
	t.long(tTileLength, 256)
	t.offsets(tTileOffsets, offs...)
	t.offsets(tTileByteCounts, counts...)
	return t.bytes()
}

// oneTile is a w×h image in a single tw×th uint16 tile whose stream holds
// the given number of rows.
func oneTile(w, h, tw, th, rows, comp int) []byte {
	t := newTIFF()
	raw := make([]byte, tw*2*rows)
	for i := 0; i < len(raw); i += 2 {
		raw[i] = byte(i / 2)
	}
	z := compress(comp, raw)
	off := t.blob(z)
	t.long(tImageWidth, uint64(w))
	t.long(tImageLength, uint64(h))
	t.short(tBitsPerSample, 16)
	t.short(tCompression, uint64(comp))
	t.long(tTileWidth, uint64(tw))
	t.long(tTileLength, uint64(th))
	t.offsets(tTileOffsets, off)
	t.offsets(tTileByteCounts, uint64(len(z)))
	return t.bytes()
}

// oneStrip is a w×h uint8 image of zeros in a single strip.
func oneStrip(w, h, comp int, raw []byte) []byte {
	t := newTIFF()
	if raw == nil {
		raw = make([]byte, w*h)
	}
	z := compress(comp, raw)
	off := t.blob(z)
	t.long(tImageWidth, uint64(w))
	t.long(tImageLength, uint64(h))
	t.short(tBitsPerSample, 8)
	t.short(tCompression, uint64(comp))
	t.long(tRowsPerStrip, uint64(h))
	t.offsets(tStripOffsets, off)
	t.offsets(tStripByteCounts, uint64(len(z)))
	return t.bytes()
}

func (g *gen) bombs() {
	for _, c := range []int{cDeflate, cZSTD, cLZW, cPackBits} {
		g.bad("bomb/shared-tiles-80000-"+compName(c), shared(80000, 80000, 16, c), "decompression bomb")
	}
	g.bad("bomb/shared-tiles-2^32-pixels", shared(65536, 65536, 8, cDeflate), "decompression bomb")
	g.ok("bomb/shared-tiles-row-256", shared(256*256, 256, 8, cDeflate))
	g.ok("bomb/shared-tiles-row-256-16bit", shared(128*256, 256, 16, cDeflate))
	for _, c := range []int{cDeflate, cZSTD, cLZW, cPackBits} {
		g.ok("bomb/1x1-huge-tile-"+compName(c), oneTile(1, 1, 16384, 16384, 1, c))
	}
	g.ok("bomb/100x100-tile-8192", oneTile(100, 100, 8192, 8192, 100, cDeflate))
	g.bad("bomb/1x1-huge-tile-uncompressed-short", oneTile(1, 1, 16384, 16384, 1, cNone), "needs 536870912")
	g.bad("bomb/deflate-16384-squared-100KB", oneStrip(16384, 16384, cDeflate, make([]byte, 16<<20)), "decompression bomb")
	g.bad("bomb/zstd-32768-squared", oneStrip(32768, 32768, cZSTD, make([]byte, 8<<20)), "decompression bomb")
	g.ok("bomb/deflate-4096-squared-zeros", oneStrip(4096, 4096, cDeflate, nil))
	g.ok("bomb/lzw-2048-squared-zeros", oneStrip(2048, 2048, cLZW, nil))
	g.ok("bomb/zstd-4096-squared-zeros", oneStrip(4096, 4096, cZSTD, nil))
	g.ok("bomb/packbits-2048-squared-zeros", oneStrip(2048, 2048, cPackBits, nil))

	// Tiles far wider than a 1-pixel image, each with bytes of its own
	// (distinct streams), or all overlapping one byte apart.
	wide := func(overlap bool) []byte {
		t := newTIFF()
		n := 200000 / 16
		row := zlibBytes(make([]byte, 4096*4*16))
		var offs, counts []uint64
		if overlap {
			// 12000 distinct 2000-byte ranges within 14000 bytes.
			off := t.blob(append(row, make([]byte, 14000)...))
			for i := range n {
				offs, counts = append(offs, off+uint64(i%12000)), append(counts, 2000)
			}
		} else {
			for range n {
				offs, counts = append(offs, t.blob(row)), append(counts, uint64(len(row)))
			}
		}
		t.long(tImageWidth, 1)
		t.long(tImageLength, 200000)
		t.short(tBitsPerSample, 32)
		t.short(tSampleFormat, 3)
		t.short(tCompression, cDeflate)
		t.long(tTileWidth, 4096)
		t.long(tTileLength, 16)
		t.offsets(tTileOffsets, offs...)
		t.offsets(tTileByteCounts, counts...)
		return t.bytes()
	}
	g.bad("bomb/overlapping-tiles", wide(true), "overlap")
	g.bad("bomb/tiles-wider-than-image", wide(false), "would decode")

	// 4 Mi + 1 empty strips: the arrays alone would be 64 MiB.
	t := newTIFF()
	n := 1<<22 + 1
	zeros := make([]uint64, n)
	t.long(tImageWidth, 1)
	t.long(tImageLength, uint64(n))
	t.short(tBitsPerSample, 8)
	t.long(tRowsPerStrip, 1)
	t.short(tStripOffsets, zeros...)
	t.short(tStripByteCounts, zeros...)
	g.bad("bomb/4Mi-strips", t.bytes(), "more than the 4194304 an image may have")
	t = newTIFF()
	zeros = make([]uint64, 4000)
	t.long(tImageWidth, 100)
	t.long(tImageLength, 4000)
	t.short(tBitsPerSample, 8)
	t.long(tRowsPerStrip, 1)
	t.short(tStripOffsets, zeros...)
	t.short(tStripByteCounts, zeros...)
	t.ascii(tGDALNoData, "255")
	g.ok("sparse/4000-empty-strips", t.bytes())

	pred := func(name string, im image, loads bool, want string) {
		if loads {
			g.ok(name, im.build().bytes())
		} else {
			g.bad(name, im.build().bytes(), want)
		}
	}
	im := base()
	im.bits, im.format, im.pred = 32, 3, 2
	pred("predictor/horizontal-on-float32", im, true, "")
	im = base()
	im.comp, im.pred = cNone, 2
	pred("predictor/horizontal-uncompressed", im, true, "")
	im = base()
	im.spp, im.pred, im.bits = 8, 2, 8
	g.add(Case{Name: "predictor/horizontal-8-bands", Red: g.file("pred8.tif", im.build().bytes()) + ":8", Loads: true})
	im = base()
	im.bits, im.pred, im.be = 64, 2, true
	pred("predictor/horizontal-uint64-be", im, true, "")
	im = base()
	im.pred = 3
	pred("predictor/float-on-ints", im, false, "floating-point predictor (3) on uint16")
}

// zstdWindow is a ZSTD frame declaring a 2^log-byte window, holding n
// raw bytes.
func zstdWindow(log, n int) []byte {
	b := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, byte((log - 10) << 3)}
	h := uint32(1 | n<<3) // last block, raw
	b = append(b, byte(h), byte(h>>8), byte(h>>16))
	return append(b, make([]byte, n)...)
}

func (g *gen) streams() {
	stream := func(name string, comp int, z []byte, want string) {
		t := newTIFF()
		off := t.blob(z)
		t.long(tImageWidth, 64)
		t.long(tImageLength, 16)
		t.short(tBitsPerSample, 16)
		t.short(tCompression, uint64(comp))
		t.long(tRowsPerStrip, 16)
		t.offsets(tStripOffsets, off)
		t.offsets(tStripByteCounts, uint64(len(z)))
		if want == "" {
			g.ok(name, t.bytes())
		} else {
			g.bad(name, t.bytes(), want)
		}
	}
	raw := make([]byte, 64*16*2)
	for i := range raw {
		raw[i] = byte(i * 31)
	}
	junk := make([]byte, 600)
	r := rand.New(rand.NewPCG(5, 5))
	for i := range junk {
		junk[i] = byte(r.Uint32())
	}
	junk[0] = 0xff // not a zlib header
	dz := zlibBytes(raw)
	lz := lzwEncode(raw)
	zz := zstdBytes(raw)
	pb := packBits(raw)
	stream("stream/deflate-valid", cDeflate, dz, "")
	stream("stream/deflate-garbage", cDeflate, append([]byte{0x78, 0x9c}, junk...), "damaged")
	stream("stream/deflate-truncated", cDeflate, dz[:len(dz)/2], "ends before the strip's 2048 bytes")
	stream("stream/deflate-not-zlib", cDeflate, junk, "not a zlib stream")
	stream("stream/deflate-dictionary", cDeflate, append([]byte{0x78, 0xbb}, dz[2:]...), "preset dictionary")
	stream("stream/deflate-longer-than-strip", cDeflate, zlibBytes(append(raw, make([]byte, 8<<20)...)), "")
	stream("stream/lzw-valid", cLZW, lz, "")
	stream("stream/lzw-garbage", cLZW, junk, "damaged")
	stream("stream/lzw-truncated", cLZW, lz[:len(lz)/2], "ends before")
	stream("stream/zstd-valid", cZSTD, zz, "")
	stream("stream/zstd-garbage", cZSTD, append([]byte{0x28, 0xb5, 0x2f, 0xfd}, junk...), "damaged")
	stream("stream/zstd-truncated", cZSTD, zz[:len(zz)/2], "damaged")
	stream("stream/zstd-window-1GiB", cZSTD, zstdWindow(30, 2048), "window")
	stream("stream/zstd-window-16MiB", cZSTD, zstdWindow(24, 2048), "window")
	stream("stream/zstd-window-8MiB", cZSTD, zstdWindow(23, 2048), "")
	stream("stream/packbits-valid", cPackBits, pb, "")
	stream("stream/packbits-short", cPackBits, pb[:len(pb)/3], "ends before")
	stream("stream/packbits-all-noops", cPackBits, append(make([]byte, 0), repeatByte(0x80, 5000)...), "ends before")
	stream("stream/packbits-literal-past-end", cPackBits, []byte{0x7f, 1, 2}, "ends before")
}

func bytesRepeat(b []byte, n int) []byte {
	var out []byte
	for range n {
		out = append(out, b...)
	}
	return out
}

func repeatByte(b byte, n int) []byte {
	out := make([]byte, n)
	for i := range out {
		out[i] = b
	}
	return out
}

func (g *gen) georef() {
	geo := func(name string, f func(t *tiff), want string) {
		t := base().build()
		f(t)
		g.bad(name, t.bytes(), "the georeferencing is not usable: "+want)
	}
	nan, inf := math.NaN(), math.Inf(1)
	geo("geo/nan-pixel-scale", func(t *tiff) { t.doubles(tPixelScale, nan, 10, 0) }, "ModelPixelScale value 1 is NaN")
	geo("geo/inf-pixel-scale", func(t *tiff) { t.doubles(tPixelScale, 10, -inf, 0) }, "ModelPixelScale value 2 is -Inf")
	geo("geo/zero-pixel-scale", func(t *tiff) { t.doubles(tPixelScale, 0, 10, 0) }, "the pixel size is 0 x 10")
	geo("geo/nan-tiepoint", func(t *tiff) { t.doubles(tTiepoint, 0, 0, 0, nan, 5300000, 0) }, "ModelTiepoint value 4 is NaN")
	geo("geo/inf-tiepoint", func(t *tiff) { t.doubles(tTiepoint, 0, 0, 0, 600000, inf, 0) }, "ModelTiepoint value 5 is +Inf")
	geo("geo/nan-transformation", func(t *tiff) {
		m := make([]float64, 16)
		m[0], m[5], m[3], m[15] = 10, -10, nan, 1
		t.doubles(tTransformation, m...)
	}, "ModelTransformation value 4 is NaN")
	geo("geo/singular-transformation", func(t *tiff) { t.doubles(tTransformation, make([]float64, 16)...) }, "its transformation maps the image to a line or a point")
	geo("geo/geokeys-count", func(t *tiff) { t.short(tGeoKeys, 1, 1, 0, 9, 1024, 0, 1, 1) }, "the GeoKey directory claims 9 keys")
	geo("geo/geokey-past-doubles", func(t *tiff) { t.short(tGeoKeys, 1, 1, 0, 1, 3088, tGeoDoubles, 4, 2) }, "GeoKey 3088 points past the 0 GeoDoubleParams")
	geo("geo/nan-double-params", func(t *tiff) { t.doubles(tGeoDoubles, nan) }, "GeoDoubleParams value 1 is NaN")

	pair := func(name string, a, b image, loads bool, want string) {
		ra := g.file(name+"-red.tif", a.build().bytes())
		nb := g.file(name+"-nir.tif", b.build().bytes())
		g.add(Case{Name: name, Red: ra, NIR: nb, Loads: loads, Want: want})
	}
	a := base()
	b := base()
	b.epsg = 32634
	pair("pair/other-crs-same-numbers", a, b, false, "different coordinate reference systems (EPSG:32633 and EPSG:32634)")
	b = base()
	b.pixelPoint = true
	pair("pair/pixel-is-point-twin", a, b, true, "")
	b = base()
	b.x0 += 10
	pair("pair/shifted-grid", a, b, false, "not on the same georeferenced grid")
	b = base()
	b.w = 63
	pair("pair/size-mismatch", a, b, false, "the bands are not the same size")
	b = base()
	b.epsg = 0
	pair("pair/one-without-crs", a, b, true, "")
	b = base()
	b.comp, b.bits, b.format, b.tw, b.th = cZSTD, 32, 3, 0, 5
	pair("pair/other-layout-same-grid", a, b, true, "")
}
