package cudaback

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"time"
	"unsafe"

	"canopy/compute"
	"canopy/compute/season"
	"canopy/native/cuda"
)

// RunSeries implements season.Runner: the block's cube is uploaded as
// stored, the plan's kernel (season_ptx.go) runs one thread per pixel and
// the output planes come back. It is OpenCube, Run and Close in one; a
// caller that runs several models over one cube keeps it with OpenCube.
func (b *Backend) RunSeries(j *season.Job) (compute.Timings, error) {
	return season.RunResident(b.OpenCube, j)
}

var (
	_ season.Runner  = (*Backend)(nil)
	_ season.Devices = (*Backend)(nil)
)

// Cube is a block of a stack kept on the card: uploaded once as stored
// (T×P float32, date-major), it runs any model of the same dates (another
// model, threshold, history or monitoring start) without uploading again.
// Its calls take turns with the backend's other work; Close frees it.
type Cube struct {
	dev   residentDev
	dates []float64
	p     int
	dCube cuda.DevicePtr
	// dOut holds the last run's output planes on the device.
	dOut     cuda.DevicePtr
	outBytes int
	specs    map[string]*kernelSpec
	// LastKernel is the device time of the last Run's or Compute's kernel.
	LastKernel time.Duration
}

// OpenCube opens the device if needed and uploads the cube: Timings.Upload
// is the copy's device time, Setup the device memory and the page-locking
// of the caller's values (released once uploaded).
func (b *Backend) OpenCube(c season.Cube) (*Cube, compute.Timings, error) {
	if err := c.Check(); err != nil {
		return nil, compute.Timings{}, err
	}
	dev, setup, err := b.seasonDev()
	if err != nil {
		return nil, compute.Timings{Setup: setup}, fmt.Errorf("cuda: %w", err)
	}
	cube, t, err := openCube(dev, c)
	t.Setup += setup
	if err != nil {
		if leave, e := dev.enter(); e == nil {
			dev.close()
			leave()
		}
		return nil, t, fmt.Errorf("cuda: %w", err)
	}
	return cube, t, nil
}

// seasonDev opens the device and a stream for a cube.
func (b *Backend) seasonDev() (*cudaDev, time.Duration, error) {
	s := b.s
	s.mu.Lock()
	defer s.mu.Unlock()
	// The context is current on a thread, not a goroutine: the stream is
	// made on the thread it was made current on (a goroutine of
	// season.Deal's moved between the two got CUDA_ERROR_INVALID_CONTEXT).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	t0 := time.Now()
	if err := s.open(); err != nil {
		return nil, time.Since(t0), err
	}
	if err := s.ctx.SetCurrent(); err != nil {
		return nil, time.Since(t0), err
	}
	st, err := s.drv.StreamCreate(cuda.StreamNonBlocking)
	if err != nil {
		return nil, time.Since(t0), err
	}
	setup := time.Since(t0) + s.pending
	s.pending = 0
	return &cudaDev{s: s, gen: s.generation, stream: st, pins: map[*byte]*pinnedRange{}}, setup, nil
}

func f32bytes(v []float32) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), 4*len(v))
}

func openCube(dev residentDev, c season.Cube) (_ *Cube, t compute.Timings, err error) {
	if c.Pixels > math.MaxUint32/2 {
		return nil, t, fmt.Errorf("a block of %d pixels is more than the season kernels index", c.Pixels)
	}
	leave, err := dev.enter()
	if err != nil {
		return nil, t, err
	}
	defer leave()
	cube := &Cube{dev: dev, dates: append([]float64(nil), c.Dates...), p: c.Pixels, specs: map[string]*kernelSpec{}}
	t0 := time.Now()
	host := f32bytes(c.Values)
	if cube.dCube, err = dev.alloc(len(host)); err != nil {
		return nil, t, fmt.Errorf("device memory for a cube of %d dates × %d pixels: %w", len(c.Dates), c.Pixels, err)
	}
	defer func() {
		if err != nil {
			dev.free(cube.dCube)
		}
	}()
	if len(host) == 0 {
		t.Setup = time.Since(t0)
		return cube, t, nil
	}
	dev.pin(host)
	defer dev.unpin(host)
	t.Setup = time.Since(t0)
	t1 := time.Now()
	a, err := dev.mark()
	if err == nil {
		err = dev.upload(cube.dCube, host)
	}
	var z int
	if err == nil {
		z, err = dev.mark()
	}
	if err == nil {
		err = dev.sync()
	}
	if err != nil {
		return nil, t, fmt.Errorf("cube upload: %w", err)
	}
	t.Total = time.Since(t1)
	t.Upload, err = dev.elapsed(a, z)
	return cube, t, err
}

