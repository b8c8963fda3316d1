package colormap

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"hash"
	"hash/adler32"
	"hash/crc32"
	"image"
	"image/color"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/klauspost/compress/flate"

	"canopy/compute"
	"canopy/compute/outfile"
	"canopy/compute/par"
)

// StreamOptions are a streamed map's options: the picture's (PNGOptions;
// its Stretch is used when StretchMode is "" or "full"), a stretch mode
// read from the values themselves ("minmax", "percentile"), and the size.
type StreamOptions struct {
	PNGOptions
	// StretchMode, when "minmax" or "percentile", stretches the ramp over
	// the map's own values (StretchFor) instead of PNGOptions.Stretch: the
	// map's values then wait in a scratch file with no name until Close.
	StretchMode string
	// Size is the map's longest side in pixels; 0 (or the image's own
	// longest side or more) is full resolution. A smaller map's pixels
	// are box means of the image's pixels (NaN left out; NaN where all
	// are NaN).
	Size int
	// ScratchDir is where a deferred stretch keeps the values ("" is the
	// system's temporary directory).
	ScratchDir string
}

// MapStream writes the coloured map of a width×height index plane as a
// PNG, the values arriving a block of rows at a time (WriteRows), so that
// the picture never exists whole: the same picture EncodePNG writes
// (a paletted PNG, transparent where NaN, with the legend or title strip
// of Compose), or one scaled down to a longest side. The rows of the
// picture are compressed in horizontal strips on all cores, each strip a
// DEFLATE stream of its own ended with a full flush (as pigz does), so
// that together they make one valid zlib stream. Memory: a few strips of
// the picture.
type MapStream struct {
	w             *bufio.Writer
	opt           StreamOptions
	sw, sh        int // the image
	ow, oh        int // the map
	lut           *LUT
	stripArea     *image.Paletted // the strip on its white area, nil without one
	at            image.Point     // where the strip area starts
	width, height int             // the picture
	// Box means when scaled down: output column i takes image columns
	// [xs[i], xs[i+1]), output row j image rows [ys[j], ys[j+1]).
	xs, ys []int
	sum    []float64
	cnt    []int32
	mean   []float32
	srcY   int // next image row
	mapY   int // next map row
	picY   int // next picture row
	// A deferred stretch: map rows in spill until Close.
	spill  *os.File
	spillN int64
	lo, hi float32
	enc    *pngEncoder
	row    []uint8
	err    error
}

// NewMapStream starts a map of a width×height plane written to w.
func NewMapStream(w io.Writer, width, height int, opt StreamOptions) (*MapStream, error) {
	if width <= 0 || height <= 0 {
		return nil, fmt.Errorf("map of %dx%d pixels", width, height)
	}
	m := &MapStream{w: bufio.NewWriterSize(w, 1<<20), opt: opt, sw: width, sh: height, ow: width, oh: height,
		lo: float32(math.Inf(1)), hi: float32(math.Inf(-1))}
	if long := max(width, height); opt.Size > 0 && opt.Size < long {
		m.ow = max(1, int(math.Round(float64(width)*float64(opt.Size)/float64(long))))
		m.oh = max(1, int(math.Round(float64(height)*float64(opt.Size)/float64(long))))
		m.xs = bounds(width, m.ow)
		m.ys = bounds(height, m.oh)
		m.sum, m.cnt, m.mean = make([]float64, m.ow), make([]int32, m.ow), make([]float32, m.ow)
	}
	switch strings.ToLower(opt.StretchMode) {
	case "", StretchFull:
		if err := m.start(); err != nil {
			return nil, err
		}
	case StretchMinMax, StretchPercentile:
		f, err := outfile.Scratch(opt.ScratchDir)
		if err != nil {
			return nil, fmt.Errorf("scratch file for the map's values: %w", err)
		}
		m.spill = f
	default:
		return nil, fmt.Errorf("unknown stretch %q (known: %s)", opt.StretchMode, strings.Join(StretchModes(), ", "))
	}
	return m, nil
}

// bounds cuts n into k runs: run i is [b[i], b[i+1]).
func bounds(n, k int) []int {
	b := make([]int, k+1)
	for i := range b {
		b[i] = int(int64(i) * int64(n) / int64(k))
	}
	return b
}

