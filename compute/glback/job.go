package glback

import (
	"fmt"
	"math"
	"math/bits"
	"strings"
	"time"
	"unsafe"

	"canopy/compute"
	"canopy/native/egl/gl"
)

// GL enumerants the job path needs beyond native/egl/gl's.
const (
	maxComputeStorageBlocks = 0x90DB // GL_MAX_COMPUTE_SHADER_STORAGE_BLOCKS
	shaderStorageBarrierBit = 0x2000 // GL_SHADER_STORAGE_BARRIER_BIT
)

// DefaultJobVec4s is the number of quads (four pixels each) one invocation
// of a job's shader computes: one keeps the generated code, and the
// driver's compile time, small; more were no faster (docs/GL.md).
const DefaultJobVec4s = 1

// maxJobPrograms is how many compiled job shaders a backend keeps; the
// least recently used goes first.
const maxJobPrograms = 64

// jobProgram is a compiled job shader.
type jobProgram struct {
	prog uint32
	used uint64 // the state's clock when last used
	// zero: the shader multiplies by cn_zero(), so its uniform is active
	// (setting an inactive one may be an error on some drivers).
	zero bool
}

// jobLayout is what a job's device buffers depend on. pixels is their
// capacity: a job of as many pixels or fewer (the last block of a
// pipeline) runs in them.
type jobLayout struct {
	pixels, part, outs int
	types              string // the bands' stored types, in order
	mask               bool
}

// devPlane is one plane on the device: part p of it lives in bufs[p] from
// byte off[p]; each pixel takes size bytes.
type devPlane struct {
	size int
	bufs []uint32
	off  []int
}

// jobBuffers are the device buffers of one job layout: each band's parts,
// the mask's, and per part one buffer holding every output.
type jobBuffers struct {
	layout jobLayout
	bands  []devPlane
	mask   devPlane
	out    []uint32
	outs   []devPlane // output o: out[p] from o * quads(p) * 16 bytes
	all    []uint32   // every buffer, for freeing
}

// quads returns the quads (groups of four pixels) of n pixels.
func quads(n int) int { return (n + 3) / 4 }

// cut cuts the pixel range [lo, lo+n) of a plane kept in parts of part
// pixels and calls fn for each piece with the part, the piece's offset in
// that part, its offset from lo, and its length, all in pixels.
func cut(part, lo, n int, fn func(p, off, at, k int)) {
	for at := 0; at < n; {
		p, off := (lo+at)/part, (lo+at)%part
		k := min(part-off, n-at)
		fn(p, off, at, k)
		at += k
	}
}

func pow2Floor(n int64) int { return 1 << (63 - bits.LeadingZeros64(uint64(max(n, 1)))) }

// jobPart is the part size (pixels, a power of two) of a job with outs
// outputs: the backend's part size, cut so that one part of every output
// together, and one float32 band part, fit in one storage-buffer binding.
func (st *glState) jobPart(outs int) int {
	lim := st.maxBlock / int64(4*max(1, outs))
	return max(4, min(st.part, pow2Floor(lim)))
}

// newBuffer allocates a zeroed device buffer of bytes (a multiple of
// four), in CUDA memory when the planes live there. dynamic allows
// glBufferSubData on it.
func (st *glState) newBuffer(bytes int, dynamic bool) (uint32, error) {
	var b uint32
	if st.mem != nil {
		var err error
		if b, err = st.mem.buffer(bytes); err != nil {
			return 0, err
		}
		gl.BindBuffer(gl.COPY_WRITE_BUFFER, b)
	} else {
		var flags uint32
		if dynamic {
			flags = gl.DYNAMIC_STORAGE_BIT
		}
		gl.GenBuffers(1, &b)
		gl.BindBuffer(gl.COPY_WRITE_BUFFER, b)
		gl.BufferStorage(gl.COPY_WRITE_BUFFER, bytes, nil, flags)
	}
	zero := float32(0)
	gl.ClearBufferData(gl.COPY_WRITE_BUFFER, gl.R32F, gl.RED, gl.FLOAT, unsafe.Pointer(&zero))
	gl.BindBuffer(gl.COPY_WRITE_BUFFER, 0)
	return b, nil
}

func (st *glState) deleteBuffers(bufs []uint32) {
	for _, b := range bufs {
		if b != 0 && (st.mem == nil || !st.mem.free(b)) {
			gl.DeleteBuffers(1, &b)
		}
	}
}

