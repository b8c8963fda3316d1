package geotiff

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/zstd"
	"golang.org/x/image/tiff/lzw"

	libdeflate "canopy/native/deflate"
)

// errShort reports compressed data that ends before the chunk is complete.
var errShort = errors.New("compressed data ends early")

// errTime reports decoding that ran past the time budget; errStopped a
// worker stopping because another failed; errRead a failed read of the
// file itself.
var (
	errTime    = errors.New("time budget exceeded")
	errStopped = errors.New("stopped")
	errRead    = errors.New("read failed")
)

const (
	// blockBytes is how many decoded bytes a worker handles at a time
	// (at least one row).
	blockBytes = 256 << 10
	// inBytes is a worker's read buffer over the compressed data.
	inBytes = 64 << 10
	// zstdMinWindow and zstdMaxWindow bound the ZSTD window a chunk may
	// declare: at least 8 MiB (libtiff's default levels use 4 MiB), at
	// most 64 MiB.
	zstdMinWindow = 8 << 20
	zstdMaxWindow = 64 << 20
	// wholeChunk is the largest DEFLATE chunk (decoded, and stored)
	// inflated whole with libdeflate; larger ones are streamed.
	wholeChunk = 16 << 20
)

// workerConfig is what every decoding worker of one read needs.
type workerConfig struct {
	block  int    // bytes of a row block buffer
	window uint64 // ZSTD window limit
	memory int64  // estimate of one worker's memory
	whole  int    // > 0: DEFLATE chunks are inflated whole (libdeflate) into this many bytes
}

func (f *File) workerConfig() workerConfig {
	c := workerConfig{block: max(blockBytes, f.rowBytes)}
	c.memory = int64(c.block) + inBytes
	if f.pred == 3 {
		c.memory += int64(f.rowBytes)
	}
	switch f.comp {
	case compZSTD:
		w := uint64(zstdMinWindow)
		for w < uint64(f.chunkNeed(0)) && w < zstdMaxWindow {
			w *= 2
		}
		c.window = w
		c.memory += int64(w) + 1<<20
	case compAdobeDflt, compDeflate:
		c.memory += 64 << 10
		if full := uint64(f.chunkNeed(0)); libdeflate.Available && full <= wholeChunk && f.maxCount <= wholeChunk {
			// libdeflate inflates a whole chunk at once into a buffer
			// of the chunk's size, from a buffer of the largest chunk's
			// stored bytes.
			c.whole = int(full)
			c.memory += int64(full) + int64(f.maxCount)
		}
	case compLZW:
		c.memory += 32 << 10
	}
	return c
}

// worker is one decoding goroutine's buffers and decompressors.
type worker struct {
	f        *File
	cfg      workerConfig
	deadline time.Time
	failed   *atomic.Bool
	br       *bufio.Reader
	fr       io.ReadCloser // reused DEFLATE reader
	zd       *zstd.Decoder // this worker's streaming ZSTD decoder
	pb       packBits
	buf, tmp []byte
	ld       *libdeflate.Decompressor // whole-chunk DEFLATE (cfg.whole > 0)
	zin, zo  []byte                   // its input and output buffers
	whole    bytes.Reader             // over zo
}

func (f *File) newWorker(cfg workerConfig, deadline time.Time, failed *atomic.Bool) (*worker, error) {
	w := &worker{f: f, cfg: cfg, deadline: deadline, failed: failed,
		buf: make([]byte, cfg.block)}
	if f.comp != compNone {
		w.br = bufio.NewReaderSize(nil, inBytes)
	}
	if f.pred == 3 {
		w.tmp = make([]byte, f.rowBytes)
	}
	if cfg.whole > 0 {
		d, err := libdeflate.NewDecompressor()
		if err != nil {
			return nil, err
		}
		w.ld, w.zin, w.zo = d, make([]byte, f.maxCount), make([]byte, cfg.whole)
	}
	if f.comp == compZSTD {
		zd, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
			zstd.WithDecoderMaxWindow(cfg.window), zstd.WithDecoderMaxMemory(max(cfg.window, uint64(f.chunkNeed(0)))))
		if err != nil {
			return nil, err
		}
		w.zd = zd
	}
	return w, nil
}

