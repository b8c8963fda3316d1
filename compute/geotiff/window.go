package geotiff

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"canopy/compute"
	"canopy/compute/par"
)

// DataType is the engine type ReadRowsInto delivers band samples as: the
// stored type where the engine has it (uint8, uint16, int16, uint32, int32,
// float32), exact reports true; int8, uint64, int64 and float64 samples are
// converted to float32 (exact false: integers beyond 2^24 and float64
// values are rounded to the nearest float32, as ReadBands rounds them).
func (f *File) DataType() (t compute.DataType, exact bool) {
	switch f.typ {
	case Uint8:
		return compute.U8, true
	case Uint16:
		return compute.U16, true
	case Int16:
		return compute.I16, true
	case Uint32:
		return compute.U32, true
	case Int32:
		return compute.I32, true
	case Float32:
		return compute.F32, true
	}
	return compute.F32, false
}

// BlockRows is the height of the file's strips or tiles (at most the
// image height): windows whose edges are multiples of it (or the image's
// bottom) decode every strip or tile once. Other windows are read right
// too, but a strip or tile they cut is decompressed from its top again for
// each window it reaches into.
func (f *File) BlockRows() int { return min(f.ch, f.height) }

// BlockSize is the width and height of the file's tiles, or of its
// strips (the image's width), clipped to the image: windows aligned to it
// decode each tile or strip once and no more of it than they deliver.
func (f *File) BlockSize() (w, h int) { return min(f.cw, f.width), min(f.ch, f.height) }

// ReadRowsInto decodes rows [y0, y1) of band b (1-based) into dst, a
// Width×(y1-y0) plane of the file's DataType, at the stored type (see
// ReadRowsBandsInto).
func (f *File) ReadRowsInto(b, y0, y1 int, dst compute.Plane) error {
	return f.ReadRowsBandsInto(y0, y1, []int{b}, []compute.Plane{dst})
}

// BandRows reads rows of some bands of one file at their stored type, as
// the block pipeline's readers do (pipeline.Reader): Bands[k] (1-based) is
// the reader's band k.
type BandRows struct {
	File  *File
	Bands []int
}

// BlockRows is the file's strip or tile height.
func (r *BandRows) BlockRows() int { return r.File.BlockRows() }

// ReadRows fills dst[k] with rows [y0, y1) of band Bands[k]
// (ReadRowsBandsInto).
func (r *BandRows) ReadRows(y0, y1 int, dst []compute.Plane) error {
	return r.File.ReadRowsBandsInto(y0, y1, r.Bands, dst)
}

// ReadRowsBandsInto decodes rows [y0, y1) of several bands (1-based) in
// one pass over the strips or tiles of that window, band bands[i] into
// dst[i]: a Width×(y1-y0) plane of the file's DataType (the stored samples
// in the machine's byte order, or float32 for the types the engine does
// not have). Every sample of every plane is written (sparse strips or
// tiles with the nodata value where the type holds it, else 0); planes
// must not overlap. The strips or tiles of the window are decoded on
// several goroutines, each straight into the planes, within the reader's
// memory budget. Over the life of the File, window reads together may
// take the time budget of the work they ask for (TimeBudget's rate, its
// base once), and may decode at most overDecode times the samples they
// deliver (plus a fixed allowance): a file whose strips or tiles share
// bytes that every window would decode again is refused rather than
// decoded again and again. On error the planes' contents are unspecified.
func (f *File) ReadRowsBandsInto(y0, y1 int, bands []int, dst []compute.Plane) error {
	return f.ReadWindowBandsInto(0, y0, f.width, y1, bands, dst)
}

