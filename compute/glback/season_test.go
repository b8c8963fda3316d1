package glback

import (
	"math"
	"testing"

	"canopy/compute/season"
	"canopy/compute/season/seasontest"
)

// The generated season shaders pass the conformance suite (every model,
// 1 and 400 dates, gaps everywhere, blocks of 0 and 1 pixels): on llvmpipe
// here, on the GPU with CANOPY_EXPECT_GPU.
func TestSeasonConformance(t *testing.T) {
	seasontest.Run(t, newBackend(t))
}

// A cube kept on the card runs several models without uploading again,
// with the outputs of a job that uploads its own cube, and a cube of a
// closed backend fails rather than touching another context's buffers.
func TestSeasonCube(t *testing.T) {
	b := newBackend(t)
	cube := seasontest.Cube(11, 24, 300, 2019, 2021, 2020, 0.3)
	c, _, err := b.OpenCube(cube)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range seasontest.Models(2019, 2020, 2021) {
		p, err := season.NewPlan(m, cube.Dates)
		if err != nil {
			t.Fatal(err)
		}
		j, fresh := season.NewJob(p, cube), season.NewJob(p, cube)
		if _, err := c.Run(p, j.Out); err != nil {
			t.Fatalf("%s: %v", m.Kind, err)
		}
		if _, err := b.RunSeries(fresh); err != nil {
			t.Fatal(err)
		}
		for i := range j.Out {
			for px := range j.Out[i] {
				if a, f := j.Out[i][px], fresh.Out[i][px]; math.Float32bits(a) != math.Float32bits(f) {
					t.Fatalf("%s: output %d pixel %d: %v from the kept cube, %v from a fresh one", m.Kind, i, px, a, f)
				}
			}
		}
	}
	series := make([]float32, len(cube.Dates))
	plane := make([]float32, cube.Pixels)
	for _, px := range []int{0, 17, cube.Pixels - 1} {
		if err := c.Series(px, series); err != nil {
			t.Fatal(err)
		}
		for tt, v := range series {
			if w := cube.Values[tt*cube.Pixels+px]; math.Float32bits(v) != math.Float32bits(w) {
				t.Fatalf("series of pixel %d, date %d: %v, want %v", px, tt, v, w)
			}
		}
	}
	if err := c.Date(5, plane); err != nil {
		t.Fatal(err)
	}
	for px, v := range plane {
		if w := cube.Values[5*cube.Pixels+px]; math.Float32bits(v) != math.Float32bits(w) {
			t.Fatalf("date 5, pixel %d: %v, want %v", px, v, w)
		}
	}
	if c.Series(-1, series) == nil || c.Date(len(cube.Dates), plane) == nil {
		t.Error("a pixel or date outside the cube was read")
	}
	b.Close()
	p, _ := season.NewPlan(seasontest.Models(2019, 2020, 2021)[0], cube.Dates)
	if _, err := c.Compute(p); err == nil {
		t.Error("a cube of a closed backend ran")
	}
	c.Close()
	c.Close()
}
