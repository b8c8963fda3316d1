package cudaback

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"slices"
	"time"
	"unsafe"

	"canopy/compute"
	"canopy/compute/index"
	"canopy/native/cuda"
)

// Kept on the card: the cuda backend's resident session
// (compute.Resident). The bands are uploaded once as stored; every index
// is computed from them by the generated index kernel (ptx.go) into planes
// that stay on the device; the statistics are one fused pass over a plane
// (genStats) whose block records come back (a few kilobytes) and are
// merged on the host; the view is drawn on the device (genView) and only
// its RGBA comes back. Every call queues its work on the session's stream,
// brackets each phase with events, and waits for the stream before it
// returns.

// residentDev is what a session needs of the device: the real one
// (driver, context, JIT cache, streams: resident_dev.go) or, in tests, the
// PTX interpreter.
type residentDev interface {
	// enter makes the device usable from this goroutine; leave undoes it.
	enter() (leave func(), err error)
	target() ptxTarget
	sms() int
	alloc(bytes int) (cuda.DevicePtr, error)
	free(p cuda.DevicePtr)
	// hostAlloc returns host memory the copy engines reach directly.
	hostAlloc(bytes int) ([]byte, error)
	hostFree(b []byte)
	// pin page-locks b for the session (false when the driver refuses
	// or b is small: it is then staged); unpin releases it.
	pin(b []byte) bool
	unpin(b []byte)
	// prepare compiles spec's kernel unless it is cached (jitted says
	// whether it compiled); launch queues it over grid blocks of
	// residentBlock threads.
	prepare(spec *kernelSpec) (jitted bool, err error)
	launch(spec *kernelSpec, grid int, args []any) error
	// upload and download queue a copy; large host memory that is not
	// pinned is staged (the host side of a staged download is written by
	// sync), small copies of pageable memory are left to the driver. The
	// host memory must stay untouched until sync.
	upload(dst cuda.DevicePtr, src []byte) error
	download(dst []byte, src cuda.DevicePtr) error
	// mark queues a timing event and returns its number; marks restart
	// from 0 after sync, and elapsed reads two of them after a sync.
	mark() (int, error)
	sync() error
	elapsed(a, b int) (time.Duration, error)
	// close releases the session's stream, events and staging.
	close()
}

// forker is a device that opens further streams on its context (fork):
// the warp inflates each stored band on a stream of its own, so that the
// bands of two inputs inflate side by side.
type forker interface {
	fork() (residentDev, error)
}

// piecewise is a device whose staged downloads hand each piece on as it
// lands (downloadThen), so that work on a download overlaps its copy.
type piecewise interface {
	downloadThen(dst []byte, src cuda.DevicePtr, then func(lo, hi int)) (bool, error)
}

var (
	_ forker    = (*cudaDev)(nil)
	_ piecewise = (*cudaDev)(nil)
)

// residentBand is what a session keeps of a band: everything but the
// samples, which are on the device.
type residentBand struct {
	role       string
	typ        compute.DataType
	radiometry compute.Radiometry
	noData     float64
	hasNoData  bool
	source     string
}

// input is the band as the index kernel's helpers see it: a BandInput
// without samples.
func (b residentBand) input() compute.BandInput {
	return compute.BandInput{Role: b.role, Plane: compute.Plane{Type: b.typ}, Radiometry: b.radiometry,
		NoData: b.noData, HasNoData: b.hasNoData, Source: b.source}
}

// residentLUTs is how many colour tables a session keeps on the device,
// so that switching back to a ramp uploads nothing.
const residentLUTs = 8

type residentLUT struct {
	key   uint64
	table compute.ColorTable
	ptr   cuda.DevicePtr
	used  int
}

// session is a compute.ResidentSession on a residentDev.
type session struct {
	dev    residentDev
	w, h   int
	n      int
	bands  []residentBand
	dBands []cuda.DevicePtr
	dMask  cuda.DevicePtr

	// The last Index call: its planes (one per index) and names.
	dOut  []cuda.DevicePtr
	names []string

	// Statistics: the device result (histogram, then block records) and
	// its pinned host copy.
	dResult    cuda.DevicePtr
	resultSize int
	hResult    []byte

	// View: the device RGBA, the colour tables, the pinned screen
	// buffer (the caller's, page-locked while it is the same).
	dView    cuda.DevicePtr
	viewSize int
	luts     []residentLUT
	calls    int
	// viewHost is the last screen buffer rendered into, page-locked when
	// viewPinned.
	viewHost   []byte
	viewPinned bool
	seed       maphash.Seed
	closed     bool
	specs      map[any]*kernelSpec
	statsMin   int // a floor on the statistics grid, for tests
}

