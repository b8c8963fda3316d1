package geotiff

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"canopy/compute"
	"canopy/compute/outfile"
	"canopy/compute/par"
)

// COGOptions tune the Cloud Optimized GeoTIFF writer. The zero value
// writes 512² tiles, DEFLATE with the floating-point predictor at the
// default level (see WriteOptions.Level; the overviews then Huffman-coded
// alone, HuffmanOnly), GDAL_NODATA nan, and BigTIFF only when the file
// could pass 4 GiB.
type COGOptions struct {
	Compression Compression
	// Level is the compression level (0: the default).
	Level int
	// TileSize is the tile side, a multiple of 16 (0: 512, as GDAL's COG
	// driver).
	TileSize int
	// BigTIFF forces the BigTIFF format.
	BigTIFF bool
	// NoData is the GDAL_NODATA text ("" writes "nan").
	NoData string
	// Descriptions name the bands (GDAL_METADATA DESCRIPTION items).
	Descriptions []string
	// ScratchDir holds the overviews' tile data until Close lays the file
	// out, in files that have no name (removed by the system however the
	// program ends). "" is the output's own directory when the writer
	// knows it (an outfile.Writer), else the system's temporary directory.
	ScratchDir string
}

// COGWriter streams float32 bands, rows in order, into a Cloud Optimized
// GeoTIFF: tiled, compressed with the floating-point predictor, with
// internal overviews (2×, 4×, … down to the first that fits in one tile)
// built from the rows as they pass, each overview pixel the mean of the
// valid (not NaN) pixels of the 2×2 below it (GDAL's AVERAGE resampling,
// level by level), NaN where none is valid. Every NaN is written as the
// same bits (0x7fc00000).
//
// The layout is GDAL's COG: the header, GDAL's structural metadata
// (LAYOUT=IFDS_BEFORE_DATA, BLOCK_ORDER=ROW_MAJOR, BLOCK_LEADER=SIZE_AS_UINT4,
// BLOCK_TRAILER=LAST_4_BYTES_REPEATED), every IFD (full resolution first,
// then the overviews by decreasing size), then the tile data from the
// smallest overview to the full resolution, each level's tiles in row
// order, each tile preceded by its size and followed by its last 4 bytes
// repeated. Several bands are pixel-interleaved in one tile, as GDAL's COG
// driver writes them.
//
// Since the headers come first, the full resolution's tiles go to the
// output as they are compressed and the overviews' to unnamed scratch
// files; Close then opens a gap at the start of the output (fallocate's
// FALLOC_FL_INSERT_RANGE where the file system has it, else by moving the
// data up in place), writes the headers and copies the overviews in. Memory
// is one row of tiles per level, whatever the image size.
type COGWriter struct {
	w         io.WriterAt
	width     int
	height    int
	nb        int
	geo       *compute.GeoRef
	opt       COGOptions
	big       bool
	ts        int
	level     int // DEFLATE or ZSTD level, resolved
	levels    []*cogLevel
	next      int            // the next full-resolution row expected
	encs      []*tileEncoder // the full resolution's, one per worker
	ovrEncs   []*tileEncoder // the overviews'
	err       error
	closed    bool
	moveBytes int64 // how many bytes Close moved in place (0 with fallocate)

	// in is the next row of full-resolution tiles being filled by
	// WriteRows (inRows of them), while a goroutine compresses and writes
	// the row before and builds the overviews from it (bg: closed when
	// it is done; bgErr its error).
	in     [][]float32
	inRows int
	bg     chan struct{}
	bgErr  error
	times  COGTimes
}

// COGTimes is where a COG writer's time went: Copy is WriteRows copying
// rows in, Wait WriteRows waiting for the row of tiles before to be done;
// the others are on the writer's own goroutine, summed over the levels:
// Compress laying tiles out and compressing them (on all cores), Write
// the tiles' writes, Reduce building the overviews' rows, Close laying
// the file out.
type COGTimes struct {
	Copy, Wait, Compress, Write, Reduce, Close time.Duration
}

// Times says where the writer's time went so far.
func (c *COGWriter) Times() COGTimes { return c.times }

