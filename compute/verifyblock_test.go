package compute

import (
	"math"
	"math/rand/v2"
	"testing"

	"canopy/compute/index"
)

// The block evaluation of the truth gives Reference64's bits for every
// catalogue index and a formula with every function, on every stored
// type, with nodata, NaN, zeros and a mask.
func TestReferenceBlockIsReference64(t *testing.T) {
	g := rand.New(rand.NewPCG(4, 5))
	const w, h = 1031, 3
	var exprs []*index.Expr
	var names []string
	for _, c := range index.Catalogue() {
		exprs, names = append(exprs, c.Expr), append(names, c.Name)
	}
	e := index.MustParse("clamp(sqrt(abs(nir - red)) / min(nir, -red + 0.5), -2, max(red, 0.25)) * -nir")
	exprs, names = append(exprs, e), append(names, "all")
	types := []DataType{U8, U16, I16, U32, I32, F32}
	var bands []BandInput
	for k, role := range index.Roles {
		typ := types[k%len(types)]
		p := NewPlane(typ, w, h)
		for i := range w * h {
			v := g.IntN(3000)
			if g.IntN(17) == 0 {
				v = 0
			}
			switch typ {
			case U8:
				p.U8()[i] = uint8(v)
			case U16:
				p.U16()[i] = uint16(v)
			case I16:
				p.I16()[i] = int16(v - 1500)
			case U32:
				p.U32()[i] = uint32(v)
			case I32:
				p.I32()[i] = int32(v - 1500)
			case F32:
				p.F32()[i] = float32(v) / 3000
				if g.IntN(23) == 0 {
					p.F32()[i] = float32(math.NaN())
				}
			}
		}
		bands = append(bands, BandInput{Role: role, Plane: p, Radiometry: Radiometry{Add: float64(k) - 3, Scale: 1.0 / 1000, Offset: 0.01 * float64(k)}, NoData: 7, HasNoData: k%2 == 0})
	}
	mask := make([]uint8, w*h)
	for i := range mask {
		if g.IntN(11) == 0 {
			mask[i] = 1
		}
	}
	j, err := NewJob(bands, mask, names, exprs)
	if err != nil {
		t.Fatal(err)
	}
	var s refScratch
	ref := make([]float64, refBlock)
	for o := range j.Exprs {
		for lo := 0; lo < j.Pixels(); lo += refBlock {
			m := ref[:min(refBlock, j.Pixels()-lo)]
			j.reference64Block(o, lo, m, &s)
			for p, v := range m {
				if want := j.Reference64(o, lo+p); math.Float64bits(v) != math.Float64bits(want) && !(v != v && want != want) {
					t.Fatalf("%s pixel %d: block %v, Reference64 %v", names[o], lo+p, v, want)
				}
			}
		}
	}
}