// openSession validates the bands, allocates their device memory and
// uploads them (and the mask).
func openSession(dev residentDev, bands []compute.BandInput, mask []uint8) (_ *session, t compute.Timings, err error) {
	w, h, err := compute.CheckResidentBands(bands, mask)
	if err != nil {
		return nil, t, fmt.Errorf("resident session: %w", err)
	}
	n := w * h
	if n > math.MaxUint32 { // the shaders index pixels with 32 bits
		return nil, t, fmt.Errorf("resident session: %dx%d is more than %d pixels", w, h, uint64(math.MaxUint32))
	}
	leave, err := dev.enter()
	if err != nil {
		return nil, t, err
	}
	defer leave()
	s := &session{dev: dev, w: w, h: h, n: n, seed: maphash.MakeSeed(), specs: map[any]*kernelSpec{}}
	defer func() {
		if err != nil {
			s.release()
		}
	}()
	t0 := time.Now()
	host := make([][]byte, 0, len(bands)+1)
	for _, b := range bands {
		s.bands = append(s.bands, residentBand{role: b.Role, typ: b.Plane.Type, radiometry: b.Radiometry,
			noData: b.NoData, hasNoData: b.HasNoData, source: b.Source})
		p, err := dev.alloc(len(b.Plane.Data))
		if err != nil {
			return nil, t, fmt.Errorf("resident session: device memory for the %s band: %w", b.Role, err)
		}
		s.dBands = append(s.dBands, p)
		host = append(host, b.Plane.Data)
	}
	if mask != nil {
		if s.dMask, err = dev.alloc(n); err != nil {
			return nil, t, fmt.Errorf("resident session: device memory for the mask: %w", err)
		}
		host = append(host, mask)
	}
	for _, b := range host {
		dev.pin(b)
	}
	t.Setup = time.Since(t0)
	t1 := time.Now()
	a, err := dev.mark()
	if err == nil {
		for i, b := range host {
			dst := s.dMask
			if i < len(s.dBands) {
				dst = s.dBands[i]
			}
			if err = dev.upload(dst, b); err != nil {
				break
			}
		}
	}
	var z int
	if err == nil {
		z, err = dev.mark()
	}
	if err == nil {
		err = dev.sync()
	}
	if err != nil {
		return nil, t, fmt.Errorf("resident session: upload: %w", err)
	}
	t.Total = time.Since(t1)
	t.Upload, err = dev.elapsed(a, z)
	for _, b := range host {
		dev.unpin(b)
	}
	return s, t, err
}

// Size implements compute.ResidentSession.
func (s *session) Size() (w, h int) { return s.w, s.h }

// errClosed is the error of a call on a closed session.
var errClosed = errors.New("resident session is closed")

