package cuda

/*
#cgo CFLAGS: -O2 -std=gnu11
#cgo linux LDFLAGS: -ldl
#cgo freebsd LDFLAGS: -ldl
#include <stdlib.h>
#include "driver.h"

static CUresult cc_cuInit(cc_table *t, unsigned int f) { return t->cuInit(f); }
static CUresult cc_cuDriverGetVersion(cc_table *t, int *v) { return t->cuDriverGetVersion(v); }
static CUresult cc_cuGetErrorName(cc_table *t, CUresult r, const char **s) { return t->cuGetErrorName(r, s); }
static CUresult cc_cuGetErrorString(cc_table *t, CUresult r, const char **s) { return t->cuGetErrorString(r, s); }
static CUresult cc_cuDeviceGetCount(cc_table *t, int *n) { return t->cuDeviceGetCount(n); }
static CUresult cc_cuDeviceGet(cc_table *t, CUdevice *d, int i) { return t->cuDeviceGet(d, i); }
static CUresult cc_cuDeviceGetName(cc_table *t, char *s, int n, CUdevice d) { return t->cuDeviceGetName(s, n, d); }
static CUresult cc_cuDeviceGetAttribute(cc_table *t, int *v, int a, CUdevice d) { return t->cuDeviceGetAttribute(v, a, d); }
static CUresult cc_cuDeviceTotalMem(cc_table *t, size_t *b, CUdevice d) { return t->cuDeviceTotalMem(b, d); }
static CUresult cc_cuDevicePrimaryCtxRetain(cc_table *t, CUcontext *c, CUdevice d) { return t->cuDevicePrimaryCtxRetain(c, d); }
static CUresult cc_cuDevicePrimaryCtxRelease(cc_table *t, CUdevice d) { return t->cuDevicePrimaryCtxRelease(d); }
static CUresult cc_cuCtxSetCurrent(cc_table *t, CUcontext c) { return t->cuCtxSetCurrent(c); }
static CUresult cc_cuCtxSynchronize(cc_table *t) { return t->cuCtxSynchronize(); }
static CUresult cc_cuModuleLoadData(cc_table *t, CUmodule *m, const void *img) { return t->cuModuleLoadData(m, img); }
static CUresult cc_cuModuleUnload(cc_table *t, CUmodule m) { return t->cuModuleUnload(m); }
static CUresult cc_cuModuleGetFunction(cc_table *t, CUfunction *f, CUmodule m, const char *n) { return t->cuModuleGetFunction(f, m, n); }
static CUresult cc_cuMemGetInfo(cc_table *t, size_t *f, size_t *n) { return t->cuMemGetInfo(f, n); }
static CUresult cc_cuMemAlloc(cc_table *t, CUdeviceptr *p, size_t n) { return t->cuMemAlloc(p, n); }
static CUresult cc_cuMemFree(cc_table *t, CUdeviceptr p) { return t->cuMemFree(p); }
static CUresult cc_cuMemHostAlloc(cc_table *t, void **p, size_t n, unsigned int f) { return t->cuMemHostAlloc(p, n, f); }
static CUresult cc_cuMemFreeHost(cc_table *t, void *p) { return t->cuMemFreeHost(p); }
static CUresult cc_cuMemHostRegister(cc_table *t, void *p, size_t n, unsigned int f) { return t->cuMemHostRegister(p, n, f); }
static CUresult cc_cuMemHostUnregister(cc_table *t, void *p) { return t->cuMemHostUnregister(p); }
static CUresult cc_cuMemcpyHtoDAsync(cc_table *t, CUdeviceptr d, const void *s, size_t n, CUstream st) { return t->cuMemcpyHtoDAsync(d, s, n, st); }
static CUresult cc_cuMemcpyDtoHAsync(cc_table *t, void *d, CUdeviceptr s, size_t n, CUstream st) { return t->cuMemcpyDtoHAsync(d, s, n, st); }
static CUresult cc_cuMemcpyDtoDAsync(cc_table *t, CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) { return t->cuMemcpyDtoDAsync(d, s, n, st); }
static CUresult cc_cuMemsetD8Async(cc_table *t, CUdeviceptr d, unsigned char v, size_t n, CUstream st) { return t->cuMemsetD8Async(d, v, n, st); }
static CUresult cc_cuMemsetD16Async(cc_table *t, CUdeviceptr d, unsigned short v, size_t n, CUstream st) { return t->cuMemsetD16Async(d, v, n, st); }
static CUresult cc_cuMemsetD32Async(cc_table *t, CUdeviceptr d, unsigned int v, size_t n, CUstream st) { return t->cuMemsetD32Async(d, v, n, st); }
static CUresult cc_cuStreamCreate(cc_table *t, CUstream *s, unsigned int f) { return t->cuStreamCreate(s, f); }
static CUresult cc_cuStreamDestroy(cc_table *t, CUstream s) { return t->cuStreamDestroy(s); }
static CUresult cc_cuStreamSynchronize(cc_table *t, CUstream s) { return t->cuStreamSynchronize(s); }
static CUresult cc_cuStreamWaitEvent(cc_table *t, CUstream s, CUevent e) { return t->cuStreamWaitEvent(s, e, 0); }
static CUresult cc_cuEventCreate(cc_table *t, CUevent *e, unsigned int f) { return t->cuEventCreate(e, f); }
static CUresult cc_cuEventDestroy(cc_table *t, CUevent e) { return t->cuEventDestroy(e); }
static CUresult cc_cuEventRecord(cc_table *t, CUevent e, CUstream s) { return t->cuEventRecord(e, s); }
static CUresult cc_cuEventSynchronize(cc_table *t, CUevent e) { return t->cuEventSynchronize(e); }
static CUresult cc_cuEventElapsedTime(cc_table *t, float *ms, CUevent a, CUevent b) { return t->cuEventElapsedTime(ms, a, b); }
*/
import "C"

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"
	"unsafe"
)

