// Package computetest holds the conformance suites every backend must
// pass, as jobs: NDVI over the awkward pixels (0/0, nodata, negatives,
// NaN/Inf inputs, 1×1, 1×N, odd sizes, sizes that fit no work-group or
// thread count) (Run, Reuse), and every catalogue index and random
// formulas over bands of every stored type, with and without a mask
// (RunJobs), each checked against the float32 definition (CPU backends,
// exactly) or the float64 truth within the formula's float32 error bound
// (GPUs). GPU backends run the very same cases as the CPU ones.
package computetest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"canopy/compute"
	"canopy/compute/fake"
	"canopy/compute/index"
)

// ndvi is the catalogue's NDVI.
var ndvi = func() *index.Expr {
	_, e, err := index.Resolve("ndvi")
	if err != nil {
		panic(err)
	}
	return e
}()

// pair is a red and a NIR float32 plane with their nodata values.
type pair struct {
	w, h           int
	red, nir       []float32
	redND, nirND   float32
	hasRed, hasNIR bool
}

// job is NDVI of p as a job over two float32 bands.
func (p pair) job() *compute.Job {
	bands := []compute.BandInput{
		{Role: "red", Plane: compute.PlaneOf(p.w, p.h, p.red), Radiometry: compute.Identity(), NoData: float64(p.redND), HasNoData: p.hasRed, Source: "test red"},
		{Role: "nir", Plane: compute.PlaneOf(p.w, p.h, p.nir), Radiometry: compute.Identity(), NoData: float64(p.nirND), HasNoData: p.hasNIR, Source: "test nir"},
	}
	return newJob(bands, nil, []string{"ndvi"}, []*index.Expr{ndvi})
}

func fakePair(kind string, w, h int, seed uint64) pair {
	r, n, err := fake.RedNIR(kind, w, h, seed)
	if err != nil {
		panic(err)
	}
	return pair{w: w, h: h, red: r.Data, nir: n.Data}
}

// special is a palette of awkward values mixed into the edge-case images.
var special = []float32{0, -0, 1, -1, 0.5, -0.5, 1e-3, 0.25, 1e4, -1e4,
	float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), -9999, 65535, 3}

// edges builds a w×h image where every pair of special values meets, plus
// random reflectances, with nodata -9999 on red and 0 on NIR when nodata.
func edges(w, h int, seed uint64, nodata bool) pair {
	g := rand.New(rand.NewPCG(seed, 99))
	in := pair{w: w, h: h, red: make([]float32, w*h), nir: make([]float32, w*h)}
	k := 0
	for i := range in.red {
		switch {
		case k < len(special)*len(special):
			in.red[i], in.nir[i] = special[k/len(special)], special[k%len(special)]
			k++
		case i%7 == 0:
			v := float32(g.Float64())
			in.red[i], in.nir[i] = v, -v // sum exactly zero, not 0/0
		case i%11 == 0:
			in.red[i], in.nir[i] = 0, 0
		default:
			in.red[i] = float32(g.Float64()*2 - 0.5)
			in.nir[i] = float32(g.Float64()*2 - 0.5)
		}
	}
	if nodata {
		in.redND, in.nirND, in.hasRed, in.hasNIR = -9999, 0, true, true
	}
	return in
}

// EdgeJob is NDVI over a w×h image where every pair of awkward values
// (zeros of both signs, ±1, ±1e4, NaN, ±Inf, -9999, 65535) meets, with
// sums exactly zero and 0/0 sprinkled over random reflectances, and
// nodata -9999 on red and 0 on NIR when nodata is set.
func EdgeJob(w, h int, seed uint64, nodata bool) *compute.Job { return edges(w, h, seed, nodata).job() }

// NDVIOf is NDVI over red and nir, float32 bands of w×h pixels without
// nodata (set a band's NoData and HasNoData for some).
func NDVIOf(w, h int, red, nir []float32) *compute.Job {
	return pair{w: w, h: h, red: red, nir: nir}.job()
}

// NDVIJob is NDVI over a fake scene (fake.RedNIR) of w×h pixels.
func NDVIJob(kind string, w, h int, seed uint64) *compute.Job {
	return fakePair(kind, w, h, seed).job()
}

