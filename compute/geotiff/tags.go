package geotiff

import "fmt"

// TIFF tags this package reads or writes.
const (
	tagNewSubfileType   = 254
	tagImageWidth       = 256
	tagImageLength      = 257
	tagBitsPerSample    = 258
	tagCompression      = 259
	tagPhotometric      = 262
	tagStripOffsets     = 273
	tagSamplesPerPixel  = 277
	tagRowsPerStrip     = 278
	tagStripByteCounts  = 279
	tagPlanarConfig     = 284
	tagPredictor        = 317
	tagTileWidth        = 322
	tagTileLength       = 323
	tagTileOffsets      = 324
	tagTileByteCounts   = 325
	tagExtraSamples     = 338
	tagSampleFormat     = 339
	tagYCbCrSubsampling = 530
	tagModelPixelScale  = 33550
	tagModelTiepoint    = 33922
	tagModelTransform   = 34264
	tagGeoKeyDirectory  = 34735
	tagGeoDoubleParams  = 34736
	tagGeoASCIIParams   = 34737
	tagGDALMetadata     = 42112
	tagGDALNoData       = 42113
)

// TIFF field types.
const (
	typeByte      = 1
	typeASCII     = 2
	typeShort     = 3
	typeLong      = 4
	typeRational  = 5
	typeSByte     = 6
	typeUndefined = 7
	typeSShort    = 8
	typeSLong     = 9
	typeSRational = 10
	typeFloat     = 11
	typeDouble    = 12
	typeIFD       = 13
	typeLong8     = 16
	typeSLong8    = 17
	typeIFD8      = 18
)

// typeSize is the size in bytes of one value of each field type (0: unknown).
var typeSize = [...]int{
	typeByte: 1, typeASCII: 1, typeShort: 2, typeLong: 4, typeRational: 8,
	typeSByte: 1, typeUndefined: 1, typeSShort: 2, typeSLong: 4,
	typeSRational: 8, typeFloat: 4, typeDouble: 8, typeIFD: 4,
	typeLong8: 8, typeSLong8: 8, typeIFD8: 8,
}

// Compression tag values.
const (
	compNone        = 1
	compLZW         = 5
	compOldJPEG     = 6
	compJPEG        = 7
	compAdobeDflt   = 8
	compPackBits    = 32773
	compDeflate     = 32946
	compZSTD        = 50000
	compWebP        = 50001
	compLERC        = 34887
	compLZMA        = 34925
	compJPEG2000    = 34712
	compJPEGXL      = 52546
	compJPEGXLDNG   = 50002
	compCCITTRLE    = 2
	compCCITTFax3   = 3
	compCCITTFax4   = 4
	compNeXT        = 32766
	compThunderScan = 32809
	compPixarLog    = 32909
	compSGILog      = 34676
	compSGILog24    = 34677
)

var compressionNames = map[int]string{
	compNone: "none", compLZW: "LZW", compOldJPEG: "old-style JPEG",
	compJPEG: "JPEG", compAdobeDflt: "DEFLATE", compPackBits: "PackBits",
	compDeflate: "DEFLATE", compZSTD: "ZSTD", compWebP: "WebP",
	compLERC: "LERC", compLZMA: "LZMA", compJPEG2000: "JPEG 2000",
	compJPEGXL: "JPEG XL", compJPEGXLDNG: "JPEG XL", compCCITTRLE: "CCITT RLE",
	compCCITTFax3: "CCITT Group 3", compCCITTFax4: "CCITT Group 4",
	compNeXT: "NeXT", compThunderScan: "ThunderScan", compPixarLog: "PixarLog",
	compSGILog: "SGILog", compSGILog24: "SGILog24",
}

// compressionName describes a Compression tag value: "JPEG (7)".
func compressionName(c int) string {
	if n, ok := compressionNames[c]; ok {
		return fmt.Sprintf("%s (%d)", n, c)
	}
	return fmt.Sprintf("code %d", c)
}

// maxRatio bounds how many bytes each compressed byte can expand to. A file
// whose pixels would need more than maxRatio times its stored data is not a
// real image; refusing it keeps a tiny hostile file from making the reader
// allocate gigabytes. The bounds are generous: DEFLATE cannot exceed 1032:1,
// PackBits 64:1, 12-bit LZW about 2600:1; ZSTD run-length blocks can go
// further, hence 65536.
func maxRatio(c int) int64 {
	switch c {
	case compNone:
		return 1
	case compPackBits:
		return 64
	case compLZW:
		return 4096
	case compAdobeDflt, compDeflate:
		return 1100
	default:
		return 1 << 16
	}
}
