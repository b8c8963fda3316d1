package geotiff

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"canopy/compute"
	"canopy/compute/internal/infile"
)

// Limits that keep hostile files from making the reader hang or allocate
// without bound. Real files are far inside them.
const (
	// maxIFDs is the longest IFD chain followed (COGs have one IFD per
	// overview level and mask, a few dozen at most).
	maxIFDs = 4096
	// maxEntries is the most entries one IFD may have.
	maxEntries = 65535
	// maxChunkBytes is the largest decoded strip or tile.
	maxChunkBytes = 1 << 30
	// maxPixels is the largest image (per band) the reader accepts.
	maxPixels = 1 << 34
	// slackBytes is how much a band may need regardless of how little data
	// the file stores (sparse files, constant images).
	slackBytes = 64 << 20
	// chunkSlack is the same allowance for one strip or tile.
	chunkSlack = 1 << 20
	// maxChunks is the most strips or tiles one image may have: an image
	// of 1-row strips 4 million rows high. The offset and byte count
	// arrays then take 64 MiB.
	maxChunks = 1 << 22
	// maxRowBytes is the longest row of one strip or tile: workers decode
	// a chunk row by row, so this bounds a worker's buffers.
	maxRowBytes = 64 << 20
	// overDecode and workSlack bound the decoding work, the decoded bytes
	// of every distinct strip or tile down to the last row the image
	// shows: at most overDecode times the image's own samples plus
	// workSlack. Tiles wider than the image must be decoded in full
	// rows; a file whose tiles are far larger than its image is refused.
	overDecode = 8
	workSlack  = 256 << 20
	// workBudget is the working memory (row buffers, read buffers,
	// decompressor windows) all decoding workers together may take; fewer
	// workers run when one needs more.
	workBudget = 256 << 20
	// maxASCII is the longest GeoAsciiParams or GDAL_NODATA text read
	// (real ones hold a few hundred bytes).
	maxASCII = 1 << 20
	// maxErrorLine is the longest error message detail (the file name
	// comes on top).
	maxErrorLine = 300
)

// The time budget for decoding: timeBase plus one second per minRate bytes
// of decoding work. Honest files decode many times faster even on two busy
// cores; the budget stops what the other limits did not foresee.
var (
	timeBase = 10 * time.Second * slowdown
	minRate  = int64(16<<20) / slowdown
)

// File is an open TIFF or GeoTIFF whose first image has been read and
// validated. Pixel data is read by ReadBand and ReadBands. A File may be used
// by one goroutine at a time; ReadBands itself decodes on all cores.
type File struct {
	name   string
	r      io.ReaderAt
	closer io.Closer
	size   int64
	order  binary.ByteOrder
	be     bool // big-endian
	big    bool // BigTIFF
	ifds   int

	width, height, spp int
	typ                SampleType
	comp, pred         int
	planar             bool // one plane per band (PlanarConfiguration 2, spp > 1)
	tiled              bool
	cw, ch             int // chunk (tile or strip) size in pixels
	across, down       int // chunks per row and per column of one plane
	offsets, counts    []uint64
	rowBytes           int     // one decoded row of a chunk
	byPlace            []int32 // chunks by (offset, byte count); sparse ones last
	stored             uint64  // bytes of chunk data, each byte counted once
	maxCount           uint64  // the largest chunk's stored bytes
	work               uint64  // bytes to decode, each distinct chunk once

	geo       *compute.GeoRef
	nodata    float64
	hasNoData bool

	// later are the offsets of the IFDs after the first (at most
	// maxOverviewIFDs), where Overviews looks.
	later []uint64

	// The ledger of window reads (ReadRowsBandsInto): the time they may
	// still take, whether the base allowance was granted, the bytes they
	// decoded and the bytes they delivered (counted over the columns of
	// the tiles each window touches).
	budget            time.Duration
	granted           bool
	winWork, winDeliv uint64

	// idle are decoding workers kept between reads.
	idleMu sync.Mutex
	idle   []*worker
}

// entry is one IFD entry as stored.
type entry struct {
	tag, typ uint16
	count    uint64
	raw      [8]byte // the value field: the value itself or its offset
}

