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
	d *Driver
	h C.CUmemGenericAllocationHandle
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
	return Allocation{d: v.d, h: h}, nil
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
