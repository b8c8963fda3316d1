package glback

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"unsafe"

	"canopy/native/cuda"
	"canopy/native/egl/gl"
)

// Uploads through CUDA. When the device planes live in CUDA memory
// (MemoryCUDA), a resident session's bands do not go through GL's staging
// ring: each part's allocation is mapped into CUDA's address space
// (cuMemAddressReserve, cuMemMap, cuMemSetAccess), the caller's band
// memory is page-locked in place (cuMemHostRegister) and the copy engines
// read it directly (cuMemcpyHtoDAsync on one stream, at the PCIe rate, as
// the cuda backend's session does). A band the driver refuses to
// page-lock is copied through two pinned staging buffers, the host
// filling one while the other's copy runs. GL has finished with the
// buffers before CUDA writes them (glFinish), and the stream is
// synchronised before GL reads them. Planes in GL memory (llvmpipe, other
// drivers) keep uploadPlanes.

// regMin is the smallest band, in bytes, that a CUDA upload page-locks;
// smaller ones the driver copies from pageable memory (registration would
// cost more than the copy).
const regMin = 4 << 20

// cudaStageBytes is each of the two pinned staging buffers of a CUDA
// upload whose bands could not all be page-locked.
const cudaStageBytes = 16 << 20

// How a resident session's bands went up (session.upPath).
const (
	// upGL: uploadPlanes (glBufferSubData or the write ring), followed by
	// the transfer mode.
	upGL = "gl"
	// upCUDA: cuMemcpyHtoDAsync from the page-locked bands.
	upCUDA = "cuda"
	// upCUDAStaged: cuMemcpyHtoDAsync, some band through pinned staging.
	upCUDAStaged = "cuda staged"
)

// hostPin is a page-aligned host range a CUDA upload page-locked, with
// the Go objects in it pinned.
type hostPin struct {
	base   unsafe.Pointer
	lo, hi uintptr
	pin    runtime.Pinner
}

// cudaUpload is one upload of planes through CUDA, prepared (Setup:
// mappings, page-locking, staging) before it runs (Upload).
type cudaUpload struct {
	m      *cudaMem
	pins   []*hostPin
	staged []bool // by source: copied through the staging buffers
	// refused is the driver's reason when a band is staged.
	refused string

	stage   [2]unsafe.Pointer
	stageEv [2]cuda.Event
	used    [2]bool
	slot    int
}

// prepareUpload maps every part of dst into CUDA's address space, waits
// for GL to finish with the buffers, and page-locks the sources of
// regMin bytes or more (forceStage: none, every such band is staged, as
// tests ask). Call done afterwards, on the same thread, whatever happens.
func (m *cudaMem) prepareUpload(dst []*devPlane, src [][]byte, forceStage bool) (*cudaUpload, error) {
	u := &cudaUpload{m: m, staged: make([]bool, len(src))}
	// The context made current on this thread at the start; set again, as
	// nothing else may have left it so.
	if err := m.ctx.SetCurrent(); err != nil {
		return u, err
	}
	for _, d := range dst {
		for _, b := range d.bufs {
			if _, err := m.devicePtr(b); err != nil {
				return u, err
			}
		}
	}
	if !m.hasStream {
		s, err := m.drv.StreamCreate(cuda.StreamNonBlocking)
		if err != nil {
			return u, err
		}
		m.stream, m.hasStream = s, true
	}
	var big []int
	for i, b := range src {
		if len(b) >= regMin {
			big = append(big, i)
		}
	}
	if forceStage {
		for _, i := range big {
			u.staged[i] = true
		}
		u.refused = "staging forced"
	} else {
		for _, w := range cuda.PageSpans(src, big, uintptr(os.Getpagesize())) {
			if err := u.register(src, w); err != nil {
				for _, i := range w.Members {
					u.staged[i] = true
				}
				u.refused = err.Error()
			}
		}
	}
	if slices.Contains(u.staged, true) {
		for i := range u.stage {
			p, err := m.drv.HostAlloc(cudaStageBytes, 0)
			if err != nil {
				return u, err
			}
			u.stage[i] = p
			if u.stageEv[i], err = m.drv.EventCreate(cuda.EventDisableTiming); err != nil {
				m.drv.FreeHost(p)
				u.stage[i] = nil
				return u, err
			}
		}
	}
	// GL may still be clearing the new buffers (newBuffer): it is done
	// before CUDA writes them.
	gl.Finish()
	return u, nil
}

