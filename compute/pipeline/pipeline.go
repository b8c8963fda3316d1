// Package pipeline runs the index engine over an image block by block:
// decode, compute and encode overlapped, with bounded memory.
//
// An image is cut into blocks: bands of rows as wide as the image, aligned
// to the inputs' strips or tiles (a block's height is a multiple of every
// input's strip or tile height where that stays reasonable), so that each
// strip or tile is decoded once. Three stages, each on its own goroutine
// and connected by channels, work on different blocks at the same time:
//
//	decode:  the readers fill the block's band planes at their stored type
//	compute: a Job over the block (compute.PlanJob on the block's planes
//	         and its slice of the mask) runs on the backend; with Verify,
//	         compute.VerifyJob checks the block against the float64 truth
//	         (a stage of its own)
//	encode:  every sink receives the block's output rows, in order, each
//	         sink on its own goroutine
//
// At most InFlight blocks exist at once, recycled from a pool, so memory is
// InFlight × (the block's band planes + its output planes) whatever the
// image size. The results equal the whole-image run's bit for bit: every
// backend computes each pixel from that pixel's samples alone.
package pipeline

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"canopy/compute"
	"canopy/compute/index"
)

// Reader delivers rows of one or more bands at their stored type.
type Reader interface {
	// BlockRows is the height of the reader's strips or tiles: windows
	// whose edges are multiples of it read fastest (1 when any is fine).
	BlockRows() int
	// ReadRows fills dst[k], a Width×(y1-y0) plane of band k's type, with
	// rows [y0, y1) of the reader's band k.
	ReadRows(y0, y1 int, dst []compute.Plane) error
}

// Band is one input band: its role, stored type, radiometry, nodata and
// source as the engine's compute.BandInput has them (Plane.Type is the
// type, Plane.Data is unused), and where its rows come from: band Index of
// Reader. The bands of one Reader have the indices 0 to n-1.
type Band struct {
	compute.BandInput
	Reader Reader
	Index  int
}

// Input is an image to run over: Width×Height pixels, its bands, and an
// optional whole-image mask (nil, or Width*Height bytes; non-zero masks a
// pixel).
type Input struct {
	Width, Height int
	Bands         []Band
	Mask          []uint8
	// MaskRows, when set (and Mask nil), makes each block's mask as it is
	// decoded: mask is rows [y0, y1) of it (zeroed, Width bytes a row),
	// bands the block's bands as decoded (in.Bands' order). It is called
	// on the decode goroutine, block after block, so an image's mask never
	// has to be held whole.
	MaskRows func(y0, y1 int, bands []compute.BandInput, mask []uint8) error
}

// Memory is an input whose bands are already in memory: each band's rows
// are copied from its plane.
func Memory(bands []compute.BandInput, mask []uint8) (*Input, error) {
	if len(bands) == 0 {
		return nil, errors.New("no band given")
	}
	in := &Input{Width: bands[0].Plane.Width, Height: bands[0].Plane.Height, Mask: mask}
	for _, b := range bands {
		if err := b.Plane.Check(); err != nil {
			return nil, fmt.Errorf("%s band %s: %w", b.Role, b.Source, err)
		}
		in.Bands = append(in.Bands, Band{BandInput: b, Reader: &memReader{b.Plane}})
	}
	return in, nil
}

// memReader reads rows of a plane in memory.
type memReader struct{ p compute.Plane }

func (m *memReader) BlockRows() int { return 1 }

func (m *memReader) ReadRows(y0, y1 int, dst []compute.Plane) error {
	row := m.p.Width * m.p.Type.Size()
	copy(dst[0].Data, m.p.Data[y0*row:y1*row])
	return nil
}

// Block is rows [Y0, Y0+Rows) of the image as a sink receives them: the
// bands as decoded, the block's slice of the mask (nil when there is
// none), and one Width×Rows plane per index. A sink must not keep the
// slices past its Write call: the block's memory is reused.
type Block struct {
	Index, Y0, Rows, Width int
	Bands                  []compute.BandInput
	Mask                   []uint8
	Out                    [][]float32
}