// Driver is an opened CUDA driver library. Its methods are the driver API
// functions; they are safe to call from any goroutine, but CUDA keeps the
// current context per OS thread (see Context.SetCurrent).
type Driver struct {
	t   *C.cc_table
	lib string
}

// Load opens the driver library lib ("libcuda.so.1") and resolves every
// function Canopy uses. It does not initialise the driver (see Init). The
// error is a *LoadError naming the library or the missing symbol.
func Load(lib string) (*Driver, error) {
	t := (*C.cc_table)(C.calloc(1, C.size_t(unsafe.Sizeof(C.cc_table{}))))
	if t == nil {
		return nil, &LoadError{Library: lib, Msg: "out of memory"}
	}
	cname := C.CString(lib)
	defer C.free(unsafe.Pointer(cname))
	var msg [512]C.char
	switch C.cc_open(t, cname, &msg[0], C.size_t(len(msg))) {
	case 0:
		return &Driver{t: t, lib: lib}, nil
	case 2:
		C.free(unsafe.Pointer(t))
		return nil, &LoadError{Library: lib, Symbol: C.GoString(&msg[0])}
	default:
		C.free(unsafe.Pointer(t))
		return nil, &LoadError{Library: lib, Msg: C.GoString(&msg[0])}
	}
}

// Library is the file the driver was loaded from.
func (d *Driver) Library() string { return d.lib }

// Close unloads the library. Nothing loaded from it may be used afterwards.
func (d *Driver) Close() {
	if d.t != nil {
		C.cc_close(d.t)
		C.free(unsafe.Pointer(d.t))
		d.t = nil
	}
}

func (d *Driver) check(fn string, r C.CUresult) error {
	if r == 0 {
		return nil
	}
	e := &Error{Func: fn, Code: Result(r)}
	var s *C.char
	if C.cc_cuGetErrorName(d.t, r, &s) == 0 && s != nil {
		e.Name = C.GoString(s)
	}
	if C.cc_cuGetErrorString(d.t, r, &s) == 0 && s != nil {
		e.Text = C.GoString(s)
	}
	return e
}