// cogLevel is one resolution being written.
type cogLevel struct {
	w, h          int
	across, down  int
	buf           [][]float32 // per band: ts rows of w pixels
	rows          int         // rows held in buf
	done          int         // rows emitted
	offsets, cnts []uint64    // per tile, offsets within out
	out           io.WriterAt
	pos           int64
	// base is where the level's data starts in out: 0, or for the full
	// resolution the room reserved before it for the headers and the
	// overviews (reserve).
	base    int64
	scratch *os.File // nil for the full resolution
	tiles   [][]byte // the row of tiles being written, compressed, with leaders and trailers
}

// NewCOG starts a COG of width×height pixels with bands float32 bands,
// georeferenced by geo (nil for none), written into w: an io.WriterAt
// that is also an io.ReaderAt (an outfile.Writer or an *os.File; Close
// rearranges the file in place). Write the rows in order with WriteRows,
// then Close; Abort drops the scratch files of a run that failed.
func NewCOG(w io.WriterAt, width, height, bands int, geo *compute.GeoRef, opt COGOptions) (*COGWriter, error) {
	if _, ok := w.(io.ReaderAt); !ok {
		return nil, errors.New("a COG is laid out in place: the output must be readable too")
	}
	if width <= 0 || height <= 0 || uint64(width)*uint64(height) > maxPixels {
		return nil, fmt.Errorf("image size %dx%d is not a usable size", width, height)
	}
	if bands < 1 || bands > 1024 {
		return nil, fmt.Errorf("%d bands: need 1 to 1024", bands)
	}
	if width > MaxCOGWidth {
		return nil, fmt.Errorf("the image is %d pixels wide, more than the %d a Canopy GeoTIFF may be; write a part of it (canopy warp --bbox)", width, MaxCOGWidth)
	}
	if opt.TileSize == 0 {
		opt.TileSize = 512
		// A row of tiles is held twice (filling and compressing) and
		// again in the overviews: an image so wide that a row of 512²
		// tiles would pass maxTileRow gets smaller tiles (a 4194304×1
		// image would otherwise hold 8 GiB for one row of pixels).
		for opt.TileSize > 16 && uint64(opt.TileSize)*uint64(width)*uint64(bands)*4 > maxTileRow {
			opt.TileSize -= 16
		}
	}
	if opt.TileSize < 16 || opt.TileSize%16 != 0 || opt.TileSize > 4096 {
		return nil, fmt.Errorf("tile size %d: must be a multiple of 16 from 16 to 4096", opt.TileSize)
	}
	if opt.NoData == "" {
		opt.NoData = "nan"
	}
	c := &COGWriter{w: w, width: width, height: height, nb: bands, geo: geo, opt: opt, ts: opt.TileSize}
	var err error
	if c.level, err = resolveLevel(opt.Compression, opt.Level); err != nil {
		return nil, err
	}
	// The levels: full resolution, then halves down to the first that
	// fits in one tile.
	lw, lh := width, height
	var raw, tiles uint64
	for {
		l := &cogLevel{w: lw, h: lh, across: (lw + c.ts - 1) / c.ts, down: (lh + c.ts - 1) / c.ts}
		n := l.across * l.down
		l.offsets, l.cnts = make([]uint64, n), make([]uint64, n)
		l.buf = make([][]float32, bands)
		for b := range l.buf {
			l.buf[b] = make([]float32, c.ts*lw)
		}
		c.levels = append(c.levels, l)
		raw += uint64(l.across*l.down) * uint64(c.ts*c.ts*4*bands)
		tiles += uint64(n)
		if lw <= c.ts && lh <= c.ts {
			break
		}
		lw, lh = (lw+1)/2, (lh+1)/2
	}
	c.big = opt.BigTIFF || raw+raw/16+tiles*24+1<<20 >= 1<<32
	c.levels[0].out = w
	c.in = make([][]float32, bands)
	for b := range c.in {
		c.in[b] = make([]float32, c.ts*width)
	}
	dir := opt.ScratchDir
	if dir == "" {
		if p, ok := w.(interface{ Path() string }); ok {
			dir = filepath.Dir(p.Path())
		} else {
			dir = os.TempDir()
		}
	}
	for _, l := range c.levels[1:] {
		f, err := outfile.Scratch(dir)
		if err != nil {
			c.Abort()
			return nil, fmt.Errorf("scratch file for the overviews in %s: %w", dir, err)
		}
		l.scratch, l.out = f, f
	}
	return c, nil
}