// WorldFile is the world file of the map's pixels on the grid g places
// the image on (a scaled map's pixels are larger), false when g places no
// pixel.
func (m *MapStream) WorldFile(g *compute.GeoRef) (string, bool) {
	t, ok := g.Affine()
	if !ok {
		return "", false
	}
	sx, sy := float64(m.sw)/float64(m.ow), float64(m.sh)/float64(m.oh)
	a, d, b, e := t[1]*sx, t[4]*sx, t[2]*sy, t[5]*sy
	// The centre of the map's top-left pixel.
	x := t[0] + 0.5*a + 0.5*b
	y := t[3] + 0.5*d + 0.5*e
	var s strings.Builder
	for _, v := range []float64{a, d, b, e, x, y} {
		s.WriteString(strconv.FormatFloat(v, 'f', -1, 64))
		s.WriteByte('\n')
	}
	return s.String(), true
}

// start builds the LUT and the strip, and writes the PNG's header.
func (m *MapStream) start() error {
	st := m.opt.Stretch
	if st == (Stretch{}) {
		st = Full
	}
	l, err := New(m.opt.Ramp, st.Lo, st.Hi)
	if err != nil {
		return err
	}
	m.lut = l
	m.width, m.height = m.ow, m.oh
	if m.opt.Legend || m.opt.Title != "" {
		var strip *image.Paletted
		if m.opt.Legend {
			strip = l.legend(legendScale(m.ow, m.oh), m.opt.Title)
		} else {
			strip = l.titleOnly(legendScale(m.ow, m.oh), m.opt.Title)
		}
		sw, sh := strip.Rect.Dx(), strip.Rect.Dy()
		if m.ow > 2*m.oh {
			m.width, m.height, m.at = max(m.ow, sw), m.oh+sh, image.Pt(0, m.oh)
		} else {
			m.width, m.height, m.at = m.ow+sw, max(m.oh, sh), image.Pt(m.ow, 0)
		}
		area := image.NewPaletted(image.Rect(0, 0, m.width-m.at.X, m.height-m.at.Y), l.Palette())
		for i := range area.Pix {
			area.Pix[i] = indexWhite
		}
		drawInto(area, strip, image.Point{})
		m.stripArea = area
	}
	level := flate.DefaultCompression
	if m.width*m.height > 16<<20 {
		level = flate.BestSpeed
	}
	m.enc = newPNGEncoder(m.w, m.width, level)
	m.row = make([]uint8, m.width)
	return m.enc.header(m.width, m.height, l.Palette())
}

// WriteRows adds rows [y0, y0+rows) of the plane: vals holds rows×width
// values. Rows come in order, each once.
func (m *MapStream) WriteRows(y0, rows int, vals []float32) error {
	if m.err != nil {
		return m.err
	}
	if y0 != m.srcY || rows <= 0 || y0+rows > m.sh || len(vals) != rows*m.sw {
		return fmt.Errorf("map rows %d to %d (%d values): the next rows are %d on, of %d, %d values each", y0, y0+rows, len(vals), m.srcY, m.sh, m.sw)
	}
	for r := range rows {
		src := vals[r*m.sw : (r+1)*m.sw]
		if m.xs == nil {
			if err := m.mapRow(src); err != nil {
				m.err = err
				return err
			}
		} else {
			m.accumulate(src)
			if m.srcY+1 == m.ys[m.mapY+1] {
				for i := range m.mean {
					if m.cnt[i] == 0 {
						m.mean[i] = float32(math.NaN())
					} else {
						m.mean[i] = float32(m.sum[i] / float64(m.cnt[i]))
					}
				}
				clear(m.sum)
				clear(m.cnt)
				if err := m.mapRow(m.mean); err != nil {
					m.err = err
					return err
				}
			}
		}
		m.srcY++
	}
	return nil
}

// accumulate adds one image row to the box sums of the current map row.
func (m *MapStream) accumulate(src []float32) {
	for i := range m.sum {
		s, n := 0.0, int32(0)
		for _, v := range src[m.xs[i]:m.xs[i+1]] {
			if v == v {
				s += float64(v)
				n++
			}
		}
		m.sum[i] += s
		m.cnt[i] += n
	}
}

