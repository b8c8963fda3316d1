package compute_test

import (
	"testing"

	"canopy/compute"
	"canopy/compute/backends"
	"canopy/compute/computetest"
	"canopy/compute/fake"
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

// Every backend checks the jobs it is given itself, as compute.RunJob
// does: a short output plane or a short band is an error, not a write or
// a read out of bounds.
func TestBackendRejectsWrongOutput(t *testing.T) {
	for _, b := range backends.All() {
		if !b.Info().Available {
			continue
		}
		j := computetest.NDVIJob(fake.Noise, 2, 2, 1)
		j.Out[0] = j.Out[0][:3]
		if _, err := b.RunJob(j); err == nil {
			t.Errorf("%s accepted a 3-pixel output for a 4-pixel image", b.Name())
		}
		j = computetest.NDVIJob(fake.Noise, 2, 2, 1)
		j.Bands[1].Plane.Data = j.Bands[1].Plane.Data[:12]
		if _, err := b.RunJob(j); err == nil {
			t.Errorf("%s accepted a short NIR band", b.Name())
		}
		b.Close()
	}
}
