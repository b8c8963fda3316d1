package geotiff

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"strings"
	"testing"
)

// fakeTIFF builds small classic or BigTIFF files by hand, so that each
// malformed case changes exactly one thing in an otherwise valid file.
type fakeTIFF struct {
	big     bool
	be      bool
	data    []byte // placed right after the header; offset dataOff()
	entries map[uint16]wentry
	next    uint64 // next-IFD pointer; 1 means "this IFD" (a loop)
}

func (ft *fakeTIFF) dataOff() uint64 {
	if ft.big {
		return 16
	}
	return 8
}

// set stores integer values with the given field type.
func (ft *fakeTIFF) set(tag, typ uint16, vals ...uint64) {
	size := typeSize[typ]
	b := make([]byte, size*len(vals))
	for i, v := range vals {
		switch size {
		case 1:
			b[i] = byte(v)
		case 2:
			binary.LittleEndian.PutUint16(b[2*i:], uint16(v))
		case 4:
			binary.LittleEndian.PutUint32(b[4*i:], uint32(v))
		case 8:
			binary.LittleEndian.PutUint64(b[8*i:], v)
		}
	}
	ft.entries[tag] = wentry{tag, typ, uint64(len(vals)), b}
}

func (ft *fakeTIFF) ascii(tag uint16, s string) {
	ft.entries[tag] = wentry{tag, typeASCII, uint64(len(s) + 1), append([]byte(s), 0)}
}

