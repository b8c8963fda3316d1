package pyramid

import (
	"context"
	"flag"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"canopy/compute"
	_ "canopy/compute/backends"
	"canopy/compute/pipeline"
	"canopy/compute/stats"
)

var (
	benchRed   = flag.String("pyramid-red", "", "red band for BenchmarkBigView (default: a generated 3000² uint16 pair without overviews)")
	benchNir   = flag.String("pyramid-nir", "", "NIR band for BenchmarkBigView")
	benchStats = flag.Bool("pyramid-stats", true, "BenchmarkBigView also streams the whole image's statistics")
	benchBack  = flag.String("pyramid-backend", "go-parallel", "the backend BenchmarkBigView computes on (go, go-parallel, c, gl, cuda)")
)

// peakRSS is the process's peak resident memory (VmHWM), 0 where
// /proc/self/status is missing.
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

// BenchmarkBigView runs what the window does with an image too large to
// load, on a 1600×1000 map: open the pair, the first view from the best
// level (the overviews when the files have them), the first complete view
// from the full resolution alone (decimated block reads, as without
// overviews), a zoom to full resolution at the centre, a pin (one pixel
// at full resolution), and the whole image's NDVI statistics streamed over
// the blocks; NDVI on go-parallel (or -pyramid-backend). It reports each time in ms and the peak
// resident memory in MiB.
//
//	go test ./compute/pyramid -run '^$' -bench BigView -benchtime 1x [-args -pyramid-red R -pyramid-nir N]
func BenchmarkBigView(b *testing.B) {
	red, nir := *benchRed, *benchNir
	if red == "" {
		red, nir = pair(b, b.TempDir(), 3000, 3000, 256)
	}
	names, exprs, be := ndvi(b)
	if *benchBack != be.Name() {
		var err error
		if be, err = compute.New(*benchBack); err != nil {
			b.Fatal(err)
		}
		defer be.Close()
	}
	const sw, sh = 1600, 1000
	for b.Loop() {
		ctx := context.Background()
		t0 := time.Now()
		im, err := Open([]string{"red", "nir"}, []string{red, nir})
		if err != nil {
			b.Fatal(err)
		}
		open := time.Since(t0)
		W, H := float64(im.Width), float64(im.Height)
		// The fitted view: the whole image in the map, on the screen
		// pixels it covers.
		z := min(sw/W, sh/H)
		fw, fh := int(W*z), int(H*z)
		p := im.PlanView(0, 0, W, H, fw, fh)
		t1 := time.Now()
		if _, err := im.Compute(ctx, p, be, "", names, exprs, nil); err != nil {
			b.Fatal(err)
		}
		first := time.Since(t0)
		b.Logf("%s, %dx%d, %d levels: open %v; first view (level %d, step %d, %dx%d samples) %v after opening, %v in all",
			be.Name(), im.Width, im.Height, len(im.Levels), open.Round(time.Millisecond), p.Level, p.Step, p.Width, p.Height, time.Since(t1).Round(time.Millisecond), first.Round(time.Millisecond))
		b.ReportMetric(float64(first.Milliseconds()), "first-view-ms")
		// Without overviews: the full resolution, decimated.
		p0 := im.PlanViewUpTo(0, 0, 0, W, H, fw, fh)
		t2 := time.Now()
		var firstBlock time.Duration
		if _, err := im.Compute(ctx, p0, be, "", names, exprs, func(v *View, j0, j1 int) {
			if firstBlock == 0 {
				firstBlock = time.Since(t2)
			}
		}); err != nil {
			b.Fatal(err)
		}
		full := time.Since(t2)
		b.Logf("without overviews (level 0, step %d, %dx%d samples): first block %v, complete %v", p0.Step, p0.Width, p0.Height, firstBlock.Round(time.Millisecond), full.Round(time.Millisecond))
		b.ReportMetric(float64(firstBlock.Milliseconds()), "nooverviews-first-block-ms")
		b.ReportMetric(float64(full.Milliseconds()), "nooverviews-complete-ms")
		// Zoomed to full resolution at the centre.
		pz := im.PlanView(W/2-sw/2, H/2-sh/2, W/2+sw/2, H/2+sh/2, sw, sh)
		t3 := time.Now()
		if _, err := im.Compute(ctx, pz, be, "", names, exprs, nil); err != nil {
			b.Fatal(err)
		}
		zoom := time.Since(t3)
		t4 := time.Now()
		if _, err := im.ReadPixel(im.Width/3, im.Height/3); err != nil {
			b.Fatal(err)
		}
		pin := time.Since(t4)
		b.Logf("zoom to full resolution (level %d, step %d): %v; pin: %v", pz.Level, pz.Step, zoom.Round(time.Millisecond), pin.Round(time.Microsecond))
		b.ReportMetric(float64(zoom.Milliseconds()), "zoom-ms")
		b.ReportMetric(float64(pin.Microseconds())/1000, "pin-ms")
		if *benchStats {
			st := stats.NewStream(100, -1, 1, nil, 0)
			t5 := time.Now()
			res, err := im.Run(ctx, pipeline.Options{Backend: be, Names: names, Exprs: exprs}, pipeline.SinkFunc(func(bl *pipeline.Block) error {
				st.Add(bl.Out[0])
				return nil
			}))
			if err != nil {
				b.Fatal(err)
			}
			d := time.Since(t5)
			b.Logf("statistics streamed over %d blocks: %v (%s)", res.Blocks, d.Round(time.Millisecond), st.Summary())
			b.ReportMetric(float64(d.Milliseconds()), "stats-ms")
		}
		im.Close()
	}
	b.ReportMetric(float64(peakRSS())/(1<<20), "peak-RSS-MiB")
}