// Sink receives the blocks of a run in order, from one goroutine.
type Sink interface {
	Write(b *Block) error
}

// SinkFunc is a function as a Sink.
type SinkFunc func(b *Block) error

// Write calls f.
func (f SinkFunc) Write(b *Block) error { return f(b) }

// Options are a run's settings.
type Options struct {
	// Backend runs every block's job (compute.RunJob); Mode is its mode
	// for the run ("" for the default).
	Backend compute.Backend
	Mode    string
	// Names and Exprs are the indices (compute.PlanJob's arguments). With
	// none, the blocks go from the readers to the sinks as they are (Out
	// is empty): a pipeline that only copies or converts.
	Names []string
	Exprs []*index.Expr
	// Verify checks every block against the float64 truth
	// (compute.VerifyJob) and aggregates the reports.
	Verify bool
	// InFlight is the most blocks that exist at once (0: 4, or 3 when a
	// block takes more than 48 MiB).
	InFlight int
	// BlockRows is the block height (0: BlockRowsFor the input).
	BlockRows int
	// StreamDepth is how many blocks a backend that streams jobs
	// (compute.JobStreamer: the cuda and gl backends) has in flight at
	// once, so that block k+1 uploads while k computes and k-1 downloads:
	// 0 for the backend's StreamDepthHint or else DefaultStreamDepth, 1
	// for one job per block, each waited for.
	StreamDepth int
	// DecodeOnly runs the decode stage alone (no job, no sinks): the
	// reading throughput the other stages should hide behind.
	DecodeOnly bool
}

// Result is what a run did.
type Result struct {
	Width, Height, Blocks, BlockRows int
	// Timings are the backend's phases summed over the blocks.
	Timings compute.Timings
	// Reports has one entry per index when Verify was set: the blocks'
	// reports aggregated (Worst is a pixel of the whole image).
	Reports []compute.Report
	// Decode, Compute, Verify and Encode are how long each stage was
	// busy (Encode: the busiest sink); Wall is the whole run.
	Decode, Compute, Verify, Encode, Wall time.Duration
	// Bytes is the memory the blocks in flight take.
	Bytes int64
}

// DefaultStreamDepth is the blocks in flight on a backend that streams
// jobs: one uploading, one computing, one downloading and one more being
// queued (BenchmarkStreamedBlocks on an H200: 10980² NDVI over uint16 at
// 0.65, 0.69 and 0.77 of the whole image's overlapped job with 2, 3 and 4
// blocks of a million pixels in flight).
const DefaultStreamDepth = 4

// streamBlockPixels is the least a block holds on a streaming backend:
// each block costs the stream some microseconds of the host's time (its
// copies and launch queued, its events read), so its blocks are four
// times the others'.
const streamBlockPixels = 4 << 20

// Block sizing: at least minBlockPixels per block (fewer blocks, less
// overhead per block), at most maxBlockBytes of bands and outputs per block
// when the inputs' chunks allow, and a common multiple of the inputs'
// chunk heights only up to maxLCMRows.
const (
	largeBlock     = 48 << 20
	minBlockPixels = 1 << 20
	maxBlockBytes  = 64 << 20
	maxLCMRows     = 1024
)

// BlockRowsFor picks the block height for an input with the given number
// of outputs: a multiple of every reader's BlockRows when their least
// common multiple is at most 1024 rows (else of the tallest), grown to at
// least a million pixels while a block's bands and outputs stay within
// 64 MiB.
func BlockRowsFor(in *Input, outputs int) int {
	return blockRows(in, outputs, minBlockPixels)
}

