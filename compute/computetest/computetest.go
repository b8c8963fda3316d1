// Package computetest holds the conformance suite every NDVI backend must
// pass: random scenes and the awkward pixels (0/0, nodata, negatives,
// NaN/Inf inputs, 1×1, 1×N, odd sizes, sizes that fit no work-group or
// thread count), each checked against the float64 reference. Backend tests
// call Run; GPU backends run the very same cases as the CPU ones.
package computetest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"canopy/compute"
)

// Case is one named input.
type Case struct {
	Name string
	In   compute.Input
}

func fake(kind string, w, h int, seed uint64) compute.Input {
	r, n, err := compute.Fake(kind, w, h, seed)
	if err != nil {
		panic(err)
	}
	return compute.Input{Width: w, Height: h, Red: r.Data, NIR: n.Data}
}

// special is a palette of awkward values mixed into the edge-case images.
var special = []float32{0, -0, 1, -1, 0.5, -0.5, 1e-3, 0.25, 1e4, -1e4,
	float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), -9999, 65535, 3}

// edges builds a w×h image where every pair of special values meets, plus
// random reflectances, with nodata -9999 on red and 0 on NIR when nodata.
func edges(w, h int, seed uint64, nodata bool) compute.Input {
	g := rand.New(rand.NewPCG(seed, 99))
	in := compute.Input{Width: w, Height: h, Red: make([]float32, w*h), NIR: make([]float32, w*h)}
	k := 0
	for i := range in.Red {
		switch {
		case k < len(special)*len(special):
			in.Red[i], in.NIR[i] = special[k/len(special)], special[k%len(special)]
			k++
		case i%7 == 0:
			v := float32(g.Float64())
			in.Red[i], in.NIR[i] = v, -v // sum exactly zero, not 0/0
		case i%11 == 0:
			in.Red[i], in.NIR[i] = 0, 0
		default:
			in.Red[i] = float32(g.Float64()*2 - 0.5)
			in.NIR[i] = float32(g.Float64()*2 - 0.5)
		}
	}
	if nodata {
		in.Nodata = compute.Nodata{Red: -9999, NIR: 0, HasRed: true, HasNIR: true}
	}
	return in
}

// Cases returns the conformance inputs. With short set, the big ones are
// left out.
func Cases(short bool) []Case {
	cs := []Case{
		{"noise 257x131", fake(compute.SceneNoise, 257, 131, 1)},
		{"landscape 300x200", fake(compute.SceneLandscape, 300, 200, 2)},
		{"1x1", compute.Input{Width: 1, Height: 1, Red: []float32{0.1}, NIR: []float32{0.5}}},
		{"1x1 zero over zero", compute.Input{Width: 1, Height: 1, Red: []float32{0}, NIR: []float32{0}}},
		{"1x1 nodata", compute.Input{Width: 1, Height: 1, Red: []float32{7}, NIR: []float32{0.5}, Nodata: compute.Nodata{Red: 7, HasRed: true}}},
		{"1x1000", fake(compute.SceneNoise, 1, 1000, 3)},
		{"1000x1", fake(compute.SceneNoise, 1000, 1, 4)},
		{"edges 17x19", edges(17, 19, 5, false)},
		{"edges 17x19 nodata", edges(17, 19, 6, true)},
		{"edges 1021x3 nodata", edges(1021, 3, 7, true)},
		{"edges 257x257", edges(257, 257, 8, false)},
		{"nodata only on nir 129x67", func() compute.Input {
			in := edges(129, 67, 9, false)
			in.Nodata = compute.Nodata{NIR: 0.25, HasNIR: true}
			return in
		}()},
		{"nodata NaN-free zero on red 64x64", func() compute.Input {
			in := fake(compute.SceneNoise, 64, 64, 10)
			for i := 0; i < len(in.Red); i += 5 {
				in.Red[i] = 0
			}
			in.Nodata = compute.Nodata{Red: 0, HasRed: true}
			return in
		}()},
		{"prime 65537x1", fake(compute.SceneNoise, 65537, 1, 11)},
	}
	if !short {
		cs = append(cs,
			Case{"edges 1023x1025 nodata", edges(1023, 1025, 12, true)},
			Case{"landscape 2049x1031", fake(compute.SceneLandscape, 2049, 1031, 13)},
		)
	}
	return cs
}

// Run checks b on every case: the output equals the float64 reference
// within compute.Tolerance with NaN in exactly the same pixels. The output
// buffer is poisoned before each run so that an unwritten pixel shows.
func Run(t *testing.T, b compute.Backend) {
	t.Helper()
	info := b.Info()
	if !info.Available {
		t.Skipf("%s backend unavailable here: %s", b.Name(), info.Reason)
	}
	for _, c := range Cases(testing.Short()) {
		t.Run(c.Name, func(t *testing.T) {
			out := make([]float32, c.In.Pixels())
			for i := range out {
				out[i] = 12345
			}
			if _, err := b.Run(c.In, out); err != nil {
				t.Fatalf("%s: %v", b.Name(), err)
			}
			rep := compute.Verify(c.In, out)
			if !rep.OK() {
				i := rep.Worst
				t.Fatalf("%s on %s: %s; pixel %d red %g nir %g got %g want %g", b.Name(), c.Name, rep, i,
					c.In.Red[i], c.In.NIR[i], out[i], compute.Reference64(c.In.Red[i], c.In.NIR[i], c.In.Nodata))
			}
		})
	}
}

// Reuse runs b on sizes that grow and shrink, reusing it, and checks each.
func Reuse(t *testing.T, b compute.Backend) {
	t.Helper()
	if info := b.Info(); !info.Available {
		t.Skipf("%s backend unavailable here: %s", b.Name(), info.Reason)
	}
	for i, sz := range [][2]int{{64, 64}, {300, 7}, {1, 1}, {513, 257}, {64, 64}} {
		in := fake(compute.SceneNoise, sz[0], sz[1], uint64(100+i))
		out := make([]float32, in.Pixels())
		if _, err := b.Run(in, out); err != nil {
			t.Fatalf("run %d (%dx%d): %v", i, sz[0], sz[1], err)
		}
		if rep := compute.Verify(in, out); !rep.OK() {
			t.Fatalf("run %d (%dx%d): %s", i, sz[0], sz[1], rep)
		}
	}
}

// Describe formats an input's size for messages.
func Describe(in compute.Input) string { return fmt.Sprintf("%dx%d", in.Width, in.Height) }

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