// resolveLevel checks a compression level and fills the default.
func resolveLevel(comp Compression, level int) (int, error) {
	switch comp {
	case Deflate:
		if level < HuffmanOnly || level > 9 {
			return 0, fmt.Errorf("DEFLATE level %d: must be 1 to 9", level)
		}
	case ZSTD:
		if level < 0 || level > 22 {
			return 0, fmt.Errorf("ZSTD level %d: must be 1 to 22", level)
		}
	case NoCompression:
	default:
		return 0, fmt.Errorf("unknown compression %v", comp)
	}
	return level, nil
}

// Levels returns the size of each resolution the file holds: the full
// resolution first, then the overviews.
func (c *COGWriter) Levels() [][2]int {
	var out [][2]int
	for _, l := range c.levels {
		out = append(out, [2]int{l.w, l.h})
	}
	return out
}

// WriteRows adds rows [y0, y0+rows) of every band: bands[b] holds
// rows×Width samples. Rows come in order, each once.
func (c *COGWriter) WriteRows(y0, rows int, bands [][]float32) error {
	if c.err != nil {
		return c.err
	}
	if c.closed {
		return errors.New("COG already closed")
	}
	if y0 != c.next || rows <= 0 || y0+rows > c.height {
		return fmt.Errorf("rows %d to %d: the next rows are %d on, of %d", y0, y0+rows, c.next, c.height)
	}
	if len(bands) != c.nb {
		return fmt.Errorf("%d bands given, the COG has %d", len(bands), c.nb)
	}
	for b, p := range bands {
		if len(p) != rows*c.width {
			return fmt.Errorf("band %d holds %d samples for %d rows of %d", b+1, len(p), rows, c.width)
		}
	}
	for done := 0; done < rows; {
		n := min(rows-done, c.ts-c.inRows)
		t := time.Now()
		for b := range bands {
			copy(c.in[b][c.inRows*c.width:], bands[b][done*c.width:(done+n)*c.width])
		}
		c.times.Copy += time.Since(t)
		c.inRows += n
		done += n
		if c.inRows == c.ts || c.next+done == c.height {
			if err := c.handOff(); err != nil {
				c.err = err
				return err
			}
		}
	}
	c.next += rows
	return nil
}

// handOff gives the row of tiles WriteRows filled to the goroutine that
// compresses, writes and reduces it, once it is done with the row before:
// the rows of one row of tiles are copied while the one before is
// compressed, and the levels are touched by that goroutine alone.
func (c *COGWriter) handOff() error {
	t := time.Now()
	err := c.wait()
	c.times.Wait += time.Since(t)
	if err != nil {
		return err
	}
	l := c.levels[0]
	l.buf, c.in = c.in, l.buf
	l.rows, c.inRows = c.inRows, 0
	c.bg = make(chan struct{})
	go func() {
		defer close(c.bg)
		c.bgErr = c.flush(0)
	}()
	return nil
}

// wait waits for the row of tiles being written and returns its error.
func (c *COGWriter) wait() error {
	if c.bg != nil {
		<-c.bg
		c.bg = nil
	}
	return c.bgErr
}

// flush writes the row of tiles level k holds and passes it down to the
// next level.
func (c *COGWriter) flush(k int) error {
	l := c.levels[k]
	if err := c.writeTiles(l); err != nil {
		return err
	}
	if k+1 < len(c.levels) {
		nl := c.levels[k+1]
		t := time.Now()
		got := reduce(l, nl)
		c.times.Reduce += time.Since(t)
		nl.rows += got
		if nl.rows == c.ts || nl.done+nl.rows == nl.h {
			if err := c.flush(k + 1); err != nil {
				return err
			}
		}
	}
	l.done += l.rows
	l.rows = 0
	return nil
}

