package warp

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"canopy/compute"
	"canopy/compute/grid"
)

// TestBackendsEqualReference warps random bands of every type, with
// nodata and a mask, onto grids in other systems and at other
// resolutions, and checks every backend's bytes against the reference's.
func TestBackendsEqualReference(t *testing.T) {
	w, h := 160, 120
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
		src := &Source{Plane: plane, NoData: plane.At(w*60 + 80), HasNoData: true, Mask: mask, Name: typ.String(),
			Grid: SourceGrid{Width: w, Height: h, Affine: [6]float64{699000, 10, 0, 5601000, 0, -10}, CRS: "EPSG:32632"}}
		for _, c := range []struct {
			epsg int
			res  float64
		}{{32633, 10}, {32633, 27}, {4326, 0.00015}, {32632, 7}} {
			sg := grid.Grid{CRS: "EPSG:32632", EPSG: 32632, X0: 699000, Y0: 5601000, ResX: 10, ResY: 10, Width: w, Height: h}
			crs := fmt.Sprintf("EPSG:%d", c.epsg)
			fp, err := grid.Footprint(sg, crs)
			if err != nil {
				t.Fatal(err)
			}
			g, err := grid.Aligned(crs, c.epsg, c.res, c.res, fp)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range []Resampling{Nearest, Bilinear, Cubic, Average} {
				plan, err := NewPlan(g, src.Grid, r, MaxError)
				if err != nil {
					t.Fatal(err)
				}
				want, _ := NewTarget(plan, typ, 3, true)
				Reference(plan, src, want, 0, g.Height)
				for _, name := range Names() {
					b, _ := Get(name)
					got, _ := NewTarget(plan, typ, 3, true)
					if err := b.Warp(plan, src, got); err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					if !bytes.Equal(got.Plane.Data, want.Plane.Data) || !bytes.Equal(got.Filled, want.Filled) {
						t.Errorf("%s %s %s → EPSG:%d %g: differs from the reference", name, typ, r, c.epsg, c.res)
					}
				}
			}
		}
	}
}

// TestMosaicFirstValid fills a destination from two sources in order:
// the second only where the first had no valid pixel.
func TestMosaicFirstValid(t *testing.T) {
	w, h := 40, 30
	mk := func(v uint16, x0 float64, nd int) *Source {
		p := compute.NewPlane(compute.U16, w, h)
		for i := range p.U16() {
			p.U16()[i] = v
		}
		p.U16()[nd] = 0 // nodata
		return &Source{Plane: p, HasNoData: true, Name: fmt.Sprint(v),
			Grid: SourceGrid{Width: w, Height: h, Affine: [6]float64{x0, 10, 0, 5000300, 0, -10}, CRS: "EPSG:32633"}}
	}
	a, b := mk(100, 500000, 5*w+25), mk(200, 500200, 8*w+8)
	g, _ := grid.Aligned("EPSG:32633", 32633, 10, 10, [4]float64{500000, 5000000, 500600, 5000300})
	var dst *Target
	for _, s := range []*Source{a, b} {
		plan, err := NewPlan(g, s.Grid, Nearest, MaxError)
		if err != nil {
			t.Fatal(err)
		}
		if dst == nil {
			dst, _ = NewTarget(plan, compute.U16, 0, true)
		}
		if err := (cBackend{}).Warp(plan, s, dst); err != nil {
			t.Fatal(err)
		}
	}
	v := dst.Plane.U16()
	for _, c := range []struct{ x, y, want int }{{0, 0, 100}, {25, 3, 100}, {25, 5, 200}, {28, 8, 100}, {45, 10, 200}, {59, 29, 200}} {
		if got := int(v[c.y*g.Width+c.x]); got != c.want {
			t.Errorf("pixel (%d, %d) = %d, want %d", c.x, c.y, got, c.want)
		}
	}
}

// TestMosaicRefusesMixedBands: inputs with other band counts or types
// are refused with a message naming them.
func TestMosaicRefusesMixedBands(t *testing.T) {
	g, _ := grid.Aligned("EPSG:32633", 32633, 10, 10, [4]float64{500000, 5000000, 500100, 5000100})
	mk := func(name string, typ compute.DataType) *Source {
		return &Source{Plane: compute.NewPlane(typ, 4, 4), Name: name,
			Grid: SourceGrid{Width: 4, Height: 4, Affine: [6]float64{500000, 10, 0, 5000040, 0, -10}, CRS: "EPSG:32633"}}
	}
	be, _ := Get("go")
	if _, _, err := Mosaic(g, [][]*Source{{mk("a", compute.U16)}, {mk("b", compute.F32)}}, Nearest, MaxError, be); err == nil || !strings.Contains(err.Error(), "b") {
		t.Errorf("mixed types: %v", err)
	}
	if _, _, err := Mosaic(g, [][]*Source{{mk("a", compute.U16)}, {mk("b", compute.U16), mk("b2", compute.U16)}}, Nearest, MaxError, be); err == nil || !strings.Contains(err.Error(), "band") {
		t.Errorf("band counts: %v", err)
	}
	out, _, err := Mosaic(g, [][]*Source{{mk("a", compute.U16)}}, Nearest, MaxError, be)
	if err != nil || len(out) != 1 || out[0].Plane.Width != 10 {
		t.Errorf("one input: %v", err)
	}
}
