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
// backend computes each pixel from that pixel's samples alone. A run stops
// at the next block when its context is cancelled, and Options.Progress
// hears every block that has passed the sinks. The faces do not call Run
// themselves: compute/source's Run opens the road (a source's input, the
// job, verification) over it.
package pipeline

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
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
	// Progress, when set, hears of every block that has passed every
	// sink: done of total blocks. It is called from the run's goroutines,
	// one call at a time; it must return quickly.
	Progress func(done, total int)
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
// queued (BenchmarkStreamedBlocks; docs/BENCHMARKS.md has its runs at 2, 3
// and 4 blocks in flight).
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
	left   atomic.Int32 // sinks still to write it
}

// Run runs the indices over in block by block and hands every block to
// the sinks, in order. It returns when every block has passed every sink,
// or at the first error (a read, the backend, a sink), which it returns
// with the block's rows named. A cancelled ctx stops the run at the next
// block of every stage and Run returns ctx.Err(); a reader or a sink that
// is busy finishes its block first. Sinks that need finishing (a file's
// layout) are finished by the caller after Run.
//
// Run is four parts: the plan (the block height, the blocks in flight,
// the stream's depth: planRun), the pool of blocks (newPool), the job
// template every block's job copies (template), and the stages on their
// goroutines (decode, compute, verify, sink), connected by channels.
func Run(ctx context.Context, in *Input, opt Options, sinks ...Sink) (*Result, error) {
	t0 := time.Now()
	if err := checkInput(in); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	outputs := len(opt.Exprs)
	if opt.DecodeOnly {
		outputs, sinks = 0, nil
	}
	r := &run{in: in, opt: opt, sinks: sinks, plan: planRun(in, opt, outputs), done: make(chan struct{})}
	r.res = &Result{Width: in.Width, Height: in.Height, Blocks: r.plan.blocks, BlockRows: r.plan.rows}
	r.newPool()
	if err := r.template(); err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { r.fail(ctx.Err()) })
	r.stages()
	stop()
	if err := r.failed(); err != nil {
		return nil, err
	}
	r.keepPool()
	for _, d := range r.busySinks {
		r.res.Encode = max(r.res.Encode, d)
	}
	r.res.Wall = time.Since(t0)
	return r.res, nil
}

// checkInput refuses an input the stages cannot run over.
func checkInput(in *Input) error {
	if in == nil || in.Width <= 0 || in.Height <= 0 {
		return errors.New("pipeline: empty input")
	}
	for _, b := range in.Bands {
		if b.Plane.Type.Size() == 0 {
			return fmt.Errorf("%s band %s: unknown sample type", b.Role, b.Source)
		}
	}
	if in.Mask != nil && len(in.Mask) != in.Width*in.Height {
		return fmt.Errorf("mask holds %d pixels, image has %d", len(in.Mask), in.Width*in.Height)
	}
	return nil
}

// runPlan is the shape of a run: the block height and count, the blocks
// in flight, the number of outputs, and the stream's depth (1: one job per
// block, each waited for).
type runPlan struct {
	rows, blocks, inFlight, outputs, depth int
	streamer                               compute.JobStreamer
	streams                                bool
}

// planRun sizes the blocks and the blocks in flight for in and opt.
func planRun(in *Input, opt Options, outputs int) runPlan {
	p := runPlan{outputs: outputs, depth: 1}
	p.streamer, p.streams = opt.Backend.(compute.JobStreamer)
	p.streams = p.streams && !opt.DecodeOnly && outputs > 0 && opt.StreamDepth != 1
	rows := opt.BlockRows
	if rows <= 0 {
		rows = BlockRowsFor(in, outputs)
		if p.streams {
			rows = blockRows(in, outputs, streamBlockPixels)
		}
	}
	p.rows = min(rows, in.Height)
	k := opt.InFlight
	if k <= 0 {
		// One block per stage and one to spare; three (decode, compute,
		// sinks) when blocks are large, for memory.
		k = 4
		if blockBytes(in, p.rows, outputs) > largeBlock {
			k = 3
		}
	}
	if p.streams {
		p.depth = opt.StreamDepth
		if p.depth <= 0 {
			p.depth = DefaultStreamDepth
			if h, ok := opt.Backend.(compute.StreamDepthHinter); ok && h.StreamDepthHint() > 1 {
				p.depth = h.StreamDepthHint()
			}
		}
	}
	if opt.InFlight <= 0 {
		k += p.depth - 1 // the blocks the stream holds besides the one computing
	}
	p.blocks = (in.Height + p.rows - 1) / p.rows
	// The stream may hold every block when it sees them all; otherwise one
	// must stay free for the decoder or the run would wait on itself.
	if k >= p.blocks {
		k = p.blocks
		p.depth = min(p.depth, k)
	} else {
		p.depth = min(p.depth, max(1, k-1))
	}
	p.inFlight = k
	return p
}