// Open opens the TIFF file at path and reads and validates its first image
// file directory, without reading pixel data. Close the File when done.
// Only regular files are opened (a FIFO, device or directory is an error
// at once, never a wait).
func Open(path string) (*File, error) {
	fh, st, err := infile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	f, err := NewReader(fh, st.Size(), path)
	if err != nil {
		fh.Close()
		return nil, err
	}
	f.closer = fh
	return f, nil
}

// NewReader reads and validates the first image of the TIFF held by r,
// which is size bytes long; name is used in error messages.
func NewReader(r io.ReaderAt, size int64, name string) (*File, error) {
	f := &File{name: name, r: r, size: size}
	if err := f.parse(); err != nil {
		return nil, fmt.Errorf("read %s: %w", name, capped{err})
	}
	return f, nil
}

// capped shortens an error's message to maxErrorLine bytes, so that a
// hostile file cannot turn one line into a megabyte.
type capped struct{ err error }

func (c capped) Error() string {
	m := c.err.Error()
	if len(m) <= maxErrorLine {
		return m
	}
	cut := maxErrorLine
	for cut > 0 && m[cut]&0xc0 == 0x80 {
		cut--
	}
	return m[:cut] + "…"
}

func (c capped) Unwrap() error { return c.err }

// truncated is the error for data past the end of the file: in a user's
// words first, the technical detail after.
func truncated(format string, args ...any) error {
	return fmt.Errorf("the file ends early; it may be incomplete (%s)", fmt.Sprintf(format, args...))
}

// damaged is the error for a file whose structure cannot be right.
func damaged(what, format string, args ...any) error {
	return fmt.Errorf("the file is damaged: %s (%s)", what, fmt.Sprintf(format, args...))
}

// Close closes the underlying file when the File was made by Open, and
// frees the decoders kept between reads.
func (f *File) Close() error {
	f.closeWorkers()
	if f.closer == nil {
		return nil
	}
	err := f.closer.Close()
	f.closer = nil
	return err
}

// Name returns the name the File was opened with.
func (f *File) Name() string { return f.name }

// Width returns the image width in pixels.
func (f *File) Width() int { return f.width }

// Height returns the image height in pixels.
func (f *File) Height() int { return f.height }

// Bands returns the number of bands (samples per pixel).
func (f *File) Bands() int { return f.spp }

// Type returns the sample type of every band.
func (f *File) Type() SampleType { return f.typ }

// Compression describes the compression: "DEFLATE (8)".
func (f *File) Compression() string { return compressionName(f.comp) }

// Predictor returns the predictor tag value (1 none, 2 horizontal, 3
// floating point).
func (f *File) Predictor() int { return f.pred }

// Tiled reports whether the image is stored in tiles rather than strips.
func (f *File) Tiled() bool { return f.tiled }

// Planar reports whether bands are stored in separate planes.
func (f *File) Planar() bool { return f.planar }

// BigTIFF reports whether the file is a BigTIFF.
func (f *File) BigTIFF() bool { return f.big }

// BigEndian reports whether the file is big-endian ("MM").
func (f *File) BigEndian() bool { return f.be }

// Images returns the number of images (IFDs) in the file: 1 plus overviews
// and masks.
func (f *File) Images() int { return f.ifds }

// Geo returns the georeferencing, nil when the file has none. The caller
// must not modify it.
func (f *File) Geo() *compute.GeoRef { return f.geo }

// NoData returns the GDAL_NODATA value and whether the file has one.
func (f *File) NoData() (float64, bool) { return f.nodata, f.hasNoData }

func (f *File) readAt(p []byte, off uint64) error {
	if off > uint64(f.size) || uint64(len(p)) > uint64(f.size)-off {
		return truncated("%d bytes at offset %d run past the end of the file, %d bytes", len(p), off, f.size)
	}
	n, err := f.r.ReadAt(p, int64(off))
	if n == len(p) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("%d bytes at offset %d: %w", len(p), off, err)
}

// notTIFF is the error for a file that does not start as a TIFF does: what
// it seems to be instead (compute/geotiff.Sniff), with its first bytes.
func (f *File) notTIFF(first []byte) error {
	head := make([]byte, min(int64(sniffLen), f.size))
	if f.readAt(head, 0) == nil {
		if kind := Sniff(head); kind != "" {
			return fmt.Errorf("not a TIFF file: it seems to be %s (starts with % x)", kind, first)
		}
	}
	return fmt.Errorf("not a TIFF file (starts with % x)", first)
}

