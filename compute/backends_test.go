package compute_test

import (
	"testing"

	"canopy/compute"
	"canopy/compute/backends"
	"canopy/compute/computetest"
)

// Every registered backend passes the conformance suite; GPU backends skip
// with their reason where the device is missing.
func TestBackendsMatchReference(t *testing.T) {
	for _, b := range backends.All() {
		t.Run(b.Name(), func(t *testing.T) {
			defer b.Close()
			computetest.Run(t, b)
			computetest.Reuse(t, b)
		})
	}
}

func TestCPUBackendsAlwaysAvailable(t *testing.T) {
	for _, n := range []string{compute.NameGo, compute.NameGoParallel, compute.NameC} {
		b, err := compute.New(n)
		if err != nil {
			t.Fatal(err)
		}
		if info := b.Info(); !info.Available || info.Device == "" || info.GPU {
			t.Errorf("%s: %+v", n, info)
		}
	}
}

func TestUnknownBackend(t *testing.T) {
	if _, err := compute.New("fortran"); err == nil {
		t.Fatal("no error for an unknown backend")
	}
}

func TestBackendRejectsWrongOutput(t *testing.T) {
	in := compute.Input{Width: 2, Height: 2, Red: make([]float32, 4), NIR: make([]float32, 4)}
	for _, b := range backends.All() {
		if !b.Info().Available {
			continue
		}
		if _, err := b.Run(in, make([]float32, 3)); err == nil {
			t.Errorf("%s accepted a 3-pixel output for a 4-pixel image", b.Name())
		}
		bad := in
		bad.NIR = bad.NIR[:3]
		if _, err := b.Run(bad, make([]float32, 4)); err == nil {
			t.Errorf("%s accepted a short NIR band", b.Name())
		}
		b.Close()
	}
}
