package glback

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strings"
	"sync"
	"time"
	"unsafe"

	"canopy/compute"
	"canopy/native/egl"
	"canopy/native/egl/gl"
)

const (
	slotBytes  = 32 << 20 // one staging slot
	slotFloats = slotBytes / 4
	slots      = 4 // slots per staging ring
	fenceWait  = 60 * time.Second
)

// glInit loads the GL entry points once per process. With libglvnd they are
// dispatch stubs that follow whichever context is current on the calling
// thread, so one table serves every context.
var glInit = sync.OnceValue(func() error {
	if err := gl.Init(egl.ProcAddress); err != nil {
		return fmt.Errorf("loading OpenGL through eglGetProcAddress: %w", err)
	}
	return nil
})

// limits caps the dispatch grid below the driver's limits (tests use it to
// force 2-D grids and many chunks on small images). Zero means no cap.
type limits struct {
	groupsX, groupsY int
}

// glState is everything GL. It lives on the owner thread and only there.
type glState struct {
	ctx               *egl.Context
	renderer, version string

	prog      uint32
	local     int   // work-group size (x) of the shader
	maxGX     int   // GL_MAX_COMPUTE_WORK_GROUP_COUNT, capped by limits
	maxGY     int   //
	maxBlock  int64 // GL_MAX_SHADER_STORAGE_BLOCK_SIZE
	align     int   // GL_SHADER_STORAGE_BUFFER_OFFSET_ALIGNMENT
	timerBits int32 // GL_QUERY_COUNTER_BITS of GL_TIMESTAMP; 0: no timer
	queries   [2]uint32

	up, down ring // persistently mapped staging, allocated once when needed

	pixels int       // image size the device buffers hold; 0: none
	dev    [3]uint32 // red, nir, ndvi
	chunk  int       // pixels per dispatch (power of two)
}

// ring is a persistently mapped staging buffer cut into slots, each
// guarded by the fence of the last GPU copy that used it.
type ring struct {
	buf    uint32
	mem    []float32
	fences [slots]uintptr
	next   int
}

// newGLState creates the context on the calling (locked) thread, compiles
// source and allocates the staging rings.
func newGLState(kind egl.Kind, source string, lim limits) (*glState, error) {
	ctx, err := egl.Open(kind, 4, 3)
	if err != nil {
		return nil, err
	}
	st := &glState{ctx: ctx}
	if err := st.init(source, lim); err != nil {
		st.release()
		return nil, err
	}
	return st, nil
}

func (st *glState) init(source string, lim limits) error {
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
	var err error
	if st.prog, err = compileProgram(source); err != nil {
		return fmt.Errorf("the GL driver (%s) rejected shaders/ndvi.comp: %w", st.renderer, err)
	}
	var size [3]int32
	gl.GetProgramiv(st.prog, gl.COMPUTE_WORK_GROUP_SIZE, &size[0])
	st.local = int(size[0])
	var gx, gy, align int32
	gl.GetIntegeri_v(gl.MAX_COMPUTE_WORK_GROUP_COUNT, 0, &gx)
	gl.GetIntegeri_v(gl.MAX_COMPUTE_WORK_GROUP_COUNT, 1, &gy)
	gl.GetInteger64v(gl.MAX_SHADER_STORAGE_BLOCK_SIZE, &st.maxBlock)
	gl.GetIntegerv(gl.SHADER_STORAGE_BUFFER_OFFSET_ALIGNMENT, &align)
	st.maxGX, st.maxGY, st.align = int(gx), int(gy), int(align)
	if lim.groupsX > 0 {
		st.maxGX = min(st.maxGX, lim.groupsX)
	}
	if lim.groupsY > 0 {
		st.maxGY = min(st.maxGY, lim.groupsY)
	}
	gl.GetQueryiv(gl.TIMESTAMP, gl.QUERY_COUNTER_BITS, &st.timerBits)
	gl.GenQueries(2, &st.queries[0])
	return glError("creating the program and queries")
}

// software reports whether the renderer is a CPU rasteriser, where device
// memory is host memory and staging only adds a copy.
func (st *glState) software() bool {
	r := strings.ToLower(st.renderer)
	return strings.Contains(r, "llvmpipe") || strings.Contains(r, "softpipe") || strings.Contains(r, "swrast")
}

