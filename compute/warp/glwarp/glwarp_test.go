package glwarp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"canopy/compute"
	"canopy/compute/computetest"
	"canopy/compute/grid"
	"canopy/compute/warp"
)

// TestGLEqualsReference warps bands of every type, with nodata and a
// mask, onto grids in other systems and resolutions with every
// resampling, and checks the shader's result against the float64
// reference: the same pixels valid, nearest identical, the others within
// float32's rounding of the value (one step for integers, where a GPU's
// float64 division may round a hair differently at a half).
func TestGLEqualsReference(t *testing.T) {
	b := &Backend{}
	ok, why := b.Available()
	computetest.SkipUnlessGPU(t, ok, why)
	t.Logf("gl warp on %s", why)
	w, h := 96, 80
	allExact, all := 0, 0
	defer func() { t.Logf("%d of %d pixels identical to the reference's", allExact, all) }()
	rng := rand.New(rand.NewPCG(3, 5))
	for _, typ := range []compute.DataType{compute.U8, compute.U16, compute.I16, compute.U32, compute.I32, compute.F32} {
		plane := compute.NewPlane(typ, w, h)
		for i := range plane.Data {
			plane.Data[i] = byte(rng.UintN(256))
		}
		if typ == compute.F32 {
			f := plane.F32()
			for i := range f {
				f[i] = float32(rng.Float64() * 1000)
			}
		}
		mask := make([]uint8, w*h)
		for i := 30 * w; i < 34*w; i++ {
			mask[i] = 1
		}
		src := &warp.Source{Plane: plane, NoData: plane.At(w*60 + 50), HasNoData: true, Mask: mask, Name: typ.String(),
			Grid: warp.SourceGrid{Width: w, Height: h, Affine: [6]float64{699000, 10, 0, 5601000, 0, -10}, CRS: "EPSG:32632"}}
		sg := grid.Grid{CRS: "EPSG:32632", EPSG: 32632, X0: 699000, Y0: 5601000, ResX: 10, ResY: 10, Width: w, Height: h}
		for _, c := range []struct {
			epsg int
			res  float64
		}{{32633, 10}, {32633, 27}, {4326, 0.00015}} {
			crs := fmt.Sprintf("EPSG:%d", c.epsg)
			fp, err := grid.Footprint(sg, crs)
			if err != nil {
				t.Fatal(err)
			}
			g, err := grid.Aligned(crs, c.epsg, c.res, c.res, fp)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range []warp.Resampling{warp.Nearest, warp.Bilinear, warp.Cubic, warp.Average} {
				plan, err := warp.NewPlan(g, src.Grid, r, warp.MaxError)
				if err != nil {
					t.Fatal(err)
				}
				want, _ := warp.NewTarget(plan, typ, 3, true)
				warp.Reference(plan, src, want, 0, g.Height)
				got, _ := warp.NewTarget(plan, typ, 3, true)
				// A pixel already filled (a mosaic's earlier input) stays.
				got.Filled[0], want.Filled[0] = 1, 1
				if err := b.Warp(plan, src, got); err != nil {
					t.Fatal(err)
				}
				exact, bad, worst := 0, 0, 0.0
				for i := range want.Filled {
					if got.Filled[i] != want.Filled[i] {
						bad++
						continue
					}
					a, e := got.Plane.At(i), want.Plane.At(i)
					if a == e {
						exact++
						continue
					}
					tol := 1.0
					if typ == compute.F32 {
						tol = math.Abs(e) * 1.2e-7
					}
					if r == warp.Nearest || math.Abs(a-e) > tol {
						bad++
						worst = max(worst, math.Abs(a-e))
					}
				}
				allExact += exact
				all += len(want.Filled)
				if bad > 0 {
					t.Errorf("%s %s → %s %g: %d pixels differ from the reference (%d identical of %d; the largest difference %g)", typ, r, crs, c.res, bad, exact, len(want.Filled), worst)
				}
			}
		}
	}
}