// reduce averages the rows of l two by two into nl's buffer (after the
// rows it holds) and returns how many rows it added.
func reduce(l, nl *cogLevel) int {
	out := (l.rows + 1) / 2
	parts := par.DefaultThreads()
	par.For(len(l.buf)*parts, func(i int) {
		b, p := i/parts, i%parts
		src, dst := l.buf[b], nl.buf[b]
		for j := out * p / parts; j < out*(p+1)/parts; j++ {
			r0 := src[2*j*l.w:][:l.w]
			var r1 []float32
			if 2*j+1 < l.rows {
				r1 = src[(2*j+1)*l.w:][:l.w]
			}
			average(dst[(nl.rows+j)*nl.w:][:nl.w], r0, r1)
		}
	})
	return out
}

// average sets d[i] to the mean of the valid pixels among r0[2i],
// r0[2i+1], r1[2i], r1[2i+1] (r1 nil on an image's last odd row; the
// second column absent on its last odd column), NaN when none is valid.
func average(d, r0, r1 []float32) {
	w := len(r0)
	for i := range d {
		x := 2 * i
		var s float64
		n := 0
		add := func(v float32) {
			if v == v {
				s += float64(v)
				n++
			}
		}
		add(r0[x])
		if x+1 < w {
			add(r0[x+1])
		}
		if r1 != nil {
			add(r1[x])
			if x+1 < w {
				add(r1[x+1])
			}
		}
		if n == 0 {
			d[i] = float32(math.NaN())
		} else {
			d[i] = float32(s / float64(n))
		}
	}
}

// writeTiles compresses the row of tiles l holds on all cores and appends
// them to l's output, each with its leader and trailer.
func (c *COGWriter) writeTiles(l *cogLevel) error {
	t0 := time.Now()
	row := l.done / c.ts
	workers := par.Workers(l.across)
	encs := &c.encs
	level := c.level
	if l != c.levels[0] && c.opt.Compression == Deflate && c.opt.Level == 0 {
		// Overviews are for looking at: at the default level their tiles
		// are Huffman-coded alone, twice as fast for a few percent more
		// bytes (a quarter of the data).
		encs, level = &c.ovrEncs, HuffmanOnly
	}
	for len(*encs) < workers {
		// The overviews' encoders lay their tiles out in the full
		// resolution's buffers: the levels take turns.
		var share *tileEncoder
		if encs == &c.ovrEncs && len(*encs) < len(c.encs) {
			share = c.encs[len(*encs)]
		}
		e, err := newTileEncoderOn(share, c.opt.Compression, level, Float32, c.nb, c.ts, 3)
		if err != nil {
			return err
		}
		*encs = append(*encs, e)
	}
	if len(l.tiles) < l.across {
		l.tiles = make([][]byte, l.across)
	}
	outs := l.tiles[:l.across]
	var errOnce sync.Once
	var err error
	// Each worker keeps its encoder and its room; a tile is compressed
	// whole by one worker.
	scratch := make([][]byte, workers)
	par.WorkerBlocksN(workers, l.across, 1, func(wk, t, _ int) {
		e := (*encs)[wk]
		x0 := t * c.ts
		vw := min(c.ts, l.w-x0)
		e.fill(l.buf, l.w, x0, vw, l.rows)
		// The tile with its leader (its size) and trailer (its
		// last 4 bytes again), compressed in place.
		// Room for the worst case once (a stored stream), so that
		// the tile's buffer never grows while the stream is written.
		bound := len(e.tile) + len(e.tile)/64 + 1024
		dst := outs[t]
		if l.across > keepRoom {
			// A row of many tiles: compressed in the worker's own
			// room, each kept at its compressed size.
			dst = scratch[wk]
		}
		if cap(dst) < bound {
			dst = make([]byte, 0, bound)
		}
		o, e2 := e.compressTo(append(dst[:0], 0, 0, 0, 0))
		if e2 != nil {
			errOnce.Do(func() { err = e2 })
			return
		}
		binary.LittleEndian.PutUint32(o, uint32(len(o)-4))
		o = append(o, o[len(o)-4:]...)
		if l.across > keepRoom {
			scratch[wk] = o
			o = append(outs[t][:0], o...)
		}
		outs[t] = o
	})
	c.times.Compress += time.Since(t0)
	if err != nil {
		return fmt.Errorf("compress tile: %w", err)
	}
	t0 = time.Now()
	defer func() { c.times.Write += time.Since(t0) }()
	// The tiles' places follow from their sizes; they are written on all
	// the workers at once (positional writes do not share an offset).
	if l == c.levels[0] && row == 0 && reserveRoom && len(c.levels) > 1 {
		var first int64
		for _, z := range outs {
			first += int64(len(z))
		}
		c.reserve(first)
	}
	at := make([]int64, len(outs))
	for t, z := range outs {
		at[t] = l.base + l.pos
		l.offsets[row*l.across+t] = uint64(l.pos) + 4
		l.cnts[row*l.across+t] = uint64(len(z) - 8)
		l.pos += int64(len(z))
	}
	var failed atomic.Bool
	par.ForN(workers, len(outs), func(t int) {
		if failed.Load() {
			return
		}
		if _, e2 := l.out.WriteAt(outs[t], at[t]); e2 != nil {
			errOnce.Do(func() { err = e2 })
			failed.Store(true)
		}
	})
	return err
}

