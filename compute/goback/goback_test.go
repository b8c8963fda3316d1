package goback

import (
	"testing"

	"canopy/compute"
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