// ReadWindowBandsInto is ReadRowsBandsInto for the window of columns
// [x0, x1) and rows [y0, y1): dst[i] is an (x1-x0)×(y1-y0) plane, and only
// the tiles (or strips) that window touches are decoded, so a viewer reads
// what is on screen of a large tiled image without decoding whole rows.
// Window reads share ReadRowsBandsInto's ledger; the samples a window
// delivers are counted over the columns of the tiles it touches.
func (f *File) ReadWindowBandsInto(x0, y0, x1, y1 int, bands []int, dst []compute.Plane) error {
	wn := window{x0, y0, x1, y1}
	if err := f.checkWindow(wn, bands, dst); err != nil {
		return fmt.Errorf("read %s: %w", f.name, err)
	}
	t, _ := f.DataType()
	tl := f.targets(bands, func(i int) target {
		var tg target
		if t == compute.F32 {
			tg = f.floatTarget(dst[i].Data)
		} else {
			tg = f.typedTarget(dst[i].Data, t)
		}
		tg.stride, tg.wx = x1-x0, x0
		return tg
	})
	work, jobs := f.windowWork(tl, wn)
	cols := min(f.width, (x1-1)/f.cw*f.cw+f.cw) - x0/f.cw*f.cw
	deliv := uint64(y1-y0) * uint64(cols) * uint64(f.spp*f.typ.Size())
	if f.winWork+work > overDecode*(f.winDeliv+deliv)+workSlack {
		return fmt.Errorf("read %s: the file is damaged or hostile: its %ss share data that every window would decode again (%d bytes to decode for %d bytes read)",
			f.name, f.chunkWord(), f.winWork+work, f.winDeliv+deliv)
	}
	if !f.granted {
		f.budget, f.granted = timeBase, true
	}
	f.budget += time.Duration(work/uint64(minRate)) * time.Second
	f.budget += time.Duration(work%uint64(minRate)) * time.Second / time.Duration(minRate)
	f.winWork += work
	f.winDeliv += deliv
	release, err := f.prefetch(jobs)
	if err != nil {
		return err
	}
	defer release()
	start := time.Now()
	err = f.decodeJobs(tl, jobs, wn, start.Add(f.budget))
	f.budget -= time.Since(start)
	return err
}

// window is columns [x0, x1) and rows [y0, y1) of the image.
type window struct{ x0, y0, x1, y1 int }

// checkWindow validates a window read's arguments.
func (f *File) checkWindow(wn window, bands []int, dst []compute.Plane) error {
	if f.r == nil {
		return fmt.Errorf("file is closed")
	}
	y0, y1 := wn.y0, wn.y1
	if y0 < 0 || y1 > f.height || y0 >= y1 {
		return fmt.Errorf("rows %d to %d are not a window of an image %d rows high", y0, y1, f.height)
	}
	if wn.x0 < 0 || wn.x1 > f.width || wn.x0 >= wn.x1 {
		return fmt.Errorf("columns %d to %d are not a window of an image %d columns wide", wn.x0, wn.x1, f.width)
	}
	ww := wn.x1 - wn.x0
	if len(bands) == 0 {
		return fmt.Errorf("no band requested")
	}
	if len(dst) != len(bands) {
		return fmt.Errorf("%d destination planes for %d bands", len(dst), len(bands))
	}
	t, _ := f.DataType()
	var spans [][]byte
	for i, b := range bands {
		if b < 1 || b > f.spp {
			return fmt.Errorf("band %d does not exist (the file has %d band%s)", b, f.spp, plural(f.spp))
		}
		p := dst[i]
		if p.Type != t || p.Width != ww || p.Height != y1-y0 || len(p.Data) != p.Pixels()*t.Size() {
			return fmt.Errorf("destination for band %d is a %dx%d %s plane of %d bytes, the window needs %dx%d %s", b, p.Width, p.Height, p.Type, len(p.Data), ww, y1-y0, t)
		}
		spans = append(spans, p.Data)
	}
	if err := overlapping(spans, bands); err != nil {
		return err
	}
	return nil
}

