package warp

import (
	"math"
	"testing"

	"canopy/compute/grid"
)

// A transformer's clones (one a planning worker) are built from the PROJ
// string of the operation PROJ chose, without its database, and place
// every point exactly as the transformer itself does, bit for bit, for
// every kind of target the issue names.
func TestCloneSameBits(t *testing.T) {
	src := [6]float64{699960, 10, 0, 5600040, 0, -10}
	for _, c := range []struct {
		crs string
		res float64
	}{{"EPSG:32633", 10}, {"EPSG:3035", 10}, {"EPSG:4326", 0.0001}, {"EPSG:3857", 15}} {
		fp, err := grid.Footprint(grid.Grid{CRS: "EPSG:32632", X0: src[0], Y0: src[3], ResX: 10, ResY: 10, Width: 2000, Height: 2000}, c.crs)
		if err != nil {
			t.Fatal(err)
		}
		g, err := grid.Aligned(c.crs, 0, c.res, c.res, fp)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := newTransformer(g, src, "EPSG:32632")
		if err != nil {
			t.Fatal(err)
		}
		if tr.def == "" && c.crs != "EPSG:3035" {
			// (to LAEA Europe PROJ keeps candidate operations, chosen
			// point by point: the clones open it again)
			t.Errorf("%s: no PROJ string for the clones", c.crs)
		}
		cl, err := tr.clone()
		if err != nil {
			t.Fatal(err)
		}
		if cl.pj == tr.pj {
			t.Fatalf("%s: the clone shares the PROJ object", c.crs)
		}
		var a, b [3][2]float64
		var oka, okb [3]bool
		n := 0
		for y := 0.5; y < float64(g.Height); y += float64(g.Height) / 37 {
			for x := 0.5; x < float64(g.Width); x += float64(g.Width) / 41 {
				xs := []float64{x, x + 0.25, x + 7}
				tr.points(xs, y, a[:], oka[:])
				cl.points(xs, y, b[:], okb[:])
				for k := range xs {
					if oka[k] != okb[k] || math.Float64bits(a[k][0]) != math.Float64bits(b[k][0]) || math.Float64bits(a[k][1]) != math.Float64bits(b[k][1]) {
						t.Fatalf("%s: (%g, %g): the transformer gives %v %v, its clone %v %v", c.crs, xs[k], y, a[k], oka[k], b[k], okb[k])
					}
					n++
				}
			}
		}
		t.Logf("%s: %d points identical; the clones' operation: %s", c.crs, n, tr.def)
	}
}
