package cuda

/*
#include "driver.h"

static CUmemAllocationProp cc_exportable_prop(CUdevice d)
{
	CUmemAllocationProp p = {0};
	p.type = 1;                 // CU_MEM_ALLOCATION_TYPE_PINNED
	p.requestedHandleTypes = 1; // CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
	p.location.type = 1;        // CU_MEM_LOCATION_TYPE_DEVICE
	p.location.id = d;
	return p;
}
static CUresult cc_granularity(cc_table *t, size_t *g, CUdevice d)
{
	CUmemAllocationProp p = cc_exportable_prop(d);
	return t->cuMemGetAllocationGranularity(g, &p, 1); // RECOMMENDED
}
static CUresult cc_create_exportable(cc_table *t, CUmemGenericAllocationHandle *h, size_t n, CUdevice d)
{
	CUmemAllocationProp p = cc_exportable_prop(d);
	return t->cuMemCreate(h, n, &p, 0);
}
static CUresult cc_export_fd(cc_table *t, int *fd, CUmemGenericAllocationHandle h)
{
	return t->cuMemExportToShareableHandle(fd, h, 1, 0);
}
static CUresult cc_release(cc_table *t, CUmemGenericAllocationHandle h) { return t->cuMemRelease(h); }
static CUresult cc_uuid(cc_table *t, CUuuid *u, CUdevice d) { return t->cuDeviceGetUuid(u, d); }
static CUresult cc_address_reserve(cc_table *t, CUdeviceptr *p, size_t n, size_t align) { return t->cuMemAddressReserve(p, n, align, 0, 0); }
static CUresult cc_address_free(cc_table *t, CUdeviceptr p, size_t n) { return t->cuMemAddressFree(p, n); }
static CUresult cc_map(cc_table *t, CUdeviceptr p, size_t n, CUmemGenericAllocationHandle h) { return t->cuMemMap(p, n, 0, h, 0); }
static CUresult cc_unmap(cc_table *t, CUdeviceptr p, size_t n) { return t->cuMemUnmap(p, n); }
static CUresult cc_set_access(cc_table *t, CUdeviceptr p, size_t n, CUdevice d)
{
	CUmemAccessDesc a = {0};
	a.location.type = 1; // CU_MEM_LOCATION_TYPE_DEVICE
	a.location.id = d;
	a.flags = 3;         // CU_MEM_ACCESS_FLAGS_PROT_READWRITE
	return t->cuMemSetAccess(p, n, &a, 1);
}
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// UUID returns the device's UUID (cuDeviceGetUuid), which OpenGL and
// Vulkan report for the same GPU (GL_DEVICE_UUID_EXT).
func (v Device) UUID() ([16]byte, error) {
	var u C.CUuuid
	var out [16]byte
	if err := v.d.check("cuDeviceGetUuid", C.cc_uuid(v.d.t, &u, v.h)); err != nil {
		return out, err
	}
	copy(out[:], unsafe.Slice((*byte)(unsafe.Pointer(&u.bytes[0])), 16))
	return out, nil
}

// Granularity returns the recommended size granularity of exportable
// allocations on the device (cuMemGetAllocationGranularity): sizes passed
// to CreateExportable must be multiples of it (2 MiB on current GPUs).
func (v Device) Granularity() (int, error) {
	var g C.size_t
	if err := v.d.check("cuMemGetAllocationGranularity", C.cc_granularity(v.d.t, &g, v.h)); err != nil {
		return 0, err
	}
	return int(g), nil
}

// Allocation is physical device memory made by CreateExportable.
type Allocation struct {
	d    *Driver
	h    C.CUmemGenericAllocationHandle
	dev  C.CUdevice
	size int
}

// CreateExportable allocates bytes (a multiple of Granularity) of device
// memory that can be exported as a POSIX file descriptor (cuMemCreate with
// CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR). It is not mapped into CUDA's
// address space: it is meant for another API to import.
func (v Device) CreateExportable(bytes int) (Allocation, error) {
	var h C.CUmemGenericAllocationHandle
	if err := v.d.check("cuMemCreate", C.cc_create_exportable(v.d.t, &h, C.size_t(bytes), v.h)); err != nil {
		return Allocation{}, fmt.Errorf("allocate %d exportable bytes on the device: %w", bytes, err)
	}
	return Allocation{d: v.d, h: h, dev: v.h, size: bytes}, nil
}

// ExportFD returns a new file descriptor for the allocation
// (cuMemExportToShareableHandle). Whoever imports it owns it.
func (a Allocation) ExportFD() (int, error) {
	var fd C.int
	if err := a.d.check("cuMemExportToShareableHandle", C.cc_export_fd(a.d.t, &fd, a.h)); err != nil {
		return -1, err
	}
	return int(fd), nil
}

// Release drops CUDA's handle (cuMemRelease); the memory lives on while an
// importer still holds it.
func (a Allocation) Release() error {
	if a.d == nil {
		return nil
	}
	return a.d.check("cuMemRelease", C.cc_release(a.d.t, a.h))
}

// Size is the allocation's size in bytes.
func (a Allocation) Size() int { return a.size }

// Mapping is an Allocation mapped into the current context's address
// space (Map), readable and writable by its device: copies and kernels
// reach it at Ptr.
type Mapping struct {
	d    *Driver
	ptr  DevicePtr
	size int
}

// Map makes the whole allocation reachable from CUDA: it reserves a range
// of device addresses (cuMemAddressReserve), maps the allocation there
// (cuMemMap) and grants the allocation's device read and write access
// (cuMemSetAccess). What it did is undone when a step fails. Unmap the
// mapping before the allocation's last user lets it go.
func (a Allocation) Map() (Mapping, error) {
	if a.d == nil {
		return Mapping{}, fmt.Errorf("cuMemMap: no allocation to map")
	}
	var p C.CUdeviceptr
	n := C.size_t(a.size)
	if err := a.d.check("cuMemAddressReserve", C.cc_address_reserve(a.d.t, &p, n, 0)); err != nil {
		return Mapping{}, fmt.Errorf("reserve %d bytes of device addresses: %w", a.size, err)
	}
	if err := a.d.check("cuMemMap", C.cc_map(a.d.t, p, n, a.h)); err != nil {
		a.d.check("cuMemAddressFree", C.cc_address_free(a.d.t, p, n))
		return Mapping{}, fmt.Errorf("map %d bytes of device memory: %w", a.size, err)
	}
	if err := a.d.check("cuMemSetAccess", C.cc_set_access(a.d.t, p, n, a.dev)); err != nil {
		a.d.check("cuMemUnmap", C.cc_unmap(a.d.t, p, n))
		a.d.check("cuMemAddressFree", C.cc_address_free(a.d.t, p, n))
		return Mapping{}, fmt.Errorf("grant access to %d bytes of mapped device memory: %w", a.size, err)
	}
	return Mapping{d: a.d, ptr: DevicePtr(p), size: a.size}, nil
}

// Ptr is the mapping's first device address.
func (m Mapping) Ptr() DevicePtr { return m.ptr }

// Unmap unmaps the allocation (cuMemUnmap) and frees its address range
// (cuMemAddressFree); the allocation itself lives on until released. Work
// that uses the mapping must have finished. The zero Mapping does
// nothing.
func (m Mapping) Unmap() error {
	if m.d == nil {
		return nil
	}
	p, n := C.CUdeviceptr(m.ptr), C.size_t(m.size)
	err := m.d.check("cuMemUnmap", C.cc_unmap(m.d.t, p, n))
	if e := m.d.check("cuMemAddressFree", C.cc_address_free(m.d.t, p, n)); err == nil {
		err = e
	}
	return err
}