// Cases returns the NDVI conformance jobs. With short set, the big ones
// are left out.
func Cases(short bool) []JobCase {
	ps := []struct {
		name string
		p    pair
	}{
		{"noise 257x131", fakePair(fake.Noise, 257, 131, 1)},
		{"landscape 300x200", fakePair(fake.Landscape, 300, 200, 2)},
		{"1x1", pair{w: 1, h: 1, red: []float32{0.1}, nir: []float32{0.5}}},
		{"1x1 zero over zero", pair{w: 1, h: 1, red: []float32{0}, nir: []float32{0}}},
		{"1x1 nodata", pair{w: 1, h: 1, red: []float32{7}, nir: []float32{0.5}, redND: 7, hasRed: true}},
		{"1x1000", fakePair(fake.Noise, 1, 1000, 3)},
		{"1000x1", fakePair(fake.Noise, 1000, 1, 4)},
		{"edges 17x19", edges(17, 19, 5, false)},
		{"edges 17x19 nodata", edges(17, 19, 6, true)},
		{"edges 1021x3 nodata", edges(1021, 3, 7, true)},
		{"edges 257x257", edges(257, 257, 8, false)},
		{"nodata only on nir 129x67", func() pair {
			in := edges(129, 67, 9, false)
			in.nirND, in.hasNIR = 0.25, true
			return in
		}()},
		{"nodata NaN-free zero on red 64x64", func() pair {
			in := fakePair(fake.Noise, 64, 64, 10)
			for i := 0; i < len(in.red); i += 5 {
				in.red[i] = 0
			}
			in.redND, in.hasRed = 0, true
			return in
		}()},
		{"prime 65537x1", fakePair(fake.Noise, 65537, 1, 11)},
	}
	if !short {
		ps = append(ps, []struct {
			name string
			p    pair
		}{
			{"edges 1023x1025 nodata", edges(1023, 1025, 12, true)},
			{"landscape 2049x1031", fakePair(fake.Landscape, 2049, 1031, 13)},
		}...)
	}
	cs := make([]JobCase, len(ps))
	for i, c := range ps {
		cs[i] = JobCase{Name: "ndvi " + c.name, Job: c.p.job()}
	}
	return cs
}

// Run checks b on every NDVI case (Cases) as RunJobs checks its jobs:
// exactly the float32 definition on a CPU backend, within the float32
// error bound with NaN in the same pixels on a GPU.
func Run(t *testing.T, b compute.Backend) {
	t.Helper()
	if !available(t, b) {
		return
	}
	check(t, b, Cases(testing.Short()), !b.Info().GPU)
}

// RunShort is Run on the short suite whatever -short says, for variants
// of one backend (tunings, buffer layouts) whose code paths the odd small
// sizes already cross (several groups, partial tails, grid-stride loops):
// Run on the backend's defaults keeps the large sizes.
func RunShort(t *testing.T, b compute.Backend) {
	t.Helper()
	if !available(t, b) {
		return
	}
	check(t, b, Cases(true), !b.Info().GPU)
}

// Reuse runs b on NDVI jobs of sizes that grow and shrink, reusing it,
// and checks each.
func Reuse(t *testing.T, b compute.Backend) {
	t.Helper()
	if !available(t, b) {
		return
	}
	var cs []JobCase
	for i, sz := range [][2]int{{64, 64}, {300, 7}, {1, 1}, {513, 257}, {64, 64}} {
		cs = append(cs, JobCase{Name: fmt.Sprintf("run %d (%dx%d)", i, sz[0], sz[1]), Job: NDVIJob(fake.Noise, sz[0], sz[1], uint64(100+i))})
	}
	check(t, b, cs, !b.Info().GPU)
}

// ExpectGPU reports whether CANOPY_EXPECT_GPU is set: on the GPU machine
// the GPU tests must run, so an unavailable GPU backend is a failure there.
func ExpectGPU() bool { return os.Getenv("CANOPY_EXPECT_GPU") != "" }

// SkipUnlessGPU skips t with reason when a GPU backend or driver cannot run
// here, and fails it instead when CANOPY_EXPECT_GPU is set.
func SkipUnlessGPU(t testing.TB, available bool, reason string) {
	t.Helper()
	if available {
		return
	}
	if ExpectGPU() {
		t.Fatalf("CANOPY_EXPECT_GPU is set but the GPU is not usable: %s", reason)
	}
	t.Skipf("no usable GPU here: %s", reason)
}
