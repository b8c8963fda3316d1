package glback

import (
	"context"
	"math"
	"testing"

	"canopy/compute/season"
	"canopy/compute/season/seasontest"
)

// season.Keep puts the cube on the card once: every model then runs there
// with no upload, with the outputs of a job that uploads its own cube.
func TestKeepCube(t *testing.T) {
	b := newBackend(t)
	cube := seasontest.Cube(12, 20, 400, 2019, 2021, 2020, 0.3)
	k, err := season.Keep(b, cube)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	if !k.OnDevice() {
		t.Fatal("the gl backend keeps the cube on the host")
	}
	t.Logf("upload %v", k.Upload().Upload)
	for _, m := range seasontest.Models(2019, 2020, 2021)[8:] {
		p, err := season.NewPlan(m, cube.Dates)
		if err != nil {
			t.Fatal(err)
		}
		j, fresh := season.NewJob(p, cube), season.NewJob(p, cube)
		rt, err := k.Run(context.Background(), p, j.Out)
		if err != nil {
			t.Fatal(err)
		}
		if rt.Upload != 0 {
			t.Fatalf("%s: a run on the kept cube uploaded (%v)", m.Kind, rt.Upload)
		}
		if _, err := b.RunSeries(fresh); err != nil {
			t.Fatal(err)
		}
		for i := range j.Out {
			for px := range j.Out[i] {
				if a, f := j.Out[i][px], fresh.Out[i][px]; math.Float32bits(a) != math.Float32bits(f) {
					t.Fatalf("%s: output %d pixel %d: %v kept, %v fresh", m.Kind, i, px, a, f)
				}
			}
		}
	}
}
