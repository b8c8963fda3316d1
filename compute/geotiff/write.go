package geotiff

import (
	"bytes"
	"encoding/binary"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/klauspost/compress/zstd"

	"canopy/compute"
	"canopy/compute/outfile"
	"canopy/compute/par"
)

// Compression selects how the writer compresses tiles.
type Compression int

const (
	// Deflate is zlib DEFLATE (Compression tag 8), the most widely read.
	Deflate Compression = iota
	// ZSTD is Zstandard (tag 50000): faster, read by GDAL 2.3 and later.
	ZSTD
	// NoCompression stores tiles as they are.
	NoCompression
)

// String names the compression as GDAL's COMPRESS option does.
func (c Compression) String() string {
	switch c {
	case Deflate:
		return "DEFLATE"
	case ZSTD:
		return "ZSTD"
	case NoCompression:
		return "NONE"
	}
	return fmt.Sprintf("Compression(%d)", int(c))
}

// WriteOptions tune the writer. The zero value writes 256×256 tiles,
// DEFLATE at the default level with the predictor suited to the sample
// type (floating point for floats, horizontal for integers), and BigTIFF
// only when the file could pass 4 GiB. The default DEFLATE level is what
// measured fastest for its size (encoder.go): level 1 of
// klauspost/compress for floats, level 1 of libdeflate for integers
// (level 6 of klauspost/compress without cgo).
type WriteOptions struct {
	Compression Compression
	// Level is the compression level: 1-9 for DEFLATE (libdeflate's
	// levels when it is linked in), 1-22 for ZSTD (as zstd's command line
	// counts); 0 means the default; HuffmanOnly, Huffman codes alone.
	Level int
	// TileSize is the tile side in pixels, a multiple of 16; 0 means 256.
	TileSize int
	// NoPredictor stores samples without a predictor.
	NoPredictor bool
	// BigTIFF forces the BigTIFF format even for small files.
	BigTIFF bool
	// NoData is written as the GDAL_NODATA tag ("nan", "0", "-9999");
	// empty writes no tag. Write fills it from the band.
	NoData string
	// Descriptions are the bands' descriptions ("ndvi", "evi"), written
	// as GDAL writes them (GDAL_METADATA DESCRIPTION items), so that GDAL
	// and QGIS name each band; empty entries are left out.
	Descriptions []string
}

// gdalMetadata renders band descriptions as GDAL's GDAL_METADATA XML.
func gdalMetadata(desc []string) string {
	var b strings.Builder
	for i, d := range desc {
		if d == "" {
			continue
		}
		// GDAL escapes item values twice (CPLEscapeString, then its XML
		// writer) and unescapes them twice on reading: do as it does.
		var once, esc strings.Builder
		xml.EscapeText(&once, []byte(d))
		xml.EscapeText(&esc, []byte(once.String()))
		fmt.Fprintf(&b, "  <Item name=\"DESCRIPTION\" sample=\"%d\" role=\"description\">%s</Item>\n", i, esc.String())
	}
	if b.Len() == 0 {
		return ""
	}
	return "<GDALMetadata>\n" + b.String() + "</GDALMetadata>"
}