// Pixels is the cube's number of pixels.
func (c *Cube) Pixels() int { return c.p }

// Compute runs the plan's kernel over the cube and leaves its output
// planes on the device (for a benchmark, or a view that reads them
// there); the kernel's device time is returned and kept in LastKernel.
func (c *Cube) Compute(p *season.Plan) (time.Duration, error) {
	if c.dev == nil {
		return 0, errors.New("cuda: the cube was closed")
	}
	leave, err := c.dev.enter()
	if err != nil {
		return 0, fmt.Errorf("cuda: %w", err)
	}
	defer leave()
	return c.compute(p)
}

func (c *Cube) compute(p *season.Plan) (time.Duration, error) {
	if len(p.Dates) != len(c.dates) {
		return 0, fmt.Errorf("cuda: a plan of %d dates for a cube of %d", len(p.Dates), len(c.dates))
	}
	for i, d := range p.Dates {
		if d != c.dates[i] {
			return 0, errors.New("cuda: the plan's dates are not the cube's")
		}
	}
	outs := len(p.Model.Outputs())
	need := 4 * outs * c.p
	if need > c.outBytes {
		if c.dOut != 0 {
			c.dev.free(c.dOut)
			c.dOut, c.outBytes = 0, 0
		}
		d, err := c.dev.alloc(need)
		if err != nil {
			return 0, fmt.Errorf("cuda: device memory for %d output planes: %w", outs, err)
		}
		c.dOut, c.outBytes = d, need
	}
	if c.p == 0 {
		return 0, nil
	}
	spec := c.spec(p)
	if _, err := c.dev.prepare(spec); err != nil {
		return 0, fmt.Errorf("cuda: %w", err)
	}
	a, err := c.dev.mark()
	if err != nil {
		return 0, err
	}
	grid := (c.p + seasonBlock - 1) / seasonBlock
	if err := c.dev.launch(spec, grid, []any{uint32(c.p), c.dCube, c.dOut}); err != nil {
		return 0, fmt.Errorf("cuda: the season kernel: %w", err)
	}
	z, err := c.dev.mark()
	if err == nil {
		err = c.dev.sync()
	}
	if err != nil {
		return 0, fmt.Errorf("cuda: the season kernel: %w", err)
	}
	k, err := c.dev.elapsed(a, z)
	c.LastKernel = k
	return k, err
}

// spec returns the plan's kernel, generated once per plan content.
func (c *Cube) spec(p *season.Plan) *kernelSpec {
	key := fmt.Sprintf("%+v|%v|%v|%v", p.Model, p.Role, p.X32, p.Critval)
	if s, ok := c.specs[key]; ok {
		return s
	}
	if len(c.specs) >= KernelCacheSize {
		clear(c.specs)
	}
	s := genSeason(p, c.dev.target())
	c.specs[key] = s
	return s
}