// Init initialises the driver (cuInit). It must succeed before any other
// call but Version.
func (d *Driver) Init() error { return d.check("cuInit", C.cc_cuInit(d.t, 0)) }

// Version is the CUDA version the driver supports, as 1000*major + 10*minor
// (cuDriverGetVersion).
func (d *Driver) Version() (int, error) {
	var v C.int
	err := d.check("cuDriverGetVersion", C.cc_cuDriverGetVersion(d.t, &v))
	return int(v), err
}

// DeviceCount is the number of CUDA devices (cuDeviceGetCount).
func (d *Driver) DeviceCount() (int, error) {
	var n C.int
	err := d.check("cuDeviceGetCount", C.cc_cuDeviceGetCount(d.t, &n))
	return int(n), err
}

// Device is a CUDA device of a driver.
type Device struct {
	d *Driver
	h C.CUdevice
}

// Device returns the device of the given ordinal (cuDeviceGet).
func (d *Driver) Device(ordinal int) (Device, error) {
	var h C.CUdevice
	err := d.check("cuDeviceGet", C.cc_cuDeviceGet(d.t, &h, C.int(ordinal)))
	return Device{d: d, h: h}, err
}

// Name is the device's marketing name (cuDeviceGetName).
func (v Device) Name() (string, error) {
	var buf [256]C.char
	if err := v.d.check("cuDeviceGetName", C.cc_cuDeviceGetName(v.d.t, &buf[0], C.int(len(buf)), v.h)); err != nil {
		return "", err
	}
	return C.GoString(&buf[0]), nil
}

// Attribute is a CUdevice_attribute.
type Attribute int

// The device attributes Canopy reads.
const (
	AttrMultiprocessorCount    Attribute = 16
	AttrPCIBusID               Attribute = 33
	AttrPCIDeviceID            Attribute = 34
	AttrMemoryClockRate        Attribute = 36 // kHz
	AttrGlobalMemoryBusWidth   Attribute = 37 // bits
	AttrAsyncEngineCount       Attribute = 40
	AttrComputeCapabilityMajor Attribute = 75
	AttrComputeCapabilityMinor Attribute = 76
)

// Attribute reads one device attribute (cuDeviceGetAttribute).
func (v Device) Attribute(a Attribute) (int, error) {
	var x C.int
	err := v.d.check("cuDeviceGetAttribute", C.cc_cuDeviceGetAttribute(v.d.t, &x, C.int(a), v.h))
	return int(x), err
}

// TotalMem is the device memory in bytes (cuDeviceTotalMem_v2).
func (v Device) TotalMem() (uint64, error) {
	var b C.size_t
	err := v.d.check("cuDeviceTotalMem_v2", C.cc_cuDeviceTotalMem(v.d.t, &b, v.h))
	return uint64(b), err
}

// Context is a CUDA context.
type Context struct {
	d   *Driver
	dev Device
	h   C.CUcontext
}

// RetainPrimaryContext returns the device's primary context, the one the
// CUDA runtime and libraries such as CuPy share (cuDevicePrimaryCtxRetain).
// Release it once per retain.
func (v Device) RetainPrimaryContext() (*Context, error) {
	var h C.CUcontext
	if err := v.d.check("cuDevicePrimaryCtxRetain", C.cc_cuDevicePrimaryCtxRetain(v.d.t, &h, v.h)); err != nil {
		return nil, err
	}
	return &Context{d: v.d, dev: v, h: h}, nil
}

// Release drops this retain of the primary context
// (cuDevicePrimaryCtxRelease_v2).
func (c *Context) Release() error {
	return c.d.check("cuDevicePrimaryCtxRelease_v2", C.cc_cuDevicePrimaryCtxRelease(c.d.t, c.dev.h))
}

