package compute

import (
	"strings"
	"testing"
)

// With an NVIDIA device present and a host whose C kernels beat any PCIe
// bus, auto takes c without opening the GPU; with a slower host it goes
// on to the GPU (here unavailable, so the first backend that runs).
func TestAutoSkipsTheGPUForAFastHost(t *testing.T) {
	defer func(p func() bool, h func(int) float64) { gpuDevicePresent, hostCopy = p, h }(gpuDevicePresent, hostCopy)
	gpuDevicePresent = func() bool { return true }
	measured := 0
	for _, c := range []struct {
		host float64
		want string
	}{
		{400, "more than any PCIe bus moves (128 GB/s both ways); cuda was not opened"},
		{50, ""},
	} {
		hostCopy = func(int) float64 { measured++; return c.host }
		b, why, err := AutoWhy()
		if err != nil {
			t.Fatal(err)
		}
		b.Close()
		if b.Name() != NameC {
			t.Fatalf("host %g GB/s: auto chose %s (%s)", c.host, b.Name(), why)
		}
		if c.want != "" && !strings.Contains(why, c.want) {
			t.Errorf("host %g GB/s: %q", c.host, why)
		}
		if c.want == "" && strings.Contains(why, "not opened") {
			t.Errorf("host %g GB/s skipped the GPU: %q", c.host, why)
		}
	}
	if measured != 2 {
		t.Errorf("the host was measured %d times in two choices", measured)
	}
}