// mapRow takes one row of the map: to the spill file while the stretch
// waits, else into the picture.
func (m *MapStream) mapRow(v []float32) error {
	m.mapY++
	if m.spill != nil {
		for _, x := range v {
			if x-x == 0 {
				m.lo, m.hi = min(m.lo, x), max(m.hi, x)
			}
		}
		b := make([]byte, 4*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
		}
		if _, err := m.spill.WriteAt(b, m.spillN); err != nil {
			return err
		}
		m.spillN += int64(len(b))
		return nil
	}
	return m.pictureRow(v)
}

// pictureRow encodes the next picture row, whose map part is v (nil below
// the map).
func (m *MapStream) pictureRow(v []float32) error {
	clear(m.row)
	if v != nil {
		m.lut.Indices(m.row[:m.ow], v)
	}
	if a := m.stripArea; a != nil {
		if y := m.picY - m.at.Y; y >= 0 {
			copy(m.row[m.at.X:], a.Pix[y*a.Stride:(y+1)*a.Stride])
		}
	}
	m.picY++
	return m.enc.row(m.row)
}

// Close finishes the map once every row was written: a deferred stretch
// is computed and the map encoded from the scratch file; the strip's rows
// below the map, and the PNG's end, are written and flushed.
func (m *MapStream) Close() error {
	if m.err != nil {
		m.abort()
		return m.err
	}
	defer m.abort()
	if m.srcY != m.sh {
		return fmt.Errorf("only %d of %d map rows were written", m.srcY, m.sh)
	}
	if m.spill != nil {
		if err := m.replay(); err != nil {
			return err
		}
	}
	for m.picY < m.height {
		if err := m.pictureRow(nil); err != nil {
			return err
		}
	}
	if err := m.enc.finish(); err != nil {
		return err
	}
	return m.w.Flush()
}

// abort drops the scratch file and the encoder's workers.
func (m *MapStream) abort() {
	if m.spill != nil {
		m.spill.Close()
		m.spill = nil
	}
}

// replay computes the stretch from the spilled rows (as StretchFor would
// over the map's values) and encodes them.
func (m *MapStream) replay() error {
	f := m.spill
	m.spill = nil
	defer f.Close()
	n := m.ow
	rows := func(each func(v []float32) error) error {
		buf := make([]byte, 4*n)
		v := make([]float32, n)
		for y := range m.oh {
			if _, err := f.ReadAt(buf, int64(y)*int64(len(buf))); err != nil {
				return fmt.Errorf("scratch file: %w", err)
			}
			for i := range v {
				v[i] = math.Float32frombits(binary.LittleEndian.Uint32(buf[4*i:]))
			}
			if err := each(v); err != nil {
				return err
			}
		}
		return nil
	}
	st := Full
	if m.lo <= m.hi {
		mm := widen(float64(m.lo), float64(m.hi))
		st = mm
		if strings.ToLower(m.opt.StretchMode) == StretchPercentile {
			// Percentiles' 4096-bin histogram between the minimum and the
			// maximum, in its arithmetic.
			lo32 := float32(mm.Lo)
			scale := float32(percentileBins) / float32(mm.Hi-mm.Lo)
			hist := make([]int, percentileBins)
			total := 0
			err := rows(func(v []float32) error {
				for _, x := range v {
					if x-x != 0 {
						continue
					}
					i := int((x - lo32) * scale)
					hist[max(0, min(i, percentileBins-1))]++
					total++
				}
				return nil
			})
			if err != nil {
				return err
			}
			width := (mm.Hi - mm.Lo) / percentileBins
			edge := func(q float64) float64 {
				target := q * float64(total)
				cum := 0.0
				for i, c := range hist {
					if c > 0 && cum+float64(c) >= target {
						return mm.Lo + width*(float64(i)+(target-cum)/float64(c))
					}
					cum += float64(c)
				}
				return mm.Hi
			}
			lo, hi := edge(0.02), edge(0.98)
			st = widen(math.Max(lo, mm.Lo), math.Min(hi, mm.Hi))
		}
	}
	m.opt.Stretch = st
	if err := m.start(); err != nil {
		return err
	}
	return rows(m.pictureRow)
}

// pngEncoder writes a paletted PNG whose rows are compressed in strips on
// all cores.
type pngEncoder struct {
	w       io.Writer
	level   int
	stride  int // 1 + width
	raw     []byte
	strip   int // raw bytes per strip
	pending [][]byte
	adler   hash.Hash32 // of every raw byte, in order
	started bool
	err     error
}