// ensureRings allocates the staging rings the first time they are needed
// and returns how long that took.
func (st *glState) ensureRings() (time.Duration, error) {
	if st.up.buf != 0 && st.down.buf != 0 {
		return 0, nil
	}
	t0 := time.Now()
	var err error
	if st.up.buf == 0 {
		if st.up, err = newRing(gl.MAP_WRITE_BIT); err != nil {
			return 0, err
		}
	}
	if st.down, err = newRing(gl.MAP_READ_BIT); err != nil {
		return 0, err
	}
	if err := glError("allocating the staging buffers"); err != nil {
		return 0, err
	}
	return time.Since(t0), nil
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

// compileProgram compiles and links a compute shader; the error carries the
// driver's log.
func compileProgram(source string) (uint32, error) {
	sh := gl.CreateShader(gl.COMPUTE_SHADER)
	defer gl.DeleteShader(sh)
	gl.ShaderSource(sh, source)
	gl.CompileShader(sh)
	var ok int32
	gl.GetShaderiv(sh, gl.COMPILE_STATUS, &ok)
	if ok == gl.FALSE {
		return 0, errors.New(infoLog(sh, gl.GetShaderiv, gl.GetShaderInfoLog))
	}
	prog := gl.CreateProgram()
	gl.AttachShader(prog, sh)
	gl.LinkProgram(prog)
	gl.GetProgramiv(prog, gl.LINK_STATUS, &ok)
	if ok == gl.FALSE {
		log := infoLog(prog, gl.GetProgramiv, gl.GetProgramInfoLog)
		gl.DeleteProgram(prog)
		return 0, fmt.Errorf("link: %s", log)
	}
	return prog, nil
}

func infoLog(obj uint32, get func(uint32, uint32, *int32), read func(uint32, int32, *int32, *uint8)) string {
	var n int32
	get(obj, gl.INFO_LOG_LENGTH, &n)
	if n <= 1 {
		return "no log"
	}
	buf := make([]uint8, n)
	read(obj, n, nil, &buf[0])
	return strings.Join(strings.Fields(gl.GoStr(&buf[0])), " ")
}

// newRing allocates and maps a staging ring for host writes
// (gl.MAP_WRITE_BIT) or host reads (gl.MAP_READ_BIT).
func newRing(access uint32) (ring, error) {
	var r ring
	flags := access | gl.MAP_PERSISTENT_BIT | gl.MAP_COHERENT_BIT
	gl.GenBuffers(1, &r.buf)
	gl.BindBuffer(gl.COPY_WRITE_BUFFER, r.buf)
	gl.BufferStorage(gl.COPY_WRITE_BUFFER, slots*slotBytes, nil, flags|gl.CLIENT_STORAGE_BIT)
	p := gl.MapBufferRange(gl.COPY_WRITE_BUFFER, 0, slots*slotBytes, flags)
	gl.BindBuffer(gl.COPY_WRITE_BUFFER, 0)
	if p == nil {
		gl.DeleteBuffers(1, &r.buf)
		return ring{}, fmt.Errorf("mapping a %d MiB staging buffer persistently failed (%s)", slots*slotBytes>>20, errName(gl.GetError()))
	}
	r.mem = unsafe.Slice((*float32)(p), slots*slotFloats)
	clear(r.mem) // commit the pages now, not during the first transfer
	return r, nil
}

// slot returns the host memory of slot i.
func (r *ring) slot(i, floats int) []float32 {
	return r.mem[i*slotFloats : i*slotFloats+floats]
}

// acquire returns the next slot once the GPU is done with it.
func (r *ring) acquire() (int, error) {
	i := r.next
	r.next = (r.next + 1) % slots
	return i, r.wait(i)
}

// wait waits for the last GPU copy that used slot i.
func (r *ring) wait(i int) error {
	f := r.fences[i]
	if f == 0 {
		return nil
	}
	r.fences[i] = 0
	defer gl.DeleteSync(f)
	return waitFence(f)
}

// drain waits for every slot.
func (r *ring) drain() error {
	var first error
	for i := range r.fences {
		if err := r.wait(i); err != nil && first == nil {
			first = err
		}
	}
	r.next = 0
	return first
}

func (r *ring) release() {
	r.drain()
	if r.buf != 0 {
		if r.mem != nil {
			gl.BindBuffer(gl.COPY_WRITE_BUFFER, r.buf)
			gl.UnmapBuffer(gl.COPY_WRITE_BUFFER)
			gl.BindBuffer(gl.COPY_WRITE_BUFFER, 0)
		}
		gl.DeleteBuffers(1, &r.buf)
	}
	*r = ring{}
}

func waitFence(f uintptr) error {
	deadline := time.Now().Add(fenceWait)
	for {
		switch gl.ClientWaitSync(f, gl.SYNC_FLUSH_COMMANDS_BIT, uint64(100*time.Millisecond)) {
		case gl.ALREADY_SIGNALED, gl.CONDITION_SATISFIED:
			return nil
		case gl.WAIT_FAILED:
			return fmt.Errorf("waiting for a GPU copy failed (%s)", errName(gl.GetError()))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the GPU did not finish a copy within %s", fenceWait)
		}
	}
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

// setSize makes the device buffers hold n pixels, allocating them only when
// n changes, and returns how long that took (0 when nothing changed).
func (st *glState) setSize(n int) (time.Duration, error) {
	if n == st.pixels {
		return 0, nil
	}
	t0 := time.Now()
	st.freeDevice()
	padded := (n + 3) &^ 3
	gl.GenBuffers(3, &st.dev[0])
	for i, b := range st.dev {
		gl.BindBuffer(gl.COPY_WRITE_BUFFER, b)
		var flags uint32 = gl.DYNAMIC_STORAGE_BIT // inputs take glBufferSubData in subdata mode
		if i == 2 {
			flags = 0
		}
		gl.BufferStorage(gl.COPY_WRITE_BUFFER, padded*4, nil, flags)
	}
	gl.BindBuffer(gl.COPY_WRITE_BUFFER, 0)
	if err := glError(fmt.Sprintf("allocating 3 buffers of %.1f MB", float64(padded)*4/1e6)); err != nil {
		st.freeDevice()
		return 0, err
	}
	// The largest power of two that one binding (block size), one grid
	// (groups in x and y) and the offset alignment allow.
	limit := min(st.maxBlock/4, int64(st.maxGX)*int64(st.maxGY)*int64(st.local)*4, 1<<30)
	st.chunk = 1 << (63 - bits.LeadingZeros64(uint64(limit)))
	if st.chunk*4%st.align != 0 {
		st.freeDevice()
		return 0, fmt.Errorf("%s: dispatch chunks of %d pixels break the storage-buffer offset alignment of %d bytes", st.renderer, st.chunk, st.align)
	}
	st.pixels = n
	// Commit the memory and let the driver finish compiling the shader for
	// the device: one dispatch over zeros, as part of setup.
	zero := float32(0)
	for _, b := range st.dev[:2] {
		gl.BindBuffer(gl.COPY_WRITE_BUFFER, b)
		gl.ClearBufferData(gl.COPY_WRITE_BUFFER, gl.R32F, gl.RED, gl.FLOAT, unsafe.Pointer(&zero))
	}
	gl.BindBuffer(gl.COPY_WRITE_BUFFER, 0)
	st.dispatch(compute.Nodata{})
	gl.Finish()
	if err := glError("the warm-up dispatch"); err != nil {
		st.freeDevice()
		return 0, err
	}
	return time.Since(t0), nil
}

func (st *glState) freeDevice() {
	if st.dev[0] != 0 {
		gl.DeleteBuffers(3, &st.dev[0])
	}
	st.dev = [3]uint32{}
	st.pixels = 0
}

// dispatch runs the shader over the current image, one chunk per binding.
func (st *glState) dispatch(nd compute.Nodata) {
	gl.UseProgram(st.prog)
	gl.Uniform2ui(1, math.Float32bits(nd.Red), math.Float32bits(nd.NIR))
	gl.Uniform2ui(2, b2u(nd.HasRed), b2u(nd.HasNIR))
	padded := (st.pixels + 3) &^ 3
	for off := 0; off < st.pixels; off += st.chunk {
		m := min(st.chunk, padded-off) // floats bound, a multiple of four
		for i, b := range st.dev {
			gl.BindBufferRange(gl.SHADER_STORAGE_BUFFER, uint32(i), b, off*4, m*4)
		}
		count := m / 4
		gl.Uniform1ui(0, uint32(count))
		groups := (count + st.local - 1) / st.local
		gx := min(groups, st.maxGX)
		gy := (groups + gx - 1) / gx
		gl.DispatchCompute(uint32(gx), uint32(gy), 1)
	}
	// The download reads what the shader wrote through buffer commands.
	gl.MemoryBarrier(gl.BUFFER_UPDATE_BARRIER_BIT)
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

// upload moves both bands into the device buffers. The mapped mode needs
// ensureRings first.
func (st *glState) upload(in compute.Input, mode string) error {
	if mode == ModeSubData {
		for i, band := range [][]float32{in.Red, in.NIR} {
			gl.BindBuffer(gl.COPY_WRITE_BUFFER, st.dev[i])
			gl.BufferSubData(gl.COPY_WRITE_BUFFER, 0, len(band)*4, unsafe.Pointer(&band[0]))
		}
		gl.BindBuffer(gl.COPY_WRITE_BUFFER, 0)
		gl.Finish()
		return glError("uploading with glBufferSubData")
	}
	for i, band := range [][]float32{in.Red, in.NIR} {
		if err := st.push(st.dev[i], band); err != nil {
			return err
		}
	}
	if err := st.up.drain(); err != nil {
		return err
	}
	return glError("uploading through the staging ring")
}

// push copies src into dst through the write ring: the host fills one slot
// while the GPU copies the one before.
func (st *glState) push(dst uint32, src []float32) error {
	gl.BindBuffer(gl.COPY_READ_BUFFER, st.up.buf)
	gl.BindBuffer(gl.COPY_WRITE_BUFFER, dst)
	defer gl.BindBuffer(gl.COPY_READ_BUFFER, 0)
	defer gl.BindBuffer(gl.COPY_WRITE_BUFFER, 0)
	for lo := 0; lo < len(src); lo += slotFloats {
		k := min(slotFloats, len(src)-lo)
		i, err := st.up.acquire()
		if err != nil {
			return err
		}
		// Coherent mapping: commands issued after the write see it.
		parallelCopy(st.up.slot(i, k), src[lo:lo+k])
		gl.CopyBufferSubData(gl.COPY_READ_BUFFER, gl.COPY_WRITE_BUFFER, i*slotBytes, lo*4, k*4)
		st.up.fences[i] = gl.FenceSync(gl.SYNC_GPU_COMMANDS_COMPLETE, 0)
		gl.Flush()
	}
	return nil
}

// download moves the NDVI plane into out. The mapped mode needs
// ensureRings first.
func (st *glState) download(out []float32, mode string) error {
	if mode == ModeSubData {
		gl.BindBuffer(gl.COPY_READ_BUFFER, st.dev[2])
		gl.GetBufferSubData(gl.COPY_READ_BUFFER, 0, len(out)*4, unsafe.Pointer(&out[0]))
		gl.BindBuffer(gl.COPY_READ_BUFFER, 0)
		return glError("downloading with glGetBufferSubData")
	}
	if err := st.pull(st.dev[2], out); err != nil {
		return err
	}
	return glError("downloading through the staging ring")
}

// pull copies src into out through the read ring: the GPU fills up to four
// slots ahead while the host empties the oldest.
func (st *glState) pull(src uint32, out []float32) error {
	gl.BindBuffer(gl.COPY_READ_BUFFER, src)
	gl.BindBuffer(gl.COPY_WRITE_BUFFER, st.down.buf)
	defer gl.BindBuffer(gl.COPY_READ_BUFFER, 0)
	defer gl.BindBuffer(gl.COPY_WRITE_BUFFER, 0)
	chunks := (len(out) + slotFloats - 1) / slotFloats
	issue := func(c int) {
		i, lo := c%slots, c*slotFloats
		k := min(slotFloats, len(out)-lo)
		gl.CopyBufferSubData(gl.COPY_READ_BUFFER, gl.COPY_WRITE_BUFFER, lo*4, i*slotBytes, k*4)
		st.down.fences[i] = gl.FenceSync(gl.SYNC_GPU_COMMANDS_COMPLETE, 0)
	}
	for c := 0; c < min(slots, chunks); c++ {
		issue(c)
	}
	gl.Flush()
	for c := 0; c < chunks; c++ {
		i, lo := c%slots, c*slotFloats
		k := min(slotFloats, len(out)-lo)
		if err := st.down.wait(i); err != nil {
			return err
		}
		parallelCopy(out[lo:lo+k], st.down.slot(i, k))
		if c+slots < chunks {
			issue(c + slots)
			gl.Flush()
		}
	}
	st.down.next = 0
	return nil
}

// ceilings measures, for a buffer of the given size, the device-to-device
// copy (bytes read plus written) and the staging path's transfer rates.
func (st *glState) ceilings(bytes int) (compute.Ceilings, error) {
	bytes = max(16, (bytes+15)&^15)
	var bufs [2]uint32
	gl.GenBuffers(2, &bufs[0])
	defer gl.DeleteBuffers(2, &bufs[0])
	zero := float32(0)
	for _, b := range bufs {
		gl.BindBuffer(gl.COPY_WRITE_BUFFER, b)
		gl.BufferStorage(gl.COPY_WRITE_BUFFER, bytes, nil, 0)
		gl.ClearBufferData(gl.COPY_WRITE_BUFFER, gl.R32F, gl.RED, gl.FLOAT, unsafe.Pointer(&zero))
	}
	if err := glError(fmt.Sprintf("allocating 2 buffers of %.1f MB", float64(bytes)/1e6)); err != nil {
		return compute.Ceilings{}, err
	}
	if _, err := st.ensureRings(); err != nil {
		return compute.Ceilings{}, err
	}
	best := func(reps int, fn func()) time.Duration {
		var b time.Duration
		for r := 0; r < reps; r++ {
			if d, _, _ := st.timed(fn); r == 0 || d < b {
				b = d
			}
		}
		return max(b, time.Nanosecond)
	}
	copyTo := func(read, write uint32, stagingRead bool) func() {
		return func() {
			gl.BindBuffer(gl.COPY_READ_BUFFER, read)
			gl.BindBuffer(gl.COPY_WRITE_BUFFER, write)
			for off, i := 0, 0; off < bytes; off, i = off+slotBytes, i+1 {
				k := min(slotBytes, bytes-off)
				if stagingRead {
					gl.CopyBufferSubData(gl.COPY_READ_BUFFER, gl.COPY_WRITE_BUFFER, (i%slots)*slotBytes, off, k)
				} else {
					gl.CopyBufferSubData(gl.COPY_READ_BUFFER, gl.COPY_WRITE_BUFFER, off, (i%slots)*slotBytes, k)
				}
			}
		}
	}
	dev := best(5, func() {
		gl.BindBuffer(gl.COPY_READ_BUFFER, bufs[0])
		gl.BindBuffer(gl.COPY_WRITE_BUFFER, bufs[1])
		gl.CopyBufferSubData(gl.COPY_READ_BUFFER, gl.COPY_WRITE_BUFFER, 0, 0, bytes)
	})
	h2d := best(3, copyTo(st.up.buf, bufs[0], true))
	d2h := best(3, copyTo(bufs[0], st.down.buf, false))
	gl.BindBuffer(gl.COPY_READ_BUFFER, 0)
	gl.BindBuffer(gl.COPY_WRITE_BUFFER, 0)
	if err := glError("measuring copy bandwidth"); err != nil {
		return compute.Ceilings{}, err
	}
	gbps := func(b int, d time.Duration) float64 { return float64(b) / d.Seconds() / 1e9 }
	return compute.Ceilings{DeviceCopy: gbps(2*bytes, dev), H2D: gbps(bytes, h2d), D2H: gbps(bytes, d2h)}, nil
}

// release frees every GL object and the context. The state is unusable
// afterwards.
func (st *glState) release() {
	if st.ctx == nil {
		return
	}
	if st.ctx.Current() || st.ctx.MakeCurrent() == nil {
		st.freeDevice()
		st.up.release()
		st.down.release()
		if st.queries[0] != 0 {
			gl.DeleteQueries(2, &st.queries[0])
		}
		if st.prog != 0 {
			gl.DeleteProgram(st.prog)
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