// parse reads the header, walks the IFD chain and validates the first image.
func (f *File) parse() error {
	if f.size < 8 {
		return fmt.Errorf("not a TIFF file: only %d bytes long", f.size)
	}
	var h [16]byte
	hn := min(int64(16), f.size)
	if err := f.readAt(h[:hn], 0); err != nil {
		return fmt.Errorf("header: %w", err)
	}
	switch string(h[:2]) {
	case "II":
		f.order = binary.LittleEndian
	case "MM":
		f.order, f.be = binary.BigEndian, true
	default:
		return f.notTIFF(h[:4])
	}
	var first uint64
	switch f.order.Uint16(h[2:]) {
	case 42:
		first = uint64(f.order.Uint32(h[4:]))
	case 43:
		if hn < 16 || f.order.Uint16(h[4:]) != 8 || f.order.Uint16(h[6:]) != 0 {
			return errors.New("bad BigTIFF header")
		}
		f.big = true
		first = f.order.Uint64(h[8:])
	default:
		return fmt.Errorf("not a TIFF file (version %d, want 42 or 43)", f.order.Uint16(h[2:]))
	}
	if first == 0 {
		return errors.New("the file holds no image (first IFD offset is 0)")
	}
	var entries []entry
	seen := map[uint64]bool{}
	for off := first; off != 0; f.ifds++ {
		if f.ifds == maxIFDs {
			return damaged("its list of images goes on past "+strconv.Itoa(maxIFDs), "IFD chain longer than %d", maxIFDs)
		}
		if seen[off] {
			return damaged("its list of images loops back on itself", "IFD chain loops back to offset %d", off)
		}
		seen[off] = true
		var next uint64
		var err error
		if f.ifds == 0 {
			entries, next, err = f.readIFD(off, true)
		} else {
			_, next, err = f.readIFD(off, false)
			if len(f.later) < maxOverviewIFDs {
				f.later = append(f.later, off)
			}
		}
		if err != nil {
			return err
		}
		off = next
	}
	return f.image(entries)
}

// readIFD reads the IFD at off and returns its entries (when want) and the
// offset of the next IFD.
func (f *File) readIFD(off uint64, want bool) ([]entry, uint64, error) {
	countSize, entrySize, nextSize := 2, 12, 4
	if f.big {
		countSize, entrySize, nextSize = 8, 20, 8
	}
	if off < 8 {
		return nil, 0, damaged("an image directory points into the file header", "IFD offset %d", off)
	}
	if off >= uint64(f.size) {
		return nil, 0, truncated("IFD offset %d is outside the file, %d bytes", off, f.size)
	}
	var cb [8]byte
	if err := f.readAt(cb[:countSize], off); err != nil {
		return nil, 0, fmt.Errorf("IFD at offset %d: %w", off, err)
	}
	var n uint64
	if f.big {
		n = f.order.Uint64(cb[:])
	} else {
		n = uint64(f.order.Uint16(cb[:]))
	}
	if n == 0 {
		return nil, 0, damaged("an image directory is empty", "IFD at offset %d has no entries", off)
	}
	if n > maxEntries {
		return nil, 0, damaged("an image directory is impossibly long", "IFD at offset %d claims %d entries, at most %d", off, n, maxEntries)
	}
	body := int(n)*entrySize + nextSize
	if uint64(body) > uint64(f.size)-off-uint64(countSize) {
		return nil, 0, truncated("IFD at offset %d with %d entries runs past the end of the file, %d bytes", off, n, f.size)
	}
	var buf []byte
	var next uint64
	if want {
		buf = make([]byte, body)
		if err := f.readAt(buf, off+uint64(countSize)); err != nil {
			return nil, 0, fmt.Errorf("IFD at offset %d: %w", off, err)
		}
		nb := buf[body-nextSize:]
		if f.big {
			next = f.order.Uint64(nb)
		} else {
			next = uint64(f.order.Uint32(nb))
		}
	} else {
		var nb [8]byte
		if err := f.readAt(nb[:nextSize], off+uint64(countSize)+uint64(body-nextSize)); err != nil {
			return nil, 0, fmt.Errorf("IFD at offset %d: %w", off, err)
		}
		if f.big {
			next = f.order.Uint64(nb[:])
		} else {
			next = uint64(f.order.Uint32(nb[:]))
		}
		return nil, next, nil
	}
	entries := make([]entry, n)
	for i := range entries {
		b := buf[i*entrySize:]
		e := &entries[i]
		e.tag = f.order.Uint16(b)
		e.typ = f.order.Uint16(b[2:])
		if f.big {
			e.count = f.order.Uint64(b[4:])
			copy(e.raw[:], b[12:20])
		} else {
			e.count = uint64(f.order.Uint32(b[4:]))
			copy(e.raw[:4], b[8:12])
		}
	}
	return entries, next, nil
}

