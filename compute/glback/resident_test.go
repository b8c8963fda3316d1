package glback

import (
	"strings"
	"testing"

	"canopy/compute"
	"canopy/compute/index"
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

// What the device cannot bind is a one-line error, not a wrong answer: a
// scene in more parts than a shader may bind, and more indices at once
// than storage buffers.
func TestResidentLimits(t *testing.T) {
	b := New()
	b.tu.part, b.tu.memory, b.tu.blocks = 4096, MemoryGL, 6
	t.Cleanup(func() { b.Close() })
	need(t, b)
	big := residenttest.Scenes(false)[4] // 1031x517: 131 parts of 4096 pixels
	if _, _, err := b.OpenResident(big.Bands, nil); err == nil || !strings.Contains(err.Error(), "allows a compute shader 6") {
		t.Errorf("a scene of 131 parts with 6 bindings: %v", err)
	}
	sc := residenttest.Scenes(true)[1] // 61x37: one part
	s, _, err := b.OpenResident(sc.Bands, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var names []string
	var exprs []*index.Expr
	for _, n := range []string{"ndvi", "evi", "savi", "ndwi", "nbr"} {
		c, _ := index.Lookup(n)
		names, exprs = append(names, n), append(exprs, c.Expr)
	}
	if _, err := s.Index(names, exprs); err == nil || !strings.Contains(err.Error(), "compute fewer at once") {
		t.Errorf("5 indices over 5 bands with 6 bindings: %v", err)
	}
	// Fewer at once work, and the session is still usable after the refusal.
	if _, err := s.Index(names[:1], exprs[:1]); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Stats(0, compute.StatsRequest{Bins: 8, Lo: -1, Hi: 1}); err != nil {
		t.Error(err)
	}
}