// overlapping refuses byte planes that share memory (the same plane for
// the same band listed twice is allowed: both get the same samples).
func overlapping(planes [][]byte, bands []int) error {
	type span struct {
		lo, hi uintptr
		band   int
	}
	var spans []span
	for i, p := range planes {
		if len(p) == 0 {
			continue
		}
		lo := uintptr(unsafe.Pointer(unsafe.SliceData(p)))
		spans = append(spans, span{lo, lo + uintptr(len(p)), bands[i]})
	}
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.lo, b.lo) })
	for i := 1; i < len(spans); i++ {
		a, b := spans[i-1], spans[i]
		if b.lo == a.lo && b.hi == a.hi && b.band == a.band {
			continue
		}
		if b.lo < a.hi {
			return fmt.Errorf("the destination planes of bands %d and %d overlap", a.band, b.band)
		}
	}
	return nil
}

// target is where one band's samples of a window go: buf holds the
// window's rows, stride samples of osz bytes each, the first of image
// column wx (a target made by floatTarget or typedTarget holds whole rows
// until these are set).
type target struct {
	buf    []byte
	osz    int
	stride int     // samples per row of buf
	wx     int     // image column of buf's first sample
	offset int     // byte offset of the sample within a decoded pixel
	conv   rowConv // decoded samples to the output type
	fill   []byte  // one sample of the sparse fill value, in the output type
}

// rowConv converts len(dst)/osz samples into dst; sample i starts at byte
// i*stride of src.
type rowConv func(dst, src []byte, stride int)

// f32Bytes views float32 samples as bytes.
func f32Bytes(p []float32) []byte {
	if len(p) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&p[0])), 4*len(p))
}

// bytesF32 views bytes as float32 samples.
func bytesF32(b []byte) []float32 {
	if len(b) < 4 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), len(b)/4)
}

// fillValue is the value sparse strips and tiles read as: the nodata
// value, or 0.
func (f *File) fillValue() float64 {
	if f.hasNoData {
		return f.nodata
	}
	return 0
}

// floatTarget converts every sample to float32 into buf.
func (f *File) floatTarget(buf []byte) target {
	cf := converter(f.typ, f.be && f.pred != 3)
	fill := make([]byte, 4)
	binary.NativeEndian.PutUint32(fill, math.Float32bits(float32(f.fillValue())))
	return target{buf: buf, osz: 4, stride: f.width, fill: fill, conv: func(dst, src []byte, stride int) {
		cf(bytesF32(dst), src, stride)
	}}
}

// typedTarget copies samples of the stored type t (one the engine has
// exactly) into buf in the machine's byte order.
func (f *File) typedTarget(buf []byte, t compute.DataType) target {
	size := t.Size()
	swap := f.be && f.pred != 3 && size > 1 // predictor 3 leaves rows little-endian
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		swap = !swap && size > 1 // a big-endian machine
	}
	fill := make([]byte, size)
	v := f.fillValue()
	switch t {
	case compute.U8:
		if v == math.Trunc(v) && v >= 0 && v <= math.MaxUint8 {
			fill[0] = uint8(v)
		}
	case compute.U16:
		if v == math.Trunc(v) && v >= 0 && v <= math.MaxUint16 {
			binary.NativeEndian.PutUint16(fill, uint16(v))
		}
	case compute.I16:
		if v == math.Trunc(v) && v >= math.MinInt16 && v <= math.MaxInt16 {
			binary.NativeEndian.PutUint16(fill, uint16(int16(v)))
		}
	case compute.U32:
		if v == math.Trunc(v) && v >= 0 && v <= math.MaxUint32 {
			binary.NativeEndian.PutUint32(fill, uint32(v))
		}
	case compute.I32:
		if v == math.Trunc(v) && v >= math.MinInt32 && v <= math.MaxInt32 {
			binary.NativeEndian.PutUint32(fill, uint32(int32(v)))
		}
	}
	return target{buf: buf, osz: size, stride: f.width, fill: fill, conv: copyConv(size, swap)}
}

