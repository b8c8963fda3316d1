package goback

import (
	"testing"

	"canopy/compute"
	"canopy/compute/computetest"
)

func TestGoParallelAllocatesNothing(t *testing.T) {
	p := NewGoParallel(4)
	defer p.Close()
	r, n, _ := compute.Fake(compute.SceneNoise, 512, 512, 1)
	in := compute.Input{Width: 512, Height: 512, Red: r.Data, NIR: n.Data}
	out := make([]float32, in.Pixels())
	p.Run(in, out)
	if a := testing.AllocsPerRun(20, func() { p.Run(in, out) }); a != 0 {
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
