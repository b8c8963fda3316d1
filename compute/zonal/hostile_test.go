package zonal

import (
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/paulmach/orb"
)

// TestHugeCoordinates: stands with vertices at ±1e300 (map units) are
// clipped to the raster: no panic, the part over the raster is exact.
func TestHugeCoordinates(t *testing.T) {
	p := &Plane{W: 30, H: 30, Data: make([]float32, 900)}
	for i := range p.Data {
		p.Data[i] = 0.5
	}
	const big = 1e300
	// The raster covers x 600000..600300, y 5799700..5800000.
	stands := []Stand{
		// From column 10 to +∞ in x, rows 5..8: 20 columns × 3 rows inside.
		{ID: "east", Geom: orb.Polygon{{{600100, 5799950}, {big, 5799950}, {big, 5799920}, {600100, 5799920}, {600100, 5799950}}}},
		// Everything: −∞..+∞ both ways.
		{ID: "all", Geom: orb.Polygon{{{-big, -big}, {big, -big}, {big, big}, {-big, big}, {-big, -big}}}},
		// A sliver whose far vertex is out at 1e300 (nearly horizontal edges).
		{ID: "spike", Geom: orb.Polygon{{{600000, 5799990}, {big, 5799985}, {600000, 5799980}, {600000, 5799990}}}},
		{ID: "far", Geom: orb.Polygon{{{big, big}, {big + 1e290, big}, {big, big + 1e290}, {big, big}}}},
		{ID: "max", Geom: orb.Polygon{{{-math.MaxFloat64, 5799950}, {math.MaxFloat64, 5799950}, {math.MaxFloat64, 5799920}, {-math.MaxFloat64, 5799920}, {-math.MaxFloat64, 5799950}}}},
		{ID: "inf", Geom: orb.Polygon{{{600100, 5799950}, {math.Inf(1), 5799950}, {600100, 5799920}, {600100, 5799950}}}},
	}
	res, warn, err := Compute(p, testGT, stands, Options{Classes: DefaultClasses()})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]Result{}
	for _, r := range res {
		byID[r.ID] = r
		for _, v := range []float64{r.Pixels, r.ValidPixels, r.AreaHa} {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Errorf("%s: %+v", r.ID, r)
			}
		}
	}
	if r := byID["east"]; math.Abs(r.Pixels-60) > 1e-9 || r.Mean != 0.5 {
		t.Errorf("east: %v pixels, mean %v; want 60, 0.5", r.Pixels, r.Mean)
	}
	if r := byID["all"]; math.Abs(r.Pixels-900) > 1e-9 || r.Mean != 0.5 {
		t.Errorf("all: %v pixels, mean %v; want 900, 0.5", r.Pixels, r.Mean)
	}
	if r := byID["spike"]; r.Pixels < 0 || r.Pixels > 30 {
		t.Errorf("spike: %v pixels, want within the first row", r.Pixels)
	}
	if r := byID["far"]; r.Pixels != 0 {
		t.Errorf("far: %v pixels, want 0", r.Pixels)
	}
	all := strings.Join(warn, "\n")
	for _, want := range []string{"stand far: outside the raster", "stand east: ", "stand all: "} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings lack %q:\n%s", want, all)
		}
	}
}

// TestHugeStandBoundedMemory: a 5 km stand over a 5 cm drone raster of
// 2000×2000 pixels (10¹⁰ pixels of stand, 4·10⁶ of raster) allocates for
// the raster's pixels it covers, not for the stand's area.
func TestHugeStandBoundedMemory(t *testing.T) {
	const n = 2000
	p := &Plane{W: n, H: n, Data: make([]float32, n*n)}
	for i := range p.Data {
		p.Data[i] = float32(i%7) / 10
	}
	gt := [6]float64{500000, 0.05, 0, 6000000, 0, -0.05}
	x0, y0 := 500050.0, 5999950.0 // the raster's centre; the stand reaches 2.5 km each way
	stand := orb.Polygon{{{x0 - 2500, y0 + 2500}, {x0 + 2500, y0 + 2500}, {x0 + 2500, y0 - 2500}, {x0 - 2500, y0 - 2500}, {x0 - 2500, y0 + 2500}}}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	res, _, err := Compute(p, gt, []Stand{{ID: "5km", Geom: stand}}, Options{})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Pixels != n*n {
		t.Errorf("%v pixels, want %d", res[0].Pixels, n*n)
	}
	// The samples of every pixel (4 bytes each) twice over, a block of
	// accumulators per worker, and slack: far below the 40 GB the
	// stand's own area would ask for.
	limit := uint64(2*4*n*n + runtime.GOMAXPROCS(0)*64<<20 + 64<<20)
	if got := after.TotalAlloc - before.TotalAlloc; got > limit {
		t.Errorf("allocated %d MiB, want at most %d MiB", got>>20, limit>>20)
	}
}

// TestClippedFarRings: rings reaching millions of pixels beyond the raster
// are clipped before the accumulation; every cell's coverage is still the
// exact one (the reference clips each ring to each cell).
func TestClippedFarRings(t *testing.T) {
	const far = 1e8 // 10⁷ pixels of 10 m: beyond clipMargin
	shapes := map[string]orb.Geometry{
		"wedge": orb.Polygon{{{600003, 5799997}, {600000 + far, 5800000 - 0.6*far}, {600000 + far, 5800000 - 0.61*far}, {600003, 5799997}}},
		"fan":   orb.Polygon{{{600150, 5799850}, {600000 - far, 5800000 + 3*far}, {600000 + far, 5800000 + far}, {600150, 5799850}}},
		"hole": orb.Polygon{
			{{-far, -far}, {far, -far}, {far, far}, {-far, far}, {-far, -far}},
			{{600050, 5799950}, {600000 + far, 5800000 - 0.7*far}, {600000 + far, 5800000 - 0.9*far}, {600050, 5799950}},
		},
	}
	for name, g := range shapes {
		cg, err := Coverage(g, testGT, 30, 30)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var sum float64
		for r := range cg.H {
			for c := range cg.W {
				got := cg.Frac[r*cg.W+c]
				want := clampCover(refCoverage(g, testGT, cg.X0+c, cg.Y0+r))
				sum += got
				if math.Abs(got-want) > 1e-6 {
					t.Errorf("%s: cell (%d, %d): %v, want %v", name, cg.X0+c, cg.Y0+r, got, want)
				}
			}
		}
		if sum == 0 {
			t.Errorf("%s covers nothing", name)
		}
	}
}
