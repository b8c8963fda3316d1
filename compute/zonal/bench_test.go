package zonal

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/paulmach/orb"
)

// Synthetic stands: an n×n tiling of irregular polygons over a size² plane
// of 10 m pixels. Grid corners are jittered, and every shared edge gets k
// jittered intermediate points computed from the edge alone, so that the
// stands tile the plane without gaps or overlaps, like a forest map.
func tiledStands(size, n, k int, seed uint64) []Stand {
	const px = 10.0
	x0, y0 := 600000.0, 5800000.0
	cell := float64(size) * px / float64(n)
	hash := func(a, b, c uint64) float64 { // deterministic in [-0.5, 0.5)
		h := a*0x9E3779B97F4A7C15 ^ b*0xC2B2AE3D27D4EB4F ^ c*0x165667B19E3779F9 ^ seed
		h ^= h >> 31
		h *= 0xBF58476D1CE4E5B9
		h ^= h >> 29
		return float64(h>>11)/float64(1<<53) - 0.5
	}
	corner := func(i, j int) orb.Point {
		p := orb.Point{x0 + float64(i)*cell, y0 - float64(j)*cell}
		if i > 0 && i < n {
			p[0] += 0.4 * cell * hash(uint64(i), uint64(j), 1)
		}
		if j > 0 && j < n {
			p[1] += 0.4 * cell * hash(uint64(i), uint64(j), 2)
		}
		return p
	}
	// edgePts returns the intermediate points from corner a to corner b
	// (edge id e), jittered across the edge except on the plane's border.
	edgePts := func(a, b orb.Point, e uint64, border bool) []orb.Point {
		dx, dy := b[0]-a[0], b[1]-a[1]
		l := math.Hypot(dx, dy)
		nx, ny := -dy/l, dx/l
		pts := make([]orb.Point, k)
		for m := 0; m < k; m++ {
			t := float64(m+1) / float64(k+1)
			off := 0.0
			if !border {
				off = 0.12 * cell * hash(e, uint64(m), 3)
			}
			pts[m] = orb.Point{a[0] + t*dx + off*nx, a[1] + t*dy + off*ny}
		}
		return pts
	}
	hEdge := func(i, j int) []orb.Point { // (i, j) → (i+1, j)
		return edgePts(corner(i, j), corner(i+1, j), uint64(j*(n+1)+i)*2, j == 0 || j == n)
	}
	vEdge := func(i, j int) []orb.Point { // (i, j) → (i, j+1)
		return edgePts(corner(i, j), corner(i, j+1), uint64(j*(n+1)+i)*2+1, i == 0 || i == n)
	}
	rev := func(p []orb.Point) []orb.Point {
		o := make([]orb.Point, len(p))
		for i := range p {
			o[i] = p[len(p)-1-i]
		}
		return o
	}
	stands := make([]Stand, 0, n*n)
	for j := 0; j < n; j++ {
		for i := 0; i < n; i++ {
			var r orb.Ring
			r = append(r, corner(i, j))
			r = append(r, hEdge(i, j)...)
			r = append(r, corner(i+1, j))
			r = append(r, vEdge(i+1, j)...)
			r = append(r, corner(i+1, j+1))
			r = append(r, rev(hEdge(i, j+1))...)
			r = append(r, corner(i, j+1))
			r = append(r, rev(vEdge(i, j))...)
			r = append(r, r[0])
			stands = append(stands, Stand{ID: strconv.Itoa(j*n + i + 1), Geom: orb.Polygon{r}})
		}
	}
	return stands
}

// smoothPlane fills a size² plane with NDVI-like values and 1% NaN.
func smoothPlane(size int) *Plane {
	d := make([]float32, size*size)
	var wg sync.WaitGroup
	nw := runtime.GOMAXPROCS(0)
	for w := 0; w < nw; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for y := w; y < size; y += nw {
				row := d[y*size : (y+1)*size]
				s := uint32(y*2654435761 + 1)
				for x := range row {
					s ^= s << 13
					s ^= s >> 17
					s ^= s << 5
					v := 0.45 + 0.3*float32(math.Sin(float64(x)*0.003)*math.Cos(float64(y)*0.002)) + float32(s%1000)/5000 - 0.1
					if s%100 == 0 {
						v = float32(math.NaN())
					}
					row[x] = v
				}
			}
		}(w)
	}
	wg.Wait()
	return &Plane{W: size, H: size, Data: d}
}

func TestTiledStandsTile(t *testing.T) {
	// The synthetic stands tile the plane: their coverage adds up to every
	// pixel exactly once.
	const size, n = 200, 5
	stands := tiledStands(size, n, 4, 1)
	p := smoothPlane(size)
	res, warn, err := Compute(p, testGT, stands, Options{})
	if err != nil || len(warn) != 0 {
		t.Fatalf("%v %v", err, warn)
	}
	var total float64
	for _, r := range res {
		total += r.Pixels
	}
	if math.Abs(total-size*size) > 1e-6 {
		t.Fatalf("stands cover %v pixels of %d", total, size*size)
	}
}

// cpuSeconds is the process's user + system CPU time: with the machine
// shared, CPU time per run says what two idle cores would take.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}

func peakRSSMiB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			var kb float64
			fmt.Sscanf(strings.TrimSpace(strings.TrimPrefix(l, "VmHWM:")), "%f", &kb)
			return kb / 1024
		}
	}
	return 0
}

var (
	benchOnce   sync.Once
	benchPlane  *Plane
	benchStands []Stand
)

// BenchmarkZonal10k is the target: 10 000 stands over a 10980²
// index (a Sentinel-2 tile at 10 m) with coverage weights, at most 3 s
// and 1 GiB resident on the 2-core machine. in-place summarises a plane
// in memory, read-rows the same plane through Blocks.ReadRows (copied a
// block at a time, as a file would be read). Run it with -benchtime=1x
// -count=3; peak-RSS-MiB is the process's high-water mark (the 460 MiB
// plane included), cpu-s/op the CPU time of one run (both cores).
func BenchmarkZonal10k(b *testing.B) {
	benchOnce.Do(func() {
		t0 := time.Now()
		benchPlane = smoothPlane(10980)
		benchStands = tiledStands(10980, 100, 6, 1)
		b.Logf("set-up (plane and stands, not timed): %v", time.Since(t0).Round(time.Millisecond))
	})
	p, stands := benchPlane, benchStands
	opt := Options{Classes: DefaultClasses()}
	for _, c := range []struct {
		name string
		src  Blocks
	}{{"in-place", p}, {"read-rows", noSlice{p}}} {
		b.Run(c.name, func(b *testing.B) {
			cpu0 := cpuSeconds()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				res, warn, err := Compute(c.src, [6]float64{600000, 10, 0, 5800000, 0, -10}, stands, opt)
				if err != nil || len(res) != len(stands) || len(warn) != 0 {
					b.Fatalf("%v, %d results, warnings %v", err, len(res), warn)
				}
			}
			b.StopTimer()
			b.ReportMetric((cpuSeconds()-cpu0)/float64(b.N), "cpu-s/op")
			b.ReportMetric(peakRSSMiB(), "peak-RSS-MiB")
		})
	}
}
