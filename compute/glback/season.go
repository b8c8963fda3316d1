package glback

import (
	"errors"
	"fmt"
	"time"
	"unsafe"

	"canopy/compute"
	"canopy/compute/season"
	"canopy/native/egl/gl"
)

// RunSeries implements season.Runner: OpenCube, Run and Close in one.
func (b *Backend) RunSeries(j *season.Job) (compute.Timings, error) {
	return season.RunResident(b.OpenCube, j)
}

var _ season.Runner = (*Backend)(nil)

// uniformBuffer is GL_UNIFORM_BUFFER.
const uniformBuffer = 0x8A11

// seasonPartBytes bounds one storage buffer of a cube (every date of a
// range of pixels): the driver's block size limit, and 1 GiB.
const seasonPartBytes = 1 << 30

// Cube is a block of a stack kept on the card (the gl side of
// cudaback.Cube): uploaded once as stored, in parts of whole pixel ranges
// (all dates of each), it runs any model of the same dates without
// uploading again. Its calls go to the backend's GL thread; Close frees it.
type Cube struct {
	b     *Backend
	w     *worker // the context the buffers belong to
	dates []float64
	p     int
	parts []cubePart
	progs map[string]seasonProg
	// LastKernel is the time of the last Run's or Compute's shaders.
	LastKernel time.Duration
}

// seasonProg is a compiled season shader and its table's buffer.
type seasonProg struct {
	prog, table uint32
	bytes       int
	uniform     bool
}

type cubePart struct {
	p0, np   int
	buf, out uint32
	outCap   int
}

// OpenCube starts the context if needed and uploads the cube.
func (b *Backend) OpenCube(c season.Cube) (*Cube, compute.Timings, error) {
	var t compute.Timings
	if err := c.Check(); err != nil {
		return nil, t, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.start(); err != nil {
		return nil, t, err
	}
	t.Setup = b.takePending()
	cube := &Cube{b: b, w: b.w, dates: append([]float64(nil), c.Dates...), p: c.Pixels, progs: map[string]seasonProg{}}
	T := len(c.Dates)
	err := b.w.do(func(st *glState) error {
		limit := int64(seasonPartBytes)
		if st.maxBlock > 0 {
			limit = min(limit, st.maxBlock)
		}
		per := max(seasonLocal, int(limit/int64(4*T))/seasonLocal*seasonLocal)
		per = min(per, 65535*seasonLocal)
		t0 := time.Now()
		for p0 := 0; p0 < c.Pixels || (p0 == 0 && c.Pixels == 0); p0 += per {
			np := min(per, c.Pixels-p0)
			buf, err := st.newBuffer(max(4, 4*T*np), true)
			if err != nil {
				cube.free(st)
				return fmt.Errorf("device memory for a cube of %d dates × %d pixels: %w", T, c.Pixels, err)
			}
			cube.parts = append(cube.parts, cubePart{p0: p0, np: np, buf: buf})
			if c.Pixels == 0 {
				break
			}
		}
		if e := gl.GetError(); e != gl.NO_ERROR {
			cube.free(st)
			return fmt.Errorf("device memory for a cube of %d dates × %d pixels: %s", T, c.Pixels, errName(e))
		}
		if c.Pixels == 0 {
			t.Setup += time.Since(t0)
			return nil
		}
		if st.mem != nil {
			// The cube lives in CUDA memory, as the index planes do:
			// glBufferStorage's buffers read at a fraction of the card's
			// bandwidth (the package doc). The copy engines read the
			// page-locked values.
			up, err := cube.uploadCUDA(st, c)
			t.Setup += time.Since(t0) - up
			if err != nil {
				cube.free(st)
				return fmt.Errorf("cube upload: %w", err)
			}
			t.Upload, t.Total = up, up
			return nil
		}
		t.Setup += time.Since(t0)
		// The wall clock: glBufferSubData copies on the host before the
		// GPU's timestamps see anything.
		t1 := time.Now()
		_, _, wall := st.timed(func() {
			for _, pt := range cube.parts {
				gl.BindBuffer(gl.SHADER_STORAGE_BUFFER, pt.buf)
				for d := range T {
					row := c.Values[d*c.Pixels+pt.p0 : d*c.Pixels+pt.p0+pt.np]
					gl.BufferSubData(gl.SHADER_STORAGE_BUFFER, 4*d*pt.np, 4*pt.np, unsafe.Pointer(unsafe.SliceData(row)))
				}
			}
		})
		t.Upload, t.Total = wall, time.Since(t1)
		if e := gl.GetError(); e != gl.NO_ERROR {
			cube.free(st)
			return fmt.Errorf("cube upload: %s", errName(e))
		}
		return nil
	})
	if err != nil {
		return nil, t, fmt.Errorf("gl: %w", err)
	}
	return cube, t, nil
}

// uploadCUDA copies the cube's values into its parts, which live in CUDA
// memory, on the CUDA stream: the values page-locked in place (staged
// through pinned buffers when the driver refuses), one copy a date and
// part. It returns the copies' time (the mapping and page-locking before
// them are set-up).
func (c *Cube) uploadCUDA(st *glState, cube season.Cube) (time.Duration, error) {
	m := st.mem
	vals := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(cube.Values))), 4*len(cube.Values))
	u, err := m.prepareUpload(nil, [][]byte{vals}, false)
	defer u.done()
	if err != nil {
		return 0, err
	}
	T := len(c.dates)
	for _, pt := range c.parts {
		if _, err := m.devicePtr(pt.buf); err != nil {
			return 0, err
		}
	}
	t1 := time.Now()
	for _, pt := range c.parts {
		base, _ := m.devicePtr(pt.buf)
		for d := range T {
			row := vals[4*(d*cube.Pixels+pt.p0) : 4*(d*cube.Pixels+pt.p0+pt.np)]
			to := base.Add(4 * d * pt.np)
			if u.staged[0] {
				err = u.stageCopy(to, row)
			} else {
				err = m.drv.MemcpyHtoDAsync(to, unsafe.Pointer(unsafe.SliceData(row)), len(row), m.stream)
			}
			if err != nil {
				return 0, err
			}
		}
	}
	if err := m.drv.StreamSynchronize(m.stream); err != nil {
		return 0, err
	}
	return time.Since(t1), nil
}

