package glback

import (
	"fmt"
	"time"
	"unsafe"

	"canopy/compute"
	"canopy/native/egl/gl"
)

const (
	slotBytes  = 32 << 20 // one staging slot
	slotFloats = slotBytes / 4
	slots      = 4 // slots per staging ring
)

// ring is a persistently mapped staging buffer cut into slots, each
// guarded by the fence of the last GPU copy that used it.
type ring struct {
	buf    uint32
	mem    []float32
	fences [slots]uintptr
	next   int
}

// ensureRings allocates the staging rings the first time they are needed
// and returns how long that took.
func (st *glState) ensureRings() (time.Duration, error) {
	if st.up.buf != 0 && st.down.buf != 0 {
		return 0, nil
	}
	t0 := time.Now()
	if _, err := st.ensureUpRing(); err != nil {
		return 0, err
	}
	if st.down.buf == 0 {
		var err error
		if st.down, err = newRing(gl.MAP_READ_BIT); err != nil {
			return 0, err
		}
	}
	if err := glError("allocating the staging buffers"); err != nil {
		return 0, err
	}
	return time.Since(t0), nil
}

// ensureUpRing allocates the write ring alone the first time it is
// needed (job streams bring their outputs back to buffers of their own)
// and returns how long that took.
func (st *glState) ensureUpRing() (time.Duration, error) {
	if st.up.buf != 0 {
		return 0, nil
	}
	t0 := time.Now()
	var err error
	if st.up, err = newRing(gl.MAP_WRITE_BIT); err != nil {
		return 0, err
	}
	if err := glError("allocating the staging buffer"); err != nil {
		return 0, err
	}
	return time.Since(t0), nil
}

// mapPersistent allocates a host-side buffer of the given size, mapped
// persistently and coherently with the given access, and returns it with
// its memory.
func mapPersistent(bytes int, access uint32) (uint32, unsafe.Pointer, error) {
	var buf uint32
	flags := access | gl.MAP_PERSISTENT_BIT | gl.MAP_COHERENT_BIT
	gl.GenBuffers(1, &buf)
	gl.BindBuffer(gl.COPY_WRITE_BUFFER, buf)
	gl.BufferStorage(gl.COPY_WRITE_BUFFER, bytes, nil, flags|gl.CLIENT_STORAGE_BIT)
	p := gl.MapBufferRange(gl.COPY_WRITE_BUFFER, 0, bytes, flags)
	gl.BindBuffer(gl.COPY_WRITE_BUFFER, 0)
	if p == nil {
		e := errName(gl.GetError())
		gl.DeleteBuffers(1, &buf)
		return 0, nil, fmt.Errorf("mapping a %.1f MB host buffer persistently failed (%s)", float64(bytes)/1e6, e)
	}
	return buf, p, nil
}

func unmap(buf *uint32) {
	if *buf == 0 {
		return
	}
	gl.BindBuffer(gl.COPY_WRITE_BUFFER, *buf)
	gl.UnmapBuffer(gl.COPY_WRITE_BUFFER)
	gl.BindBuffer(gl.COPY_WRITE_BUFFER, 0)
	gl.DeleteBuffers(1, buf)
	*buf = 0
}