// Abort drops the scratch files; the output is left as it is (its
// outfile.Set removes it).
func (c *COGWriter) Abort() {
	c.wait()
	for _, l := range c.levels {
		if l.scratch != nil {
			l.scratch.Close()
			l.scratch = nil
		}
	}
	c.closed = true
}

// ghost is GDAL's structural metadata of a COG, placed right after the
// header, as GDAL writes it.
const ghost = "GDAL_STRUCTURAL_METADATA_SIZE=000140 bytes\n" +
	"LAYOUT=IFDS_BEFORE_DATA\nBLOCK_ORDER=ROW_MAJOR\nBLOCK_LEADER=SIZE_AS_UINT4\n" +
	"BLOCK_TRAILER=LAST_4_BYTES_REPEATED\nKNOWN_INCOMPATIBLE_EDITION=NO\n "

// Close lays the file out once every row was written: the headers and
// the overviews' tiles go before the full resolution's, and the scratch
// files are dropped.
func (c *COGWriter) Close() error {
	tc := time.Now()
	defer func() { c.times.Close += time.Since(tc) }()
	if err := c.wait(); err != nil && c.err == nil {
		c.err = err
	}
	if c.err != nil {
		c.Abort()
		return c.err
	}
	if c.closed {
		return errors.New("COG already closed")
	}
	defer c.Abort()
	if c.next != c.height {
		return fmt.Errorf("only %d of %d rows were written", c.next, c.height)
	}
	ifdAt, pos, p := c.headers()
	// Overview data from the smallest level up, then the full resolution
	// at prefix: right after the headers when there was no room reserved
	// or not enough (a gap opened in front of the full resolution), else
	// ending where the reserved room does (the rest of the room, between
	// the headers and the overviews, a hole).
	l0 := c.levels[0]
	var ovr uint64
	for _, l := range c.levels[1:] {
		ovr += uint64(l.pos)
	}
	dataAt := make([]uint64, len(c.levels))
	align := uint64(blockAlign(c.w))
	var prefix uint64
	if l0.base > 0 && p+ovr <= uint64(l0.base) {
		prefix = uint64(l0.base)
		at := prefix - ovr
		for k := len(c.levels) - 1; k >= 1; k-- {
			dataAt[k] = at
			at += uint64(c.levels[k].pos)
		}
		p = prefix
	} else {
		for k := len(c.levels) - 1; k >= 1; k-- {
			dataAt[k] = p
			p += uint64(c.levels[k].pos)
		}
		prefix = (p + align - 1) / align * align
	}
	dataAt[0] = prefix
	total := prefix + uint64(l0.pos)
	if !c.big && total >= 1<<32 {
		return errors.New("the file passes 4 GiB; write it as BigTIFF")
	}
	if prefix > uint64(l0.base) {
		if err := c.openGap(int64(prefix) - l0.base); err != nil {
			return err
		}
	}
	// Headers.
	head := make([]byte, ifdAt)
	if c.big {
		copy(head, []byte{'I', 'I', 43, 0, 8, 0, 0, 0})
		binary.LittleEndian.PutUint64(head[8:], pos[0])
	} else {
		copy(head, []byte{'I', 'I', 42, 0})
		binary.LittleEndian.PutUint32(head[4:], uint32(pos[0]))
	}
	hdr := 8
	if c.big {
		hdr = 16
	}
	copy(head[hdr:], ghost)
	for k, l := range c.levels {
		for i := range l.offsets {
			l.offsets[i] += dataAt[k]
		}
		es := c.entries(k)
		ifd := marshalIFD(es, pos[k], c.big)
		if k+1 < len(c.levels) {
			at := 2 + len(es)*12
			if c.big {
				at = 8 + len(es)*20
				binary.LittleEndian.PutUint64(ifd[at:], pos[k+1])
			} else {
				binary.LittleEndian.PutUint32(ifd[at:], uint32(pos[k+1]))
			}
		}
		for uint64(len(head)) < pos[k] {
			head = append(head, 0)
		}
		head = append(head, ifd...)
	}
	for uint64(len(head))&1 != 0 {
		head = append(head, 0)
	}
	if _, err := c.w.WriteAt(head, 0); err != nil {
		return err
	}
	// The overviews' tiles, then zeros up to the full resolution.
	var buf []byte
	for k := len(c.levels) - 1; k >= 1; k-- {
		l := c.levels[k]
		if copyRange(c.w, int64(dataAt[k]), l.scratch, l.pos) == nil {
			continue // copied by the kernel
		}
		if buf == nil {
			buf = make([]byte, 4<<20)
		}
		for off := int64(0); off < l.pos; {
			n := min(int64(len(buf)), l.pos-off)
			if _, err := l.scratch.ReadAt(buf[:n], off); err != nil {
				return fmt.Errorf("scratch file: %w", err)
			}
			if _, err := c.w.WriteAt(buf[:n], int64(dataAt[k])+off); err != nil {
				return err
			}
			off += n
		}
	}
	if gap := prefix - p; gap > 0 {
		if _, err := c.w.WriteAt(make([]byte, gap), int64(p)); err != nil {
			return err
		}
	}
	c.closed = true
	return nil
}

