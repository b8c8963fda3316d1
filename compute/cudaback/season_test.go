package cudaback

import (
	"errors"
	"math"
	"os"
	"slices"
	"testing"

	"canopy/compute"
	"canopy/compute/season"
	"canopy/compute/season/seasontest"
)

// simSeason runs the season kernels on the PTX interpreter (simDev), as a
// compute.Backend for the conformance suite.
type simSeason struct{ t *testing.T }

func (s simSeason) Name() string       { return "cuda-sim" }
func (s simSeason) Info() compute.Info { return compute.Info{Name: "cuda-sim", Available: true} }
func (s simSeason) RunJob(*compute.Job) (compute.Timings, error) {
	return compute.Timings{}, errors.New("not an index backend")
}
func (s simSeason) Close() error { return nil }

func (s simSeason) RunSeries(j *season.Job) (compute.Timings, error) {
	dev := newSimDev(s.t)
	c, t, err := openCube(dev, j.Cube)
	if err != nil {
		return t, err
	}
	defer c.Close()
	if dev.live != 1 {
		s.t.Errorf("a cube holds %d device buffers, want 1", dev.live)
	}
	_, err = c.Run(j.Plan, j.Out)
	return t, err
}

// The generated season kernels pass the conformance suite on the PTX
// interpreter: every model, the edge cases (1 and 400 dates, gaps
// everywhere, no pixels), within float32's bound of the float64 reference.
// With -short, the race detector's run in make test (the detector finds
// nothing to check in the interpreter, and slows it tenfold), one case in
// eight runs.
func TestSeasonSimulated(t *testing.T) {
	if !testing.Short() {
		seasontest.Run(t, simSeason{t})
		return
	}
	for i, c := range seasontest.Cases(true) {
		if i%8 != 0 {
			continue
		}
		j := season.NewJob(c.Plan, c.Cube)
		if _, err := (simSeason{t}).RunSeries(j); err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if _, err := seasontest.Check(j, season.Ref(j)); err != nil {
			t.Errorf("%s: %v", c.Name, err)
		}
	}
}

// A cube kept on the card runs several models without uploading again,
// and frees its memory when closed.
func TestSeasonCubeReuse(t *testing.T) {
	dev := newSimDev(t)
	cube := seasontest.Cube(11, 24, 300, 2019, 2021, 2020, 0.3)
	c, _, err := openCube(dev, cube)
	if err != nil {
		t.Fatal(err)
	}
	ms := seasontest.Models(2019, 2020, 2021)
	if testing.Short() {
		// -short is the race detector's run in make test: the first
		// model of each kind (the cube's reuse does not depend on the
		// model); every model in the full run.
		var one []season.Model
		for _, m := range ms {
			if !slices.ContainsFunc(one, func(o season.Model) bool { return o.Kind == m.Kind }) {
				one = append(one, m)
			}
		}
		ms = one
	}
	for _, m := range ms {
		p, err := season.NewPlan(m, cube.Dates)
		if err != nil {
			t.Fatal(err)
		}
		j := season.NewJob(p, cube)
		rt, err := c.Run(p, j.Out)
		if err != nil {
			t.Fatalf("%s: %v", m.Kind, err)
		}
		// The plan's kernel is compiled on its first run, Setup; a
		// second run of it has none.
		again, err := c.Run(p, j.Out)
		if err != nil || rt.Setup <= 0 || again.Setup != 0 {
			t.Fatalf("%s: setup %v on the first run, %v on the second (%v)", m.Kind, rt.Setup, again.Setup, err)
		}
		// The same as a job that uploads its own cube.
		fresh := season.NewJob(p, cube)
		if _, err := (simSeason{t}).RunSeries(fresh); err != nil {
			t.Fatal(err)
		}
		for i := range j.Out {
			for px := range j.Out[i] {
				if a, b := j.Out[i][px], fresh.Out[i][px]; math.Float32bits(a) != math.Float32bits(b) {
					t.Fatalf("%s: output %d pixel %d: %v from the kept cube, %v from a fresh one", m.Kind, i, px, a, b)
				}
			}
		}
	}
	// A pixel's series and a date's plane, read back from the card.
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
	if c.Series(cube.Pixels, series) == nil || c.Date(len(cube.Dates), plane) == nil {
		t.Error("a pixel or date outside the cube was read")
	}
	c.Close()
	c.Close()
	if dev.live != 0 {
		t.Errorf("%d device buffers left after Close", dev.live)
	}
	if _, err := c.Run(nil, nil); err == nil {
		t.Error("Run on a closed cube did not fail")
	}
}

// On the GPU (CANOPY_EXPECT_GPU=1 makes a missing one a failure) the
// backend passes the conformance suite through the driver's JIT.
func TestSeasonGPU(t *testing.T) {
	b := New()
	defer b.Close()
	if info := b.Info(); !info.Available {
		if os.Getenv("CANOPY_EXPECT_GPU") == "1" {
			t.Fatalf("no GPU: %s", info.Reason)
		}
		t.Skipf("no CUDA GPU: %s", info.Reason)
	}
	seasontest.Run(t, b)
}