// Index implements compute.ResidentSession.
func (s *session) Index(names []string, exprs []*index.Expr) (t compute.Timings, err error) {
	if s.closed {
		return t, errClosed
	}
	given := make([]string, len(s.bands))
	for i, b := range s.bands {
		given[i] = b.role
	}
	if err := compute.CheckIndices(names, exprs, given); err != nil {
		return t, err
	}
	p, err := index.Compile(exprs)
	if err != nil {
		return t, err
	}
	// The program's inputs, in its order, as session bands.
	order := make([]int, len(p.Inputs))
	sh := kernelShape{Mask: s.dMask != 0}
	for k, role := range p.Inputs {
		order[k] = slices.Index(given, role)
		b := s.bands[order[k]].input()
		has, _ := nodataValue(b)
		sh.Bands = append(sh.Bands, bandShape{Type: b.Plane.Type, NoData: has, Radiometry: !b.Radiometry.IsIdentity()})
	}
	leave, err := s.dev.enter()
	if err != nil {
		return t, err
	}
	defer leave()
	t0 := time.Now()
	spec, err := generate(p, sh, s.dev.target())
	if err != nil {
		return t, err
	}
	jitted, err := s.dev.prepare(spec)
	if err != nil {
		return t, err
	}
	grew := false
	for len(s.dOut) > len(exprs) {
		s.dev.free(s.dOut[len(s.dOut)-1])
		s.dOut = s.dOut[:len(s.dOut)-1]
	}
	for len(s.dOut) < len(exprs) {
		d, err := s.dev.alloc(4 * s.n)
		if err != nil {
			return t, fmt.Errorf("device memory for %d index planes of %dx%d: %w", len(exprs), s.w, s.h, err)
		}
		s.dOut = append(s.dOut, d)
		grew = true
	}
	s.names = nil // until this run succeeds
	if jitted || grew {
		t.Setup = time.Since(t0)
	}
	args := make([]any, 0, len(spec.Params))
	for _, par := range spec.Params {
		var b compute.BandInput
		if par.Kind != parN && par.Kind != parMask && par.Kind != parOut {
			b = s.bands[order[par.Index]].input()
		}
		switch par.Kind {
		case parN:
			args = append(args, uint64(s.n))
		case parBand:
			args = append(args, s.dBands[order[par.Index]])
		case parNoData:
			_, v := nodataValue(b)
			args = append(args, v)
		case parAdd:
			args = append(args, float32(b.Radiometry.Add))
		case parScale:
			args = append(args, float32(b.Radiometry.Scale))
		case parOffset:
			args = append(args, float32(b.Radiometry.Offset))
		case parMask:
			args = append(args, s.dMask)
		case parOut:
			args = append(args, s.dOut[par.Index])
		}
	}
	grid := min(max(1, (s.n/kernelLanes+KernelBlock-1)/KernelBlock), 1<<31-1)
	t1 := time.Now()
	a, err := s.dev.mark()
	if err == nil {
		err = s.dev.launch(spec, grid, args)
	}
	var z int
	if err == nil {
		z, err = s.dev.mark()
	}
	if err == nil {
		err = s.dev.sync()
	}
	if err != nil {
		return t, fmt.Errorf("index kernel for %dx%d: %w", s.w, s.h, err)
	}
	t.Total = time.Since(t1)
	if t.Kernel, err = s.dev.elapsed(a, z); err != nil {
		return t, err
	}
	s.names = slices.Clone(names)
	return t, nil
}

// plane returns plane o's device pointer.
func (s *session) plane(o int) (cuda.DevicePtr, error) {
	if s.closed {
		return 0, errClosed
	}
	if o < 0 || o >= len(s.names) {
		return 0, compute.ErrPlane(o, len(s.names))
	}
	return s.dOut[o], nil
}

// spec returns the cached kernel of key, generating it on first use.
func (s *session) spec(key any, gen func() *kernelSpec) *kernelSpec {
	if k, ok := s.specs[key]; ok {
		return k
	}
	k := gen()
	s.specs[key] = k
	return k
}

// statsBlocksPerSM is how many blocks of the statistics kernel each
// multiprocessor gets: enough to hide the loads' latency, few enough
// that the block records stay a few kilobytes.
const statsBlocksPerSM = 4