// blockBytes is the memory of one block of rows rows: its band planes and
// its outputs.
func blockBytes(in *Input, rows, outputs int) int64 {
	bytes := int64(in.Width) * int64(rows) * int64(4*outputs)
	for _, b := range in.Bands {
		bytes += int64(in.Width) * int64(rows) * int64(b.Plane.Type.Size())
	}
	return bytes
}

// run is one Run's state, shared by its stages.
type run struct {
	in    *Input
	opt   Options
	plan  runPlan
	sinks []Sink
	res   *Result

	free  chan *block // the pool
	first *block
	key   poolKey
	tmpl  *compute.Job // nil: no job, the bands go to the sinks

	mu      sync.Mutex // res's stage fields, runErr, passed
	runErr  error
	done    chan struct{} // closed at the first error
	passed  int           // blocks through every sink (Progress)
	readers []readerBands

	toCompute, toVerify chan *block
	toSinks             []chan *block
	busySinks           []time.Duration
}

// readerBands are the bands one Reader gives, read once per block.
type readerBands struct {
	r     Reader
	bands []int // indices into in.Bands, in the reader's order
}

// fail stops the run with err (the first error wins).
func (r *run) fail(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.runErr == nil {
		r.runErr = err
		close(r.done)
	}
}

// failed is the run's error, nil while it goes on.
func (r *run) failed() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.runErr
}

// stopped reports whether the run has failed, without waiting.
func (r *run) stopped() bool { return runErrSet(r.done) }

// release gives a block back to the pool.
func (r *run) release(b *block) { r.free <- b }

// through counts a block that went its whole way and reports progress.
func (r *run) through() {
	if r.opt.Progress == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.passed++
	r.opt.Progress(r.passed, r.plan.blocks)
}

func rowsOf(b *block) string {
	return fmt.Sprintf("rows %d to %d", b.Y0, b.Y0+b.Rows)
}

// newPool makes the run's blocks: a streaming backend's blocks come from
// the last run of the same shape when there was one (their memory is
// page-locked already).
func (r *run) newPool() {
	in, p := r.in, r.plan
	r.free = make(chan *block, p.inFlight)
	r.key = poolKey{width: in.Width, rows: p.rows, outputs: p.outputs, mask: in.Mask == nil && in.MaskRows != nil}
	for _, band := range in.Bands {
		r.key.types = append(r.key.types, band.Plane.Type)
	}
	var reused []*block
	if p.streams {
		reused = blockCache.take(r.key, p.inFlight)
	}
	for i := range p.inFlight {
		var b *block
		if i < len(reused) {
			b = reused[i]
		} else {
			b = &block{}
			for _, band := range in.Bands {
				b.planes = append(b.planes, compute.NewPlane(band.Plane.Type, in.Width, p.rows))
			}
			for range p.outputs {
				b.out = append(b.out, make([]float32, in.Width*p.rows))
			}
			if r.key.mask {
				b.mask = make([]uint8, in.Width*p.rows)
			}
		}
		r.res.Bytes += blockBytes(in, p.rows, p.outputs)
		if r.key.mask {
			r.res.Bytes += int64(in.Width) * int64(p.rows)
		}
		if r.first == nil {
			r.first = b
		}
		r.free <- b
	}
}