// fits reports whether the job buffers hold a job of layout l.
func (jb *jobBuffers) fits(l jobLayout) bool {
	if jb == nil {
		return false
	}
	c := jb.layout
	return c.part == l.part && c.outs == l.outs && c.types == l.types && c.mask == l.mask && l.pixels <= c.pixels
}

// ensureJobBuffers makes the job buffers fit l, reallocating them only
// when they do not, and returns how long that took.
func (st *glState) ensureJobBuffers(l jobLayout, types []compute.DataType) (time.Duration, error) {
	if st.job.fits(l) {
		return 0, nil
	}
	t0 := time.Now()
	st.freeJob()
	jb, err := st.newJobBuffers(l, types)
	if err != nil {
		return 0, err
	}
	st.job = jb
	return time.Since(t0), nil
}

// newJobBuffers allocates device buffers for jobs of layout l whose bands
// are stored as types.
func (st *glState) newJobBuffers(l jobLayout, types []compute.DataType) (*jobBuffers, error) {
	jb := &jobBuffers{layout: l}
	np := (l.pixels + l.part - 1) / l.part
	plane := func(size int) (devPlane, error) {
		d := devPlane{size: size, off: make([]int, np)}
		for p := range np {
			n := min(l.part, l.pixels-p*l.part)
			b, err := st.newBuffer(quads(n)*4*size, true)
			if err != nil {
				return d, err
			}
			d.bufs = append(d.bufs, b)
			jb.all = append(jb.all, b)
		}
		return d, nil
	}
	fail := func(err error) (*jobBuffers, error) {
		st.deleteBuffers(jb.all)
		return nil, err
	}
	for _, t := range types {
		d, err := plane(t.Size())
		if err != nil {
			return fail(err)
		}
		jb.bands = append(jb.bands, d)
	}
	if l.mask {
		d, err := plane(1)
		if err != nil {
			return fail(err)
		}
		jb.mask = d
	}
	for p := range np {
		n := min(l.part, l.pixels-p*l.part)
		b, err := st.newBuffer(l.outs*quads(n)*16, false)
		if err != nil {
			return fail(err)
		}
		jb.out = append(jb.out, b)
		jb.all = append(jb.all, b)
	}
	for o := range l.outs {
		d := devPlane{size: 4, bufs: jb.out}
		for p := range np {
			d.off = append(d.off, o*quads(min(l.part, l.pixels-p*l.part))*16)
		}
		jb.outs = append(jb.outs, d)
	}
	if err := glError(fmt.Sprintf("allocating %.1f MB of job buffers", float64(l.pixels)*float64(l.outs*4+len(types))/1e6)); err != nil {
		return fail(err)
	}
	return jb, nil
}

func (st *glState) freeJob() {
	if st.job != nil {
		st.deleteBuffers(st.job.all)
		st.job = nil
	}
}

// jobDefines defines VEC4S, ITERS and LOCAL for a job's shader.
func (st *glState) jobDefines(src string) string {
	first, rest, _ := strings.Cut(src, "\n")
	return fmt.Sprintf("%s\n#define VEC4S %du\n#define ITERS %du\n#define LOCAL %d\n%s", first, st.jobVec4s, st.iters, st.local, rest)
}

// program returns the compiled shader of j, compiling it (and timing
// that) on a cache miss; hook, when set, edits the source first.
func (st *glState) program(j *compute.Job, hook func(string) string) (*jobProgram, time.Duration, bool, error) {
	return st.cachedProgram(jobKey(j), strings.Join(j.Names, ", "), func() (string, error) {
		src, err := jobSource(j)
		if err != nil {
			return "", err
		}
		return st.jobDefines(src), nil
	}, hook)
}

// cachedProgram returns the compiled shader cached under key, generating
// (gen) and compiling it on a miss; what names it in errors.
func (st *glState) cachedProgram(key, what string, gen func() (string, error), hook func(string) string) (*jobProgram, time.Duration, bool, error) {
	st.clock++
	if p, ok := st.progs[key]; ok {
		p.used = st.clock
		return p, 0, false, nil
	}
	t0 := time.Now()
	src, err := gen()
	if err != nil {
		return nil, 0, false, err
	}
	if hook != nil {
		src = hook(src)
	}
	prog, err := gl.CompileCompute(src)
	if err != nil {
		return nil, 0, false, fmt.Errorf("the GL driver (%s) rejected the shader generated for %s: %w", st.renderer, what, err)
	}
	if err := glError("compiling a shader"); err != nil {
		gl.DeleteProgram(prog)
		return nil, 0, false, err
	}
	if len(st.progs) >= maxJobPrograms {
		var oldest string
		for k, p := range st.progs {
			if oldest == "" || p.used < st.progs[oldest].used {
				oldest = k
			}
		}
		gl.DeleteProgram(st.progs[oldest].prog)
		delete(st.progs, oldest)
	}
	if st.progs == nil {
		st.progs = map[string]*jobProgram{}
	}
	p := &jobProgram{prog: prog, used: st.clock, zero: strings.Contains(src, "* cn_zero()") || strings.Contains(src, "* -cn_zero()")}
	st.progs[key] = p
	return p, time.Since(t0), true, nil
}

