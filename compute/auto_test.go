package compute_test

import (
	"strings"
	"testing"

	"canopy/compute"
	_ "canopy/compute/backends"
)

// The measured rule of --backend auto: the H200 host (120 GB/s host copy,
// about 88 GB/s over PCIe 5 both ways) computes on the CPU; a 2-core VM
// (62 GB/s) in front of the same bus, or a host whose copy is exactly as
// fast as the bus beyond the C kernels' share, on the GPU / CPU.
func TestPreferCPU(t *testing.T) {
	for _, c := range []struct {
		host, bus float64
		cpu       bool
	}{
		{120, 88, true},
		{62, 88, false},
		{62, 25, true},
		{100, 80, true},
		{100, 80.5, false},
	} {
		if got := compute.PreferCPU(c.host, c.bus); got != c.cpu {
			t.Errorf("host %g GB/s, bus %g GB/s: PreferCPU %v, want %v", c.host, c.bus, got, c.cpu)
		}
	}
}

// Auto gives a working backend and says why: without a GPU, the first of
// AutoOrder that runs; with one, the measured comparison.
func TestAutoWhy(t *testing.T) {
	b, why, err := compute.AutoWhy()
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if !b.Info().Available || !strings.HasPrefix(why, b.Name()+": ") {
		t.Fatalf("auto chose %s (%v): %q", b.Name(), b.Info().Available, why)
	}
	cuda, err := compute.New(compute.NameCUDA)
	if err != nil {
		t.Fatal(err)
	}
	defer cuda.Close()
	if cuda.Info().Available {
		if !strings.Contains(why, "GB/s both ways") {
			t.Errorf("with a GPU, auto's reason gives no measurement: %q", why)
		}
	} else if b.Name() != compute.NameC || !strings.Contains(why, "the first of cuda, c") {
		t.Errorf("without a GPU: auto chose %s: %q", b.Name(), why)
	}
}