func (w *worker) close() {
	if w.zd != nil {
		w.zd.Close()
	}
	if w.ld != nil {
		w.ld.Close()
	}
}

// reader returns the decoded bytes of chunk ci as a stream; need is how
// many of them the caller will read.
func (w *worker) reader(ci, need int) (io.Reader, error) {
	f := w.f
	if w.ld != nil {
		if r, err := w.inflateWhole(ci, need); r != nil || err != nil {
			return r, err
		}
		// libdeflate found something it would not take (data past the
		// chunk's end, a corrupt stream): the streaming reader decodes
		// what the chunk needs and reports what is wrong in its words.
	}
	w.br.Reset(io.NewSectionReader(f.r, int64(f.offsets[ci]), int64(f.counts[ci])))
	switch f.comp {
	case compPackBits:
		w.pb = packBits{r: w.br}
		return &w.pb, nil
	case compLZW:
		return lzw.NewReader(w.br, lzw.MSB, 8), nil
	case compAdobeDflt, compDeflate:
		// A zlib stream: a 2-byte header, raw DEFLATE, an Adler-32 trailer.
		// Only the chunk's bytes are needed, so the raw stream is inflated
		// and the trailer (past the data) is not checked, as libtiff does.
		var h [2]byte
		if _, err := io.ReadFull(w.br, h[:]); err != nil {
			return nil, errShort
		}
		if (uint16(h[0])<<8|uint16(h[1]))%31 != 0 || h[0]&0x0f != 8 {
			return nil, errors.New("not a zlib stream")
		}
		if h[1]&0x20 != 0 {
			return nil, errors.New("zlib stream needs a preset dictionary")
		}
		if w.fr == nil {
			w.fr = flate.NewReader(w.br)
		} else if err := w.fr.(flate.Resetter).Reset(w.br, nil); err != nil {
			return nil, err
		}
		return w.fr, nil
	case compZSTD:
		if err := w.zd.Reset(w.br); err != nil {
			return nil, err
		}
		return w.zd, nil
	}
	return nil, fmt.Errorf("unsupported compression %s", compressionName(f.comp))
}

// chunk decodes rows [r0, r1) of chunk ci, whose top is row wy of the
// window, into the targets, a block of rows at a time: vw pixels of each
// row from the chunk's column sx, which is image column x0. Compressed
// rows above r0 are decoded and dropped; uncompressed ones are not read.
func (w *worker) chunk(ci int, tl []target, x0, sx, wy, vw, r0, r1 int) error {
	f := w.f
	rb := f.rowBytes
	sppChunk := f.rowBytes / (f.cw * f.typ.Size())
	size := f.typ.Size()
	pixBytes := sppChunk * size
	vis := (sx + vw) * pixBytes
	rows := max(1, len(w.buf)/rb) // rows per block
	var rd io.Reader
	first := r0
	if f.comp != compNone {
		var err error
		if rd, err = w.reader(ci, r1*rb); err != nil {
			return err
		}
		first = 0
	}
	for b0 := first; b0 < r1; b0 += rows {
		if w.failed.Load() {
			return errStopped
		}
		if time.Now().After(w.deadline) {
			return errTime
		}
		m := min(rows, r1-b0)
		stride := rb
		switch {
		case f.comp != compNone:
			if err := readFull(rd, w.buf[:m*rb]); err != nil {
				return err
			}
		case 2*vis < rb && f.pred == 1:
			// Uncompressed and mostly outside the image: read only the
			// part of each row the image shows.
			stride = vis
			for j := range m {
				if err := f.readAt(w.buf[j*vis:][:vis], f.offsets[ci]+uint64((b0+j)*rb)); err != nil {
					return fmt.Errorf("%w: %w", errRead, err)
				}
			}
		default:
			if err := f.readAt(w.buf[:m*rb], f.offsets[ci]+uint64(b0*rb)); err != nil {
				return fmt.Errorf("%w: %w", errRead, err)
			}
		}
		for j := max(0, r0-b0); j < m; j++ {
			row := w.buf[j*stride:][:stride]
			switch f.pred {
			case 2:
				undoHorizontal(row, f.cw*sppChunk, sppChunk, size, f.be)
			case 3:
				undoFloatPredictor(row, w.tmp, f.cw*sppChunk, sppChunk, size)
			}
			for _, t := range tl {
				t.conv(t.buf[((wy+b0+j)*t.stride+x0-t.wx)*t.osz:][:vw*t.osz], row[sx*pixBytes+t.offset:], pixBytes)
			}
		}
	}
	return nil
}