// noDataBits is band b's nodata as the shader compares it, with the
// stored sample: the float32 bits or the integer, and false when no
// sample can equal it (none set, NaN, a fraction or out of the type's
// range), exactly as compute.Job.Value32 compares in float64.
func noDataBits(b compute.BandInput) (uint32, bool) {
	nd := b.NoData
	if !b.HasNoData || math.IsNaN(nd) {
		return 0, false
	}
	if b.Plane.Type == compute.F32 {
		f := float32(nd)
		if float64(f) != nd {
			return 0, false
		}
		return math.Float32bits(f), true
	}
	lo, hi := 0.0, 0.0
	switch b.Plane.Type {
	case compute.U8:
		hi = math.MaxUint8
	case compute.U16:
		hi = math.MaxUint16
	case compute.I16:
		lo, hi = math.MinInt16, math.MaxInt16
	case compute.U32:
		hi = math.MaxUint32
	case compute.I32:
		lo, hi = math.MinInt32, math.MaxInt32
	}
	if nd != math.Trunc(nd) || nd < lo || nd > hi {
		return 0, false
	}
	return uint32(int64(nd)), true
}

// Uniform locations of the job shader (shaders/index.comp.tmpl).
const (
	locBase     = 0
	locCount    = 1
	locStride   = 2
	locZero     = 3
	locHas      = 8
	locNoData   = 24
	locAdd      = 40
	locScale    = 56
	locOffset   = 72
	maxJobBands = 16 // uniform slots per array
)

// useJobProgram makes p current with j's uniforms: each band's nodata
// and radiometry, and the zero the compiler cannot fold.
func useJobProgram(p *jobProgram, j *compute.Job) {
	gl.UseProgram(p.prog)
	if p.zero {
		gl.Uniform1ui(locZero, 0)
	}
	for k, b := range j.Bands {
		nd, has := noDataBits(b)
		r := b.Radiometry
		gl.Uniform1ui(int32(locHas+k), b2u(has))
		gl.Uniform1ui(int32(locNoData+k), nd)
		gl.Uniform1ui(int32(locAdd+k), math.Float32bits(float32(r.Add)))
		gl.Uniform1ui(int32(locScale+k), math.Float32bits(float32(r.Scale)))
		gl.Uniform1ui(int32(locOffset+k), math.Float32bits(float32(r.Offset)))
	}
}

// jobGrid returns the quads one work group of a job shader computes and
// the most quads one dispatch may take.
func (st *glState) jobGrid() (per, most int) {
	per = st.local * st.jobVec4s * st.iters
	most = st.maxGX * st.maxGY * per
	if st.chunk > 0 {
		most = min(most, max(per, st.chunk/4))
	}
	return per, most
}

// jobDispatch runs prog over the job buffers jb, part by part, at most
// limit quads in all (0: every quad), each dispatch within the grid's
// limits.
func (st *glState) jobDispatch(jb *jobBuffers, p *jobProgram, j *compute.Job, limit int) {
	l := jb.layout
	useJobProgram(p, j)
	per, most := st.jobGrid()
	left := limit
	px := j.Pixels()
	np := (px + l.part - 1) / l.part
	for p := 0; p < np && (limit == 0 || left > 0); p++ {
		nq := quads(min(l.part, px-p*l.part))       // quads to compute
		cq := quads(min(l.part, l.pixels-p*l.part)) // quads the part's buffers hold
		bind := func(i int, buf uint32, bytes int) {
			gl.BindBufferRange(gl.SHADER_STORAGE_BUFFER, uint32(i), buf, 0, bytes)
		}
		for k, d := range jb.bands {
			bind(k, d.bufs[p], cq*4*d.size)
		}
		at := len(jb.bands)
		if l.mask {
			bind(at, jb.mask.bufs[p], cq*4)
			at++
		}
		bind(at, jb.out[p], l.outs*cq*16)
		gl.Uniform1ui(locStride, uint32(cq))
		if limit > 0 {
			nq = min(nq, left)
			left -= nq
		}
		st.dispatchQuads(nq, per, most)
	}
	// Later dispatches and the download see what the shader wrote.
	gl.MemoryBarrier(shaderStorageBarrierBit | gl.BUFFER_UPDATE_BARRIER_BIT)
}