var tagNames = map[uint16]string{
	tagImageWidth: "ImageWidth", tagImageLength: "ImageLength",
	tagBitsPerSample: "BitsPerSample", tagCompression: "Compression",
	tagPhotometric: "PhotometricInterpretation", tagStripOffsets: "StripOffsets",
	tagSamplesPerPixel: "SamplesPerPixel", tagRowsPerStrip: "RowsPerStrip",
	tagStripByteCounts: "StripByteCounts", tagPlanarConfig: "PlanarConfiguration",
	tagPredictor: "Predictor", tagTileWidth: "TileWidth", tagTileLength: "TileLength",
	tagTileOffsets: "TileOffsets", tagTileByteCounts: "TileByteCounts",
	tagSampleFormat: "SampleFormat", tagYCbCrSubsampling: "YCbCrSubSampling",
	tagModelPixelScale: "ModelPixelScale", tagModelTiepoint: "ModelTiepoint",
	tagModelTransform: "ModelTransformation", tagGeoKeyDirectory: "GeoKeyDirectory",
	tagGeoDoubleParams: "GeoDoubleParams", tagGeoASCIIParams: "GeoAsciiParams",
	tagGDALNoData: "GDAL_NODATA",
}

func tagName(t uint16) string {
	if n, ok := tagNames[t]; ok {
		return n
	}
	return fmt.Sprintf("tag %d", t)
}

// data returns the bytes of an entry's values, reading them from the file
// when they do not fit in the entry; sizes are checked first.
func (f *File) data(e entry) ([]byte, error) {
	ts := 0
	if int(e.typ) < len(typeSize) {
		ts = typeSize[e.typ]
	}
	if ts == 0 {
		return nil, fmt.Errorf("%s has unknown field type %d", tagName(e.tag), e.typ)
	}
	if e.count > uint64(f.size) {
		return nil, damaged("a tag claims more values than the file holds", "%s claims %d values, the file has %d bytes", tagName(e.tag), e.count, f.size)
	}
	n := e.count * uint64(ts)
	inline := uint64(4)
	if f.big {
		inline = 8
	}
	if n <= inline {
		return e.raw[:n], nil
	}
	var off uint64
	if f.big {
		off = f.order.Uint64(e.raw[:])
	} else {
		off = uint64(f.order.Uint32(e.raw[:]))
	}
	if off > uint64(f.size) || n > uint64(f.size)-off {
		return nil, truncated("%s values, %d bytes at offset %d, run past the end of the file, %d bytes", tagName(e.tag), n, off, f.size)
	}
	buf := make([]byte, n)
	if err := f.readAt(buf, off); err != nil {
		return nil, fmt.Errorf("%s: %w", tagName(e.tag), err)
	}
	return buf, nil
}

// uints returns an integer-typed entry's values.
func (f *File) uints(e entry) ([]uint64, error) {
	b, err := f.data(e)
	if err != nil {
		return nil, err
	}
	v := make([]uint64, e.count)
	switch e.typ {
	case typeByte, typeUndefined:
		for i := range v {
			v[i] = uint64(b[i])
		}
	case typeShort:
		for i := range v {
			v[i] = uint64(f.order.Uint16(b[2*i:]))
		}
	case typeLong, typeIFD:
		for i := range v {
			v[i] = uint64(f.order.Uint32(b[4*i:]))
		}
	case typeLong8, typeIFD8:
		for i := range v {
			v[i] = f.order.Uint64(b[8*i:])
		}
	default:
		return nil, fmt.Errorf("%s has field type %d, want an unsigned integer", tagName(e.tag), e.typ)
	}
	return v, nil
}

