package glback

import (
	"errors"
	"fmt"

	"canopy/native/cuda"
	"canopy/native/egl"
	"canopy/native/egl/gl"
)

// Where the device planes live (tuning.memory, CANOPY_GL_MEMORY).
const (
	// MemoryAuto uses MemoryCUDA where it works, else MemoryGL.
	MemoryAuto = "auto"
	// MemoryGL allocates the planes with glBufferStorage.
	MemoryGL = "gl"
	// MemoryCUDA allocates them with the CUDA driver (cuMemCreate, 2 MiB
	// pages) and imports them into GL (GL_EXT_memory_object_fd). Only the
	// driver library libcuda is needed, no CUDA toolkit.
	MemoryCUDA = "cuda"
)

// EnvMemory names the environment variable that picks where the device
// planes live: auto (default), gl or cuda.
const EnvMemory = "CANOPY_GL_MEMORY"

// cudaMem allocates GL buffers in CUDA memory. It lives on the owner
// thread.
type cudaMem struct {
	drv   *cuda.Driver
	dev   cuda.Device
	ctx   *cuda.Context
	gran  int
	parts map[uint32]cudaPart // by GL buffer

	// For uploads through CUDA (cudaup.go): the stream, made on first use.
	stream    cuda.Stream
	hasStream bool
}

type cudaPart struct {
	obj   uint32 // GL memory object
	alloc cuda.Allocation
	// The allocation in CUDA's address space, mapped on first use
	// (devicePtr); the zero Mapping when it is not.
	mapping cuda.Mapping
}

// newCUDAMem opens the CUDA driver on the device GL renders with (matched
// by UUID) when the context can import memory from it.
func newCUDAMem() (*cudaMem, error) {
	if !hasExtension("GL_EXT_memory_object") || !hasExtension("GL_EXT_memory_object_fd") {
		return nil, errors.New("the GL driver lacks GL_EXT_memory_object_fd")
	}
	if err := gl.InitMemoryObjects(egl.ProcAddress); err != nil {
		return nil, err
	}
	var n int32
	gl.GetIntegerv(gl.NUM_DEVICE_UUIDS_EXT, &n)
	if n < 1 {
		return nil, errors.New("the GL driver reports no device UUID")
	}
	var glUUID [16]byte
	gl.GetUnsignedBytei_vEXT(gl.DEVICE_UUID_EXT, 0, &glUUID[0])
	if err := glError("reading the GL device UUID"); err != nil {
		return nil, err
	}
	drv, err := cuda.Open()
	if err != nil {
		return nil, err
	}
	m := &cudaMem{drv: drv, parts: map[uint32]cudaPart{}}
	count, err := drv.DeviceCount()
	for i := 0; err == nil && i < count; i++ {
		var d cuda.Device
		if d, err = drv.Device(i); err != nil {
			break
		}
		if u, e := d.UUID(); e == nil && u == glUUID {
			m.dev = d
			if m.ctx, err = d.RetainPrimaryContext(); err != nil {
				break
			}
			if err = m.ctx.SetCurrent(); err != nil {
				break
			}
			if m.gran, err = d.Granularity(); err != nil {
				break
			}
			return m, nil
		}
	}
	m.close()
	if err == nil {
		err = errors.New("no CUDA device has the GL device's UUID")
	}
	return nil, err
}

// buffer returns a new GL buffer of bytes in CUDA memory.
func (m *cudaMem) buffer(bytes int) (uint32, error) {
	size := (bytes + m.gran - 1) / m.gran * m.gran
	a, err := m.dev.CreateExportable(size)
	if err != nil {
		return 0, err
	}
	fd, err := a.ExportFD()
	if err != nil {
		a.Release()
		return 0, err
	}
	var obj, buf uint32
	gl.CreateMemoryObjectsEXT(1, &obj)
	// One allocation per memory object: the NVIDIA driver needs to be told
	// (without it, buffers read and wrote stale memory on the H200).
	one := int32(1)
	gl.MemoryObjectParameterivEXT(obj, gl.DEDICATED_MEMORY_OBJECT_EXT, &one)
	gl.ImportMemoryFdEXT(obj, uint64(size), gl.HANDLE_TYPE_OPAQUE_FD_EXT, int32(fd))
	gl.GenBuffers(1, &buf)
	gl.BindBuffer(gl.COPY_WRITE_BUFFER, buf)
	gl.BufferStorageMemEXT(gl.COPY_WRITE_BUFFER, bytes, obj, 0)
	gl.BindBuffer(gl.COPY_WRITE_BUFFER, 0)
	if err := glError(fmt.Sprintf("importing %.1f MB of CUDA memory", float64(size)/1e6)); err != nil {
		gl.DeleteBuffers(1, &buf)
		gl.DeleteMemoryObjectsEXT(1, &obj)
		a.Release()
		return 0, err
	}
	m.parts[buf] = cudaPart{obj: obj, alloc: a}
	return buf, nil
}

// free deletes a buffer made by buffer; other buffers are left alone.
func (m *cudaMem) free(buf uint32) bool {
	p, ok := m.parts[buf]
	if !ok {
		return false
	}
	gl.DeleteBuffers(1, &buf)
	gl.DeleteMemoryObjectsEXT(1, &p.obj)
	p.mapping.Unmap()
	p.alloc.Release()
	delete(m.parts, buf)
	return true
}

func (m *cudaMem) close() {
	if m.hasStream {
		m.drv.StreamSynchronize(m.stream)
		m.drv.StreamDestroy(m.stream)
		m.hasStream = false
	}
	for buf := range m.parts {
		m.free(buf)
	}
	if m.ctx != nil {
		m.ctx.Release()
	}
	m.drv.Close()
}