// headers lays out the header, GDAL's structural metadata and the IFDs:
// where the first IFD goes, each IFD's offset, and where they end. The
// IFDs' sizes do not depend on the offsets they hold, so this is known
// before any tile is written.
func (c *COGWriter) headers() (ifdAt int, pos []uint64, end uint64) {
	hdr := 8
	if c.big {
		hdr = 16
	}
	ifdAt = hdr + len(ghost)
	ifdAt += ifdAt & 1
	pos = make([]uint64, len(c.levels))
	p := uint64(ifdAt)
	for k := range c.levels {
		pos[k] = p
		p += uint64(len(marshalIFD(c.entries(k), 0, c.big)))
		p += p & 1
	}
	return ifdAt, pos, p
}

// reserveRoom says whether the writer reserves room before the full
// resolution (a variable for the tests of the other way).
var reserveRoom = true

// MaxCOGWidth is the widest image NewCOG writes: a row of tiles of a wider
// one takes too many tiles, or too much memory, for the image it holds.
const MaxCOGWidth = 1 << 18

// keepRoom is the most tiles across whose worst-case room a level keeps
// from one row of tiles to the next; wider rows keep each tile at its
// compressed size. maxTileRow bounds the bytes of one row of tiles of one
// level (see NewCOG's tile size).
const (
	keepRoom   = 256
	maxTileRow = 256 << 20
)

