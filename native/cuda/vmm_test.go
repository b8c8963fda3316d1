package cuda

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"testing"
	"unsafe"
)

// TestExportable allocates exportable device memory, exports it as a file
// descriptor and releases it, on every device; the UUIDs are distinct and
// not zero (OpenGL names its device by the same UUID).
func TestExportable(t *testing.T) {
	d, err := Open()
	if err != nil {
		skipUnlessGPU(t, false, fmt.Sprintf("no usable CUDA driver: %v", err))
	}
	defer d.Close()
	n, err := d.DeviceCount()
	if err != nil || n == 0 {
		skipUnlessGPU(t, false, fmt.Sprintf("no CUDA device: %d, %v", n, err))
	}
	seen := map[[16]byte]bool{}
	for i := 0; i < n; i++ {
		dev, err := d.Device(i)
		if err != nil {
			t.Fatal(err)
		}
		u, err := dev.UUID()
		if err != nil || u == ([16]byte{}) || seen[u] {
			t.Fatalf("device %d: UUID %x, %v", i, u, err)
		}
		seen[u] = true
		ctx, err := dev.RetainPrimaryContext()
		if err != nil {
			t.Fatal(err)
		}
		g, err := dev.Granularity()
		if err != nil || g <= 0 || g&(g-1) != 0 {
			t.Fatalf("device %d: granularity %d, %v", i, g, err)
		}
		a, err := dev.CreateExportable(2 * g)
		if err != nil {
			t.Fatal(err)
		}
		fd, err := a.ExportFD()
		if err != nil || fd < 0 {
			t.Fatalf("export: %d, %v", fd, err)
		}
		if err := os.NewFile(uintptr(fd), "cuda-memory").Close(); err != nil {
			t.Errorf("the exported descriptor is not a file: %v", err)
		}
		if err := a.Release(); err != nil {
			t.Error(err)
		}
		if _, err := dev.CreateExportable(g + 1); err == nil {
			t.Error("an allocation that is no multiple of the granularity succeeded")
		}
		ctx.Release()
		t.Logf("device %d: UUID %x, granularity %d KiB", i, u, g>>10)
	}
}

// TestMapExportable maps exportable memory into CUDA's address space and
// copies through it: a pattern written at an offset across the
// allocation's two granules comes back unchanged, and the bytes before it
// are still the ones written first. Unmapping, then releasing, succeeds.
func TestMapExportable(t *testing.T) {
	d, err := Open()
	if err != nil {
		skipUnlessGPU(t, false, fmt.Sprintf("no usable CUDA driver: %v", err))
	}
	defer d.Close()
	if n, err := d.DeviceCount(); err != nil || n == 0 {
		skipUnlessGPU(t, false, fmt.Sprintf("no CUDA device: %d, %v", n, err))
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	dev, err := d.Device(0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, err := dev.RetainPrimaryContext()
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Release()
	if err := ctx.SetCurrent(); err != nil {
		t.Fatal(err)
	}
	g, err := dev.Granularity()
	if err != nil {
		t.Fatal(err)
	}
	a, err := dev.CreateExportable(2 * g)
	if err != nil {
		t.Fatal(err)
	}
	if a.Size() != 2*g {
		t.Errorf("size %d, want %d", a.Size(), 2*g)
	}
	m, err := a.Map()
	if err != nil {
		a.Release()
		t.Fatal(err)
	}
	s, err := d.StreamCreate(StreamNonBlocking)
	if err != nil {
		t.Fatal(err)
	}
	defer d.StreamDestroy(s)
	first := make([]byte, 2*g)
	for i := range first {
		first[i] = byte(i*7 + 1)
	}
	off, n := g-4093, g+1000 // across the granules' boundary
	pat := make([]byte, n)
	for i := range pat {
		pat[i] = byte(i*131 + i>>9)
	}
	back := make([]byte, 2*g)
	if err := d.MemcpyHtoDAsync(m.Ptr(), unsafe.Pointer(&first[0]), len(first), s); err != nil {
		t.Fatal(err)
	}
	if err := d.MemcpyHtoDAsync(m.Ptr().Add(off), unsafe.Pointer(&pat[0]), n, s); err != nil {
		t.Fatal(err)
	}
	if err := d.MemcpyDtoHAsync(unsafe.Pointer(&back[0]), m.Ptr(), len(back), s); err != nil {
		t.Fatal(err)
	}
	if err := d.StreamSynchronize(s); err != nil {
		t.Fatal(err)
	}
	want := append(append(slices.Clone(first[:off]), pat...), first[off+n:]...)
	if i := firstDiff(back, want); i >= 0 {
		t.Errorf("byte %d came back %d, want %d", i, back[i], want[i])
	}
	if err := m.Unmap(); err != nil {
		t.Error(err)
	}
	if err := a.Release(); err != nil {
		t.Error(err)
	}
	if err := (Mapping{}).Unmap(); err != nil {
		t.Errorf("the zero mapping's Unmap: %v", err)
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}
