package glback

import (
	"fmt"
	"math/bits"
	"strings"
	"sync"
	"time"
	"unsafe"

	"canopy/native/egl"
	"canopy/native/egl/gl"
	"canopy/shaders"
)

const fenceWait = 60 * time.Second

// glInit loads the GL entry points once per process. With libglvnd they are
// dispatch stubs that follow whichever context is current on the calling
// thread, so one table serves every context.
var glInit = sync.OnceValue(func() error {
	if err := gl.Init(egl.ProcAddress); err != nil {
		return fmt.Errorf("loading OpenGL through eglGetProcAddress: %w", err)
	}
	return nil
})

// tuning is what a Backend fixes before its context starts: the vec4s
// each invocation of the copy shader handles, and caps on the dispatch grid
// below the driver's limits (tests force 2-D grids and many chunks on small
// images with them; zero means no cap).
type tuning struct {
	vec4s            int
	iters            int // spans of local×vec4s vec4s each work group walks (ITERS)
	local            int // invocations per work group (LOCAL; 0: DefaultLocal)
	groupsX, groupsY int
	chunk            int    // pixels per dispatch at most (0: the driver's limits)
	part             int    // pixels per device buffer at most (0: DefaultPartBytes)
	memory           string // MemoryAuto (""), MemoryGL or MemoryCUDA
	jobVec4s         int    // quads per invocation of job shaders (0: DefaultJobVec4s)
	blocks           int    // storage buffers a shader may bind at most (0: the driver's limit)
	// jobHook, when set, edits each generated job shader before it is
	// compiled (tests break it on purpose).
	jobHook func(string) string
	// residentMode, when set, is the transfer mode of resident sessions
	// instead of the device's default (tests run mapped on llvmpipe).
	residentMode string
	// residentUpload, when set, is how resident sessions upload their
	// bands when the planes are in CUDA memory: upGL keeps GL's path,
	// upCUDAStaged stages every large band (tests compare them); "" goes
	// through CUDA, page-locked.
	residentUpload string
}

// DefaultPartBytes is the most bytes one device buffer holds: each band and
// each output plane are kept in buffers of at most this size: on NVIDIA's
// driver a shader streams through large GL buffers far slower than through
// buffers of this size, whatever the dispatch size (docs/GL.md has the
// sweep).
const DefaultPartBytes = 128 << 20

// EnvPartMB names the environment variable that overrides DefaultPartBytes
// in MiB (rounded down to a power of two; 0 keeps each plane in one buffer
// up to the driver's limit).
const EnvPartMB = "CANOPY_GL_PART_MB"

// glState is everything GL. It lives on the owner thread and only there.
type glState struct {
	ctx               *egl.Context
	renderer, version string

	copyProg     uint32
	local        int   // work-group size (x) of the shaders
	vec4s        int   // vec4s per invocation of the copy shader (VEC4S)
	iters        int   // consecutive spans per work group (ITERS)
	maxGX, maxGY int   // GL_MAX_COMPUTE_WORK_GROUP_COUNT, capped by tuning
	maxBlock     int64 // GL_MAX_SHADER_STORAGE_BLOCK_SIZE
	chunk        int   // pixels per dispatch: a power of two
	part         int   // pixels per device buffer: a power of two, ≥ 4
	timerBits    int32 // GL_QUERY_COUNTER_BITS of GL_TIMESTAMP; 0: no timer
	sparsePage   int32 // GL_SPARSE_BUFFER_PAGE_SIZE_ARB; 0: no sparse buffers
	queries      [2]uint32

	up, down ring // staging for the mapped mode, allocated when needed

	mem     *cudaMem // device planes in CUDA memory; nil: glBufferStorage
	memNote string   // where the planes live, and why not in CUDA memory

	// host copy time spent in the last upload and download (mapped mode)
	memcpyUp, memcpyDown time.Duration

	// Index jobs (job.go): the buffers of the last job's layout and the
	// compiled shaders by jobKey.
	maxBlocks int // GL_MAX_COMPUTE_SHADER_STORAGE_BLOCKS
	jobVec4s  int // quads per invocation (VEC4S of job shaders)
	job       *jobBuffers
	progs     map[string]*jobProgram
	clock     uint64
	// keptSlots are the idle slots of closed job streams (stream.go).
	keptSlots []*streamSlot
}

// newGLState creates the context on the calling (locked) thread and
// compiles the shaders.
func newGLState(kind egl.Kind, tu tuning) (*glState, error) {
	ctx, err := egl.Open(kind, 4, 3)
	if err != nil {
		return nil, err
	}
	st := &glState{ctx: ctx}
	if err := st.init(tu); err != nil {
		st.release()
		return nil, err
	}
	return st, nil
}

