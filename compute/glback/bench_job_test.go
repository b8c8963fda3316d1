package glback

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"canopy/compute"
	"canopy/compute/goback"
	"canopy/compute/index"
	"canopy/compute/par"
	"canopy/native/egl/gl"
)

// benchBands caches generated bands by type, side and role.
var benchBands = struct {
	sync.Mutex
	m map[string]compute.BandInput
}{m: map[string]compute.BandInput{}}

// benchBand is band role of a side² scene of reflectances in [0.02, 0.62)
// that differ per role (a hash of the pixel and the role), stored as
// float32 reflectance or as Sentinel-2 L2A uint16 DNs ((DN - 1000) /
// 10000, DN 0 nodata, every 1009th pixel).
func benchBand(t compute.DataType, side int, role string) compute.BandInput {
	benchBands.Lock()
	defer benchBands.Unlock()
	key := fmt.Sprintf("%s/%d/%s", t, side, role)
	if b, ok := benchBands.m[key]; ok {
		return b
	}
	n := side * side
	r := uint64(index.RoleIndex(role)+1) * 0x9e3779b97f4a7c15
	refl := func(i int) float32 {
		h := (uint64(i) + r) * 0xbf58476d1ce4e5b9
		h ^= h >> 31
		return 0.02 + 0.6*float32(h>>40)/float32(1<<24)
	}
	b := compute.BandInput{Role: role, Source: "bench " + key}
	switch t {
	case compute.F32:
		s := make([]float32, n)
		par.Blocks(n, 1<<16, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				s[i] = refl(i)
			}
		})
		b.Plane, b.Radiometry = compute.PlaneOf(side, side, s), compute.Identity()
	default:
		s := make([]uint16, n)
		par.Blocks(n, 1<<16, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				s[i] = uint16(1000 + 10000*refl(i))
				if i%1009 == 0 {
					s[i] = 0
				}
			}
		})
		b.Plane = compute.PlaneOf(side, side, s)
		b.Radiometry, b.NoData, b.HasNoData = compute.Radiometry{Add: -1000, Scale: 1e-4}, 0, true
	}
	benchBands.m[key] = b
	return b
}

// benchJob is a job of the first n catalogue indices over every role's
// band of type t at side² (the job keeps the bands its indices read).
func benchJob(b *testing.B, t compute.DataType, side int, names []string) *compute.Job {
	var bands []compute.BandInput
	var exprs []*index.Expr
	for _, n := range names {
		c, ok := index.Lookup(n)
		if !ok {
			b.Fatalf("no index %s", n)
		}
		exprs = append(exprs, c.Expr)
		for _, r := range c.Expr.Roles() {
			if !slices.ContainsFunc(bands, func(x compute.BandInput) bool { return x.Role == r }) {
				bands = append(bands, benchBand(t, side, r))
			}
		}
	}
	j, err := compute.NewJob(bands, nil, names, exprs)
	if err != nil {
		b.Fatal(err)
	}
	return j
}

// BenchmarkJobEVI times EVI (blue, red and NIR in, one plane out) at 2048²
// and 10980² (a Sentinel-2 tile) over float32 bands (16 bytes a pixel)
// and uint16 bands (10), in both transfer modes, and reports the phases'
// medians, the kernel's bandwidth (compute.Job.Bytes) against the device
// copy measured right after (the goal: at least 80% at 16 bytes a
// pixel on the H200), and the cold compile of its shader.
func BenchmarkJobEVI(b *testing.B) {
	for _, side := range []int{2048, 10980} {
		for _, t := range []compute.DataType{compute.F32, compute.U16} {
			for _, mode := range []string{ModeMapped, ModeSubData} {
				b.Run(fmt.Sprintf("size=%d/type=%s/mode=%s", side, t, mode), func(b *testing.B) {
					g := New()
					defer g.Close()
					need(b, g)
					j := benchJob(b, t, side, []string{"evi"})
					j.Mode = mode
					runJobBench(b, g, j, true)
				})
			}
		}
	}
}

// sweepNames are the first ten catalogue indices (ndvi, evi, evi2, savi,
// msavi2, osavi, gndvi, ndre, ndvi705, ndmi).
func sweepNames(n int) []string {
	var names []string
	for _, c := range index.Catalogue()[:n] {
		names = append(names, c.Name)
	}
	return names
}