// keepPool hands a streaming run's blocks to the cache once every block is
// back from its sinks.
func (r *run) keepPool() {
	if !r.plan.streams {
		return
	}
	pool := make([]*block, 0, r.plan.inFlight)
	for range r.plan.inFlight {
		pool = append(pool, <-r.free)
	}
	blockCache.put(r.key, pool)
}

// template plans the job of a first block's size: it fixes the program
// and the bands' order; every block's job swaps in its planes.
func (r *run) template() error {
	in := r.in
	if r.opt.DecodeOnly || r.plan.outputs == 0 {
		return nil
	}
	probe := make([]compute.BandInput, len(in.Bands))
	for i, b := range in.Bands {
		probe[i] = b.BandInput
		probe[i].Plane = r.first.planes[i]
	}
	var mask []uint8
	if in.Mask != nil {
		mask = in.Mask[:in.Width*r.plan.rows]
	} else if r.first.mask != nil {
		mask = r.first.mask
	}
	tmpl, err := compute.PlanJob(probe, mask, r.opt.Names, r.opt.Exprs)
	if err != nil {
		return err
	}
	tmpl.Mode = r.opt.Mode
	r.tmpl = tmpl
	return nil
}

// stages runs decode, compute, verify and the sinks, each on its own
// goroutine, and waits for them all.
func (r *run) stages() {
	for i, b := range r.in.Bands {
		found := false
		for ri := range r.readers {
			if r.readers[ri].r == b.Reader {
				r.readers[ri].bands = append(r.readers[ri].bands, i)
				found = true
				break
			}
		}
		if !found {
			r.readers = append(r.readers, readerBands{b.Reader, []int{i}})
		}
	}
	k := r.plan.inFlight
	r.toCompute = make(chan *block, k)
	r.toVerify = make(chan *block, k)
	r.toSinks = make([]chan *block, len(r.sinks))
	for i := range r.toSinks {
		r.toSinks[i] = make(chan *block, k)
	}
	r.busySinks = make([]time.Duration, len(r.sinks))
	var wg sync.WaitGroup
	wg.Go(r.decode)
	wg.Go(r.compute)
	wg.Go(r.verify)
	for si := range r.sinks {
		wg.Go(func() { r.sink(si) })
	}
	wg.Wait()
}