// copyConv copies samples of size bytes, gathering them from pixels of
// stride bytes and reversing their bytes when swap is set.
func copyConv(size int, swap bool) rowConv {
	switch {
	case !swap:
		return func(dst, src []byte, stride int) {
			if stride == size {
				copy(dst, src[:len(dst)])
				return
			}
			for i, o := 0, 0; o < len(dst); i, o = i+stride, o+size {
				copy(dst[o:o+size], src[i:i+size])
			}
		}
	case size == 2:
		return func(dst, src []byte, stride int) {
			for i, o := 0, 0; o < len(dst); i, o = i+stride, o+2 {
				dst[o], dst[o+1] = src[i+1], src[i]
			}
		}
	default:
		return func(dst, src []byte, stride int) {
			for i, o := 0, 0; o < len(dst); i, o = i+stride, o+4 {
				dst[o], dst[o+1], dst[o+2], dst[o+3] = src[i+3], src[i+2], src[i+1], src[i]
			}
		}
	}
}

// targets groups the outputs of bands by the plane of chunks they come
// from: one list per plane (planar files) or a single list (chunky files,
// each target at its sample's offset within the pixel).
func (f *File) targets(bands []int, mk func(i int) target) [][]target {
	if f.planar {
		tl := make([][]target, f.spp)
		for i, b := range bands {
			tl[b-1] = append(tl[b-1], mk(i))
		}
		return tl
	}
	tl := make([][]target, 1)
	for i, b := range bands {
		t := mk(i)
		t.offset = (b - 1) * f.typ.Size()
		tl[0] = append(tl[0], t)
	}
	return tl
}

// planeOf is the plane chunk ci belongs to (0 in a chunky file).
func (f *File) planeOf(ci int) int {
	if f.planar {
		return ci / (f.across * f.down)
	}
	return 0
}

// windowJobs are the chunks a window needs, in file order, and where each
// group of chunks with the very same bytes starts.
type windowJobs struct {
	ord, starts []int32
}

// windowWork lists the chunks of window wn that have targets, grouped
// by their bytes in file order, and the decoding work they cost: each
// group once, down to the deepest row of the window any of its chunks
// reaches.
func (f *File) windowWork(tl [][]target, wn window) (uint64, windowJobs) {
	y0, y1 := wn.y0, wn.y1
	var chunks []int32
	if y0 == 0 && y1 == f.height && wn.x0 == 0 && wn.x1 == f.width {
		chunks = f.byPlace // already in file order
	} else {
		perPlane := f.across * f.down
		for p := range tl {
			if len(tl[p]) == 0 {
				continue
			}
			for r := y0 / f.ch; r <= (y1-1)/f.ch; r++ {
				for c := wn.x0 / f.cw; c <= (wn.x1-1)/f.cw; c++ {
					chunks = append(chunks, int32(p*perPlane+r*f.across+c))
				}
			}
		}
		slices.SortFunc(chunks, func(a, b int32) int {
			sa, sb := f.counts[a] == 0, f.counts[b] == 0
			switch {
			case sa != sb:
				if sa {
					return 1
				}
				return -1
			case f.offsets[a] != f.offsets[b]:
				return cmp.Compare(f.offsets[a], f.offsets[b])
			case f.counts[a] != f.counts[b]:
				return cmp.Compare(f.counts[a], f.counts[b])
			}
			return cmp.Compare(a, b)
		})
	}
	var j windowJobs
	var work, deepest uint64
	for _, ci := range chunks {
		if len(tl[f.planeOf(int(ci))]) == 0 {
			continue
		}
		k := len(j.ord)
		if k == 0 || f.counts[ci] == 0 || f.offsets[ci] != f.offsets[j.ord[k-1]] || f.counts[ci] != f.counts[j.ord[k-1]] {
			j.starts = append(j.starts, int32(k))
			work += deepest
			deepest = 0
		}
		j.ord = append(j.ord, ci)
		if f.counts[ci] != 0 {
			_, cy0, _, vh := f.visible(int(ci))
			deepest = max(deepest, uint64(f.rowBytes)*uint64(min(vh, y1-cy0)))
		}
	}
	work += deepest
	j.starts = append(j.starts, int32(len(j.ord)))
	return work, j
}

