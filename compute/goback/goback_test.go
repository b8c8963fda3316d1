package goback

import (
	"math"
	"testing"

	"canopy/compute"
	"canopy/compute/computetest"
	"canopy/compute/fake"
	"canopy/compute/index"
	"canopy/compute/internal/vec"
)

func TestGoParallelAllocatesNothing(t *testing.T) {
	p := NewGoParallel(4)
	defer p.Close()
	bands, _, err := fake.Bands(fake.Noise, 512, 512, 1, []string{"red", "nir"})
	if err != nil {
		t.Fatal(err)
	}
	name, e, err := index.Resolve("ndvi")
	if err != nil {
		t.Fatal(err)
	}
	j, err := compute.NewJob(bands, nil, []string{name}, []*index.Expr{e})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.RunJob(j); err != nil {
		t.Fatal(err)
	}
	if a := testing.AllocsPerRun(20, func() { p.RunJob(j) }); a != 0 {
		t.Fatalf("go-parallel allocates %v times per run", a)
	}
}

// Both Go backends run every engine conformance job exactly as the float32
// definition says.
func TestJobs(t *testing.T) {
	t.Run("go", func(t *testing.T) { computetest.RunJobs(t, &goBackend{}, true) })
	p := NewGoParallel(3)
	defer p.Close()
	t.Run("go-parallel", func(t *testing.T) { computetest.RunJobs(t, p, true) })
}

// TestStreamedStores runs go-parallel with its outputs written by
// streaming stores (the cache taken as empty, so that a plane of
// vec.StreamPixels streams) and checks every bit against the go backend:
// NDVI (the fused normalised difference's store) and EVI (a finite's
// store), float32 bands of an odd size.
func TestStreamedStores(t *testing.T) {
	saved := vec.CacheBytes
	vec.CacheBytes = func() int64 { return 0 }
	defer func() { vec.CacheBytes = saved }()
	w, h := 2049, 1031
	if w*h < vec.StreamPixels {
		t.Fatalf("%d×%d is under vec.StreamPixels", w, h)
	}
	bands, _, err := fake.Bands(fake.Noise, w, h, 1, []string{"red", "nir", "blue"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var exprs []*index.Expr
	for _, n := range []string{"ndvi", "evi"} {
		name, e, err := index.Resolve(n)
		if err != nil {
			t.Fatal(err)
		}
		names, exprs = append(names, name), append(exprs, e)
	}
	p := NewGoParallel(3)
	defer p.Close()
	run := func(b compute.Backend) [][]float32 {
		j, err := compute.NewJob(bands, nil, names, exprs)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.RunJob(j); err != nil {
			t.Fatal(err)
		}
		return j.Out
	}
	got, want := run(p), run(&goBackend{})
	if !p.prog.stream {
		t.Fatal("go-parallel did not stream its outputs")
	}
	for o := range want {
		for i := range want[o] {
			if math.Float32bits(got[o][i]) != math.Float32bits(want[o][i]) {
				t.Fatalf("%s pixel %d: streamed %g, go %g", names[o], i, got[o][i], want[o][i])
			}
		}
	}
}