// dispatchQuads runs the current job shader over quads [0, nq) of the
// bound buffers, per quads a work group and at most most a dispatch.
func (st *glState) dispatchQuads(nq, per, most int) {
	for q := 0; q < nq; {
		n := min(most, nq-q)
		gl.Uniform1ui(locBase, uint32(q))
		gl.Uniform1ui(locCount, uint32(n))
		groups := (n + per - 1) / per
		gx := min(groups, st.maxGX)
		gy := (groups + gx - 1) / gx
		gl.DispatchCompute(uint32(gx), uint32(gy), 1)
		q += n
	}
}

// bytesOf views a float32 slice's memory as bytes.
func bytesOf(f []float32) []byte {
	if len(f) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&f[0])), 4*len(f))
}

// copyBytes copies src into dst (the shorter length) with parallelCopy
// for the whole float32 words and Go's copy for the tail.
func copyBytes(dst, src []byte) {
	n := min(len(dst), len(src))
	w := n &^ 3
	if w > 0 {
		parallelCopy(unsafe.Slice((*float32)(unsafe.Pointer(&dst[0])), w/4), unsafe.Slice((*float32)(unsafe.Pointer(&src[0])), w/4))
	}
	copy(dst[w:n], src[w:n])
}

// xfer is one transfer piece: pixels [lo, lo+n) of a device plane and
// their bytes in host memory; at most one staging slot.
type xfer struct {
	plane *devPlane
	lo, n int
	host  []byte
}

// pieces cuts a whole plane's transfer into slot-sized xfers.
func slotXfers(xs []xfer, plane *devPlane, host []byte) []xfer {
	per := slotBytes / plane.size
	px := len(host) / plane.size
	for lo := 0; lo < px; lo += per {
		n := min(per, px-lo)
		xs = append(xs, xfer{plane: plane, lo: lo, n: n, host: host[lo*plane.size : (lo+n)*plane.size]})
	}
	return xs
}

// toPlane copies pixels [lo, lo+n) from the buffer src at byte srcOff
// into a device plane kept in parts of part pixels.
func toPlane(part int, src uint32, srcOff int, d *devPlane, lo, n int) {
	cut(part, lo, n, func(p, off, at, k int) {
		copyRange(src, d.bufs[p], srcOff+at*d.size, d.off[p]+off*d.size, k*d.size)
	})
}

// fromPlane copies pixels [lo, lo+n) of a device plane into the buffer
// dst from byte dstOff.
func fromPlane(part int, d *devPlane, lo, n int, dst uint32, dstOff int) {
	cut(part, lo, n, func(p, off, at, k int) {
		copyRange(d.bufs[p], dst, d.off[p]+off*d.size, dstOff+at*d.size, k*d.size)
	})
}

// jobUpload moves the job's bands and mask into the device buffers, as
// stored: glBufferSubData (subdata) or the write ring (mapped).
func (st *glState) jobUpload(jb *jobBuffers, j *compute.Job, mode string) error {
	dst, src := jobInputs(jb, j)
	if err := st.uploadPlanes(jb.layout.part, dst, src, mode); err != nil {
		return err
	}
	return glError("uploading the bands")
}

// jobInputs pairs the device planes of jb with j's bands and mask, in the
// shader's binding order.
func jobInputs(jb *jobBuffers, j *compute.Job) (dst []*devPlane, src [][]byte) {
	for k := range j.Bands {
		dst, src = append(dst, &jb.bands[k]), append(src, j.Bands[k].Plane.Data)
	}
	if j.Mask != nil {
		dst, src = append(dst, &jb.mask), append(src, j.Mask)
	}
	return dst, src
}

// uploadPlanes copies src[i] into the device plane dst[i] (kept in parts
// of part pixels): glBufferSubData (subdata) or the write ring (mapped),
// and waits until the copies are done.
func (st *glState) uploadPlanes(part int, dst []*devPlane, src [][]byte, mode string) error {
	if err := st.issueUpload(part, dst, src, mode); err != nil {
		return err
	}
	if mode != ModeSubData {
		if err := st.up.drain(); err != nil {
			return err
		}
	}
	gl.Finish()
	return nil
}

