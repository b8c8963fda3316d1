package glback

import (
	"math"
	"strings"
	"testing"

	"canopy/compute"
	"canopy/compute/computetest"
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

// What the device cannot bind is a one-line error, not a wrong answer (a
// scene in more parts than a shader may bind), or is computed in groups
// that fit (more indices at once than storage buffers): planes equal to
// the engine's definition either way.
func TestResidentLimits(t *testing.T) {
	b := New()
	b.tu.part, b.tu.memory, b.tu.blocks = 4096, MemoryGL, 6
	t.Cleanup(func() { b.Close() })
	need(t, b)
	big := residenttest.Scenes(false)[4] // 1031x517: 131 parts of 4096 pixels
	if _, _, err := b.OpenResident(big.Bands, nil); err == nil || !strings.Contains(err.Error(), "allows a compute shader 6") {
		t.Errorf("a scene of 131 parts with 6 bindings: %v", err)
	}
	sc := residenttest.Scenes(true)[0] // 257x131 masked: 9 parts, 9+3 > 6 bindings
	if _, _, err := b.OpenResident(sc.Bands, sc.Mask); err == nil {
		t.Error("a scene of 9 parts with 6 bindings: no error")
	}
	sc = residenttest.Scenes(true)[1] // 61x37: one part
	mask := make([]uint8, 61*37)
	mask[5], mask[100] = 1, 255
	s, _, err := b.OpenResident(sc.Bands, mask)
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
	// Five bands, the mask and five planes: 11 buffers, in groups of at
	// most 6.
	if _, err := s.Index(names, exprs); err != nil {
		t.Fatal(err)
	}
	j, err := compute.NewJob(sc.Bands, mask, names, exprs)
	if err != nil {
		t.Fatal(err)
	}
	in := make([]float32, len(j.Bands))
	regs := make([]float32, j.Program.NumRegs)
	want := make([]float32, len(j.Out))
	for o := range names {
		if _, err := s.Download(o, j.Out[o]); err != nil {
			t.Fatal(err)
		}
	}
	for i := range j.Pixels() {
		computetest.Eval32Job(j, i, in, regs, want)
		for o := range names {
			if got := j.Out[o][i]; math.Float32bits(got) != math.Float32bits(want[o]) && (got == got || want[o] == want[o]) {
				t.Fatalf("%s pixel %d: %g, the engine defines %g", names[o], i, got, want[o])
			}
		}
	}
	// A formula that cannot fit alone is refused.
	b2 := New()
	b2.tu.memory, b2.tu.blocks = MemoryGL, 4
	t.Cleanup(func() { b2.Close() })
	s2, _, err := b2.OpenResident(sc.Bands, mask)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if _, err := s2.Index(names[1:2], exprs[1:2]); err == nil || !strings.Contains(err.Error(), "reads 3 bands") {
		t.Errorf("evi (3 bands, the mask, its plane) with 4 bindings: %v", err)
	}
	if _, err := s2.Index(names[:1], exprs[:1]); err != nil {
		t.Errorf("ndvi (2 bands, the mask, its plane) with 4 bindings: %v", err)
	}
}