// decode fills blocks from the readers, in order, and makes their masks.
func (r *run) decode() {
	defer close(r.toCompute)
	in, rows := r.in, r.plan.rows
	var busy time.Duration
	defer func() { r.mu.Lock(); r.res.Decode = busy; r.mu.Unlock() }()
	for bi := range r.plan.blocks {
		var b *block
		select {
		case b = <-r.free:
		case <-r.done:
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
		for _, rb := range r.readers {
			dst := make([]compute.Plane, len(rb.bands))
			for _, i := range rb.bands {
				dst[in.Bands[i].Index] = b.Bands[i].Plane
			}
			if err := rb.r.ReadRows(b.Y0, b.Y0+b.Rows, dst); err != nil {
				r.fail(err)
				return
			}
		}
		if b.mask != nil {
			b.Mask = b.mask[:b.Rows*in.Width]
			clear(b.Mask)
			if err := in.MaskRows(b.Y0, b.Y0+b.Rows, b.Bands, b.Mask); err != nil {
				r.fail(fmt.Errorf("%s: mask: %w", rowsOf(b), err))
				return
			}
		}
		busy += time.Since(t)
		select {
		case r.toCompute <- b:
		case <-r.done:
			return
		}
	}
}

// compute runs one job per block, waited for, or up to the plan's depth
// of blocks in flight on a streaming backend (handed on in order as each
// is done).
func (r *run) compute() {
	defer close(r.toVerify)
	var busy time.Duration
	var tm compute.Timings
	defer func() { r.mu.Lock(); r.res.Compute, r.res.Timings = busy, tm; r.mu.Unlock() }()
	be, depth := r.opt.Backend, r.plan.depth
	pass := func(b *block) bool {
		select {
		case r.toVerify <- b:
			return true
		case <-r.done:
			return false
		}
	}
	var js compute.JobStream
	var queued []*block
	defer func() {
		if js != nil {
			if err := js.Close(); err != nil {
				r.fail(err)
			}
		}
	}()
	for b := range r.toCompute {
		if r.opt.DecodeOnly || r.stopped() {
			if r.opt.DecodeOnly {
				r.through()
			}
			r.release(b)
			continue
		}
		if r.tmpl == nil { // no job: the bands go to the sinks
			if !pass(b) {
				return
			}
			continue
		}
		t := time.Now()
		j := blockJob(r.tmpl, r.in, &b.Block)
		b.job = j
		if depth <= 1 {
			bt, err := compute.RunJob(be, j)
			if err != nil {
				r.fail(fmt.Errorf("%s: %w", rowsOf(b), err))
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
			if js, err = r.plan.streamer.StreamJobs(depth); err != nil {
				r.fail(fmt.Errorf("%s: %s: %w", rowsOf(b), be.Name(), err))
				return
			}
		}
		if len(queued) == depth {
			bt, err := js.Wait()
			if err != nil {
				r.fail(fmt.Errorf("%s: %s: %w", rowsOf(queued[0]), be.Name(), err))
				return
			}
			tm.Add(bt)
			if !pass(queued[0]) {
				return
			}
			queued = queued[1:]
		}
		if err := js.Submit(j); err != nil {
			r.fail(fmt.Errorf("%s: %s: %w", rowsOf(b), be.Name(), err))
			return
		}
		queued = append(queued, b)
		busy += time.Since(t)
	}
	for len(queued) > 0 && !r.stopped() {
		t := time.Now()
		bt, err := js.Wait()
		if err != nil {
			r.fail(fmt.Errorf("%s: %s: %w", rowsOf(queued[0]), be.Name(), err))
			return
		}
		tm.Add(bt)
		busy += time.Since(t)
		if !pass(queued[0]) {
			return
		}
		queued = queued[1:]
	}
}

// verify checks each block against the float64 truth (with
// Options.Verify), then hands it to every sink; the block goes back to
// the pool when the last sink is done with it.
func (r *run) verify() {
	defer func() {
		for _, c := range r.toSinks {
			close(c)
		}
	}()
	var busy time.Duration
	var reps []compute.Report
	defer func() { r.mu.Lock(); r.res.Verify, r.res.Reports = busy, reps; r.mu.Unlock() }()
	for b := range r.toVerify {
		if r.opt.Verify && b.job != nil {
			t := time.Now()
			rs := compute.VerifyJob(b.job)
			if reps == nil {
				reps = make([]compute.Report, len(rs))
				for i := range reps {
					reps[i] = compute.Report{Worst: -1}
				}
			}
			for i, rep := range rs {
				reps[i] = merge(reps[i], rep, b.Y0*r.in.Width)
			}
			busy += time.Since(t)
		}
		b.job = nil
		if len(r.sinks) == 0 {
			r.through()
			r.release(b)
			continue
		}
		b.left.Store(int32(len(r.sinks)))
		for si, c := range r.toSinks {
			select {
			case c <- b:
			case <-r.done:
				r.leave(b, len(r.toSinks)-si)
				return
			}
		}
	}
}

// sink hands the blocks to sink si, in order.
func (r *run) sink(si int) {
	s := r.sinks[si]
	for b := range r.toSinks[si] {
		if r.stopped() {
			r.leave(b, 1)
			continue
		}
		t := time.Now()
		if err := s.Write(&b.Block); err != nil {
			r.fail(fmt.Errorf("%s: %w", rowsOf(b), err))
		}
		r.busySinks[si] += time.Since(t)
		r.leave(b, 1)
	}
}

// leave says that n sinks are done with b: the last one counts it
// (Progress) and gives it back to the pool.
func (r *run) leave(b *block, n int) {
	if b.left.Add(-int32(n)) != 0 {
		return
	}
	if !r.stopped() {
		r.through()
	}
	r.release(b)
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