// issueUpload queues the copies of uploadPlanes without waiting for the
// GPU: each ring slot used is guarded by its fence, which the next
// acquire of the slot waits for. The host memory of src may be reused as
// soon as it returns.
func (st *glState) issueUpload(part int, dst []*devPlane, src [][]byte, mode string) error {
	st.memcpyUp = 0
	var xs []xfer
	for i, d := range dst {
		host := src[i]
		if mode == ModeSubData {
			cut(part, 0, len(host)/d.size, func(p, off, at, k int) {
				gl.BindBuffer(gl.COPY_WRITE_BUFFER, d.bufs[p])
				gl.BufferSubData(gl.COPY_WRITE_BUFFER, d.off[p]+off*d.size, k*d.size, unsafe.Pointer(&host[at*d.size]))
			})
			continue
		}
		xs = slotXfers(xs, d, host)
	}
	for _, x := range xs {
		i, err := st.up.acquire()
		if err != nil {
			unbindCopy()
			return err
		}
		t0 := time.Now()
		copyBytes(bytesOf(st.up.slot(i, slotFloats)), x.host)
		st.memcpyUp += time.Since(t0)
		toPlane(part, st.up.buf, i*slotBytes, x.plane, x.lo, x.n)
		st.up.fences[i] = gl.FenceSync(gl.SYNC_GPU_COMMANDS_COMPLETE, 0)
		gl.Flush()
	}
	unbindCopy()
	return nil
}

// jobDownload moves every output plane into j.Out: glGetBufferSubData
// (subdata) or the read ring (mapped), the GPU filling up to four slots
// ahead of the host.
func (st *glState) jobDownload(jb *jobBuffers, j *compute.Job, mode string) error {
	var src []*devPlane
	var dst [][]byte
	for o := range j.Out {
		src, dst = append(src, &jb.outs[o]), append(dst, bytesOf(j.Out[o]))
	}
	if err := st.downloadPlanes(jb.layout.part, src, dst, mode); err != nil {
		return err
	}
	return glError("downloading the outputs")
}

// downloadPlanes copies the device plane src[i] (kept in parts of part
// pixels) into dst[i]: glGetBufferSubData (subdata) or the read ring
// (mapped), the GPU filling up to four slots ahead of the host.
func (st *glState) downloadPlanes(part int, src []*devPlane, dst [][]byte, mode string) error {
	st.memcpyDown = 0
	if mode == ModeSubData {
		for i, d := range src {
			host := dst[i]
			cut(part, 0, len(host)/d.size, func(p, off, at, k int) {
				gl.BindBuffer(gl.COPY_READ_BUFFER, d.bufs[p])
				gl.GetBufferSubData(gl.COPY_READ_BUFFER, d.off[p]+off*d.size, k*d.size, unsafe.Pointer(&host[at*d.size]))
			})
		}
		unbindCopy()
		return nil
	}
	var xs []xfer
	for i, d := range src {
		xs = slotXfers(xs, d, dst[i])
	}
	issue := func(c int) {
		i, x := c%slots, xs[c]
		fromPlane(part, x.plane, x.lo, x.n, st.down.buf, i*slotBytes)
		st.down.fences[i] = gl.FenceSync(gl.SYNC_GPU_COMMANDS_COMPLETE, 0)
	}
	for c := 0; c < min(slots, len(xs)); c++ {
		issue(c)
	}
	gl.Flush()
	for c, x := range xs {
		i := c % slots
		if err := st.down.wait(i); err != nil {
			unbindCopy()
			return err
		}
		t0 := time.Now()
		copyBytes(x.host, bytesOf(st.down.slot(i, slotFloats)))
		st.memcpyDown += time.Since(t0)
		if c+slots < len(xs) {
			issue(c + slots)
			gl.Flush()
		}
	}
	st.down.next = 0
	unbindCopy()
	return nil
}

// jobMode resolves a job's mode: "" is Mode (what SetMode chose, else
// the device's default: subdata on a software renderer, mapped on a GPU).
func (b *Backend) jobMode(m string) (string, error) {
	switch m {
	case "":
		return b.modeLocked(), nil
	case ModeMapped, ModeSubData:
		return m, nil
	}
	return "", fmt.Errorf("unknown mode %q (want %s or %s)", m, ModeMapped, ModeSubData)
}