// floats returns a numeric entry's values as float64.
func (f *File) floats(e entry) ([]float64, error) {
	if e.typ == typeDouble {
		b, err := f.data(e)
		if err != nil {
			return nil, err
		}
		v := make([]float64, e.count)
		for i := range v {
			v[i] = math.Float64frombits(f.order.Uint64(b[8*i:]))
		}
		return v, nil
	}
	if e.typ == typeFloat {
		b, err := f.data(e)
		if err != nil {
			return nil, err
		}
		v := make([]float64, e.count)
		for i := range v {
			v[i] = float64(math.Float32frombits(f.order.Uint32(b[4*i:])))
		}
		return v, nil
	}
	u, err := f.uints(e)
	if err != nil {
		return nil, fmt.Errorf("%s has field type %d, want a number", tagName(e.tag), e.typ)
	}
	v := make([]float64, len(u))
	for i, x := range u {
		v[i] = float64(x)
	}
	return v, nil
}

// ascii returns an ASCII entry's text without trailing NULs.
func (f *File) ascii(e entry) (string, error) {
	if e.typ != typeASCII && e.typ != typeByte && e.typ != typeUndefined {
		return "", fmt.Errorf("%s has field type %d, want ASCII", tagName(e.tag), e.typ)
	}
	b, err := f.data(e)
	if err != nil {
		return "", err
	}
	return strings.TrimRight(string(b), "\x00"), nil
}

// tags gives typed access to the first IFD's entries.
type tags struct {
	f *File
	m map[uint16]entry
}

func (t tags) has(tag uint16) bool { _, ok := t.m[tag]; return ok }

// values returns the values of an integer tag, nil when absent.
func (t tags) values(tag uint16) ([]uint64, error) {
	e, ok := t.m[tag]
	if !ok {
		return nil, nil
	}
	if e.count == 0 {
		return nil, fmt.Errorf("%s has no value", tagName(tag))
	}
	return t.f.uints(e)
}

// one returns the first value of an integer tag, or def when absent.
func (t tags) one(tag uint16, def uint64) (uint64, error) {
	v, err := t.values(tag)
	if err != nil {
		return 0, err
	}
	if v == nil {
		return def, nil
	}
	return v[0], nil
}

// same returns the value of a per-sample tag whose values must all be
// equal (BitsPerSample, SampleFormat), or def when absent.
func (t tags) same(tag uint16, def uint64, spp int) (uint64, error) {
	v, err := t.values(tag)
	if err != nil {
		return 0, err
	}
	if v == nil {
		return def, nil
	}
	v = v[:min(len(v), spp)]
	for _, x := range v[1:] {
		if x != v[0] {
			return 0, fmt.Errorf("unsupported: bands with different %s (%v)", tagName(tag), v)
		}
	}
	return v[0], nil
}

func (t tags) required(tag uint16) (uint64, error) {
	if !t.has(tag) {
		return 0, fmt.Errorf("missing %s", tagName(tag))
	}
	return t.one(tag, 0)
}

// chunkArray reads a per-chunk array (offsets or byte counts), which must
// have exactly n entries.
func (t tags) chunkArray(tag uint16, n int) ([]uint64, error) {
	e, ok := t.m[tag]
	if !ok {
		return nil, fmt.Errorf("missing %s", tagName(tag))
	}
	if e.count != uint64(n) {
		return nil, fmt.Errorf("%s has %d entries, the image needs %d", tagName(tag), e.count, n)
	}
	return t.f.uints(e)
}

