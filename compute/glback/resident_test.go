package glback

import (
	"testing"

	"canopy/compute"
	"canopy/compute/residenttest"
)

// The resident session passes the conformance suite on whatever GL this
// machine has (Mesa's llvmpipe in CI): planes within the GPU bound of the
// engine's definition, statistics equal to package stats's (histogram,
// classes, min and max exact, mean and std within 1e-6 relative), views
// within one level of compute.RenderView's.
func TestResident(t *testing.T) {
	b := newBackend(t)
	residenttest.Check(t, b.OpenResident, residenttest.Options{Exact: true, Short: testing.Short()})
}

// Planes cut into many buffers: the index, the statistics (records merged
// across parts) and the view (every part bound) give the same answers, in
// both transfer modes (mapped: the staging rings carry the bands up, the
// views and planes down).
func TestResidentParts(t *testing.T) {
	for _, mode := range []string{ModeSubData, ModeMapped} {
		t.Run(mode, func(t *testing.T) {
			b := New()
			b.tu.part, b.tu.memory, b.tu.residentMode = 4096, MemoryGL, mode
			t.Cleanup(func() { b.Close() })
			need(t, b)
			residenttest.Check(t, b.OpenResident, residenttest.Options{Exact: true, Short: true, Light: true})
		})
	}
}

// A session of a closed backend refuses calls; its Close is quiet.
func TestResidentBackendClosed(t *testing.T) {
	b := newBackend(t)
	sc := residenttest.Scenes(true)[1]
	s, _, err := b.OpenResident(sc.Bands, nil)
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
	if _, _, err := s.Stats(0, compute.StatsRequest{}); err == nil {
		t.Error("a session of a closed backend answered")
	}
	if err := s.Close(); err != nil {
		t.Error(err)
	}
}