// blockRows is BlockRowsFor with at least minPixels a block.
func blockRows(in *Input, outputs, minPixels int) int {
	unit, tallest := 1, 1
	for _, b := range in.Bands {
		r := max(1, b.Reader.BlockRows())
		tallest = max(tallest, r)
		if unit > 0 {
			if unit = lcm(unit, r); unit > maxLCMRows {
				unit = 0
			}
		}
	}
	if unit == 0 {
		unit = tallest
	}
	unit = min(unit, in.Height)
	rowBytes := int64(in.Width) * int64(4*outputs)
	for _, b := range in.Bands {
		rowBytes += int64(in.Width) * int64(b.Plane.Type.Size())
	}
	rows := unit
	for rows*in.Width < minPixels && rows < in.Height && int64(rows+unit)*rowBytes <= maxBlockBytes {
		rows += unit
	}
	return min(rows, in.Height)
}

func lcm(a, b int) int {
	x, y := a, b
	for y != 0 {
		x, y = y, x%y
	}
	return a / x * b
}

// block is one block's memory and its state in the run.
type block struct {
	Block
	planes []compute.Plane // full-height planes, one per band
	out    [][]float32     // full-height outputs
	mask   []uint8         // the block's mask (MaskRows)
	job    *compute.Job
	left   sync.WaitGroup // sinks still writing it
}