// image interprets and validates the first IFD.
func (f *File) image(entries []entry) error {
	t := tags{f: f, m: make(map[uint16]entry, len(entries))}
	for _, e := range entries {
		if _, dup := t.m[e.tag]; !dup {
			t.m[e.tag] = e
		}
	}
	w, err := t.required(tagImageWidth)
	if err != nil {
		return err
	}
	h, err := t.required(tagImageLength)
	if err != nil {
		return err
	}
	if w == 0 || h == 0 || w > 1<<31 || h > 1<<31 || w*h > maxPixels {
		return fmt.Errorf("image size %dx%d is not a usable size (1 to %d pixels)", w, h, uint64(maxPixels))
	}
	f.width, f.height = int(w), int(h)
	spp, err := t.one(tagSamplesPerPixel, 1)
	if err != nil {
		return err
	}
	if spp == 0 || spp > 65535 {
		return fmt.Errorf("SamplesPerPixel %d is not a usable band count", spp)
	}
	f.spp = int(spp)
	bps, err := t.same(tagBitsPerSample, 1, f.spp)
	if err != nil {
		return err
	}
	sf, err := t.same(tagSampleFormat, 1, f.spp)
	if err != nil {
		return err
	}
	typ, ok := sampleType(int(sf), int(bps))
	if !ok {
		kinds := map[uint64]string{1: "unsigned integer", 2: "signed integer", 3: "floating-point", 4: "undefined", 5: "complex integer", 6: "complex floating-point"}
		k, ok := kinds[sf]
		if !ok {
			k = fmt.Sprintf("SampleFormat %d", sf)
		}
		return fmt.Errorf("unsupported sample type: %d-bit %s", bps, k)
	}
	f.typ = typ
	comp, err := t.one(tagCompression, compNone)
	if err != nil {
		return err
	}
	f.comp = int(comp)
	switch f.comp {
	case compNone, compLZW, compAdobeDflt, compDeflate, compPackBits, compZSTD:
	default:
		return fmt.Errorf("unsupported compression %s", compressionName(f.comp))
	}
	pred, err := t.one(tagPredictor, 1)
	if err != nil {
		return err
	}
	switch f.comp {
	case compLZW, compAdobeDflt, compDeflate, compZSTD:
		// Only these codecs apply a predictor (as in libtiff).
	default:
		pred = 1
	}
	switch {
	case pred == 1 || pred == 2:
	case pred == 3 && typ.Float():
	case pred == 3:
		return fmt.Errorf("floating-point predictor (3) on %s samples", typ)
	default:
		return fmt.Errorf("unsupported predictor %d", pred)
	}
	f.pred = int(pred)
	pc, err := t.one(tagPlanarConfig, 1)
	if err != nil {
		return err
	}
	if pc != 1 && pc != 2 {
		return fmt.Errorf("PlanarConfiguration %d is neither 1 (chunky) nor 2 (planar)", pc)
	}
	f.planar = pc == 2 && f.spp > 1
	if pm, _ := t.one(tagPhotometric, 1); pm == 6 && t.has(tagYCbCrSubsampling) {
		if ss, err := f.uints(t.m[tagYCbCrSubsampling]); err == nil && len(ss) >= 2 && (ss[0] != 1 || ss[1] != 1) {
			return fmt.Errorf("unsupported YCbCr subsampling %dx%d", ss[0], ss[1])
		}
	}

	// Chunk geometry.
	f.tiled = t.has(tagTileWidth) || t.has(tagTileLength) || t.has(tagTileOffsets)
	offTag, cntTag, what := uint16(tagStripOffsets), uint16(tagStripByteCounts), "strip"
	if f.tiled {
		tw, err := t.required(tagTileWidth)
		if err != nil {
			return err
		}
		th, err := t.required(tagTileLength)
		if err != nil {
			return err
		}
		if tw == 0 || th == 0 || tw > maxChunkBytes || th > maxChunkBytes {
			return fmt.Errorf("tile size %dx%d is not usable", tw, th)
		}
		f.cw, f.ch = int(tw), int(th)
		offTag, cntTag, what = tagTileOffsets, tagTileByteCounts, "tile"
	} else {
		rps, err := t.one(tagRowsPerStrip, h)
		if err != nil {
			return err
		}
		if rps == 0 {
			return errors.New("RowsPerStrip is 0")
		}
		f.cw, f.ch = f.width, int(min(rps, h))
	}
	sppChunk := 1
	if !f.planar {
		sppChunk = f.spp
	}
	hi, cb := bits.Mul64(uint64(f.cw)*uint64(f.ch), uint64(sppChunk*typ.Size()))
	if hi != 0 || cb > maxChunkBytes {
		return fmt.Errorf("%s of %dx%d pixels with %d samples of %s is too large to decode", what, f.cw, f.ch, sppChunk, typ)
	}
	if rb := uint64(f.cw) * uint64(sppChunk*typ.Size()); rb > maxRowBytes {
		return fmt.Errorf("%ss %d pixels wide with %d samples of %s have rows of %d bytes, more than the %d MiB a row may have", what, f.cw, sppChunk, typ, rb, maxRowBytes>>20)
	}
	f.rowBytes = f.cw * sppChunk * typ.Size()
	f.across = (f.width + f.cw - 1) / f.cw
	f.down = (f.height + f.ch - 1) / f.ch
	planes := 1
	if f.planar {
		planes = f.spp
	}
	nChunks := uint64(f.across) * uint64(f.down) * uint64(planes)
	if nChunks > uint64(f.size) {
		return fmt.Errorf("image needs %d %ss, more than the file (%d bytes) could hold", nChunks, what, f.size)
	}
	if nChunks > maxChunks {
		return fmt.Errorf("image needs %d %ss, more than the %d an image may have", nChunks, what, maxChunks)
	}
	if f.offsets, err = t.chunkArray(offTag, int(nChunks)); err != nil {
		return err
	}
	if f.counts, err = t.chunkArray(cntTag, int(nChunks)); err != nil {
		return err
	}
	for i, off := range f.offsets {
		n := f.counts[i]
		if n == 0 {
			continue // sparse: filled with nodata (or 0), as GDAL does
		}
		f.maxCount = max(f.maxCount, n)
		if off > uint64(f.size) || n > uint64(f.size)-off {
			return truncated("%s %d, %d bytes at offset %d, runs past the end of the file, %d bytes", what, i, n, off, f.size)
		}
		if full := uint64(f.chunkNeed(i)); f.comp == compNone && n < full {
			return truncated("uncompressed %s %d holds %d bytes, needs %d", what, i, n, full)
		}
		if need := f.decodeBytes(i); need > chunkSlack && n*uint64(maxRatio(f.comp)) < need-chunkSlack {
			return fmt.Errorf("the file is damaged or a decompression bomb: %s %d claims %d decoded bytes from only %d bytes of %s data", what, i, need, n, compressionName(f.comp))
		}
	}
	f.sortChunks()
	// The image's own decoded bytes: a file whose distinct stored bytes
	// could not decode to that many even at the codec's greatest possible
	// ratio shares or leaves out its chunks. A valid file compressing as
	// well as its codec can (an all-zero QA band) always passes.
	need := uint64(f.width) * uint64(f.height) * uint64(f.spp*typ.Size())
	if need > slackBytes && f.stored*uint64(maxRatio(f.comp)) < need-slackBytes {
		return fmt.Errorf("the file is damaged or a decompression bomb: the image claims %dx%d pixels in %d band%s but the file holds only %d bytes of %s data, too little for that", f.width, f.height, f.spp, plural(f.spp), f.stored, compressionName(f.comp))
	}
	if f.work > workSlack && f.stored*uint64(maxRatio(f.comp)) < f.work-workSlack {
		return fmt.Errorf("the file is damaged or a decompression bomb: its %ss would decode to %d bytes from only %d distinct bytes of %s data (%ss overlap)", what, f.work, f.stored, compressionName(f.comp), what)
	}
	if samples := uint64(f.width) * uint64(f.height) * uint64(f.spp*typ.Size()); f.work > overDecode*samples+workSlack {
		return fmt.Errorf("the file is damaged or hostile: its %ss of %dx%d pixels would decode %d bytes for an image of %dx%d pixels", what, f.cw, f.ch, f.work, f.width, f.height)
	}
	return f.georef(t)
}