// decodeWindow decodes rows [y0, y1) of the targets' bands within budget,
// counted from when the chunks' bytes are at hand (prefetch).
func (f *File) decodeWindow(tl [][]target, y0, y1 int, budget time.Duration) error {
	wn := window{0, y0, f.width, y1}
	_, jobs := f.windowWork(tl, wn)
	release, err := f.prefetch(jobs)
	if err != nil {
		return err
	}
	defer release()
	return f.decodeJobs(tl, jobs, wn, time.Now().Add(budget))
}

// A Prefetcher is a reader that can fetch byte ranges before they are
// read, such as a file read over HTTP (compute/remote): a read that
// implements it is told every range of stored strip or tile bytes a
// window needs, in file order (each range an offset and a length), before
// any is decoded, so that it can fetch them together, merging neighbours
// into one request. release is called when the window is decoded; the
// ranges are then no longer needed. An error fails the read with it. The
// time Prefetch takes is not part of the decoding time budget.
type Prefetcher interface {
	Prefetch(ranges [][2]int64) (release func(), err error)
}

// prefetch hands the window's chunk ranges to a Prefetcher reader.
func (f *File) prefetch(wj windowJobs) (func(), error) {
	p, ok := f.r.(Prefetcher)
	if !ok || len(wj.starts) < 2 {
		return func() {}, nil
	}
	ranges := make([][2]int64, 0, len(wj.starts)-1)
	for j := 0; j+1 < len(wj.starts); j++ {
		ci := wj.ord[wj.starts[j]]
		if f.counts[ci] == 0 {
			continue
		}
		ranges = append(ranges, [2]int64{int64(f.offsets[ci]), int64(f.counts[ci])})
	}
	release, err := p.Prefetch(ranges)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", f.name, capped{err})
	}
	if release == nil {
		release = func() {}
	}
	return release, nil
}