// BenchmarkJobSweep is the chapter's lesson from the other side: 1, 2, 5
// and 10 catalogue indices in one job over the same uint16 Sentinel-2
// bands (2, 3, 3 and 7 of them), on gl (one upload, one dispatch, every
// output downloaded) and on go-parallel (the block program on every core)
// for comparison: the GPU's kernel alone and with its transfers against
// the CPU's run.
func BenchmarkJobSweep(b *testing.B) {
	for _, side := range []int{2048, 10980} {
		for _, n := range []int{1, 2, 5, 10} {
			for _, backend := range []string{compute.NameGL, compute.NameGoParallel} {
				b.Run(fmt.Sprintf("size=%d/indices=%d/backend=%s", side, n, backend), func(b *testing.B) {
					j := benchJob(b, compute.U16, side, sweepNames(n))
					if backend == compute.NameGoParallel {
						runCPUBench(b, goback.NewGoParallel(0), j)
						return
					}
					g := New()
					defer g.Close()
					need(b, g)
					runJobBench(b, g, j, false)
				})
			}
		}
	}
}

// runCPUBench times a CPU engine on j: medians of the whole run.
func runCPUBench(b *testing.B, e compute.Backend, j *compute.Job) {
	if _, err := e.RunJob(j); err != nil {
		b.Fatal(err)
	}
	var k []time.Duration
	for b.Loop() {
		t, err := e.RunJob(j)
		if err != nil {
			b.Fatal(err)
		}
		k = append(k, t.Total)
	}
	b.ReportMetric(float64(median(k))/1e6, "total-ms")
	b.ReportMetric(float64(median(k))/1e6/float64(len(j.Out)), "total-ms/index")
	b.ReportMetric(float64(j.Bytes())/median(k).Seconds()/1e9, "GB/s")
}

// runJobBench runs j on g once (setup), optionally measures a cold compile
// of its shader (in-process cache emptied, driver's disk cache defeated by
// a unique comment), then times runs and reports the phases' medians and
// the kernel's bandwidth against the device copy of the same run.
func runJobBench(b *testing.B, g *Backend, j *compute.Job, compile bool) {
	first, err := compute.RunJob(g, j)
	if err != nil {
		b.Fatal(err)
	}
	var cold time.Duration
	if compile {
		nonce := time.Now().UnixNano()
		g.tu.jobHook = func(src string) string { return src + fmt.Sprintf("// run %d\n", nonce) }
		g.w.do(func(st *glState) error {
			for k, p := range st.progs {
				gl.DeleteProgram(p.prog)
				delete(st.progs, k)
			}
			return nil
		})
		t, err := compute.RunJob(g, j)
		g.tu.jobHook = nil
		if err != nil {
			b.Fatal(err)
		}
		cold = t.Setup
	}
	var up, k, down, tot []time.Duration
	for b.Loop() {
		t, err := compute.RunJob(g, j)
		if err != nil {
			b.Fatal(err)
		}
		if t.Setup != 0 {
			b.Fatalf("a repeated run set up %v", t.Setup)
		}
		up, k, down, tot = append(up, t.Upload), append(k, t.Kernel), append(down, t.Download), append(tot, t.Total)
	}
	b.StopTimer()
	c, err := g.Ceilings(min(j.Pixels()*4, 1<<30))
	if err != nil {
		b.Fatal(err)
	}
	bytes := j.Bytes()
	kg := float64(bytes) / median(k).Seconds() / 1e9
	b.ReportMetric(float64(first.Setup)/1e6, "setup-ms")
	if compile {
		b.ReportMetric(float64(cold)/1e6, "compile-ms")
	}
	b.ReportMetric(float64(median(up))/1e6, "upload-ms")
	b.ReportMetric(float64(median(k))/1e6, "kernel-ms")
	b.ReportMetric(float64(median(down))/1e6, "download-ms")
	b.ReportMetric(float64(median(tot))/1e6, "total-ms")
	b.ReportMetric(float64(median(tot))/1e6/float64(len(j.Out)), "total-ms/index")
	b.ReportMetric(float64(bytes)/float64(j.Pixels()), "bytes/px")
	b.ReportMetric(kg, "kernel-GB/s")
	b.ReportMetric(100*kg/c.DeviceCopy, "kernel-%copy")
	b.ReportMetric(c.DeviceCopy, "copy-GB/s")
}
