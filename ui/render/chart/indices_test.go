package chart

import (
	"gonum.org/v1/plot/vg/draw"

	"math"
	"testing"

	"canopy/compute"
)

// indexRuns: a CPU whose time grows by 10 ms an index, and a GPU paying
// 30 ms of transfers and 2 ms an index: the lines cross at 30 + 2n = 10n,
// n = 3.75, which the linear interpolation between 2 and 5 finds exactly.
func indexRuns() []compute.BenchResult {
	names := map[int]string{1: "ndvi", 2: "ndvi,evi", 5: "ndvi,evi,savi,evi2,msavi2", 10: "ndvi,evi,savi,evi2,msavi2,osavi,gndvi,ndre,ndmi,nbr"}
	var rs []compute.BenchResult
	for _, n := range []int{1, 2, 5, 10} {
		f := float64(n)
		rs = append(rs,
			compute.BenchResult{Backend: "c", Index: names[n], Width: 512, Height: 512, KernelMS: 10 * f, TotalMS: 10 * f, Verified: true},
			compute.BenchResult{Backend: "cuda", Mode: "overlapped", GPU: true, Index: names[n], Width: 512, Height: 512,
				UploadMS: 20, KernelMS: 2 * f, DownloadMS: 10, TotalMS: 30 + 2*f, Verified: true})
	}
	return rs
}

func TestIndexCount(t *testing.T) {
	for _, c := range []struct {
		index string
		n     int
	}{{"", 1}, {"ndvi", 1}, {"ndvi,evi", 2}, {"ndvi,evi,savi,evi2,msavi2", 5}} {
		if got := IndexCount(compute.BenchResult{Index: c.index}); got != c.n {
			t.Errorf("IndexCount(%q) = %d, want %d", c.index, got, c.n)
		}
	}
}

func TestIndexCrossover(t *testing.T) {
	rs := indexRuns()
	n, ok := IndexCrossover(rs, "cuda:overlapped", true)
	if !ok || math.Abs(n-3.75) > 1e-12 {
		t.Errorf("with transfers: %v, %v; want 3.75", n, ok)
	}
	// The kernel alone (2n against 10n) wins from one index on.
	if n, ok := IndexCrossover(rs, "cuda", false); !ok || n != 1 {
		t.Errorf("kernel alone: %v, %v; want 1", n, ok)
	}
	// A GPU that never catches up.
	for i := range rs {
		if rs[i].GPU {
			rs[i].TotalMS += 1000
		}
	}
	if n, ok := IndexCrossover(rs, "cuda", true); ok {
		t.Errorf("a GPU 1 s slower wins from %v indices", n)
	}
}

func TestIndexSweepDraws(t *testing.T) {
	img, err := IndexSweep(indexRuns(), 900, 500)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 900 || b.Dy() != 500 {
		t.Errorf("chart is %v", b)
	}
	// No result: the axes and a message.
	if _, err := IndexSweep(nil, 900, 500); err != nil {
		t.Errorf("empty chart: %v", err)
	}
	if !hasPrefix(svgTexts(t, 900, 500, func(dc draw.Canvas) error { return drawIndexSweep(dc, nil) }), "No timings to plot yet") {
		t.Error("empty chart says nothing")
	}
}

func TestIndexTitle(t *testing.T) {
	rs := func(names ...string) []compute.BenchResult {
		var out []compute.BenchResult
		for _, n := range names {
			out = append(out, compute.BenchResult{Index: n})
		}
		return out
	}
	for _, c := range []struct {
		rs   []compute.BenchResult
		want string
	}{
		{rs(""), "NDVI"}, {rs("ndvi", "ndvi"), "NDVI"}, {rs("evi"), "EVI"}, {rs("ndvi,evi"), "NDVI, EVI"},
		{rs("ndvi", "evi"), "Index"}, {rs("(nir - swir1) / (nir + swir1)"), "Index"},
	} {
		if got := indexTitle(c.rs); got != c.want {
			t.Errorf("indexTitle(%v) = %q, want %q", c.rs, got, c.want)
		}
	}
}