// Stats implements compute.ResidentSession: the fused pass (genStats),
// the block records merged on the host as package stats merges its
// blocks.
func (s *session) Stats(o int, q compute.StatsRequest) (r compute.ResidentStats, t compute.Timings, err error) {
	plane, err := s.plane(o)
	if err != nil {
		return r, t, err
	}
	if err := q.Check(); err != nil {
		return r, t, err
	}
	leave, err := s.dev.enter()
	if err != nil {
		return r, t, err
	}
	defer leave()
	t0 := time.Now()
	sh := statsShapeFor(q.Bins, len(q.Classes))
	tg := s.dev.target()
	spec := s.spec(sh, func() *kernelSpec { return genStats(sh, tg) })
	fill := s.spec("fill", func() *kernelSpec { return genFill(tg) })
	setup := false
	for _, k := range []*kernelSpec{fill, spec} {
		jitted, err := s.dev.prepare(k)
		if err != nil {
			return r, t, err
		}
		setup = setup || jitted
	}
	vecs := (s.n + kernelLanes - 1) / kernelLanes
	grid := max(1, min(statsBlocksPerSM*s.dev.sms(), (vecs+residentBlock-1)/residentBlock))
	grid = max(grid, min(s.statsMin, vecs))
	recOff := (4*q.Bins + 7) &^ 7
	size := recOff + grid*sh.record()
	if size > s.resultSize {
		setup = true
		s.freeResult()
		if s.dResult, err = s.dev.alloc(size); err != nil {
			return r, t, fmt.Errorf("device memory for the statistics: %w", err)
		}
		if s.hResult, err = s.dev.hostAlloc(size); err != nil {
			return r, t, fmt.Errorf("host memory for the statistics: %w", err)
		}
		s.resultSize = size
	}
	if setup {
		t.Setup = time.Since(t0)
	}
	args := []any{uint64(s.n), plane, s.dResult, uint64(recOff), q.Lo, q.Hi, 0.0, uint32(max(0, q.Bins-1))}
	if q.Bins > 0 {
		args[6] = float64(q.Bins) / (q.Hi - q.Lo)
	}
	for _, c := range q.Classes[:max(0, len(q.Classes)-1)] {
		args = append(args, float32(c.Hi))
	}
	t1 := time.Now()
	var a, b, z int
	err = func() error {
		if a, err = s.dev.mark(); err != nil {
			return err
		}
		if q.Bins > 0 {
			fg := min(1024, (q.Bins+residentBlock-1)/residentBlock)
			if err := s.dev.launch(fill, fg, []any{s.dResult, uint64(q.Bins)}); err != nil {
				return err
			}
		}
		if err := s.dev.launch(spec, grid, args); err != nil {
			return err
		}
		if b, err = s.dev.mark(); err != nil {
			return err
		}
		if err := s.dev.download(s.hResult[:size], s.dResult); err != nil {
			return err
		}
		if z, err = s.dev.mark(); err != nil {
			return err
		}
		return s.dev.sync()
	}()
	if err != nil {
		return r, t, fmt.Errorf("statistics of %dx%d: %w", s.w, s.h, err)
	}
	r = mergeStats(s.hResult[:size], sh, q, grid, s.n)
	t.Total = time.Since(t1)
	if t.Kernel, err = s.dev.elapsed(a, b); err == nil {
		t.Download, err = s.dev.elapsed(b, z)
	}
	return r, t, err
}

// mergeStats reads the statistics kernel's result: the histogram, then one
// record per block, whose moments are merged in block order with Chan et
// al.'s update (as stats.Summarize merges its blocks').
func mergeStats(res []byte, sh statsShape, q compute.StatsRequest, grid, n int) compute.ResidentStats {
	le := binary.LittleEndian
	var h []int
	if q.Bins > 0 {
		h = make([]int, q.Bins)
		for i := range h {
			h[i] = int(le.Uint32(res[4*i:]))
		}
	}
	m := compute.NewStatsMerger(q)
	recOff := (4*q.Bins + 7) &^ 7
	for g := range grid {
		rec := res[recOff+g*sh.record():]
		for i := range m.Bounds() {
			m.Above(i, int(le.Uint32(rec[32+4*i:])))
		}
		m.Add(int(le.Uint32(rec[16:])), math.Float64frombits(le.Uint64(rec)), math.Float64frombits(le.Uint64(rec[8:])),
			math.Float32frombits(le.Uint32(rec[20:])), math.Float32frombits(le.Uint32(rec[24:])))
	}
	return m.Result(q, h, n)
}