// SetCurrent makes c the calling OS thread's current context
// (cuCtxSetCurrent). Lock the goroutine to its thread first.
func (c *Context) SetCurrent() error {
	return c.d.check("cuCtxSetCurrent", C.cc_cuCtxSetCurrent(c.d.t, c.h))
}

// Synchronize waits for all work of the current context (cuCtxSynchronize).
func (d *Driver) Synchronize() error {
	return d.check("cuCtxSynchronize", C.cc_cuCtxSynchronize(d.t))
}

// Module is a loaded CUDA module.
type Module struct {
	d *Driver
	h C.CUmodule
}

// LoadModule loads a cubin, PTX or fat binary image into the current
// context (cuModuleLoadData); the driver picks the machine code for the
// device or compiles the PTX.
func (d *Driver) LoadModule(image []byte) (*Module, error) {
	if len(image) == 0 {
		return nil, fmt.Errorf("cuModuleLoadData: the module image is empty")
	}
	// The driver reads the image during the call only; a C copy keeps Go
	// memory out of its hands.
	p := C.CBytes(image)
	defer C.free(p)
	var h C.CUmodule
	if err := d.check("cuModuleLoadData", C.cc_cuModuleLoadData(d.t, &h, p)); err != nil {
		return nil, err
	}
	return &Module{d: d, h: h}, nil
}

// JITLog is what the driver's JIT compiler said while loading PTX.
type JITLog struct {
	// Error is the error log: empty when the PTX compiled. ptxas writes
	// one line per problem ("ptxas application ptx input, line 42; error
	// : ...").
	Error string
	// Info is the verbose information log (registers and memory used per
	// kernel).
	Info string
	// Wall is the compiler's own wall time.
	Wall time.Duration
}

// jitLogBytes is the size of each JIT log buffer.
const jitLogBytes = 16 << 10

// LoadModuleJIT loads PTX text (or any image) into the current context
// with cuModuleLoadDataEx, the driver compiling the PTX for the device,
// and returns the compiler's logs with the module, or with the error.
func (d *Driver) LoadModuleJIT(ptx []byte) (*Module, JITLog, error) {
	var log JITLog
	if len(ptx) == 0 {
		return nil, log, fmt.Errorf("cuModuleLoadDataEx: the module image is empty")
	}
	// PTX is read as a NUL-terminated string.
	img := C.CBytes(append(ptx[:len(ptx):len(ptx)], 0))
	defer C.free(img)
	errBuf := (*C.char)(C.malloc(jitLogBytes))
	infoBuf := (*C.char)(C.malloc(jitLogBytes))
	defer C.free(unsafe.Pointer(errBuf))
	defer C.free(unsafe.Pointer(infoBuf))
	var h C.CUmodule
	var ms C.float
	r := C.cc_load_jit(d.t, &h, img, errBuf, jitLogBytes, infoBuf, jitLogBytes, &ms)
	log.Error, log.Info = C.GoString(errBuf), C.GoString(infoBuf)
	if f := float64(ms); f > 0 && f < 1e7 {
		log.Wall = time.Duration(math.Round(f * 1e6))
	}
	if err := d.check("cuModuleLoadDataEx", r); err != nil {
		return nil, log, err
	}
	return &Module{d: d, h: h}, log, nil
}

// Unload unloads the module (cuModuleUnload).
func (m *Module) Unload() error { return m.d.check("cuModuleUnload", C.cc_cuModuleUnload(m.d.t, m.h)) }

// Function is a kernel of a module.
type Function struct{ h C.CUfunction }

// Function looks up an extern "C" kernel by name (cuModuleGetFunction).
func (m *Module) Function(name string) (Function, error) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var h C.CUfunction
	if err := m.d.check("cuModuleGetFunction", C.cc_cuModuleGetFunction(m.d.t, &h, m.h, cname)); err != nil {
		return Function{}, fmt.Errorf("kernel %s: %w", name, err)
	}
	return Function{h: h}, nil
}

