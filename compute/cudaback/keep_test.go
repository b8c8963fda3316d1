package cudaback

import (
	"context"
	"os"
	"testing"

	"canopy/compute/season"
	"canopy/compute/season/seasontest"
)

// On the GPU (CANOPY_EXPECT_GPU=1 makes a missing one a failure)
// season.Keep puts a stack's cube on the card once, as the time-series
// window does: every model then runs there with no upload, within the
// float32 bound of the reference.
func TestKeepCubeGPU(t *testing.T) {
	b := New()
	defer b.Close()
	if info := b.Info(); !info.Available {
		if os.Getenv("CANOPY_EXPECT_GPU") == "1" {
			t.Fatalf("no GPU: %s", info.Reason)
		}
		t.Skipf("no CUDA GPU: %s", info.Reason)
	}
	cube := seasontest.Cube(13, 48, 1<<20, 2019, 2021, 2020, 0.3)
	k, err := season.Keep(b, cube)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	if !k.OnDevice() {
		t.Fatal("the cuda backend keeps the cube on the host")
	}
	t.Logf("cube of 48 dates × 2^20 pixels uploaded once: %v", k.Upload().Upload)
	for _, m := range seasontest.Models(2019, 2020, 2021)[8:] {
		p, err := season.NewPlan(m, cube.Dates)
		if err != nil {
			t.Fatal(err)
		}
		j := season.NewJob(p, cube)
		rt, err := k.Run(context.Background(), p, j.Out)
		if err != nil {
			t.Fatal(err)
		}
		if rt.Upload != 0 {
			t.Fatalf("%s: a run on the kept cube uploaded (%v)", m.Kind, rt.Upload)
		}
		t.Logf("%s: kernel %v, total %v (no upload; the new model's kernel compiled in %v, apart)", m.Kind, rt.Kernel, rt.Total, rt.Setup)
		sub := season.NewJob(p, season.Cube{Dates: cube.Dates, Pixels: 4096, Values: make([]float32, 48*4096)})
		for d := range 48 {
			copy(sub.Cube.Values[d*4096:(d+1)*4096], cube.Values[d*cube.Pixels:d*cube.Pixels+4096])
		}
		for i := range j.Out {
			copy(sub.Out[i], j.Out[i][:4096])
		}
		if _, err := seasontest.Check(sub, season.Ref(sub)); err != nil {
			t.Errorf("%s: %v", m.Kind, err)
		}
	}
}