// lut returns the device copy of table, uploading it (queued) when it is
// not among the session's; uploaded says whether it did.
func (s *session) lut(table compute.ColorTable) (ptr cuda.DevicePtr, uploaded bool, err error) {
	s.calls++
	words := make([]byte, 4*(len(table.RGBA)+len(table.Upper)))
	for i, c := range table.RGBA {
		binary.LittleEndian.PutUint32(words[4*i:], c)
	}
	for i, u := range table.Upper {
		binary.LittleEndian.PutUint32(words[4*(len(table.RGBA)+i):], math.Float32bits(u))
	}
	if table.Discrete() {
		words = append(words, 1) // a class table with no bounds differs from a ramp
	}
	key := maphash.Bytes(s.seed, words)
	for i := range s.luts {
		if l := &s.luts[i]; l.key == key && slices.Equal(l.table.RGBA, table.RGBA) && slices.Equal(l.table.Upper, table.Upper) && l.table.Discrete() == table.Discrete() {
			l.used = s.calls
			return l.ptr, false, nil
		}
	}
	if len(s.luts) >= residentLUTs {
		old := 0
		for i, l := range s.luts {
			if l.used < s.luts[old].used {
				old = i
			}
		}
		s.dev.free(s.luts[old].ptr)
		s.luts = slices.Delete(s.luts, old, old+1)
	}
	p, err := s.dev.alloc(len(words))
	if err != nil {
		return 0, false, err
	}
	if err := s.dev.upload(p, words); err != nil {
		s.dev.free(p)
		return 0, false, err
	}
	s.luts = append(s.luts, residentLUT{key: key, table: compute.ColorTable{RGBA: slices.Clone(table.RGBA), Upper: slices.Clone(table.Upper)}, ptr: p, used: s.calls})
	return p, true, nil
}

// Render implements compute.ResidentSession: the view drawn on the device
// (genView) and its RGBA downloaded into dst.
func (s *session) Render(o int, v compute.View, dst []byte) (t compute.Timings, err error) {
	plane, err := s.plane(o)
	if err != nil {
		return t, err
	}
	if err := v.Check(); err != nil {
		return t, err
	}
	size := 4 * v.Width * v.Height
	if len(dst) < size {
		return t, fmt.Errorf("view of %dx%d needs %d bytes, has %d", v.Width, v.Height, size, len(dst))
	}
	dst = dst[:size]
	if !v.Drawable() {
		t0 := time.Now()
		clear(dst)
		t.Total = time.Since(t0)
		return t, nil
	}
	leave, err := s.dev.enter()
	if err != nil {
		return t, err
	}
	defer leave()
	t0 := time.Now()
	sh := viewShape{Samples: compute.ViewSamples(v.Zoom), Discrete: v.Table.Discrete()}
	spec := s.spec(sh, func() *kernelSpec { return genView(sh, s.dev.target()) })
	setup, err := s.dev.prepare(spec)
	if err != nil {
		return t, err
	}
	if size > s.viewSize {
		setup = true
		if s.dView != 0 {
			s.dev.free(s.dView)
			s.dView, s.viewSize = 0, 0
		}
		if s.dView, err = s.dev.alloc(size); err != nil {
			return t, fmt.Errorf("device memory for a %dx%d view: %w", v.Width, v.Height, err)
		}
		s.viewSize = size
	}
	if !samePlace(s.viewHost, dst) {
		setup = true
		s.unpinView()
		s.viewHost, s.viewPinned = dst, s.dev.pin(dst)
	}
	if setup {
		t.Setup = time.Since(t0)
	}
	t1 := time.Now()
	var u0, a, b, z int
	uploaded := false
	var lut cuda.DevicePtr
	err = func() error {
		if u0, err = s.dev.mark(); err != nil {
			return err
		}
		if lut, uploaded, err = s.lut(v.Table); err != nil {
			return err
		}
		if a, err = s.dev.mark(); err != nil {
			return err
		}
		steps := len(v.Table.RGBA) - 1
		if v.Table.Discrete() {
			steps = len(v.Table.Upper)
		}
		args := []any{plane, uint32(s.w), uint32(s.h), uint32(v.Width), uint32(v.Width * v.Height),
			v.X0, v.Y0, v.Zoom, float64(s.w), float64(s.h)}
		for k := range sh.Samples {
			args = append(args, compute.ViewSampleOffset(k, sh.Samples))
		}
		args = append(args, lut, uint32(steps), float32(steps), v.Table.Lo, v.Table.Scale, lut.Add(4*len(v.Table.RGBA)), s.dView)
		grid := max(1, min((v.Width*v.Height+residentBlock-1)/residentBlock, 64*s.dev.sms()))
		if err := s.dev.launch(spec, grid, args); err != nil {
			return err
		}
		if b, err = s.dev.mark(); err != nil {
			return err
		}
		if err := s.dev.download(dst, s.dView); err != nil {
			return err
		}
		if z, err = s.dev.mark(); err != nil {
			return err
		}
		return s.dev.sync()
	}()
	if err != nil {
		return t, fmt.Errorf("view of %dx%d: %w", v.Width, v.Height, err)
	}
	t.Total = time.Since(t1)
	if uploaded {
		if t.Upload, err = s.dev.elapsed(u0, a); err != nil {
			return t, err
		}
	}
	if t.Kernel, err = s.dev.elapsed(a, b); err == nil {
		t.Download, err = s.dev.elapsed(b, z)
	}
	return t, err
}