// decodeJobs decodes the window's chunk groups on as many workers as the
// memory budget allows. Each group is decoded once (twice or three times
// when only edge tiles share it) and copied to its other places. Workers
// decode chunks row by row straight into the targets, so a worker's memory
// is a few rows whatever the chunk size; rows below the window are never
// decoded, rows above it only when the window cuts a chunk.
func (f *File) decodeJobs(tl [][]target, wj windowJobs, wn window, deadline time.Time) error {
	y0, y1 := wn.y0, wn.y1
	jobs := len(wj.starts) - 1
	if jobs <= 0 {
		return nil
	}
	cfg := f.workerConfig()
	workers := max(1, min(par.DefaultThreads(), jobs, int(workBudget/cfg.memory)))
	var (
		failed atomic.Bool
		errMu  sync.Mutex
		first  error
		firstI = -1
	)
	fail := func(i int, err error) {
		errMu.Lock()
		if first == nil || i < firstI {
			first, firstI = err, i
		}
		errMu.Unlock()
		failed.Store(true)
	}
	// span is the part of chunk ci the window shows: image columns
	// [x0, x0+vw), which are the chunk's columns from sx, and the chunk's
	// rows [r0, r1), its top at image row cy0.
	type span struct{ x0, sx, cy0, vw, r0, r1, plane int }
	spanOf := func(ci int) span {
		cx0, cy0, vw, vh := f.visible(ci)
		x0, x1 := max(cx0, wn.x0), min(cx0+vw, wn.x1)
		return span{x0, x0 - cx0, cy0, x1 - x0, max(0, y0-cy0), min(vh, y1-cy0), f.planeOf(ci)}
	}
	// Each worker keeps its decoder (taken on its first group) and the
	// spans it decoded; a group is decoded whole by one worker.
	ws := make([]*worker, workers)
	repsOf := make([][]span, workers)
	par.WorkerBlocksN(workers, jobs, 1, func(wk, j, _ int) {
		if failed.Load() {
			return
		}
		w := ws[wk]
		if w == nil {
			var err error
			if w, err = f.takeWorker(cfg, deadline, &failed); err != nil {
				fail(0, fmt.Errorf("read %s: %w", f.name, err))
				return
			}
			ws[wk] = w
		}
		reps := repsOf[wk]
		defer func() { repsOf[wk] = reps }()
		group := wj.ord[wj.starts[j]:wj.starts[j+1]]
		if f.counts[group[0]] == 0 {
			s := spanOf(int(group[0]))
			for _, t := range tl[s.plane] {
				for r := s.r0; r < s.r1; r++ {
					row := t.buf[((s.cy0+r-y0)*t.stride+s.x0-t.wx)*t.osz:][:s.vw*t.osz]
					for k := 0; k < len(row); k += t.osz {
						copy(row[k:], t.fill)
					}
				}
			}
			return
		}
		// Largest visible part first: the others are then mostly
		// its top-left corner, copied instead of decoded.
		if len(group) > 1 {
			group = slices.Clone(group)
			slices.SortFunc(group, func(a, b int32) int {
				sa, sb := spanOf(int(a)), spanOf(int(b))
				return cmp.Compare(sb.vw*(sb.r1-sb.r0), sa.vw*(sa.r1-sa.r0))
			})
		}
		reps = reps[:0]
		for _, c32 := range group {
			ci := int(c32)
			s := spanOf(ci)
			copied := false
			for _, r := range reps {
				if r.sx <= s.sx && r.sx+r.vw >= s.sx+s.vw && r.r0 <= s.r0 && r.r1 >= s.r1 {
					for _, t := range tl[s.plane] {
						src := t.buf
						if f.planar {
							src = tl[r.plane][0].buf
						}
						n := s.vw * t.osz
						rx := r.x0 + s.sx - r.sx
						for k := s.r0; k < s.r1; k++ {
							copy(t.buf[((s.cy0+k-y0)*t.stride+s.x0-t.wx)*t.osz:][:n], src[((r.cy0+k-y0)*t.stride+rx-t.wx)*t.osz:][:n])
						}
					}
					copied = true
					break
				}
			}
			if copied {
				continue
			}
			if err := w.chunk(ci, tl[s.plane], s.x0, s.sx, s.cy0-y0, s.vw, s.r0, s.r1); err != nil {
				if err != errStopped {
					fail(ci, fmt.Errorf("read %s: %w", f.name, capped{f.chunkError(ci, s.r1, err)}))
				}
				return
			}
			reps = append(reps, s)
		}
	})
	for _, w := range ws {
		if w != nil {
			f.giveWorker(w)
		}
	}
	return first
}

// takeWorker returns a decoding worker for one read: one the File kept
// from an earlier read (its buffers and decompressors reused, so that
// reading a large image window by window allocates once), or a new one.
func (f *File) takeWorker(cfg workerConfig, deadline time.Time, failed *atomic.Bool) (*worker, error) {
	f.idleMu.Lock()
	if n := len(f.idle); n > 0 {
		w := f.idle[n-1]
		f.idle = f.idle[:n-1]
		f.idleMu.Unlock()
		w.deadline, w.failed = deadline, failed
		return w, nil
	}
	f.idleMu.Unlock()
	return f.newWorker(cfg, deadline, failed)
}

// giveWorker keeps a worker for the next read (as many as run at once).
func (f *File) giveWorker(w *worker) {
	f.idleMu.Lock()
	defer f.idleMu.Unlock()
	if len(f.idle) < par.DefaultThreads() {
		w.failed = nil
		f.idle = append(f.idle, w)
		return
	}
	w.close()
}

// closeWorkers frees the kept workers.
func (f *File) closeWorkers() {
	f.idleMu.Lock()
	defer f.idleMu.Unlock()
	for _, w := range f.idle {
		w.close()
	}
	f.idle = nil
}