// Run runs the indices over in block by block and hands every block to
// the sinks, in order. It returns when every block has passed every sink,
// or at the first error (a read, the backend, a sink), which it returns
// with the block's rows named. Sinks that need finishing (a file's
// layout) are finished by the caller after Run.
func Run(in *Input, opt Options, sinks ...Sink) (*Result, error) {
	t0 := time.Now()
	if in == nil || in.Width <= 0 || in.Height <= 0 {
		return nil, errors.New("pipeline: empty input")
	}
	for _, b := range in.Bands {
		if b.Plane.Type.Size() == 0 {
			return nil, fmt.Errorf("%s band %s: unknown sample type", b.Role, b.Source)
		}
	}
	if in.Mask != nil && len(in.Mask) != in.Width*in.Height {
		return nil, fmt.Errorf("mask holds %d pixels, image has %d", len(in.Mask), in.Width*in.Height)
	}
	outputs := len(opt.Exprs)
	if opt.DecodeOnly {
		outputs, sinks = 0, nil
	}
	streamer, streams := opt.Backend.(compute.JobStreamer)
	streams = streams && !opt.DecodeOnly && outputs > 0 && opt.StreamDepth != 1
	rows := opt.BlockRows
	if rows <= 0 {
		rows = BlockRowsFor(in, outputs)
		if streams {
			rows = blockRows(in, outputs, streamBlockPixels)
		}
	}
	rows = min(rows, in.Height)
	k := opt.InFlight
	if k <= 0 {
		// One block per stage and one to spare; three (decode, compute,
		// sinks) when blocks are large, for memory.
		k = 4
		bytes := int64(in.Width) * int64(rows) * int64(4*outputs)
		for _, b := range in.Bands {
			bytes += int64(in.Width) * int64(rows) * int64(b.Plane.Type.Size())
		}
		if bytes > largeBlock {
			k = 3
		}
	}
	depth := 1
	if streams {
		depth = opt.StreamDepth
		if depth <= 0 {
			depth = DefaultStreamDepth
			if h, ok := opt.Backend.(compute.StreamDepthHinter); ok && h.StreamDepthHint() > 1 {
				depth = h.StreamDepthHint()
			}
		}
	}
	if opt.InFlight <= 0 {
		k += depth - 1 // the blocks the stream holds besides the one computing
	}
	nBlocks := (in.Height + rows - 1) / rows
	// The stream may hold every block when it sees them all; otherwise one
	// must stay free for the decoder or the run would wait on itself.
	if k >= nBlocks {
		k = nBlocks
		depth = min(depth, k)
	} else {
		depth = min(depth, max(1, k-1))
	}
	res := &Result{Width: in.Width, Height: in.Height, Blocks: nBlocks, BlockRows: rows}

	// The pool: a streaming backend's blocks come from the last run of the
	// same shape when there was one (their memory is page-locked already).
	free := make(chan *block, k)
	var first *block
	key := poolKey{width: in.Width, rows: rows, outputs: outputs, mask: in.Mask == nil && in.MaskRows != nil}
	for _, band := range in.Bands {
		key.types = append(key.types, band.Plane.Type)
	}
	var reused []*block
	if streams {
		reused = blockCache.take(key, k)
	}
	for i := range k {
		var b *block
		if i < len(reused) {
			b = reused[i]
		} else {
			b = &block{}
			for _, band := range in.Bands {
				b.planes = append(b.planes, compute.NewPlane(band.Plane.Type, in.Width, rows))
			}
			for range outputs {
				b.out = append(b.out, make([]float32, in.Width*rows))
			}
			if key.mask {
				b.mask = make([]uint8, in.Width*rows)
			}
		}
		for _, band := range in.Bands {
			res.Bytes += int64(in.Width) * int64(rows) * int64(band.Plane.Type.Size())
		}
		res.Bytes += int64(outputs) * int64(in.Width) * int64(rows) * 4
		if key.mask {
			res.Bytes += int64(in.Width) * int64(rows)
		}
		if first == nil {
			first = b
		}
		free <- b
	}

	// The job of a first block's size fixes the program and the bands'
	// order; every block's job swaps in its planes.
	var tmpl *compute.Job
	if !opt.DecodeOnly && outputs > 0 {
		probe := make([]compute.BandInput, len(in.Bands))
		for i, b := range in.Bands {
			probe[i] = b.BandInput
			probe[i].Plane = first.planes[i]
		}
		var mask []uint8
		if in.Mask != nil {
			mask = in.Mask[:in.Width*rows]
		} else if first.mask != nil {
			mask = first.mask
		}
		var err error
		if tmpl, err = compute.PlanJob(probe, mask, opt.Names, opt.Exprs); err != nil {
			return nil, err
		}
		tmpl.Mode = opt.Mode
	}

	var (
		done    = make(chan struct{})
		errOnce sync.Once
		runErr  error
		mu      sync.Mutex
	)
	fail := func(err error) {
		errOnce.Do(func() {
			runErr = err
			close(done)
		})
	}
	release := func(b *block) { free <- b }
	rowsOf := func(b *block) string {
		return fmt.Sprintf("rows %d to %d", b.Y0, b.Y0+b.Rows)
	}

	// Readers, each read once per block for all its bands.
	type readerBands struct {
		r     Reader
		bands []int // indices into in.Bands, in the reader's order
	}
	var readers []readerBands
	for i, b := range in.Bands {
		found := false
		for ri := range readers {
			if readers[ri].r == b.Reader {
				readers[ri].bands = append(readers[ri].bands, i)
				found = true
				break
			}
		}
		if !found {
			readers = append(readers, readerBands{b.Reader, []int{i}})
		}
	}

	toCompute := make(chan *block, k)
	toVerify := make(chan *block, k)
	toSinks := make([]chan *block, len(sinks))
	for i := range toSinks {
		toSinks[i] = make(chan *block, k)
	}
	var wg sync.WaitGroup

	// Decode.
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(toCompute)
		var busy time.Duration
		defer func() { mu.Lock(); res.Decode = busy; mu.Unlock() }()
		for bi := range nBlocks {
			var b *block
			select {
			case b = <-free:
			case <-done:
				return
			}
			t := time.Now()
			b.Index, b.Y0, b.Rows, b.Width = bi, bi*rows, min(rows, in.Height-bi*rows), in.Width
			b.Bands = b.Bands[:0]
			for i, band := range in.Bands {
				bi := band.BandInput
				bi.Plane = b.planes[i]
				bi.Plane.Height = b.Rows
				bi.Plane.Data = bi.Plane.Data[:b.Rows*in.Width*bi.Plane.Type.Size()]
				b.Bands = append(b.Bands, bi)
			}
			b.Mask = nil
			if in.Mask != nil {
				b.Mask = in.Mask[b.Y0*in.Width : (b.Y0+b.Rows)*in.Width]
			}
			b.Out = b.Out[:0]
			for _, o := range b.out {
				b.Out = append(b.Out, o[:b.Rows*in.Width])
			}
			for _, rb := range readers {
				dst := make([]compute.Plane, len(rb.bands))
				for _, i := range rb.bands {
					dst[in.Bands[i].Index] = b.Bands[i].Plane
				}
				if err := rb.r.ReadRows(b.Y0, b.Y0+b.Rows, dst); err != nil {
					fail(err)
					return
				}
			}
			if b.mask != nil {
				b.Mask = b.mask[:b.Rows*in.Width]
				clear(b.Mask)
				if err := in.MaskRows(b.Y0, b.Y0+b.Rows, b.Bands, b.Mask); err != nil {
					fail(fmt.Errorf("%s: mask: %w", rowsOf(b), err))
					return
				}
			}
			busy += time.Since(t)
			select {
			case toCompute <- b:
			case <-done:
				return
			}
		}
	}()

	// Compute: one job per block, waited for, or up to depth blocks in
	// flight on a streaming backend (handed on in order as each is done).
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(toVerify)
		var busy time.Duration
		var tm compute.Timings
		defer func() { mu.Lock(); res.Compute, res.Timings = busy, tm; mu.Unlock() }()
		pass := func(b *block) bool {
			select {
			case toVerify <- b:
				return true
			case <-done:
				return false
			}
		}
		var js compute.JobStream
		var queued []*block
		defer func() {
			if js != nil {
				if err := js.Close(); err != nil {
					fail(err)
				}
			}
		}()
		for b := range toCompute {
			if opt.DecodeOnly || runErrSet(done) {
				release(b)
				continue
			}
			if tmpl == nil { // no job: the bands go to the sinks
				if !pass(b) {
					return
				}
				continue
			}
			t := time.Now()
			j := blockJob(tmpl, in, &b.Block)
			b.job = j
			if depth <= 1 {
				bt, err := compute.RunJob(opt.Backend, j)
				if err != nil {
					fail(fmt.Errorf("%s: %w", rowsOf(b), err))
					return
				}
				tm.Add(bt)
				busy += time.Since(t)
				if !pass(b) {
					return
				}
				continue
			}
			if js == nil {
				var err error
				if js, err = streamer.StreamJobs(depth); err != nil {
					fail(fmt.Errorf("%s: %s: %w", rowsOf(b), opt.Backend.Name(), err))
					return
				}
			}
			if len(queued) == depth {
				bt, err := js.Wait()
				if err != nil {
					fail(fmt.Errorf("%s: %s: %w", rowsOf(queued[0]), opt.Backend.Name(), err))
					return
				}
				tm.Add(bt)
				if !pass(queued[0]) {
					return
				}
				queued = queued[1:]
			}
			if err := js.Submit(j); err != nil {
				fail(fmt.Errorf("%s: %s: %w", rowsOf(b), opt.Backend.Name(), err))
				return
			}
			queued = append(queued, b)
			busy += time.Since(t)
		}
		for len(queued) > 0 && !runErrSet(done) {
			t := time.Now()
			bt, err := js.Wait()
			if err != nil {
				fail(fmt.Errorf("%s: %s: %w", rowsOf(queued[0]), opt.Backend.Name(), err))
				return
			}
			tm.Add(bt)
			busy += time.Since(t)
			if !pass(queued[0]) {
				return
			}
			queued = queued[1:]
		}
	}()

	// Verify, then hand the block to every sink.
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer func() {
			for _, c := range toSinks {
				close(c)
			}
		}()
		var busy time.Duration
		var reps []compute.Report
		defer func() { mu.Lock(); res.Verify, res.Reports = busy, reps; mu.Unlock() }()
		for b := range toVerify {
			if opt.Verify && b.job != nil {
				t := time.Now()
				rs := compute.VerifyJob(b.job)
				if reps == nil {
					reps = make([]compute.Report, len(rs))
					for i := range reps {
						reps[i] = compute.Report{Worst: -1}
					}
				}
				for i, r := range rs {
					reps[i] = merge(reps[i], r, b.Y0*in.Width)
				}
				busy += time.Since(t)
			}
			b.job = nil
			if len(sinks) == 0 {
				release(b)
				continue
			}
			b.left.Add(len(sinks))
			go func(b *block) { b.left.Wait(); release(b) }(b)
			for si, c := range toSinks {
				select {
				case c <- b:
				case <-done:
					for range toSinks[si:] {
						b.left.Done()
					}
					return
				}
			}
		}
	}()

	// Sinks.
	busySinks := make([]time.Duration, len(sinks))
	for si, s := range sinks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range toSinks[si] {
				if runErrSet(done) {
					b.left.Done()
					continue
				}
				t := time.Now()
				if err := s.Write(&b.Block); err != nil {
					fail(fmt.Errorf("%s: %w", rowsOf(b), err))
				}
				busySinks[si] += time.Since(t)
				b.left.Done()
			}
		}()
	}
	wg.Wait()
	if runErr != nil {
		return nil, runErr
	}
	if streams {
		// Every block comes back to the pool once its sinks are done.
		pool := make([]*block, 0, k)
		for range k {
			pool = append(pool, <-free)
		}
		blockCache.put(key, pool)
	}
	for _, d := range busySinks {
		res.Encode = max(res.Encode, d)
	}
	res.Wall = time.Since(t0)
	return res, nil
}