// inflateWhole inflates DEFLATE chunk ci at once with libdeflate and
// returns its first need bytes (at least) as a stream; nil, nil when the
// streaming reader should take the chunk instead.
func (w *worker) inflateWhole(ci, need int) (io.Reader, error) {
	f := w.f
	n := f.counts[ci]
	z := w.zin[:n]
	if err := f.readAt(z, f.offsets[ci]); err != nil {
		return nil, fmt.Errorf("%w: %w", errRead, err)
	}
	if !zlibPlain(z) {
		return nil, nil
	}
	full := min(len(w.zo), f.chunkNeed(ci))
	_, got, err := w.ld.Inflate(w.zo[:full], z[2:])
	if err != nil && !(errors.Is(err, libdeflate.ErrShort) && got >= need) {
		return nil, nil
	}
	w.whole.Reset(w.zo[:got])
	return &w.whole, nil
}

// zlibPlain reports whether z starts with a zlib header of a DEFLATE
// stream without a preset dictionary.
func zlibPlain(z []byte) bool {
	return len(z) >= 2 && (uint16(z[0])<<8|uint16(z[1]))%31 == 0 && z[0]&0x0f == 8 && z[1]&0x20 == 0
}

func readFull(r io.Reader, dst []byte) error {
	_, err := io.ReadFull(r, dst)
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		return errShort
	}
	return err
}

// packBits decodes a PackBits stream: a header byte n, then n+1 literal
// bytes (n >= 0) or one byte repeated 1-n times (n in -127..-1); -128 is
// skipped.
type packBits struct {
	r    *bufio.Reader
	lit  int  // literal bytes left in the current run
	rep  int  // repeats left in the current run
	fill byte // the repeated byte
}

func (p *packBits) Read(dst []byte) (int, error) {
	n := 0
	for n < len(dst) {
		switch {
		case p.lit > 0:
			k, err := io.ReadFull(p.r, dst[n:n+min(p.lit, len(dst)-n)])
			n += k
			p.lit -= k
			if err != nil {
				return n, io.ErrUnexpectedEOF
			}
		case p.rep > 0:
			k := min(p.rep, len(dst)-n)
			for i := range k {
				dst[n+i] = p.fill
			}
			n += k
			p.rep -= k
		default:
			h, err := p.r.ReadByte()
			if err != nil {
				if n > 0 {
					return n, nil
				}
				return 0, io.EOF
			}
			switch c := int(int8(h)); {
			case c >= 0:
				p.lit = c + 1
			case c != -128:
				b, err := p.r.ReadByte()
				if err != nil {
					return n, io.ErrUnexpectedEOF
				}
				p.rep, p.fill = 1-c, b
			}
		}
	}
	return n, nil
}

// littleEndianHost is true on a little-endian machine.
var littleEndianHost = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

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
		case size == 2 && !bigEndian && stride == 1 && littleEndianHost && uintptr(unsafe.Pointer(unsafe.SliceData(row)))%2 == 0:
			// The same sums on the samples as uint16s (the row is
			// little-endian like the machine): a fifth of the byte
			// loop's time, which was a fifth of a uint16 tile's decoding.
			v := unsafe.Slice((*uint16)(unsafe.Pointer(unsafe.SliceData(row))), len(row)/2)
			var acc uint16
			for i := range v {
				acc += v[i]
				v[i] = acc
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
