package residentcpu_test

import (
	"testing"

	"canopy/compute"
	"canopy/compute/goback"
	"canopy/compute/residentcpu"
	"canopy/compute/residenttest"
)

func open(e compute.Backend) residenttest.Opener {
	return func(bands []compute.BandInput, mask []uint8) (compute.ResidentSession, compute.Timings, error) {
		return residentcpu.Open(e, bands, mask)
	}
}

// The host session passes the conformance suite over the go-parallel
// engine: planes equal to the engine's definition, statistics package
// stats's, views compute.RenderView's.
func TestConformance(t *testing.T) {
	residenttest.Check(t, open(goback.NewGoParallel(0)), residenttest.Options{Exact: true, Short: testing.Short()})
}

func TestOpenNeedsAnEngine(t *testing.T) {
	if _, _, err := residentcpu.Open(nil, residenttest.Scenes(true)[0].Bands, nil); err == nil {
		t.Error("no engine: no error")
	}
}

// OpenFor gives a host session over a backend without a session of its
// own.
func TestOpenFor(t *testing.T) {
	sc := residenttest.Scenes(true)[1]
	s, _, err := residentcpu.OpenFor(goback.NewGoParallel(0), sc.Bands, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.(*residentcpu.Session); !ok {
		t.Errorf("go-parallel's session is a %T", s)
	}
	s.Close()
}