// poolKey is the shape of a run's blocks.
type poolKey struct {
	width, rows, outputs int
	mask                 bool
	types                []compute.DataType
}

func (a poolKey) same(b poolKey) bool {
	return a.width == b.width && a.rows == b.rows && a.outputs == b.outputs && a.mask == b.mask && slices.Equal(a.types, b.types)
}

// blockCache keeps the blocks of the last run on a streaming backend, so
// that the next run of the same shape (the next scene of a batch, the
// next index over the same image) reuses memory the backend page-locked
// once instead of allocating and locking it again. It holds one run's
// pool at most.
var blockCache blockPool

type blockPool struct {
	mu     sync.Mutex
	key    poolKey
	blocks []*block
}

// take returns up to k cached blocks of shape key, which the cache gives
// up; none when it holds another shape.
func (c *blockPool) take(key poolKey, k int) []*block {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.key.same(key) {
		return nil
	}
	n := min(k, len(c.blocks))
	got := c.blocks[len(c.blocks)-n:]
	c.blocks = c.blocks[:len(c.blocks)-n]
	return got
}

// put keeps a run's blocks in place of whatever the cache held.
func (c *blockPool) put(key poolKey, blocks []*block) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, b := range blocks {
		b.Block = Block{}
		b.job = nil
	}
	c.key, c.blocks = key, blocks
}

