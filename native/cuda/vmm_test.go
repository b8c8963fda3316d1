package cuda

import (
	"canopy/compute/computetest"
	"fmt"
	"os"
	"testing"
)

// TestExportable allocates exportable device memory, exports it as a file
// descriptor and releases it, on every device; the UUIDs are distinct and
// not zero (OpenGL names its device by the same UUID).
func TestExportable(t *testing.T) {
	d, err := Open()
	if err != nil {
		computetest.SkipUnlessGPU(t, false, fmt.Sprintf("no usable CUDA driver: %v", err))
	}
	defer d.Close()
	n, err := d.DeviceCount()
	if err != nil || n == 0 {
		computetest.SkipUnlessGPU(t, false, fmt.Sprintf("no CUDA device: %d, %v", n, err))
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