// MemInfo returns the free and total device memory of the current context
// in bytes (cuMemGetInfo_v2).
func (d *Driver) MemInfo() (free, total uint64, err error) {
	var f, t C.size_t
	err = d.check("cuMemGetInfo_v2", C.cc_cuMemGetInfo(d.t, &f, &t))
	return uint64(f), uint64(t), err
}

// DevicePtr is a device address.
type DevicePtr uint64

// Add returns p advanced by off bytes.
func (p DevicePtr) Add(off int) DevicePtr { return p + DevicePtr(off) }

// MemAlloc allocates device memory (cuMemAlloc_v2). The address is aligned
// to at least 256 bytes.
func (d *Driver) MemAlloc(bytes int) (DevicePtr, error) {
	var p C.CUdeviceptr
	if err := d.check("cuMemAlloc_v2", C.cc_cuMemAlloc(d.t, &p, C.size_t(bytes))); err != nil {
		return 0, fmt.Errorf("allocate %d bytes on the device: %w", bytes, err)
	}
	return DevicePtr(p), nil
}

// MemFree frees device memory (cuMemFree_v2).
func (d *Driver) MemFree(p DevicePtr) error {
	return d.check("cuMemFree_v2", C.cc_cuMemFree(d.t, C.CUdeviceptr(p)))
}

// Flags of HostAlloc (CU_MEMHOSTALLOC_*).
const (
	HostAllocPortable      = 1
	HostAllocDeviceMap     = 2
	HostAllocWriteCombined = 4
)

// HostAlloc allocates page-locked host memory the device can reach by DMA
// (cuMemHostAlloc). It is C memory: free it with FreeHost.
func (d *Driver) HostAlloc(bytes int, flags uint) (unsafe.Pointer, error) {
	var p unsafe.Pointer
	if err := d.check("cuMemHostAlloc", C.cc_cuMemHostAlloc(d.t, &p, C.size_t(bytes), C.uint(flags))); err != nil {
		return nil, fmt.Errorf("allocate %d bytes of pinned host memory: %w", bytes, err)
	}
	return p, nil
}

// FreeHost frees memory from HostAlloc (cuMemFreeHost).
func (d *Driver) FreeHost(p unsafe.Pointer) error {
	return d.check("cuMemFreeHost", C.cc_cuMemFreeHost(d.t, p))
}

// HostRegisterPortable is HostRegister's flag CU_MEMHOSTREGISTER_PORTABLE:
// the range is page-locked for every context of the process (every
// device's), not only the current one.
const HostRegisterPortable = 1

// HostRegister page-locks an existing host range so that the device can
// reach it by DMA (cuMemHostRegister_v2). The range must stay valid and in
// place until HostUnregister: Go memory must be pinned (runtime.Pinner).
func (d *Driver) HostRegister(p unsafe.Pointer, bytes int, flags uint) error {
	return d.check("cuMemHostRegister_v2", C.cc_cuMemHostRegister(d.t, p, C.size_t(bytes), C.uint(flags)))
}

// HostUnregister undoes HostRegister of the range starting at p
// (cuMemHostUnregister).
func (d *Driver) HostUnregister(p unsafe.Pointer) error {
	return d.check("cuMemHostUnregister", C.cc_cuMemHostUnregister(d.t, p))
}

// Stream is a CUDA stream; the zero Stream is the legacy default stream.
type Stream struct{ h C.CUstream }

// Flags of StreamCreate.
const (
	// StreamNonBlocking: the stream does not synchronise with the legacy
	// default stream.
	StreamNonBlocking = 1
)

// StreamCreate creates a stream (cuStreamCreate).
func (d *Driver) StreamCreate(flags uint) (Stream, error) {
	var s C.CUstream
	err := d.check("cuStreamCreate", C.cc_cuStreamCreate(d.t, &s, C.uint(flags)))
	return Stream{h: s}, err
}