// reserve sets where the full resolution's data starts, from the first
// row of its tiles (compressed, bytes in all): room for the headers and
// for the overviews as large as the first row's compression makes them
// likely (their pixels at the same rate, with Huffman coding alone where
// the overviews use it, and 3% more), so that Close finds the room ready
// most of the time. Otherwise Close opens a gap before the data, which on
// Linux (fallocate's FALLOC_FL_INSERT_RANGE) waits for the file's data to
// reach the disk first (docs/BENCHMARKS.md, "This round": the COG's Close).
// What the room has left over stays a hole between the headers and the
// overviews (GDAL's COG layout checks pass): it takes no disk space but
// counts in the file's length, a few percent of it.
func (c *COGWriter) reserve(firstRow int64) {
	l0 := c.levels[0]
	raw := func(l *cogLevel) float64 { return float64(l.across*l.down) * float64(c.ts*c.ts*4*c.nb) }
	rowRaw := float64(l0.across) * float64(c.ts*c.ts*4*c.nb)
	rate := float64(firstRow) / rowRaw
	if c.opt.Compression == Deflate && c.opt.Level == 0 {
		rate *= 1.1 // Huffman coding alone compresses less (docs/BENCHMARKS.md, "Codecs": its ratio against level 1's)
	}
	var ovr float64
	for _, l := range c.levels[1:] {
		ovr += raw(l)*rate*1.03 + float64(l.across*l.down*8)
	}
	_, _, end := c.headers()
	align := int64(blockAlign(c.w))
	room := int64(end) + int64(ovr) + 1<<20
	l0.base = (room + align - 1) / align * align
}

// openGap moves the full resolution's data up by n bytes (a multiple of
// the file system's block).
func (c *COGWriter) openGap(n int64) error {
	l0 := c.levels[0]
	size := l0.pos
	if insertRange(c.w, n) == nil {
		return nil
	}
	r := c.w.(io.ReaderAt)
	buf := make([]byte, min(int64(8<<20), max(size, 1)))
	for end := size; end > 0; {
		k := min(int64(len(buf)), end)
		at := end - k
		if _, err := r.ReadAt(buf[:k], l0.base+at); err != nil {
			return fmt.Errorf("moving the tiles into place: %w", err)
		}
		if _, err := c.w.WriteAt(buf[:k], l0.base+at+n); err != nil {
			return err
		}
		end = at
	}
	c.moveBytes = size
	return nil
}

// entries are level k's IFD entries.
func (c *COGWriter) entries(k int) []wentry {
	l := c.levels[k]
	ib := &ifdBuilder{big: c.big}
	if k > 0 {
		ib.longs(tagNewSubfileType, 1) // a reduced-resolution image
	}
	ib.longs(tagImageWidth, uint32(l.w))
	ib.longs(tagImageLength, uint32(l.h))
	ib.shorts(tagBitsPerSample, perSample(c.nb, 32)...)
	ib.shorts(tagCompression, compressionCode(c.opt.Compression))
	ib.shorts(tagPhotometric, 1)
	ib.shorts(tagSamplesPerPixel, uint16(c.nb))
	ib.shorts(tagPlanarConfig, 1)
	if c.opt.Compression != NoCompression {
		ib.shorts(tagPredictor, 3)
	}
	ib.shorts(tagTileWidth, uint16(c.ts))
	ib.shorts(tagTileLength, uint16(c.ts))
	ib.chunkArray(tagTileOffsets, l.offsets)
	ib.chunkArray(tagTileByteCounts, l.cnts)
	if c.nb > 1 {
		ib.shorts(tagExtraSamples, make([]uint16, c.nb-1)...)
	}
	ib.shorts(tagSampleFormat, perSample(c.nb, 3)...)
	if k == 0 {
		ib.geoTags(c.geo)
		if md := gdalMetadata(c.opt.Descriptions); md != "" {
			ib.ascii(tagGDALMetadata, md)
		}
	}
	ib.ascii(tagGDALNoData, c.opt.NoData)
	return ib.es
}

// WriteCOG writes whole float32 bands (each width*height samples) as a
// COG into w, as a COGWriter does row by row.
func WriteCOG(w io.WriterAt, width, height int, bands [][]float32, geo *compute.GeoRef, opt COGOptions) error {
	c, err := NewCOG(w, width, height, len(bands), geo, opt)
	if err != nil {
		return err
	}
	step := max(1, (8<<20)/(4*width*len(bands)))
	for y := 0; y < height; y += step {
		n := min(step, height-y)
		rows := make([][]float32, len(bands))
		for b := range bands {
			if len(bands[b]) != width*height {
				c.Abort()
				return fmt.Errorf("band %d holds %d samples, a %dx%d image needs %d", b+1, len(bands[b]), width, height, width*height)
			}
			rows[b] = bands[b][y*width : (y+n)*width]
		}
		if err := c.WriteRows(y, n, rows); err != nil {
			c.Abort()
			return err
		}
	}
	return c.Close()
}