// free deletes the cube's buffers and programs (GL thread).
func (c *Cube) free(st *glState) {
	for i := range c.parts {
		pt := &c.parts[i]
		st.deleteBuffers([]uint32{pt.buf, pt.out})
	}
	c.parts = nil
	for _, p := range c.progs {
		gl.DeleteProgram(p.prog)
		gl.DeleteBuffers(1, &p.table)
	}
	c.progs = nil
}

// Pixels is the cube's number of pixels.
func (c *Cube) Pixels() int { return c.p }

// Compute runs the plan's shader over the cube and leaves its output
// planes on the device; the shaders' time is returned and kept in
// LastKernel.
func (c *Cube) Compute(p *season.Plan) (time.Duration, error) {
	return c.run(p, nil)
}

// Run runs the plan's model over the cube and downloads its output planes
// into out (len(Outputs) planes of Pixels values).
func (c *Cube) Run(p *season.Plan, out [][]float32) (compute.Timings, error) {
	var t compute.Timings
	if len(out) != len(p.Model.Outputs()) {
		return t, fmt.Errorf("gl: %d output planes for a %s model's %d", len(out), p.Model.Kind, len(p.Model.Outputs()))
	}
	for _, o := range out {
		if len(o) != c.p {
			return t, fmt.Errorf("gl: an output plane of %d values for a cube of %d pixels", len(o), c.p)
		}
	}
	t0 := time.Now()
	k, err := c.run(p, out)
	t.Kernel, t.Total = k, time.Since(t0)
	return t, err
}