// StreamDestroy destroys a stream once its work is done (cuStreamDestroy_v2).
func (d *Driver) StreamDestroy(s Stream) error {
	return d.check("cuStreamDestroy_v2", C.cc_cuStreamDestroy(d.t, s.h))
}

// StreamSynchronize waits for all work queued on s (cuStreamSynchronize).
func (d *Driver) StreamSynchronize(s Stream) error {
	return d.check("cuStreamSynchronize", C.cc_cuStreamSynchronize(d.t, s.h))
}

// StreamWaitEvent makes later work on s wait for e (cuStreamWaitEvent).
func (d *Driver) StreamWaitEvent(s Stream, e Event) error {
	return d.check("cuStreamWaitEvent", C.cc_cuStreamWaitEvent(d.t, s.h, e.h))
}

// MemcpyHtoDAsync queues a copy of bytes from host src to device dst on s
// (cuMemcpyHtoDAsync_v2). It is asynchronous only from page-locked memory,
// which must stay in place until the copy is done.
func (d *Driver) MemcpyHtoDAsync(dst DevicePtr, src unsafe.Pointer, bytes int, s Stream) error {
	return d.check("cuMemcpyHtoDAsync_v2", C.cc_cuMemcpyHtoDAsync(d.t, C.CUdeviceptr(dst), src, C.size_t(bytes), s.h))
}

// MemcpyDtoHAsync queues a copy of bytes from device src to host dst on s
// (cuMemcpyDtoHAsync_v2).
func (d *Driver) MemcpyDtoHAsync(dst unsafe.Pointer, src DevicePtr, bytes int, s Stream) error {
	return d.check("cuMemcpyDtoHAsync_v2", C.cc_cuMemcpyDtoHAsync(d.t, dst, C.CUdeviceptr(src), C.size_t(bytes), s.h))
}

// MemsetAsync queues setting count elements of size bytes (1, 2 or 4)
// from dst to value's low bytes on s (cuMemsetD8Async, cuMemsetD16Async,
// cuMemsetD32Async).
func (d *Driver) MemsetAsync(dst DevicePtr, value uint32, size, count int, s Stream) error {
	switch size {
	case 1:
		return d.check("cuMemsetD8Async", C.cc_cuMemsetD8Async(d.t, C.CUdeviceptr(dst), C.uchar(value), C.size_t(count), s.h))
	case 2:
		return d.check("cuMemsetD16Async", C.cc_cuMemsetD16Async(d.t, C.CUdeviceptr(dst), C.ushort(value), C.size_t(count), s.h))
	case 4:
		return d.check("cuMemsetD32Async", C.cc_cuMemsetD32Async(d.t, C.CUdeviceptr(dst), C.uint(value), C.size_t(count), s.h))
	}
	return fmt.Errorf("cuMemsetAsync: no %d-byte elements", size)
}

// MemcpyDtoDAsync queues a device-to-device copy on s
// (cuMemcpyDtoDAsync_v2).
func (d *Driver) MemcpyDtoDAsync(dst, src DevicePtr, bytes int, s Stream) error {
	return d.check("cuMemcpyDtoDAsync_v2", C.cc_cuMemcpyDtoDAsync(d.t, C.CUdeviceptr(dst), C.CUdeviceptr(src), C.size_t(bytes), s.h))
}

// Event is a CUDA event.
type Event struct{ h C.CUevent }

// Flags of EventCreate (CU_EVENT_*).
const (
	EventDefault       = 0
	EventBlockingSync  = 1
	EventDisableTiming = 2
)

// EventCreate creates an event (cuEventCreate).
func (d *Driver) EventCreate(flags uint) (Event, error) {
	var e C.CUevent
	err := d.check("cuEventCreate", C.cc_cuEventCreate(d.t, &e, C.uint(flags)))
	return Event{h: e}, err
}