func (st *glState) init(tu tuning) error {
	if err := glInit(); err != nil {
		return err
	}
	st.renderer = gl.GoStr(gl.GetString(gl.RENDERER))
	st.version = gl.GoStr(gl.GetString(gl.VERSION))
	var major, minor int32
	gl.GetIntegerv(gl.MAJOR_VERSION, &major)
	gl.GetIntegerv(gl.MINOR_VERSION, &minor)
	if major*10+minor < 44 && !hasExtension("GL_ARB_buffer_storage") {
		return fmt.Errorf("%s (OpenGL %s) lacks GL_ARB_buffer_storage, which the gl backend needs", st.renderer, st.version)
	}
	st.vec4s = max(tu.vec4s, 1)
	st.iters, st.local = DefaultIters, DefaultLocal
	if tu.iters > 0 {
		st.iters = tu.iters
	}
	if tu.local > 0 {
		st.local = tu.local
	}
	var err error
	if st.copyProg, err = gl.CompileCompute(st.defines(shaders.CopyComp)); err != nil {
		return fmt.Errorf("the GL driver (%s) rejected shaders/copy.comp: %w", st.renderer, err)
	}
	var size [3]int32
	gl.GetProgramiv(st.copyProg, gl.COMPUTE_WORK_GROUP_SIZE, &size[0])
	if int(size[0]) != st.local {
		return fmt.Errorf("the GL driver (%s) made work groups of %d invocations, not %d", st.renderer, size[0], st.local)
	}
	var gx, gy, align int32
	gl.GetIntegeri_v(gl.MAX_COMPUTE_WORK_GROUP_COUNT, 0, &gx)
	gl.GetIntegeri_v(gl.MAX_COMPUTE_WORK_GROUP_COUNT, 1, &gy)
	gl.GetInteger64v(gl.MAX_SHADER_STORAGE_BLOCK_SIZE, &st.maxBlock)
	gl.GetIntegerv(gl.SHADER_STORAGE_BUFFER_OFFSET_ALIGNMENT, &align)
	st.maxGX, st.maxGY = int(gx), int(gy)
	var blocks int32
	gl.GetIntegerv(maxComputeStorageBlocks, &blocks)
	st.maxBlocks = int(blocks)
	if tu.blocks > 0 {
		st.maxBlocks = min(st.maxBlocks, tu.blocks)
	}
	st.jobVec4s = DefaultJobVec4s
	if tu.jobVec4s > 0 {
		st.jobVec4s = tu.jobVec4s
	}
	if tu.groupsX > 0 {
		st.maxGX = min(st.maxGX, tu.groupsX)
	}
	if tu.groupsY > 0 {
		st.maxGY = min(st.maxGY, tu.groupsY)
	}
	// The largest power of two that one binding (block size) and one grid
	// (groups in x and y) allow, as pixels.
	limit := min(st.maxBlock/4, int64(st.maxGX)*int64(st.maxGY)*int64(st.local*st.vec4s*st.iters*4), 1<<30)
	if tu.chunk > 0 {
		limit = min(limit, int64(tu.chunk))
	}
	st.chunk = 1 << (63 - bits.LeadingZeros64(uint64(limit)))
	if align <= 0 || st.chunk*4%int(align) != 0 {
		return fmt.Errorf("%s: dispatch chunks of %d pixels break the storage-buffer offset alignment of %d bytes", st.renderer, st.chunk, align)
	}
	// Parts: a power of two of pixels, at most what one buffer may hold
	// (GL_MAX_SHADER_STORAGE_BLOCK_SIZE is per binding; a part larger than
	// a chunk is still dispatched chunk by chunk).
	part := tu.part
	if part <= 0 {
		part = DefaultPartBytes / 4
	}
	part = min(part, 1<<30)
	st.part = max(4, 1<<(63-bits.LeadingZeros64(uint64(part))))
	if err := st.chooseMemory(tu.memory); err != nil {
		return err
	}
	gl.GetQueryiv(gl.TIMESTAMP, gl.QUERY_COUNTER_BITS, &st.timerBits)
	if hasExtension("GL_ARB_sparse_buffer") {
		const sparseBufferPageSize = 0x82F8 // GL_SPARSE_BUFFER_PAGE_SIZE_ARB
		gl.GetIntegerv(sparseBufferPageSize, &st.sparsePage)
	}
	gl.GenQueries(2, &st.queries[0])
	return glError("creating the programs and queries")
}