// visible returns where chunk i lies in its plane: its top-left pixel and
// how much of it the image shows.
func (f *File) visible(i int) (x0, y0, vw, vh int) {
	c := i % (f.across * f.down)
	x0, y0 = (c%f.across)*f.cw, (c/f.across)*f.ch
	return x0, y0, min(f.cw, f.width-x0), min(f.ch, f.height-y0)
}

// decodeBytes is what decoding chunk i costs: its full rows down to the
// last one the image shows (rows below the image are never decoded).
func (f *File) decodeBytes(i int) uint64 {
	_, _, _, vh := f.visible(i)
	return uint64(f.rowBytes) * uint64(vh)
}

// sortChunks orders the chunks by where their bytes are, counts the bytes
// they store with every byte counted once (chunks may share or overlap
// bytes), and the decoding work with every distinct chunk (offset and
// byte count) counted once: chunks that point at the same bytes are
// decoded once and copied (GDAL and libtiff accept such files; some
// writers point every empty tile at one), and chunks that merely overlap
// each cost their decoding, bounded by the work limits.
func (f *File) sortChunks() {
	f.byPlace = make([]int32, len(f.offsets))
	for i := range f.byPlace {
		f.byPlace[i] = int32(i)
	}
	key := func(i int32) (sparse bool, off, n uint64) { return f.counts[i] == 0, f.offsets[i], f.counts[i] }
	slices.SortFunc(f.byPlace, func(a, b int32) int {
		sa, oa, na := key(a)
		sb, ob, nb := key(b)
		switch {
		case sa != sb:
			if sa {
				return 1
			}
			return -1
		case oa != ob:
			return cmp.Compare(oa, ob)
		case na != nb:
			return cmp.Compare(na, nb)
		}
		return cmp.Compare(a, b)
	})
	var end uint64 // of the bytes counted so far
	for k := 0; k < len(f.byPlace); {
		i := f.byPlace[k]
		off, n := f.offsets[i], f.counts[i]
		if n == 0 {
			break
		}
		if off+n > end {
			f.stored += off + n - max(off, end)
			end = off + n
		}
		// The group of chunks with these very bytes is decoded down to
		// the deepest row any of them shows.
		var deepest uint64
		for ; k < len(f.byPlace) && f.offsets[f.byPlace[k]] == off && f.counts[f.byPlace[k]] == n; k++ {
			deepest = max(deepest, f.decodeBytes(int(f.byPlace[k])))
		}
		f.work += deepest
	}
}