// runErrSet reports whether the run has failed.
func runErrSet(done chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}

// blockJob is the template's job over block b: the same program, the
// block's planes for the bands the program reads, its mask and outputs.
func blockJob(tmpl *compute.Job, in *Input, b *Block) *compute.Job {
	j := *tmpl
	j.Height = b.Rows
	j.Bands = make([]compute.BandInput, len(tmpl.Bands))
	for k, tb := range tmpl.Bands {
		for i := range in.Bands {
			if b.Bands[i].Role == tb.Role {
				j.Bands[k] = b.Bands[i]
				break
			}
		}
	}
	j.Mask = b.Mask
	j.Out = b.Out
	return &j
}

// merge adds block report r, whose first pixel is pixel base of the image,
// to the total t: Worst is the image's first bad pixel.
func merge(t, r compute.Report, base int) compute.Report {
	if t.NaNMismatch == 0 && t.Wrong == 0 && (r.NaNMismatch > 0 || r.Wrong > 0) {
		t.Worst = base + r.Worst
	}
	t.Pixels += r.Pixels
	t.MaxAbsErr = math.Max(t.MaxAbsErr, r.MaxAbsErr)
	t.NaNMismatch += r.NaNMismatch
	t.NaN += r.NaN
	t.Conditioned += r.Conditioned
	t.Wrong += r.Wrong
	t.Tol, t.Bounded = r.Tol, r.Bounded
	return t
}