// bytes lays the file out: header, data, IFD. Multi-byte values are
// written little-endian and swapped afterwards for big-endian files.
func (ft *fakeTIFF) bytes() []byte {
	off := ft.dataOff() + uint64(len(ft.data))
	off += off & 1
	var es []wentry
	for _, e := range ft.entries {
		es = append(es, e)
	}
	ifd := marshalIFD(es, off, ft.big)
	if ft.next != 0 {
		nx := ft.next
		if nx == 1 {
			nx = off
		}
		countSize, entrySize := 2, 12
		if ft.big {
			countSize, entrySize = 8, 20
			binary.LittleEndian.PutUint64(ifd[countSize+len(es)*entrySize:], nx)
		} else {
			binary.LittleEndian.PutUint32(ifd[countSize+len(es)*entrySize:], uint32(nx))
		}
	}
	var out []byte
	if ft.big {
		out = []byte{'I', 'I', 43, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
		binary.LittleEndian.PutUint64(out[8:], off)
	} else {
		out = []byte{'I', 'I', 42, 0, 0, 0, 0, 0}
		binary.LittleEndian.PutUint32(out[4:], uint32(off))
	}
	out = append(out, ft.data...)
	for uint64(len(out)) < off {
		out = append(out, 0)
	}
	return append(out, ifd...)
}

// validStrip is a 4×3 uint8 image in one uncompressed strip.
func validStrip(big bool) *fakeTIFF {
	ft := &fakeTIFF{big: big, data: []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, entries: map[uint16]wentry{}}
	ft.set(tagImageWidth, typeShort, 4)
	ft.set(tagImageLength, typeShort, 3)
	ft.set(tagBitsPerSample, typeShort, 8)
	ft.set(tagPhotometric, typeShort, 1)
	ft.set(tagStripOffsets, typeLong, ft.dataOff())
	ft.set(tagRowsPerStrip, typeShort, 3)
	ft.set(tagStripByteCounts, typeLong, 12)
	return ft
}

func deflate(b []byte) []byte {
	var buf bytes.Buffer
	zw := zlib.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

// validTiles is a 20×20 uint16 image in four 16×16 DEFLATE tiles.
func validTiles() *fakeTIFF {
	ft := &fakeTIFF{entries: map[uint16]wentry{}}
	var offs, counts []uint64
	for k := 0; k < 4; k++ {
		tile := make([]byte, 16*16*2)
		for i := 0; i < 256; i++ {
			binary.LittleEndian.PutUint16(tile[2*i:], uint16(k*1000+i))
		}
		z := deflate(tile)
		offs = append(offs, ft.dataOff()+uint64(len(ft.data)))
		counts = append(counts, uint64(len(z)))
		ft.data = append(ft.data, z...)
	}
	ft.set(tagImageWidth, typeShort, 20)
	ft.set(tagImageLength, typeShort, 20)
	ft.set(tagBitsPerSample, typeShort, 16)
	ft.set(tagCompression, typeShort, compAdobeDflt)
	ft.set(tagPhotometric, typeShort, 1)
	ft.set(tagTileWidth, typeShort, 16)
	ft.set(tagTileLength, typeShort, 16)
	ft.set(tagTileOffsets, typeLong, offs...)
	ft.set(tagTileByteCounts, typeLong, counts...)
	return ft
}

func openBytes(b []byte) (*File, error) {
	return NewReader(bytes.NewReader(b), int64(len(b)), "x.tif")
}

func TestValidHandMadeFiles(t *testing.T) {
	for _, big := range []bool{false, true} {
		f, err := openBytes(validStrip(big).bytes())
		if err != nil {
			t.Fatalf("big=%v: %v", big, err)
		}
		b, err := f.ReadBand(1)
		if err != nil || b.Data[11] != 12 || b.Data[0] != 1 {
			t.Fatalf("big=%v: %v %v", big, b, err)
		}
	}
	for _, comp := range []uint64{compAdobeDflt, compDeflate} {
		ft := validTiles()
		ft.set(tagCompression, typeShort, comp)
		f, err := openBytes(ft.bytes())
		if err != nil {
			t.Fatal(err)
		}
		b, err := f.ReadBand(1)
		if err != nil {
			t.Fatal(err)
		}
		// Pixel (17, 18) is in tile 3 at (1, 2): 3000 + 2*16 + 1.
		if got := b.Data[18*20+17]; got != 3033 {
			t.Errorf("compression %d: pixel (17,18) = %v, want 3033", comp, got)
		}
	}
}

// TestMalformed checks that each kind of broken or hostile file gives its
// own error, naming the file, without panicking.
func TestMalformed(t *testing.T) {
	cases := []struct {
		name   string
		file   func() []byte
		want   string
		atRead bool // the error comes from ReadBand, not Open
	}{
		{"empty", func() []byte { return nil }, "not a TIFF file: only 0 bytes long", false},
		{"png", func() []byte { return []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR") }, "not a TIFF file: it seems to be a PNG image (starts with 89 50 4e 47)", false},
		{"version", func() []byte { return []byte("II\x2b\x01\x08\x00\x00\x00") }, "version 299", false},
		{"bigtiff header", func() []byte { return []byte("II\x2b\x00\x04\x00\x00\x00\x10\x00\x00\x00\x00\x00\x00\x00") }, "bad BigTIFF header", false},
		{"no image", func() []byte { return []byte("II\x2a\x00\x00\x00\x00\x00") }, "holds no image", false},
		{"IFD past end", func() []byte {
			b := validStrip(false).bytes()
			binary.LittleEndian.PutUint32(b[4:], 1<<30)
			return b
		}, "IFD offset 1073741824 is outside the file", false},
		{"truncated IFD", func() []byte {
			b := validStrip(false).bytes()
			return b[:len(b)-20]
		}, "runs past the end of the file", false},
		{"IFD loop", func() []byte {
			ft := validStrip(false)
			ft.next = 1
			return ft.bytes()
		}, "IFD chain loops back to offset", false},
		{"IFD loop BigTIFF", func() []byte {
			ft := validStrip(true)
			ft.next = 1
			return ft.bytes()
		}, "IFD chain loops back to offset", false},
		{"huge entry count", func() []byte {
			b := validStrip(true).bytes()
			off := binary.LittleEndian.Uint64(b[8:])
			binary.LittleEndian.PutUint64(b[off:], 1<<40)
			return b
		}, "claims 1099511627776 entries", false},
		{"missing width", func() []byte {
			ft := validStrip(false)
			delete(ft.entries, tagImageWidth)
			return ft.bytes()
		}, "missing ImageWidth", false},
		{"absurd size", func() []byte {
			ft := validStrip(false)
			ft.set(tagImageWidth, typeLong, 1<<31)
			ft.set(tagImageLength, typeLong, 1<<31)
			return ft.bytes()
		}, "image size 2147483648x2147483648 is not a usable size", false},
		{"big image, tiny data", func() []byte {
			ft := validStrip(false)
			ft.set(tagImageWidth, typeLong, 60000)
			ft.set(tagImageLength, typeLong, 60000)
			ft.set(tagRowsPerStrip, typeLong, 16)
			ft.set(tagCompression, typeShort, compAdobeDflt)
			offs := make([]uint64, 3750)
			counts := make([]uint64, 3750)
			for i := range offs {
				offs[i], counts[i] = 8, 12
			}
			ft.set(tagStripOffsets, typeLong, offs...)
			ft.set(tagStripByteCounts, typeLong, counts...)
			return ft.bytes()
		}, "the image claims 60000x60000 pixels in 1 band but the file holds only 12 bytes of DEFLATE (8) data", false},
		{"huge tile, tiny data", func() []byte {
			ft := validTiles()
			ft.set(tagImageWidth, typeLong, 8192)
			ft.set(tagImageLength, typeLong, 8192)
			ft.set(tagTileWidth, typeLong, 8192)
			ft.set(tagTileLength, typeLong, 8192)
			ft.set(tagTileOffsets, typeLong, 8)
			ft.set(tagTileByteCounts, typeLong, 100)
			return ft.bytes()
		}, "tile 0 claims 134217728 decoded bytes from only 100 bytes of DEFLATE (8) data", false},
		{"too many chunks", func() []byte {
			ft := validStrip(false)
			ft.set(tagImageWidth, typeLong, 100000)
			ft.set(tagImageLength, typeLong, 100000)
			ft.set(tagRowsPerStrip, typeLong, 1)
			return ft.bytes()
		}, "image needs 100000 strips, more than the file", false},
		{"tile count mismatch", func() []byte {
			ft := validTiles()
			e := ft.entries[tagTileOffsets]
			e.count, e.data = 3, e.data[:12]
			ft.entries[tagTileOffsets] = e
			return ft.bytes()
		}, "TileOffsets has 3 entries, the image needs 4", false},
		{"byte count mismatch", func() []byte {
			ft := validTiles()
			ft.set(tagTileByteCounts, typeLong, 10, 10, 10, 10, 10)
			return ft.bytes()
		}, "TileByteCounts has 5 entries, the image needs 4", false},
		{"missing byte counts", func() []byte {
			ft := validTiles()
			delete(ft.entries, tagTileByteCounts)
			return ft.bytes()
		}, "missing TileByteCounts", false},
		{"tile past end", func() []byte {
			ft := validTiles()
			ft.set(tagTileOffsets, typeLong, 8, 8, 8, 1<<20)
			return ft.bytes()
		}, "the file ends early; it may be incomplete (tile 3, ", false},
		{"short strip", func() []byte {
			ft := validStrip(false)
			ft.set(tagStripByteCounts, typeLong, 11)
			return ft.bytes()
		}, "strip 0 holds 11 bytes, needs 12", false},
		{"tag data past end", func() []byte {
			ft := validStrip(false)
			ft.set(tagModelPixelScale, typeDouble, 0, 0, 0)
			b := ft.bytes()
			return b[:len(b)-8]
		}, "ModelPixelScale values, 24 bytes at offset", false},
		{"unknown field type", func() []byte {
			ft := validStrip(false)
			ft.entries[tagImageWidth] = wentry{tagImageWidth, 99, 1, []byte{4, 0}}
			return ft.bytes()
		}, "ImageWidth has unknown field type 99", false},
		{"wrong field type", func() []byte {
			ft := validStrip(false)
			ft.set(tagStripOffsets, typeDouble, 0)
			return ft.bytes()
		}, "StripOffsets has field type 12, want an unsigned integer", false},
		{"JPEG", func() []byte {
			ft := validStrip(false)
			ft.set(tagCompression, typeShort, compJPEG)
			return ft.bytes()
		}, "read x.tif: unsupported compression JPEG (7)", false},
		{"WebP", func() []byte {
			ft := validStrip(false)
			ft.set(tagCompression, typeShort, compWebP)
			return ft.bytes()
		}, "unsupported compression WebP (50001)", false},
		{"LERC", func() []byte {
			ft := validStrip(false)
			ft.set(tagCompression, typeShort, compLERC)
			return ft.bytes()
		}, "unsupported compression LERC (34887)", false},
		{"JPEG 2000", func() []byte {
			ft := validStrip(false)
			ft.set(tagCompression, typeShort, compJPEG2000)
			return ft.bytes()
		}, "unsupported compression JPEG 2000 (34712)", false},
		{"12-bit", func() []byte {
			ft := validStrip(false)
			ft.set(tagBitsPerSample, typeShort, 12)
			return ft.bytes()
		}, "unsupported sample type: 12-bit unsigned integer", false},
		{"complex", func() []byte {
			ft := validStrip(false)
			ft.set(tagBitsPerSample, typeShort, 32)
			ft.set(tagSampleFormat, typeShort, 6)
			return ft.bytes()
		}, "unsupported sample type: 32-bit complex floating-point", false},
		{"mixed depths", func() []byte {
			ft := validStrip(false)
			ft.set(tagSamplesPerPixel, typeShort, 2)
			ft.set(tagBitsPerSample, typeShort, 8, 16)
			return ft.bytes()
		}, "bands with different BitsPerSample", false},
		{"float predictor on ints", func() []byte {
			ft := validTiles()
			ft.set(tagPredictor, typeShort, 3)
			return ft.bytes()
		}, "floating-point predictor (3) on uint16 samples", false},
		{"unknown predictor", func() []byte {
			ft := validTiles()
			ft.set(tagPredictor, typeShort, 9)
			return ft.bytes()
		}, "unsupported predictor 9", false},
		{"planar config", func() []byte {
			ft := validStrip(false)
			ft.set(tagPlanarConfig, typeShort, 3)
			return ft.bytes()
		}, "PlanarConfiguration 3", false},
		{"zero rows per strip", func() []byte {
			ft := validStrip(false)
			ft.set(tagRowsPerStrip, typeShort, 0)
			return ft.bytes()
		}, "RowsPerStrip is 0", false},
		{"zero tile", func() []byte {
			ft := validTiles()
			ft.set(tagTileWidth, typeShort, 0)
			return ft.bytes()
		}, "tile size 0x16 is not usable", false},
		{"huge tile", func() []byte {
			ft := validTiles()
			ft.set(tagTileWidth, typeLong, 1<<20)
			ft.set(tagTileLength, typeLong, 1<<20)
			return ft.bytes()
		}, "tile of 1048576x1048576 pixels", false},
		{"bad nodata", func() []byte {
			ft := validStrip(false)
			ft.ascii(tagGDALNoData, "none")
			return ft.bytes()
		}, `GDAL_NODATA "none" is not a number`, false},
		{"YCbCr subsampled", func() []byte {
			ft := validStrip(false)
			ft.set(tagPhotometric, typeShort, 6)
			ft.set(tagYCbCrSubsampling, typeShort, 2, 2)
			return ft.bytes()
		}, "unsupported YCbCr subsampling 2x2", false},
		{"truncated DEFLATE", func() []byte {
			ft := validTiles()
			e := ft.entries[tagTileByteCounts]
			binary.LittleEndian.PutUint32(e.data[4:], 20)
			return ft.bytes()
		}, "tile 1: DEFLATE (8) data ends before the tile's 512 bytes", true},
		{"corrupt DEFLATE", func() []byte {
			ft := validTiles()
			for i := 2; i < 40; i++ {
				ft.data[i] = 0xff
			}
			return ft.bytes()
		}, "tile 0: DEFLATE (8) data is corrupt", true},
		// Every tile is damaged here (DEFLATE bytes read as ZSTD), and
		// tiles are decoded in parallel, a worker stopping its own tile
		// as soon as another fails: the one named is whichever failed
		// first (CI saw tile 1).
		{"corrupt ZSTD", func() []byte {
			ft := validTiles()
			ft.set(tagCompression, typeShort, compZSTD)
			return ft.bytes()
		}, ": ZSTD (50000) data is corrupt", true},
		{"short PackBits", func() []byte {
			ft := validStrip(false)
			ft.set(tagCompression, typeShort, compPackBits)
			ft.data = []byte{5, 1, 2, 3, 4, 5, 6, 0xfe, 7} // 6 literals, 3 repeats: 9 of 12 bytes
			ft.set(tagStripByteCounts, typeLong, 9)
			return ft.bytes()
		}, "strip 0: PackBits (32773) data ends before the strip's 12 bytes", true},
		{"short LZW", func() []byte {
			ft := validStrip(false)
			ft.set(tagCompression, typeShort, compLZW)
			ft.data = []byte{0x80, 0x00, 0x20} // clear code and one literal
			ft.set(tagStripByteCounts, typeLong, 3)
			return ft.bytes()
		}, "strip 0: LZW (5) data ends before", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := openBytes(c.file())
			if err == nil && c.atRead {
				_, err = f.ReadBand(1)
			}
			if err == nil {
				t.Fatalf("no error, want one containing %q", c.want)
			}
			if !strings.HasPrefix(err.Error(), "read x.tif") || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q, want one line naming x.tif and containing %q", err, c.want)
			}
		})
	}
}