// chunkNeed is the number of decoded bytes chunk i holds when complete: a
// full tile, or the rows of a strip that lie in the image.
func (f *File) chunkNeed(i int) int {
	sppChunk := 1
	if !f.planar {
		sppChunk = f.spp
	}
	rowBytes := f.cw * sppChunk * f.typ.Size()
	if f.tiled {
		return rowBytes * f.ch
	}
	y0 := (i % f.down) * f.ch
	return rowBytes * min(f.ch, f.height-y0)
}

// georef reads the GeoTIFF tags and GDAL_NODATA.
func (f *File) georef(t tags) error {
	g := &compute.GeoRef{}
	found := false
	for _, d := range []struct {
		tag uint16
		dst *[]float64
	}{{tagModelPixelScale, &g.PixelScale}, {tagModelTiepoint, &g.Tiepoints}, {tagModelTransform, &g.Transformation}, {tagGeoDoubleParams, &g.GeoDoubleParams}} {
		e, ok := t.m[d.tag]
		if !ok {
			continue
		}
		v, err := f.floats(e)
		if err != nil {
			return err
		}
		*d.dst, found = v, true
	}
	if e, ok := t.m[tagGeoKeyDirectory]; ok {
		v, err := f.uints(e)
		if err != nil {
			return err
		}
		g.GeoKeyDirectory = make([]uint16, len(v))
		for i, x := range v {
			g.GeoKeyDirectory[i] = uint16(x)
		}
		found = true
	}
	if e, ok := t.m[tagGeoASCIIParams]; ok {
		if e.count > maxASCII {
			return fmt.Errorf("GeoAsciiParams is %d bytes long; real files hold a few hundred", e.count)
		}
		s, err := f.ascii(e)
		if err != nil {
			return err
		}
		g.GeoASCIIParams, found = s, true
	}
	if found {
		if err := g.Check(); err != nil {
			return err
		}
		f.geo = g
	}
	if e, ok := t.m[tagGDALNoData]; ok {
		if e.count > maxASCII {
			return fmt.Errorf("GDAL_NODATA is %d bytes long, not a number", e.count)
		}
		s, err := f.ascii(e)
		if err != nil {
			return err
		}
		s = strings.TrimSpace(s)
		v, err := strconv.ParseFloat(s, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return fmt.Errorf("GDAL_NODATA %s is not a number", compute.Excerpt(s, 40))
		}
		f.nodata, f.hasNoData = v, true
	}
	return nil
}