// newRing allocates and maps a staging ring for host writes
// (gl.MAP_WRITE_BIT) or host reads (gl.MAP_READ_BIT).
func newRing(access uint32) (ring, error) {
	buf, p, err := mapPersistent(slots*slotBytes, access)
	if err != nil {
		return ring{}, err
	}
	r := ring{buf: buf, mem: unsafe.Slice((*float32)(p), slots*slotFloats)}
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
	unmap(&r.buf)
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

// copyRange is one glCopyBufferSubData of bytes from src at srcOff to dst
// at dstOff.
func copyRange(src, dst uint32, srcOff, dstOff, bytes int) {
	gl.BindBuffer(gl.COPY_READ_BUFFER, src)
	gl.BindBuffer(gl.COPY_WRITE_BUFFER, dst)
	gl.CopyBufferSubData(gl.COPY_READ_BUFFER, gl.COPY_WRITE_BUFFER, srcOff, dstOff, bytes)
}

func unbindCopy() {
	gl.BindBuffer(gl.COPY_READ_BUFFER, 0)
	gl.BindBuffer(gl.COPY_WRITE_BUFFER, 0)
}

// toParts copies n pixels from the host-side buffer src, starting at byte
// srcOff, into pixels [lo, lo+n) of a device plane.
func (st *glState) toParts(src uint32, srcOff int, plane []uint32, lo, n int) {
	st.pieces(lo, n, func(p, off, at, k int) {
		copyRange(src, plane[p], srcOff+at*4, off*4, k*4)
	})
}

// fromParts copies pixels [lo, lo+n) of a device plane into the host-side
// buffer dst from byte dstOff.
func (st *glState) fromParts(plane []uint32, lo, n int, dst uint32, dstOff int) {
	st.pieces(lo, n, func(p, off, at, k int) {
		copyRange(plane[p], dst, off*4, dstOff+at*4, k*4)
	})
}

// copyRates are the device copies measured by ceilings, in GB/s counting
// bytes read plus written: a compute-shader copy and glCopyBufferSubData.
type copyRates struct {
	shader, api float64
}

// best runs fn once, then reps times timed, and returns the shortest time.
func (st *glState) best(reps int, fn func()) time.Duration {
	fn() // warm-up: first-use costs stay out
	var b time.Duration
	for r := 0; r < reps; r++ {
		if d, _, _ := st.timed(fn); r == 0 || d < b {
			b = d
		}
	}
	return max(b, time.Nanosecond)
}

func gbps(bytes int, d time.Duration) float64 { return float64(bytes) / d.Seconds() / 1e9 }

// shaderCopy times the copy shader between two fresh planes of the given
// size, kept in device buffers of at most part pixels (0: the backend's
// part size), in GB/s read plus written.
func (st *glState) shaderCopy(bytes, part int) (float64, error) {
	if part > 0 {
		defer func(p int) { st.part = p }(st.part)
		st.part = part
	}
	n := max(4, (bytes+15)&^15/4)
	planes, err := st.newPlanes(2, n, false)
	if err != nil {
		return 0, err
	}
	defer st.deletePlanes(planes)
	d := st.best(5, func() {
		gl.UseProgram(st.copyProg)
		st.gridParts(planes, n)
	})
	return gbps(8*n, d), glError("the copy shader")
}

// ceilings measures, for a plane of the given size kept in parts as the
// kernel's are, the device-to-device copy (the faster of a copy shader and
// glCopyBufferSubData) and the staging path's transfer rates.
func (st *glState) ceilings(bytes int) (compute.Ceilings, copyRates, error) {
	n := max(4, (bytes+15)&^15/4)
	planes, err := st.newPlanes(2, n, false)
	if err != nil {
		return compute.Ceilings{}, copyRates{}, err
	}
	defer st.deletePlanes(planes)
	if _, err := st.ensureRings(); err != nil {
		return compute.Ceilings{}, copyRates{}, err
	}
	// Staged transfers: the whole plane through the ring's slots, as the
	// mapped mode moves it (without the host's copies).
	staged := func(down bool) func() {
		return func() {
			for lo, i := 0, 0; lo < n; lo, i = lo+slotFloats, i+1 {
				k := min(slotFloats, n-lo)
				if down {
					st.fromParts(planes[0], lo, k, st.down.buf, (i%slots)*slotBytes)
				} else {
					st.toParts(st.up.buf, (i%slots)*slotBytes, planes[0], lo, k)
				}
			}
		}
	}
	shader := st.best(5, func() {
		gl.UseProgram(st.copyProg)
		st.gridParts(planes, n)
	})
	api := st.best(5, func() {
		for p := range planes[0] {
			copyRange(planes[0][p], planes[1][p], 0, 0, st.partLen(n, p)*4)
		}
	})
	h2d := st.best(3, staged(false))
	d2h := st.best(3, staged(true))
	unbindCopy()
	if err := glError("measuring copy bandwidth"); err != nil {
		return compute.Ceilings{}, copyRates{}, err
	}
	r := copyRates{shader: gbps(8*n, shader), api: gbps(8*n, api)}
	return compute.Ceilings{DeviceCopy: max(r.shader, r.api), H2D: gbps(4*n, h2d), D2H: gbps(4*n, d2h)}, r, nil
}
