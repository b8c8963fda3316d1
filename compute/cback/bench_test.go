package cback_test

import (
	"math"
	"os"
	"strconv"
	"testing"

	"canopy/compute"
	"canopy/compute/cback"
	"canopy/compute/goback"
	"canopy/compute/index"
	"canopy/compute/par"
)

// The benchmarks run on a Sentinel-2 10 m tile's size, 10980² (override
// with CANOPY_BENCH_SIZE), on synthetic reflectances that
// bench/peers/numexpr_evi.py draws bit for bit the same way, so that the
// peers compute on the same arrays:
//
//	go test -run '^$' -bench . -benchtime=5x -count=5 ./compute/cback
func benchSize(b *testing.B) int {
	if s := os.Getenv("CANOPY_BENCH_SIZE"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			b.Fatalf("CANOPY_BENCH_SIZE=%q: want a positive integer", s)
		}
		return n
	}
	return 10980
}

// reflectance is pixel i of the band with this seed: murmur3's 32-bit
// finaliser of i*0x9E3779B1 + seed*0x85EBCA77 (uint32 arithmetic), its top
// 24 bits as u in [0, 1), and lo + span*u in float32 (two roundings).
// numexpr_evi.py computes the same bits with NumPy.
func reflectance(i int, seed uint32, lo, span float32) float32 {
	h := uint32(i)*0x9E3779B1 + seed*0x85EBCA77
	h ^= h >> 16
	h *= 0x85EBCA6B
	h ^= h >> 13
	h *= 0xC2B2AE35
	h ^= h >> 16
	u := float32(h>>8) * 0x1p-24
	return lo + float32(span*u)
}

// The bands: blue, red and nir reflectances in their usual ranges.
var bandDefs = []struct {
	role     string
	seed     uint32
	lo, span float32
}{{"blue", 1, 0.01, 0.15}, {"red", 2, 0.02, 0.25}, {"nir", 3, 0.1, 0.5}}

func f32Bands(w, h int) []compute.BandInput {
	var bands []compute.BandInput
	for _, d := range bandDefs {
		s := make([]float32, w*h)
		par.Blocks(len(s), 1<<16, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				s[i] = reflectance(i, d.seed, d.lo, d.span)
			}
		})
		bands = append(bands, compute.BandInput{Role: d.role, Plane: compute.PlaneOf(w, h, s), Radiometry: compute.Identity()})
	}
	return bands
}

// u16Bands stores the same reflectances as Sentinel-2 L2A does from
// processing baseline 04.00: DN = 10000 * reflectance + 1000, DN 0 nodata.
func u16Bands(w, h int) []compute.BandInput {
	var bands []compute.BandInput
	for _, d := range bandDefs {
		s := make([]uint16, w*h)
		par.Blocks(len(s), 1<<16, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				s[i] = uint16(1000 + math.Round(10000*float64(reflectance(i, d.seed, d.lo, d.span))))
			}
		})
		bands = append(bands, compute.BandInput{Role: d.role, Plane: compute.PlaneOf(w, h, s),
			Radiometry: compute.Radiometry{Add: -1000, Scale: 1e-4}, NoData: 0, HasNoData: true})
	}
	return bands
}

func newJob(b *testing.B, bands []compute.BandInput, name string) *compute.Job {
	c, ok := index.Lookup(name)
	if !ok {
		b.Fatalf("no index %s", name)
	}
	j, err := compute.NewJob(bands, nil, []string{name}, []*index.Expr{c.Expr})
	if err != nil {
		b.Fatal(err)
	}
	return j
}

// runJob times e on j, after one untimed run (pool start, scratch).
func runJob(b *testing.B, e compute.Backend, j *compute.Job) {
	if _, err := e.RunJob(j); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(j.Bytes()))
	b.ResetTimer()
	for b.Loop() {
		if _, err := e.RunJob(j); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNDVI runs the NDVI job through the C interpreter on float32
// and Sentinel-2 uint16 bands, and go-parallel's on the float32 ones.
func BenchmarkNDVI(b *testing.B) {
	n := benchSize(b)
	c := cback.New(0)
	defer c.Close()
	b.Run("f32", func(b *testing.B) {
		bands := f32Bands(n, n)[1:] // red, nir
		b.Run("job", func(b *testing.B) { runJob(b, c, newJob(b, bands, "ndvi")) })
	})
	b.Run("u16", func(b *testing.B) {
		bands := u16Bands(n, n)[1:]
		b.Run("job", func(b *testing.B) { runJob(b, c, newJob(b, bands, "ndvi")) })
	})
	b.Run("f32/go-parallel", func(b *testing.B) {
		g := goback.NewGoParallel(0)
		defer g.Close()
		bands := f32Bands(n, n)[1:]
		runJob(b, g, newJob(b, bands, "ndvi"))
	})
}

// BenchmarkEVI runs EVI (blue, red, nir) on the c and go-parallel block
// programs, on float32 bands (the arrays numexpr_evi.py gives numexpr) and
// on Sentinel-2 uint16 bands.
func BenchmarkEVI(b *testing.B) {
	n := benchSize(b)
	c := cback.New(0)
	defer c.Close()
	g := goback.NewGoParallel(0)
	defer g.Close()
	for _, typ := range []string{"f32", "u16"} {
		b.Run(typ, func(b *testing.B) {
			var bands []compute.BandInput
			if typ == "f32" {
				bands = f32Bands(n, n)
			} else {
				bands = u16Bands(n, n)
			}
			j := newJob(b, bands, "evi")
			b.Run("c", func(b *testing.B) { runJob(b, c, j) })
			b.Run("go-parallel", func(b *testing.B) { runJob(b, g, j) })
		})
	}
}

// The benchmark bands are the arrays numexpr_evi.py gives numexpr: these
// pixels are what its NumPy code draws (printed with float.hex there).
func TestBenchBandsMatchNumPy(t *testing.T) {
	want := map[string][4]float32{
		"blue": {0x1.9ea386p-4, 0x1.7aee2ap-4, 0x1.0c4b62p-4, 0x1.035178p-3},
		"red":  {0x1.0748fap-5, 0x1.d407dap-3, 0x1.04c8ccp-4, 0x1.11d232p-2},
		"nir":  {0x1.3f7048p-3, 0x1.3738dcp-2, 0x1.44b5dep-2, 0x1.2c054p-2},
	}
	pixels := [4]int{0, 1, 12345, 10980*10980 - 1}
	for _, d := range bandDefs {
		for k, i := range pixels {
			if got := reflectance(i, d.seed, d.lo, d.span); got != want[d.role][k] {
				t.Errorf("%s pixel %d: %x, NumPy draws %x", d.role, i, got, want[d.role][k])
			}
		}
	}
}