// unpinView releases the last screen buffer.
func (s *session) unpinView() {
	if s.viewPinned {
		s.dev.unpin(s.viewHost)
	}
	s.viewHost, s.viewPinned = nil, false
}

// samePlace reports whether a and b are the same memory.
func samePlace(a, b []byte) bool {
	return len(a) == len(b) && len(a) > 0 && unsafe.SliceData(a) == unsafe.SliceData(b)
}

// Download implements compute.ResidentSession.
func (s *session) Download(o int, dst []float32) (t compute.Timings, err error) {
	plane, err := s.plane(o)
	if err != nil {
		return t, err
	}
	if len(dst) != s.n {
		return t, fmt.Errorf("download of a %dx%d plane into %d values", s.w, s.h, len(dst))
	}
	leave, err := s.dev.enter()
	if err != nil {
		return t, err
	}
	defer leave()
	t1 := time.Now()
	var a, z int
	err = func() error {
		if a, err = s.dev.mark(); err != nil {
			return err
		}
		if err := s.dev.download(bytesOf(dst), plane); err != nil {
			return err
		}
		if z, err = s.dev.mark(); err != nil {
			return err
		}
		return s.dev.sync()
	}()
	if err != nil {
		return t, fmt.Errorf("download of %s: %w", s.names[o], err)
	}
	t.Total = time.Since(t1)
	t.Download, err = s.dev.elapsed(a, z)
	return t, err
}

// Probe implements compute.ResidentSession: four bytes of each plane
// come back.
func (s *session) Probe(x, y int) (_ []float32, err error) {
	if s.closed {
		return nil, errClosed
	}
	if len(s.names) == 0 {
		return nil, compute.ErrPlane(0, 0)
	}
	if x < 0 || y < 0 || x >= s.w || y >= s.h {
		return nil, compute.ErrPixel(x, y, s.w, s.h)
	}
	leave, err := s.dev.enter()
	if err != nil {
		return nil, err
	}
	defer leave()
	buf := make([]byte, 4*len(s.names))
	off := 4 * (y*s.w + x)
	for o := range s.names {
		if err := s.dev.download(buf[4*o:4*o+4], s.dOut[o].Add(off)); err != nil {
			return nil, fmt.Errorf("probe of pixel (%d, %d): %w", x, y, err)
		}
	}
	if err := s.dev.sync(); err != nil {
		return nil, fmt.Errorf("probe of pixel (%d, %d): %w", x, y, err)
	}
	out := make([]float32, len(s.names))
	for o := range out {
		out[o] = math.Float32frombits(binary.LittleEndian.Uint32(buf[4*o:]))
	}
	return out, nil
}

func (s *session) freeResult() {
	if s.dResult != 0 {
		s.dev.free(s.dResult)
		s.dResult = 0
	}
	if s.hResult != nil {
		s.dev.hostFree(s.hResult)
		s.hResult = nil
	}
	s.resultSize = 0
}

// release frees everything the session holds (device entered).
func (s *session) release() {
	for _, p := range s.dBands {
		s.dev.free(p)
	}
	s.dBands = nil
	if s.dMask != 0 {
		s.dev.free(s.dMask)
		s.dMask = 0
	}
	for _, p := range s.dOut {
		s.dev.free(p)
	}
	s.dOut, s.names = nil, nil
	s.freeResult()
	if s.dView != 0 {
		s.dev.free(s.dView)
		s.dView, s.viewSize = 0, 0
	}
	for _, l := range s.luts {
		s.dev.free(l.ptr)
	}
	s.luts = nil
	s.unpinView()
	s.dev.close()
}

// Close implements compute.ResidentSession. A second Close does nothing.
func (s *session) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	leave, err := s.dev.enter()
	if errors.Is(err, errBackendClosed) {
		return nil // its memory went with the context
	}
	if err != nil {
		return err
	}
	defer leave()
	s.release()
	return nil
}

var _ compute.ResidentSession = (*session)(nil)
