package warp

import (
	"testing"

	"canopy/compute/grid"
)

// BenchmarkPlanTiles makes the plans of bench/warp's geometry: two
// 10980² Sentinel-2 tiles, UTM 32N and 33N across 12° E, bilinear onto
// one UTM 33N grid at 10 m (18405 × 11821 pixels). The 32N tile's plan
// is the work (the approximate transformer over every row, PROJ on
// every worker); the 33N tile's is in the target's own system.
func BenchmarkPlanTiles(b *testing.B) {
	n := 10980
	res := 10.0
	srcs := []SourceGrid{
		{Width: n, Height: n, Affine: [6]float64{699960, res, 0, 5600040, 0, -res}, CRS: "EPSG:32632"},
		{Width: n, Height: n, Affine: [6]float64{199980, res, 0, 5600040, 0, -res}, CRS: "EPSG:32633"},
	}
	var fps [][4]float64
	for _, s := range srcs {
		fp, err := grid.Footprint(grid.Grid{CRS: s.CRS, X0: s.Affine[0], Y0: s.Affine[3], ResX: res, ResY: res, Width: n, Height: n}, "EPSG:32633")
		if err != nil {
			b.Fatal(err)
		}
		fps = append(fps, fp)
	}
	g, err := grid.Aligned("EPSG:32633", 32633, res, res, grid.Union(fps...))
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("grid %dx%d", g.Width, g.Height)
	for b.Loop() {
		for _, s := range srcs {
			p, err := NewPlan(g, s, Bilinear, MaxError)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(len(p.Segs))/float64(g.Height), "segs/row")
		}
	}
}