// FormatNoData formats a nodata value as GDAL writes GDAL_NODATA ("nan",
// "-9999", "0.5").
func FormatNoData(v float64) string {
	switch {
	case math.IsNaN(v):
		return "nan"
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// Write stores b as a single-band float32 GeoTIFF at path, with b.Geo's
// georeferencing tags and GDAL_NODATA set to the band's nodata value, or
// "nan" when it has none (NaN marks invalid pixels in Canopy's results).
// opt.NoData, when set, overrides both. The file is written to a temporary
// name in the same directory and renamed, so a failure leaves an existing
// file at path untouched.
func Write(path string, b *compute.Band, opt WriteOptions) error {
	if b == nil {
		return fmt.Errorf("write %s: no band", path)
	}
	return WriteBands(path, b.Width, b.Height, [][]float32{b.Data}, b.Geo, bandNoData(b, opt))
}

// WriteBandTo encodes b as Write does, into w instead of a named file: an
// outfile.Writer, whose run decides when the file is put in place.
func WriteBandTo(w io.WriterAt, b *compute.Band, opt WriteOptions) error {
	if b == nil {
		return errors.New("no band")
	}
	opt = bandNoData(b, opt)
	bands := [][]float32{b.Data}
	if err := checkWrite(b.Width, b.Height, bands, &opt); err != nil {
		return err
	}
	return encode(w, b.Width, b.Height, bands, b.Geo, opt)
}

// bandNoData fills opt.NoData from the band when it is not set.
func bandNoData(b *compute.Band, opt WriteOptions) WriteOptions {
	if opt.NoData == "" {
		opt.NoData = "nan"
		if b.HasNoData {
			opt.NoData = FormatNoData(b.NoData)
		}
	}
	return opt
}

// WriteBands stores bands (each width*height samples, row-major) as one
// tiled GeoTIFF at path, band-interleaved (one plane per band), with geo's
// georeferencing tags when geo is not nil. The file is written to a
// temporary name in the same directory and renamed into place.
func WriteBands[T Sample](path string, width, height int, bands [][]T, geo *compute.GeoRef, opt WriteOptions) error {
	if err := writeBands(path, width, height, bands, geo, opt); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// WriteBandsTo encodes bands as WriteBands does, into w instead of a named
// file: an outfile.Writer, whose run decides when the file is put in place.
func WriteBandsTo[T Sample](w io.WriterAt, width, height int, bands [][]T, geo *compute.GeoRef, opt WriteOptions) error {
	if err := checkWrite(width, height, bands, &opt); err != nil {
		return err
	}
	return encode(w, width, height, bands, geo, opt)
}

func writeBands[T Sample](path string, width, height int, bands [][]T, geo *compute.GeoRef, opt WriteOptions) error {
	if err := checkWrite(width, height, bands, &opt); err != nil {
		return err
	}
	return outfile.WriteFile(path, func(w *outfile.Writer) error {
		return encode(w, width, height, bands, geo, opt)
	})
}

// checkWrite validates what is to be written and fills opt's defaults.
func checkWrite[T Sample](width, height int, bands [][]T, opt *WriteOptions) error {
	if width <= 0 || height <= 0 || uint64(width)*uint64(height) > maxPixels {
		return fmt.Errorf("image size %dx%d is not a usable size", width, height)
	}
	if len(bands) == 0 || len(bands) > 65535 {
		return fmt.Errorf("%d bands: need 1 to 65535", len(bands))
	}
	for i, b := range bands {
		if len(b) != width*height {
			return fmt.Errorf("band %d holds %d samples, a %dx%d image needs %d", i+1, len(b), width, height, width*height)
		}
	}
	if opt.TileSize == 0 {
		opt.TileSize = 256
	}
	if opt.TileSize < 16 || opt.TileSize%16 != 0 || opt.TileSize > 1<<14 {
		return fmt.Errorf("tile size %d: must be a multiple of 16 from 16 to 16384", opt.TileSize)
	}
	switch opt.Compression {
	case Deflate, ZSTD, NoCompression:
	default:
		return fmt.Errorf("unknown compression %v", opt.Compression)
	}
	return nil
}

// typeOf returns the SampleType of T.
func typeOf[T Sample]() SampleType {
	var z T
	switch any(z).(type) {
	case uint8:
		return Uint8
	case int8:
		return Int8
	case uint16:
		return Uint16
	case int16:
		return Int16
	case uint32:
		return Uint32
	case int32:
		return Int32
	case uint64:
		return Uint64
	case int64:
		return Int64
	case float32:
		return Float32
	}
	return Float64
}

// putLE stores src little-endian into dst.
func putLE[T Sample](dst []byte, src []T) {
	switch s := any(src).(type) {
	case []uint8:
		copy(dst, s)
	case []int8:
		for i, v := range s {
			dst[i] = byte(v)
		}
	case []uint16:
		for i, v := range s {
			binary.LittleEndian.PutUint16(dst[2*i:], v)
		}
	case []int16:
		for i, v := range s {
			binary.LittleEndian.PutUint16(dst[2*i:], uint16(v))
		}
	case []uint32:
		for i, v := range s {
			binary.LittleEndian.PutUint32(dst[4*i:], v)
		}
	case []int32:
		for i, v := range s {
			binary.LittleEndian.PutUint32(dst[4*i:], uint32(v))
		}
	case []uint64:
		for i, v := range s {
			binary.LittleEndian.PutUint64(dst[8*i:], v)
		}
	case []int64:
		for i, v := range s {
			binary.LittleEndian.PutUint64(dst[8*i:], uint64(v))
		}
	case []float32:
		dst = dst[:4*len(s)]
		for i, v := range s {
			binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(v))
		}
	case []float64:
		for i, v := range s {
			binary.LittleEndian.PutUint64(dst[8*i:], math.Float64bits(v))
		}
	}
}

// applyHorizontal applies predictor 2 to one little-endian row in place.
func applyHorizontal(row []byte, size int) {
	switch size {
	case 1:
		for i := len(row) - 1; i >= 1; i-- {
			row[i] -= row[i-1]
		}
	case 2:
		for i := len(row) - 2; i >= 2; i -= 2 {
			binary.LittleEndian.PutUint16(row[i:], binary.LittleEndian.Uint16(row[i:])-binary.LittleEndian.Uint16(row[i-2:]))
		}
	case 4:
		for i := len(row) - 4; i >= 4; i -= 4 {
			binary.LittleEndian.PutUint32(row[i:], binary.LittleEndian.Uint32(row[i:])-binary.LittleEndian.Uint32(row[i-4:]))
		}
	case 8:
		for i := len(row) - 8; i >= 8; i -= 8 {
			binary.LittleEndian.PutUint64(row[i:], binary.LittleEndian.Uint64(row[i:])-binary.LittleEndian.Uint64(row[i-8:]))
		}
	}
}

// applyFloatPredictor applies predictor 3 to one little-endian row in
// place: bytes split by significance, most significant plane first, then
// differenced. tmp must hold the row.
func applyFloatPredictor(row, tmp []byte, size int) {
	n := len(row) / size
	tmp = tmp[:len(row)]
	for k := 0; k < n; k++ {
		for b := 0; b < size; b++ {
			tmp[b*n+k] = row[k*size+size-1-b]
		}
	}
	row[0] = tmp[0]
	for i := 1; i < len(tmp); i++ {
		row[i] = tmp[i] - tmp[i-1]
	}
}

// tileJob is one tile in flight: its compressed bytes land in out.
type tileJob struct {
	index int
	out   bytes.Buffer
	err   error
}

// encode writes the whole file to w: header, tiles in order, then the IFD
// with its values, and finally the header's pointer to the IFD.
func encode[T Sample](w io.WriterAt, width, height int, bands [][]T, geo *compute.GeoRef, opt WriteOptions) error {
	typ := typeOf[T]()
	size := typ.Size()
	ts := opt.TileSize
	across, down := (width+ts-1)/ts, (height+ts-1)/ts
	perPlane := across * down
	nTiles := perPlane * len(bands)
	big := opt.BigTIFF || needBigTIFF(width, height, len(bands), size, nTiles)
	pred := 1
	if opt.Compression != NoCompression && !opt.NoPredictor {
		pred = 2
		if typ.Float() {
			pred = 3
		}
	}
	var zenc *zstd.Encoder
	if opt.Compression == ZSTD {
		lvl := zstd.SpeedDefault
		if opt.Level > 0 {
			lvl = zstd.EncoderLevelFromZstd(opt.Level)
		}
		var err error
		zenc, err = zstd.NewWriter(nil, zstd.WithEncoderLevel(lvl), zstd.WithEncoderConcurrency(par.DefaultThreads()))
		if err != nil {
			return err
		}
		defer zenc.Close()
	}
	if opt.Compression == Deflate && (opt.Level < HuffmanOnly || opt.Level > 9) {
		return fmt.Errorf("DEFLATE level %d: must be 1 to 9", opt.Level)
	}

	pos := uint64(8)
	if big {
		pos = 16
	}
	offsets := make([]uint64, nTiles)
	counts := make([]uint64, nTiles)
	workers := par.Workers(nTiles)
	batch := make([]*tileJob, min(4*workers, nTiles))
	for i := range batch {
		batch[i] = &tileJob{}
	}
	tileBytes := ts * ts * size
	// Each worker's own scratch and DEFLATE state, kept across batches.
	type tileWorker struct {
		buf, tmp []byte
		zw       *deflater
	}
	tws := make([]tileWorker, workers)
	defer func() {
		for _, tw := range tws {
			if tw.zw != nil {
				tw.zw.close()
			}
		}
	}()
	for start := 0; start < nTiles; start += len(batch) {
		jobs := batch[:min(len(batch), nTiles-start)]
		for k, j := range jobs {
			j.index, j.err = start+k, nil
		}
		par.WorkerBlocksN(workers, len(jobs), 1, func(wk, k, _ int) {
			j, tw := jobs[k], &tws[wk]
			if tw.buf == nil {
				tw.buf, tw.tmp = make([]byte, tileBytes), make([]byte, ts*size)
			}
			buf, tmp := tw.buf, tw.tmp
			p, c := j.index/perPlane, j.index%perPlane
			x0, y0 := (c%across)*ts, (c/across)*ts
			vw, vh := min(ts, width-x0), min(ts, height-y0)
			clear(buf)
			for r := 0; r < vh; r++ {
				putLE(buf[r*ts*size:], bands[p][(y0+r)*width+x0:][:vw])
			}
			if pred != 1 {
				for r := 0; r < ts; r++ {
					row := buf[r*ts*size : (r+1)*ts*size]
					if pred == 2 {
						applyHorizontal(row, size)
					} else {
						applyFloatPredictor(row, tmp, size)
					}
				}
			}
			j.out.Reset()
			switch opt.Compression {
			case NoCompression:
				j.out.Write(buf)
			case ZSTD:
				j.out.Write(zenc.EncodeAll(buf, j.out.AvailableBuffer()))
			case Deflate:
				if tw.zw == nil {
					if tw.zw, j.err = newDeflater(opt.Level, typ.Float()); j.err != nil {
						return
					}
				}
				var z []byte
				z, j.err = tw.zw.compress(j.out.AvailableBuffer(), buf)
				j.out.Write(z)
			}
		})
		for _, j := range jobs {
			if j.err != nil {
				return fmt.Errorf("compress tile %d: %w", j.index, j.err)
			}
			n := uint64(j.out.Len())
			if !big && pos+n >= 1<<32 {
				return errors.New("the file passes 4 GiB; write it as BigTIFF")
			}
			if _, err := w.WriteAt(j.out.Bytes(), int64(pos)); err != nil {
				return err
			}
			offsets[j.index], counts[j.index] = pos, n
			pos += n
		}
	}

	// The IFD.
	spp := len(bands)
	ib := &ifdBuilder{big: big}
	ib.longs(tagImageWidth, uint32(width))
	ib.longs(tagImageLength, uint32(height))
	ib.shorts(tagBitsPerSample, perSample(spp, uint16(8*size))...)
	ib.shorts(tagCompression, compressionCode(opt.Compression))
	ib.shorts(tagPhotometric, 1)
	ib.shorts(tagSamplesPerPixel, uint16(spp))
	if spp > 1 {
		ib.shorts(tagPlanarConfig, 2)
	} else {
		ib.shorts(tagPlanarConfig, 1)
	}
	if pred != 1 {
		ib.shorts(tagPredictor, uint16(pred))
	}
	ib.shorts(tagTileWidth, uint16(ts))
	ib.shorts(tagTileLength, uint16(ts))
	ib.chunkArray(tagTileOffsets, offsets)
	ib.chunkArray(tagTileByteCounts, counts)
	if spp > 1 {
		ib.shorts(tagExtraSamples, make([]uint16, spp-1)...)
	}
	ib.shorts(tagSampleFormat, perSample(spp, uint16(typ.sampleFormat()))...)
	ib.geoTags(geo)
	if md := gdalMetadata(opt.Descriptions); md != "" {
		ib.ascii(tagGDALMetadata, md)
	}
	if opt.NoData != "" {
		ib.ascii(tagGDALNoData, opt.NoData)
	}
	pos += pos & 1 // IFDs start on a word boundary
	ifd := marshalIFD(ib.es, pos, big)
	if !big && pos+uint64(len(ifd)) >= 1<<32 {
		return errors.New("the file passes 4 GiB; write it as BigTIFF")
	}
	if _, err := w.WriteAt(ifd, int64(pos)); err != nil {
		return err
	}
	var hdr []byte
	if big {
		hdr = []byte{'I', 'I', 43, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
		binary.LittleEndian.PutUint64(hdr[8:], pos)
	} else {
		hdr = []byte{'I', 'I', 42, 0, 0, 0, 0, 0}
		binary.LittleEndian.PutUint32(hdr[4:], uint32(pos))
	}
	_, err := w.WriteAt(hdr, 0)
	return err
}

// wentry is an IFD entry to write, with its little-endian value bytes.
type wentry struct {
	tag, typ uint16
	count    uint64
	data     []byte
}

// ifdBuilder collects the entries of one IFD to write.
type ifdBuilder struct {
	es  []wentry
	big bool // chunk arrays as LONG8 (BigTIFF)
}

func (b *ifdBuilder) add(tag, typ uint16, count int, data []byte) {
	b.es = append(b.es, wentry{tag, typ, uint64(count), data})
}

func (b *ifdBuilder) shorts(tag uint16, v ...uint16) {
	d := make([]byte, 2*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint16(d[2*i:], x)
	}
	b.add(tag, typeShort, len(v), d)
}

func (b *ifdBuilder) longs(tag uint16, v ...uint32) {
	d := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(d[4*i:], x)
	}
	b.add(tag, typeLong, len(v), d)
}

// doubles adds v, or nothing when v is empty.
func (b *ifdBuilder) doubles(tag uint16, v []float64) {
	if len(v) == 0 {
		return
	}
	d := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(d[8*i:], math.Float64bits(x))
	}
	b.add(tag, typeDouble, len(v), d)
}

func (b *ifdBuilder) ascii(tag uint16, s string) {
	b.add(tag, typeASCII, len(s)+1, append([]byte(s), 0))
}

// chunkArray adds tile offsets or byte counts: LONG8 in a BigTIFF, LONG
// otherwise.
func (b *ifdBuilder) chunkArray(tag uint16, v []uint64) {
	if b.big {
		d := make([]byte, 8*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint64(d[8*i:], x)
		}
		b.add(tag, typeLong8, len(v), d)
		return
	}
	u := make([]uint32, len(v))
	for i, x := range v {
		u[i] = uint32(x)
	}
	b.longs(tag, u...)
}

// perSample is v once per sample of a pixel.
func perSample(n int, v uint16) []uint16 {
	s := make([]uint16, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// geoTags adds the GeoTIFF tags of geo (nothing when nil).
func (b *ifdBuilder) geoTags(geo *compute.GeoRef) {
	if geo == nil {
		return
	}
	b.doubles(tagModelPixelScale, geo.PixelScale)
	b.doubles(tagModelTiepoint, geo.Tiepoints)
	b.doubles(tagModelTransform, geo.Transformation)
	if len(geo.GeoKeyDirectory) > 0 {
		b.shorts(tagGeoKeyDirectory, geo.GeoKeyDirectory...)
	}
	b.doubles(tagGeoDoubleParams, geo.GeoDoubleParams)
	if geo.GeoASCIIParams != "" {
		b.ascii(tagGeoASCIIParams, geo.GeoASCIIParams)
	}
}

// compressionCode is the TIFF Compression value of c.
func compressionCode(c Compression) uint16 {
	return map[Compression]uint16{Deflate: compAdobeDflt, ZSTD: compZSTD, NoCompression: compNone}[c]
}

// marshalIFD lays out an IFD at offset off: the entries sorted by tag, a
// zero next-IFD pointer, then the values too long to sit in their entries.
func marshalIFD(es []wentry, off uint64, big bool) []byte {
	sort.Slice(es, func(i, j int) bool { return es[i].tag < es[j].tag })
	countSize, entrySize, inline := 2, 12, 4
	if big {
		countSize, entrySize, inline = 8, 20, 8
	}
	head := countSize + len(es)*entrySize + inline
	out := make([]byte, head, head+1024)
	if big {
		binary.LittleEndian.PutUint64(out, uint64(len(es)))
	} else {
		binary.LittleEndian.PutUint16(out, uint16(len(es)))
	}
	for i, e := range es {
		b := out[countSize+i*entrySize:]
		binary.LittleEndian.PutUint16(b, e.tag)
		binary.LittleEndian.PutUint16(b[2:], e.typ)
		vf := b[8:12]
		if big {
			binary.LittleEndian.PutUint64(b[4:], e.count)
			vf = b[12:20]
		} else {
			binary.LittleEndian.PutUint32(b[4:], uint32(e.count))
		}
		if len(e.data) <= inline {
			copy(vf, e.data)
			continue
		}
		if len(out)%2 == 1 {
			out = append(out, 0)
		}
		vo := off + uint64(len(out))
		if big {
			binary.LittleEndian.PutUint64(vf, vo)
		} else {
			binary.LittleEndian.PutUint32(vf, uint32(vo))
		}
		out = append(out, e.data...)
	}
	return out
}

// needBigTIFF reports whether a file of the given geometry could pass the
// 4 GiB classic TIFF limit: the raw samples plus a margin for compression
// that does not pay off (incompressible tiles grow slightly), the offset
// arrays and the IFD.
func needBigTIFF(width, height, bands, sampleSize, tiles int) bool {
	raw := uint64(width) * uint64(height) * uint64(sampleSize) * uint64(bands)
	return raw+raw/16+uint64(tiles)*16+1<<20 >= 1<<32
}