// register page-locks the span w of the sources. A range that overlaps
// one registered already (by the cuda backend of this process:
// CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED) is refused like any other and
// staged: whether the other registration covers it all is unknown.
func (u *cudaUpload) register(src [][]byte, w cuda.PageSpan) error {
	first := w.Members[0]
	for _, m := range w.Members {
		if uintptr(unsafe.Pointer(unsafe.SliceData(src[m]))) < uintptr(unsafe.Pointer(unsafe.SliceData(src[first]))) {
			first = m
		}
	}
	fp := unsafe.Pointer(unsafe.SliceData(src[first]))
	h := &hostPin{base: unsafe.Add(fp, -int(uintptr(fp)-w.Lo)), lo: w.Lo, hi: w.Hi}
	for _, m := range w.Members {
		h.pin.Pin(unsafe.SliceData(src[m]))
	}
	if err := u.m.drv.HostRegister(h.base, int(w.Hi-w.Lo), 0); err != nil {
		h.pin.Unpin()
		return err
	}
	u.pins = append(u.pins, h)
	return nil
}

// path is how the upload moves the bands: upCUDA, or upCUDAStaged and
// why.
func (u *cudaUpload) path() string {
	if slices.Contains(u.staged, true) {
		return upCUDAStaged + " (" + u.refused + ")"
	}
	return upCUDA
}

// run copies src[i] into the device plane dst[i] (kept in parts of part
// pixels) on the upload's stream and waits for the stream.
func (u *cudaUpload) run(part int, dst []*devPlane, src [][]byte) error {
	m := u.m
	err := func() error {
		for i, d := range dst {
			host := src[i]
			var err error
			cut(part, 0, len(host)/d.size, func(p, off, at, k int) {
				if err != nil {
					return
				}
				var base cuda.DevicePtr
				if base, err = m.devicePtr(d.bufs[p]); err != nil {
					return
				}
				to := base.Add(d.off[p] + off*d.size)
				b := host[at*d.size : (at+k)*d.size]
				if u.staged[i] {
					err = u.stageCopy(to, b)
					return
				}
				err = m.drv.MemcpyHtoDAsync(to, unsafe.Pointer(unsafe.SliceData(b)), len(b), m.stream)
			})
			if err != nil {
				return err
			}
		}
		return nil
	}()
	// Whatever was queued has finished before the host memory, the
	// staging or the buffers are touched again, and before GL reads.
	if e := m.drv.StreamSynchronize(m.stream); err == nil {
		err = e
	}
	return err
}

// stageCopy queues the copy of b to the device address to through the
// staging buffers, in chunks: the host fills one buffer while the
// other's copy runs.
func (u *cudaUpload) stageCopy(to cuda.DevicePtr, b []byte) error {
	drv := u.m.drv
	for off := 0; off < len(b); off += cudaStageBytes {
		chunk := b[off:min(off+cudaStageBytes, len(b))]
		i := u.slot
		u.slot = 1 - u.slot
		if u.used[i] {
			if err := drv.EventSynchronize(u.stageEv[i]); err != nil {
				return err
			}
		}
		copyBytes(unsafe.Slice((*byte)(u.stage[i]), len(chunk)), chunk)
		if err := drv.MemcpyHtoDAsync(to.Add(off), u.stage[i], len(chunk), u.m.stream); err != nil {
			return err
		}
		if err := drv.EventRecord(u.stageEv[i], u.m.stream); err != nil {
			return err
		}
		u.used[i] = true
	}
	return nil
}

// done waits for the stream, unregisters what the upload page-locked and
// frees its staging.
func (u *cudaUpload) done() {
	drv := u.m.drv
	if u.m.hasStream {
		drv.StreamSynchronize(u.m.stream)
	}
	for _, h := range u.pins {
		drv.HostUnregister(h.base)
		h.pin.Unpin()
	}
	u.pins = nil
	for i, p := range u.stage {
		if p != nil {
			drv.EventDestroy(u.stageEv[i])
			drv.FreeHost(p)
			u.stage[i] = nil
		}
	}
}

// devicePtr returns the CUDA device address of buffer buf's memory,
// mapping its allocation into CUDA's address space on first use (the
// mapping lasts until the buffer is freed).
func (m *cudaMem) devicePtr(buf uint32) (cuda.DevicePtr, error) {
	p, ok := m.parts[buf]
	if !ok {
		return 0, fmt.Errorf("GL buffer %d is not in CUDA memory", buf)
	}
	if p.mapping == (cuda.Mapping{}) {
		mp, err := p.alloc.Map()
		if err != nil {
			return 0, fmt.Errorf("mapping a device buffer for the CUDA upload: %w", err)
		}
		p.mapping = mp
		m.parts[buf] = p
	}
	return p.mapping.Ptr(), nil
}
