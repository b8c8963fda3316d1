package goback

import (
	"testing"

	"canopy/compute"
	"canopy/compute/computetest"
	"canopy/compute/fake"
	"canopy/compute/index"
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