func (c *Cube) run(p *season.Plan, out [][]float32) (time.Duration, error) {
	if c.b == nil {
		return 0, errors.New("gl: the cube was closed")
	}
	if len(p.Dates) != len(c.dates) {
		return 0, fmt.Errorf("gl: a plan of %d dates for a cube of %d", len(p.Dates), len(c.dates))
	}
	for i, d := range p.Dates {
		if d != c.dates[i] {
			return 0, errors.New("gl: the plan's dates are not the cube's")
		}
	}
	if c.p == 0 {
		return 0, nil
	}
	outs := len(p.Model.Outputs())
	c.b.mu.Lock()
	defer c.b.mu.Unlock()
	if c.b.w != c.w {
		return 0, errors.New("gl: the backend was closed since the cube was opened: open it again")
	}
	var kernel time.Duration
	err := c.b.w.do(func(st *glState) error {
		key, table := genSeasonGLSL(p)
		sp, ok := c.progs[key]
		if !ok {
			prog, err := gl.CompileCompute(key)
			if err != nil {
				return fmt.Errorf("the driver did not compile the season shader: %w", err)
			}
			sp = seasonProg{prog: prog, bytes: 4 * len(table), uniform: 4*len(table) <= seasonUniformMax}
			gl.GenBuffers(1, &sp.table)
			gl.BindBuffer(gl.SHADER_STORAGE_BUFFER, sp.table)
			gl.BufferStorage(gl.SHADER_STORAGE_BUFFER, sp.bytes, unsafe.Pointer(unsafe.SliceData(table)), 0)
			c.progs[key] = sp
		}
		for i := range c.parts {
			pt := &c.parts[i]
			if need := 4 * outs * pt.np; need > pt.outCap {
				st.deleteBuffers([]uint32{pt.out})
				pt.out, pt.outCap = 0, 0
				b, err := st.newBuffer(need, true)
				if err != nil {
					return fmt.Errorf("device memory for %d output planes: %w", outs, err)
				}
				pt.out, pt.outCap = b, need
			}
		}
		if e := gl.GetError(); e != gl.NO_ERROR {
			return fmt.Errorf("device memory for %d output planes: %s", outs, errName(e))
		}
		gl.UseProgram(sp.prog)
		if sp.uniform {
			gl.BindBufferRange(uniformBuffer, 0, sp.table, 0, sp.bytes)
		} else {
			gl.BindBufferRange(gl.SHADER_STORAGE_BUFFER, 2, sp.table, 0, sp.bytes)
		}
		kernel, _, _ = st.timed(func() {
			for _, pt := range c.parts {
				gl.BindBufferRange(gl.SHADER_STORAGE_BUFFER, 0, pt.buf, 0, 4*len(c.dates)*pt.np)
				gl.BindBufferRange(gl.SHADER_STORAGE_BUFFER, 1, pt.out, 0, 4*outs*pt.np)
				gl.Uniform1ui(0, uint32(pt.np))
				gl.DispatchCompute(uint32((pt.np+seasonLocal-1)/seasonLocal), 1, 1)
			}
		})
		gl.MemoryBarrier(gl.BUFFER_UPDATE_BARRIER_BIT | shaderStorageBarrierBit)
		if out != nil {
			for _, pt := range c.parts {
				gl.BindBuffer(gl.SHADER_STORAGE_BUFFER, pt.out)
				for o := range outs {
					dst := out[o][pt.p0 : pt.p0+pt.np]
					gl.GetBufferSubData(gl.SHADER_STORAGE_BUFFER, 4*o*pt.np, 4*pt.np, unsafe.Pointer(unsafe.SliceData(dst)))
				}
			}
		}
		if e := gl.GetError(); e != gl.NO_ERROR {
			return fmt.Errorf("the season shader: %s", errName(e))
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("gl: %w", err)
	}
	c.LastKernel = kernel
	return kernel, nil
}

// Close frees the cube's buffers and shaders.
func (c *Cube) Close() {
	if c.b == nil {
		return
	}
	b := c.b
	c.b = nil
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.w == nil || b.w != c.w {
		return // the context went with the backend's Close
	}
	b.w.do(func(st *glState) error {
		c.free(st)
		return nil
	})
}

// Series copies pixel px's values on every date (its time series, NaN
// where missing) from the card into dst (one value a date), for a view
// that draws a clicked pixel's series.
func (c *Cube) Series(px int, dst []float32) error {
	if px < 0 || px >= c.p || len(dst) != len(c.dates) {
		return fmt.Errorf("gl: the series of pixel %d of %d into %d values for %d dates", px, c.p, len(dst), len(c.dates))
	}
	return c.read(func() {
		for _, pt := range c.parts {
			if px < pt.p0 || px >= pt.p0+pt.np {
				continue
			}
			gl.BindBuffer(gl.SHADER_STORAGE_BUFFER, pt.buf)
			for t := range dst {
				gl.GetBufferSubData(gl.SHADER_STORAGE_BUFFER, 4*(t*pt.np+px-pt.p0), 4, unsafe.Pointer(&dst[t]))
			}
		}
	})
}

// Date copies date t's plane (every pixel's value on that date) from the
// card into dst (Pixels values), for a view that shows any date's map.
func (c *Cube) Date(t int, dst []float32) error {
	if t < 0 || t >= len(c.dates) || len(dst) != c.p {
		return fmt.Errorf("gl: date %d of %d into %d values for %d pixels", t, len(c.dates), len(dst), c.p)
	}
	if c.p == 0 {
		return nil
	}
	return c.read(func() {
		for _, pt := range c.parts {
			gl.BindBuffer(gl.SHADER_STORAGE_BUFFER, pt.buf)
			gl.GetBufferSubData(gl.SHADER_STORAGE_BUFFER, 4*t*pt.np, 4*pt.np, unsafe.Pointer(&dst[pt.p0]))
		}
	})
}

// read runs fn on the GL thread (the cube's context current) and checks
// the driver's error.
func (c *Cube) read(fn func()) error {
	if c.b == nil {
		return errors.New("gl: the cube was closed")
	}
	c.b.mu.Lock()
	defer c.b.mu.Unlock()
	if c.b.w != c.w {
		return errors.New("gl: the backend was closed since the cube was opened: open it again")
	}
	err := c.b.w.do(func(*glState) error {
		fn()
		if e := gl.GetError(); e != gl.NO_ERROR {
			return errors.New(errName(e))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("gl: %w", err)
	}
	return nil
}