// Run runs the plan's model over the cube and downloads its output planes
// into out (len(Outputs) planes of Pixels values).
func (c *Cube) Run(p *season.Plan, out [][]float32) (compute.Timings, error) {
	var t compute.Timings
	if c.dev == nil {
		return t, errors.New("cuda: the cube was closed")
	}
	if len(out) != len(p.Model.Outputs()) {
		return t, fmt.Errorf("cuda: %d output planes for a %s model's %d", len(out), p.Model.Kind, len(p.Model.Outputs()))
	}
	for _, o := range out {
		if len(o) != c.p {
			return t, fmt.Errorf("cuda: an output plane of %d values for a cube of %d pixels", len(o), c.p)
		}
	}
	leave, err := c.dev.enter()
	if err != nil {
		return t, fmt.Errorf("cuda: %w", err)
	}
	defer leave()
	// A plan this cube has not run yet has its kernel generated and
	// JIT-compiled first (the plan is baked into it): one-time work, the
	// run's Setup, not its Total. A window that re-runs a model whose
	// controls changed shows it apart from the kernel and the download.
	if c.p > 0 && len(p.Dates) == len(c.dates) {
		t1 := time.Now()
		jitted, err := c.dev.prepare(c.spec(p))
		if err != nil {
			return t, fmt.Errorf("cuda: %w", err)
		}
		if jitted {
			t.Setup = time.Since(t1)
		}
	}
	t0 := time.Now()
	if t.Kernel, err = c.compute(p); err != nil {
		return t, err
	}
	if c.p == 0 {
		t.Total = time.Since(t0)
		return t, nil
	}
	a, err := c.dev.mark()
	for i, o := range out {
		if err != nil {
			break
		}
		err = c.dev.download(f32bytes(o), c.dOut.Add(4*i*c.p))
	}
	var z int
	if err == nil {
		z, err = c.dev.mark()
	}
	if err == nil {
		err = c.dev.sync()
	}
	if err != nil {
		return t, fmt.Errorf("cuda: season outputs: %w", err)
	}
	t.Download, err = c.dev.elapsed(a, z)
	t.Total = time.Since(t0)
	return t, err
}

// Close frees the cube's device memory.
func (c *Cube) Close() {
	if c.dev == nil {
		return
	}
	if leave, err := c.dev.enter(); err == nil {
		c.dev.free(c.dCube)
		if c.dOut != 0 {
			c.dev.free(c.dOut)
		}
		c.dev.close()
		leave()
	}
	c.dev = nil
}

// Series copies pixel px's values on every date (its time series, NaN
// where missing) from the card into dst (one value a date), for a view
// that draws a clicked pixel's series.
func (c *Cube) Series(px int, dst []float32) error {
	if c.dev == nil {
		return errors.New("cuda: the cube was closed")
	}
	if px < 0 || px >= c.p || len(dst) != len(c.dates) {
		return fmt.Errorf("cuda: the series of pixel %d of %d into %d values for %d dates", px, c.p, len(dst), len(c.dates))
	}
	leave, err := c.dev.enter()
	if err != nil {
		return fmt.Errorf("cuda: %w", err)
	}
	defer leave()
	for t := range dst {
		if err := c.dev.download(f32bytes(dst[t:t+1]), c.dCube.Add(4*(t*c.p+px))); err != nil {
			return fmt.Errorf("cuda: %w", err)
		}
	}
	return c.dev.sync()
}

// Date copies date t's plane (every pixel's value on that date) from the
// card into dst (Pixels values), for a view that shows any date's map.
func (c *Cube) Date(t int, dst []float32) error {
	if c.dev == nil {
		return errors.New("cuda: the cube was closed")
	}
	if t < 0 || t >= len(c.dates) || len(dst) != c.p {
		return fmt.Errorf("cuda: date %d of %d into %d values for %d pixels", t, len(c.dates), len(dst), c.p)
	}
	if c.p == 0 {
		return nil
	}
	leave, err := c.dev.enter()
	if err != nil {
		return fmt.Errorf("cuda: %w", err)
	}
	defer leave()
	if err := c.dev.download(f32bytes(dst), c.dCube.Add(4*t*c.p)); err != nil {
		return fmt.Errorf("cuda: %w", err)
	}
	return c.dev.sync()
}