// EventDestroy destroys an event (cuEventDestroy_v2).
func (d *Driver) EventDestroy(e Event) error {
	return d.check("cuEventDestroy_v2", C.cc_cuEventDestroy(d.t, e.h))
}

// EventRecord records e on s (cuEventRecord).
func (d *Driver) EventRecord(e Event, s Stream) error {
	return d.check("cuEventRecord", C.cc_cuEventRecord(d.t, e.h, s.h))
}

// EventSynchronize waits until e has happened (cuEventSynchronize).
func (d *Driver) EventSynchronize(e Event) error {
	return d.check("cuEventSynchronize", C.cc_cuEventSynchronize(d.t, e.h))
}

// EventElapsed is the device time between two completed events
// (cuEventElapsedTime, resolution about half a microsecond).
func (d *Driver) EventElapsed(start, end Event) (time.Duration, error) {
	var ms C.float
	if err := d.check("cuEventElapsedTime", C.cc_cuEventElapsedTime(d.t, &ms, start.h, end.h)); err != nil {
		return 0, err
	}
	return time.Duration(math.Round(float64(ms) * 1e6)), nil
}

// Dim3 is a grid or block shape.
type Dim3 struct{ X, Y, Z uint32 }

// Launch queues kernel f on s over grid×block threads with sharedMem bytes
// of dynamic shared memory (cuLaunchKernel). The arguments follow the
// kernel's parameter list and may be DevicePtr, uint64, int64, uint32,
// int32, float32 or float64; each is laid out at its natural alignment.
func (d *Driver) Launch(f Function, grid, block Dim3, sharedMem uint32, s Stream, args ...any) error {
	var packed [8 * C.CC_MAX_ARGS]byte
	var offs [C.CC_MAX_ARGS]C.int
	var goOffs [C.CC_MAX_ARGS]int
	if err := packArgs(packed[:], goOffs[:], args); err != nil {
		return err
	}
	for i := range args {
		offs[i] = C.int(goOffs[i])
	}
	r := C.cc_launch(d.t, f.h, C.uint(grid.X), C.uint(grid.Y), C.uint(grid.Z),
		C.uint(block.X), C.uint(block.Y), C.uint(block.Z), C.uint(sharedMem), s.h,
		unsafe.Pointer(&packed[0]), &offs[0], C.int(len(args)))
	return d.check("cuLaunchKernel", r)
}

// packArgs lays args out in packed at their natural alignment, as a C
// struct of the kernel's parameters would be, and writes each offset.
func packArgs(packed []byte, offs []int, args []any) error {
	if len(args) > len(offs) {
		return fmt.Errorf("cuLaunchKernel: %d arguments, at most %d", len(args), len(offs))
	}
	off := 0
	for i, a := range args {
		var b [8]byte
		var size int
		switch v := a.(type) {
		case DevicePtr:
			size = 8
			binary.NativeEndian.PutUint64(b[:], uint64(v))
		case uint64:
			size = 8
			binary.NativeEndian.PutUint64(b[:], v)
		case int64:
			size = 8
			binary.NativeEndian.PutUint64(b[:], uint64(v))
		case float64:
			size = 8
			binary.NativeEndian.PutUint64(b[:], math.Float64bits(v))
		case uint32:
			size = 4
			binary.NativeEndian.PutUint32(b[:], v)
		case int32:
			size = 4
			binary.NativeEndian.PutUint32(b[:], uint32(v))
		case float32:
			size = 4
			binary.NativeEndian.PutUint32(b[:], math.Float32bits(v))
		default:
			return fmt.Errorf("cuLaunchKernel: argument %d has unsupported type %T", i, a)
		}
		off = (off + size - 1) &^ (size - 1)
		if off+size > len(packed) {
			return fmt.Errorf("cuLaunchKernel: arguments exceed %d bytes", len(packed))
		}
		copy(packed[off:off+size], b[:size])
		offs[i] = off
		off += size
	}
	return nil
}