// chooseMemory decides where the device planes live: CUDA memory when
// asked, or by default on a GPU whose driver can import it; GL's own
// otherwise.
func (st *glState) chooseMemory(memory string) error {
	switch memory {
	case MemoryGL:
		st.memNote = "planes in GL memory (" + EnvMemory + "=gl)"
		return nil
	case "", MemoryAuto:
		if st.software() {
			st.memNote = "planes in GL memory"
			return nil
		}
	case MemoryCUDA:
	default:
		return fmt.Errorf("%s=%s: want auto, gl or cuda", EnvMemory, memory)
	}
	m, err := newCUDAMem()
	if err != nil {
		if memory == MemoryCUDA {
			return fmt.Errorf("device planes in CUDA memory (%s=cuda): %w", EnvMemory, err)
		}
		st.memNote = "planes in GL memory (CUDA memory unavailable: " + err.Error() + ")"
		return nil
	}
	st.mem = m
	st.memNote = fmt.Sprintf("planes in CUDA memory (%d KiB granules)", m.gran>>10)
	// Each part is an allocation of whole granules: no smaller parts.
	for st.part*4 < m.gran {
		st.part *= 2
	}
	return nil
}

// limits describes the dispatch for people and logs.
func (st *glState) limits() string {
	return fmt.Sprintf("work group %d invocations × %d vec4s × %d spans, max groups %d×%d, max storage block %d MB, %d pixels (%d MB a band) per dispatch, device buffers of %d pixels (%d MB) at most, timer %d bits, sparse buffer pages %d KiB, %s",
		st.local, st.vec4s, st.iters, st.maxGX, st.maxGY, st.maxBlock>>20, st.chunk, st.chunk>>18, st.part, st.part>>18, st.timerBits, st.sparsePage>>10, st.memNote)
}

// defines defines VEC4S and ITERS on the line after #version.
func (st *glState) defines(src string) string {
	first, rest, _ := strings.Cut(src, "\n")
	return fmt.Sprintf("%s\n#define VEC4S %du\n#define ITERS %du\n#define LOCAL %d\n%s", first, st.vec4s, st.iters, st.local, rest)
}

// software reports whether the renderer is a CPU rasteriser, where device
// memory is host memory and staging only adds a copy.
func (st *glState) software() bool {
	r := strings.ToLower(st.renderer)
	return strings.Contains(r, "llvmpipe") || strings.Contains(r, "softpipe") || strings.Contains(r, "swrast")
}

// hasExtension reports whether the current context lists name.
func hasExtension(name string) bool {
	var n int32
	gl.GetIntegerv(gl.NUM_EXTENSIONS, &n)
	for i := int32(0); i < n; i++ {
		if gl.GoStr(gl.GetStringi(gl.EXTENSIONS, uint32(i))) == name {
			return true
		}
	}
	return false
}

// ensureCurrent checks that the context is current on this thread, and
// makes it so if something released it.
func (st *glState) ensureCurrent() error {
	if st.ctx.Current() {
		return nil
	}
	if err := st.ctx.MakeCurrent(); err != nil {
		return fmt.Errorf("the GL context is no longer current on its thread: %w", err)
	}
	return nil
}

// parts returns how many device buffers a plane of n pixels takes.
func (st *glState) parts(n int) int { return (n + st.part - 1) / st.part }

// partLen returns the pixels of part p of a plane of n pixels.
func (st *glState) partLen(n, p int) int { return min(st.part, n-p*st.part) }

// pieces cuts the pixel range [lo, lo+n) of a plane into its parts and
// calls fn for each piece with the part, the piece's offset in that part,
// its offset from lo, and its length, all in pixels.
func (st *glState) pieces(lo, n int, fn func(part, off, at, k int)) {
	for at := 0; at < n; {
		p, off := (lo+at)/st.part, (lo+at)%st.part
		k := min(st.part-off, n-at)
		fn(p, off, at, k)
		at += k
	}
}

// newPlanes allocates count planes of n pixels, each as its parts (padded
// to a multiple of four floats), zeroed so that their memory is committed.
// dynamic allows glBufferSubData on them.
func (st *glState) newPlanes(count, n int, dynamic bool) ([][]uint32, error) {
	planes := make([][]uint32, count)
	np := st.parts(n)
	zero := float32(0)
	var flags uint32
	if dynamic {
		flags = gl.DYNAMIC_STORAGE_BIT
	}
	for i := range planes {
		planes[i] = make([]uint32, np)
		for p := range planes[i] {
			bytes := (st.partLen(n, p) + 3) &^ 3 * 4
			if st.mem != nil {
				b, err := st.mem.buffer(bytes)
				if err != nil {
					st.deletePlanes(planes)
					return nil, err
				}
				planes[i][p] = b
				gl.BindBuffer(gl.COPY_WRITE_BUFFER, b)
			} else {
				gl.GenBuffers(1, &planes[i][p])
				gl.BindBuffer(gl.COPY_WRITE_BUFFER, planes[i][p])
				gl.BufferStorage(gl.COPY_WRITE_BUFFER, bytes, nil, flags)
			}
			gl.ClearBufferData(gl.COPY_WRITE_BUFFER, gl.R32F, gl.RED, gl.FLOAT, unsafe.Pointer(&zero))
		}
	}
	gl.BindBuffer(gl.COPY_WRITE_BUFFER, 0)
	if err := glError(fmt.Sprintf("allocating %d planes of %.1f MB", count, float64(n)*4/1e6)); err != nil {
		st.deletePlanes(planes)
		return nil, err
	}
	return planes, nil
}