func newPNGEncoder(w io.Writer, width, level int) *pngEncoder {
	stride := 1 + width
	strip := max(stride, (1<<20)/stride*stride)
	return &pngEncoder{w: w, level: level, stride: stride, strip: strip, adler: adler32.New()}
}

// chunk writes one PNG chunk.
func (e *pngEncoder) chunk(typ string, data []byte) error {
	var h [8]byte
	binary.BigEndian.PutUint32(h[:4], uint32(len(data)))
	copy(h[4:], typ)
	crc := crc32.NewIEEE()
	crc.Write(h[4:])
	crc.Write(data)
	var c [4]byte
	binary.BigEndian.PutUint32(c[:], crc.Sum32())
	for _, b := range [][]byte{h[:], data, c[:]} {
		if _, err := e.w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

// header writes the signature, IHDR, PLTE and tRNS, as image/png writes
// them for a paletted image.
func (e *pngEncoder) header(w, h int, pal color.Palette) error {
	if _, err := e.w.Write([]byte("\x89PNG\r\n\x1a\n")); err != nil {
		return err
	}
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], uint32(w))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(h))
	ihdr[8], ihdr[9] = 8, 3 // 8-bit palette indices
	if err := e.chunk("IHDR", ihdr); err != nil {
		return err
	}
	plte := make([]byte, 0, 3*len(pal))
	var trns []byte
	last := -1
	for i, c := range pal {
		n := color.NRGBAModel.Convert(c).(color.NRGBA)
		plte = append(plte, n.R, n.G, n.B)
		trns = append(trns, n.A)
		if n.A != 0xff {
			last = i
		}
	}
	if err := e.chunk("PLTE", plte); err != nil {
		return err
	}
	if last >= 0 {
		if err := e.chunk("tRNS", trns[:last+1]); err != nil {
			return err
		}
	}
	return nil
}

// row adds one picture row (palette indices), filter type none.
func (e *pngEncoder) row(pix []uint8) error {
	if e.err != nil {
		return e.err
	}
	e.raw = append(e.raw, 0)
	e.raw = append(e.raw, pix...)
	if len(e.raw) >= e.strip {
		e.pending = append(e.pending, e.raw)
		e.raw = nil
		if len(e.pending) >= 2*par.DefaultThreads() {
			e.err = e.flush(false)
		}
	}
	return e.err
}

// flush compresses the pending strips on all cores and writes them as
// IDAT chunks in order; with last, the rows not yet in a strip end the
// stream.
func (e *pngEncoder) flush(last bool) error {
	if last {
		e.pending = append(e.pending, e.raw)
		e.raw = nil
	}
	out := make([][]byte, len(e.pending))
	errs := make([]error, len(e.pending))
	for _, raw := range e.pending {
		e.adler.Write(raw)
	}
	par.For(len(e.pending), func(i int) {
		raw := e.pending[i]
		var buf bytes.Buffer
		fw, err := flate.NewWriter(&buf, e.level)
		if err == nil {
			_, err = fw.Write(raw)
		}
		if err == nil {
			if last && i == len(e.pending)-1 {
				err = fw.Close()
			} else {
				err = fw.Flush() // a full flush: the next strip starts on a byte
			}
		}
		out[i], errs[i] = buf.Bytes(), err
	})
	e.pending = e.pending[:0]
	for i, z := range out {
		if errs[i] != nil {
			return errs[i]
		}
		if !e.started {
			z = append([]byte{0x78, 0x9c}, z...) // the zlib header
			e.started = true
		}
		if last && i == len(out)-1 {
			var a [4]byte
			binary.BigEndian.PutUint32(a[:], e.adler.Sum32())
			z = append(z, a[:]...)
		}
		for len(z) > 0 {
			n := min(len(z), 1<<20)
			if err := e.chunk("IDAT", z[:n]); err != nil {
				return err
			}
			z = z[n:]
		}
	}
	return nil
}

// finish ends the zlib stream and the PNG.
func (e *pngEncoder) finish() error {
	if e.err != nil {
		return e.err
	}
	if err := e.flush(true); err != nil {
		return err
	}
	return e.chunk("IEND", nil)
}