// checkJob checks j as compute.Job.Check does, and that the gl shader
// takes as many bands.
func checkJob(j *compute.Job) error {
	if err := j.Check(); err != nil {
		return err
	}
	if len(j.Bands) > maxJobBands {
		return fmt.Errorf("the job reads %d bands; the gl shader takes at most %d", len(j.Bands), maxJobBands)
	}
	return nil
}

// layoutOf is the device layout of j's buffers, with its bands' stored
// types, or why the driver cannot bind them all.
func (st *glState) layoutOf(j *compute.Job) (jobLayout, []compute.DataType, error) {
	blocks := len(j.Bands) + 2
	if j.Mask == nil {
		blocks--
	}
	if blocks > st.maxBlocks {
		return jobLayout{}, nil, fmt.Errorf("the job needs %d storage buffers (%d bands, the mask, the outputs); %s allows a compute shader %d", blocks, len(j.Bands), st.renderer, st.maxBlocks)
	}
	types := make([]compute.DataType, len(j.Bands))
	ts := make([]string, len(j.Bands))
	for k, band := range j.Bands {
		types[k] = band.Plane.Type
		ts[k] = types[k].String()
	}
	l := jobLayout{pixels: j.Pixels(), outs: len(j.Out), types: strings.Join(ts, ","), mask: j.Mask != nil}
	l.part = st.jobPart(l.outs)
	return l, types, nil
}

// warmUp runs one work group of p over jb and waits for it: the driver
// finishes the program for the device, and the buffers' pages are
// committed, before anything is timed. It returns how long that took.
func (st *glState) warmUp(jb *jobBuffers, p *jobProgram, j *compute.Job) (time.Duration, error) {
	t0 := time.Now()
	st.jobDispatch(jb, p, j, st.local*st.jobVec4s*st.iters)
	gl.Finish()
	return time.Since(t0), glError("the warm-up dispatch")
}

// RunJob implements compute.Backend: every index of j in one compute
// shader generated from the formulas (shaders/index.comp.tmpl), over the
// bands uploaded once as stored. The shader is compiled by the driver on
// the first run of its formulas, band types and mask, and cached; Setup
// reports the compile, the job buffers' allocation (when the layout
// changes), a warm-up dispatch after either, and the context's creation
// when this run started it. j.Mode picks mapped or subdata ("" for the
// device's default).
func (b *Backend) RunJob(j *compute.Job) (compute.Timings, error) {
	if err := checkJob(j); err != nil {
		return compute.Timings{}, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.start(); err != nil {
		return compute.Timings{}, fmt.Errorf("%s", strings.TrimPrefix(err.Error(), "gl: "))
	}
	mode, err := b.jobMode(j.Mode)
	if err != nil {
		return compute.Timings{}, err
	}
	var t compute.Timings
	phase := "set up"
	hook := b.tu.jobHook
	err = b.w.do(func(st *glState) error {
		l, types, err := st.layoutOf(j)
		if err != nil {
			return err
		}
		fresh := !st.job.fits(l)
		d, err := st.ensureJobBuffers(l, types)
		t.Setup += d
		if err != nil {
			return err
		}
		phase = "compile"
		p, d, compiled, err := st.program(j, hook)
		t.Setup += d
		if err != nil {
			return err
		}
		if mode == ModeMapped {
			r, err := st.ensureRings()
			t.Setup += r
			if err != nil {
				return err
			}
		}
		if compiled || fresh {
			d, err := st.warmUp(st.job, p, j)
			t.Setup += d
			if err != nil {
				return err
			}
		}
		phase = "upload"
		t0 := time.Now()
		if err := st.jobUpload(st.job, j, mode); err != nil {
			return err
		}
		t.Upload = time.Since(t0)
		phase = "kernel"
		t.Kernel, b.timer, b.wall = st.timed(func() { st.jobDispatch(st.job, p, j, 0) })
		if err := glError("dispatching the job shader"); err != nil {
			return err
		}
		phase = "download"
		t1 := time.Now()
		if err := st.jobDownload(st.job, j, mode); err != nil {
			return err
		}
		t.Download = time.Since(t1)
		t.Total = time.Since(t0)
		b.memcpyUp, b.memcpyDown = st.memcpyUp, st.memcpyDown
		return nil
	})
	t.Setup += b.takePending()
	if err != nil {
		return t, fmt.Errorf("%s %s %dx%d on %s: %w", phase, strings.Join(j.Names, ","), j.Width, j.Height, b.info.Device, err)
	}
	return t, nil
}
