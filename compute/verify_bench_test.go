package compute_test

import (
	"math/rand/v2"
	"testing"

	"canopy/compute"
	"canopy/compute/index"
)

// BenchmarkVerifyJob checks a 2048² NDVI over Sentinel-2 uint16 bands
// against the float64 truth (what every canopy compute run does block by
// block): ns per pixel of the whole machine.
func BenchmarkVerifyJob(b *testing.B) {
	const w, h = 2048, 2048
	g := rand.New(rand.NewPCG(1, 2))
	var bands []compute.BandInput
	for _, role := range []string{"red", "nir"} {
		p := compute.NewPlane(compute.U16, w, h)
		for i, s := 0, p.U16(); i < len(s); i++ {
			s[i] = uint16(1000 + g.IntN(9000))
		}
		bands = append(bands, compute.BandInput{Role: role, Plane: p, Radiometry: compute.Radiometry{Add: -1000, Scale: 1e-4}, HasNoData: true, Source: role})
	}
	ndvi, _ := index.Lookup("ndvi")
	j, err := compute.NewJob(bands, nil, []string{"ndvi"}, []*index.Expr{ndvi.Expr})
	if err != nil {
		b.Fatal(err)
	}
	be, _ := compute.New(compute.NameGo)
	defer be.Close()
	if _, err := compute.RunJob(be, j); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if r := compute.VerifyJob(j); !r[0].OK() {
			b.Fatal(r[0])
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(w*h), "ns/px")
}