// deletePlanes deletes the buffers of planes (and their CUDA memory).
func (st *glState) deletePlanes(planes [][]uint32) {
	for _, p := range planes {
		for _, b := range p {
			if b != 0 && (st.mem == nil || !st.mem.free(b)) {
				gl.DeleteBuffers(1, &b)
			}
		}
	}
}

// gridParts runs the bound program over planes of pixels, part by part,
// part p of every plane bound at the plane's index.
func (st *glState) gridParts(planes [][]uint32, pixels int) {
	var bufs [3]uint32
	for p := range st.parts(pixels) {
		for i, pl := range planes {
			bufs[i] = pl[p]
		}
		st.grid(bufs[:len(planes)], st.partLen(pixels, p))
	}
}

// grid runs the bound program over pixels, one chunk per dispatch, each
// buffer bound (at 0, 1, ...) from the chunk's offset.
func (st *glState) grid(bufs []uint32, pixels int) {
	padded := (pixels + 3) &^ 3
	for off := 0; off < pixels; off += st.chunk {
		m := min(st.chunk, padded-off) // floats bound, a multiple of four
		for i, b := range bufs {
			gl.BindBufferRange(gl.SHADER_STORAGE_BUFFER, uint32(i), b, off*4, m*4)
		}
		count := m / 4
		gl.Uniform1ui(0, uint32(count))
		per := st.local * st.vec4s * st.iters
		groups := (count + per - 1) / per
		gx := min(groups, st.maxGX)
		gy := (groups + gx - 1) / gx
		gl.DispatchCompute(uint32(gx), uint32(gy), 1)
	}
}

func b2u(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

// timed runs fn between a GL_TIMESTAMP pair and glFinish and returns the
// time to use with both clocks: the timer's when it is plausible (non-zero
// and within the wall clock), else the wall clock's.
func (st *glState) timed(fn func()) (use, timer, wall time.Duration) {
	gl.Finish()
	t0 := time.Now()
	gl.QueryCounter(st.queries[0], gl.TIMESTAMP)
	fn()
	gl.QueryCounter(st.queries[1], gl.TIMESTAMP)
	gl.Finish()
	wall = time.Since(t0)
	if st.timerBits > 0 {
		var a, b uint64
		gl.GetQueryObjectui64v(st.queries[0], gl.QUERY_RESULT, &a)
		gl.GetQueryObjectui64v(st.queries[1], gl.QUERY_RESULT, &b)
		if b > a {
			timer = time.Duration(b - a)
		}
	}
	use = wall
	if timer > 0 && timer <= wall+wall/20+50*time.Microsecond {
		use = timer
	}
	return use, timer, wall
}

// release frees every GL object and the context. The state is unusable
// afterwards.
func (st *glState) release() {
	if st.ctx == nil {
		return
	}
	if st.ctx.Current() || st.ctx.MakeCurrent() == nil {
		st.freeJob()
		st.freeSlots()
		for _, p := range st.progs {
			gl.DeleteProgram(p.prog)
		}
		st.progs = nil
		st.up.release()
		st.down.release()
		if st.mem != nil {
			st.mem.close()
			st.mem = nil
		}
		if st.queries[0] != 0 {
			gl.DeleteQueries(2, &st.queries[0])
		}
		if st.copyProg != 0 {
			gl.DeleteProgram(st.copyProg)
		}
		gl.Finish()
	}
	st.ctx.Close()
	st.ctx = nil
}

// glError drains the GL error queue and describes the first error.
func glError(what string) error {
	e := gl.GetError()
	if e == gl.NO_ERROR {
		return nil
	}
	for i := 0; i < 16 && gl.GetError() != gl.NO_ERROR; i++ {
	}
	return fmt.Errorf("%s: %s", what, errName(e))
}

func errName(e uint32) string {
	switch e {
	case gl.NO_ERROR:
		return "no GL error"
	case gl.INVALID_ENUM:
		return "GL_INVALID_ENUM"
	case gl.INVALID_VALUE:
		return "GL_INVALID_VALUE"
	case gl.INVALID_OPERATION:
		return "GL_INVALID_OPERATION"
	case gl.OUT_OF_MEMORY:
		return "out of GPU memory (GL_OUT_OF_MEMORY)"
	case gl.INVALID_FRAMEBUFFER_OPERATION:
		return "GL_INVALID_FRAMEBUFFER_OPERATION"
	}
	return fmt.Sprintf("GL error %#x", e)
}
