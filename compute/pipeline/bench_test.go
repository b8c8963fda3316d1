package pipeline_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"canopy/compute"
	"canopy/compute/fake"
	"canopy/compute/geotiff"
	"canopy/compute/index"
	"canopy/compute/pipeline"
	"canopy/compute/raster"
)

var (
	benchRed  = flag.String("pipeline-red", "", "red band for BenchmarkPipeline (default: a generated 4096² uint16 pair)")
	benchNir  = flag.String("pipeline-nir", "", "NIR band for BenchmarkPipeline")
	benchSize = flag.Int("pipeline-size", 4096, "side of the generated pair when -pipeline-red is not given (10980: a Sentinel-2 10 m tile)")
)

// resetPeak sets the process's peak resident memory back to what it
// holds now (Linux: /proc/self/clear_refs 5; elsewhere nothing).
func resetPeak() { os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// peakMiB is the process's peak resident memory since resetPeak (VmHWM),
// 0 where the system does not say.
func peakMiB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
			return kb / 1024
		}
	}
	return 0
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchInputs returns the pair BenchmarkPipeline reads: the flags', or a
// -pipeline-size² uint16 DEFLATE pair of the fake landscape as digital
// numbers.
func benchInputs(b *testing.B) (string, string) {
	if *benchRed != "" {
		return *benchRed, *benchNir
	}
	dir := b.TempDir()
	n := *benchSize
	s, _ := fake.NewScene(fake.Landscape, n, n, 1)
	red, nir := make([]float32, n*n), make([]float32, n*n)
	s.Rows(0, n, red, nir)
	var paths []string
	for k, band := range [][]float32{red, nir} {
		dn := make([]uint16, n*n)
		for i, v := range band {
			dn[i] = uint16(min(v, 6.5) * 10000)
		}
		p := filepath.Join(dir, []string{"red.tif", "nir.tif"}[k])
		if err := geotiff.WriteBands(p, n, n, [][]uint16{dn}, fake.GeoRef(), geotiff.WriteOptions{}); err != nil {
			b.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths[0], paths[1]
}

// BenchmarkPipeline reads a uint16 red/NIR pair through the pipeline:
// decoding alone, then NDVI on go-parallel, then NDVI written as a COG,
// then the same verified against the float64 truth, then written with ZSTD
// and uncompressed (-compress none). It reports megapixels
// per second of wall time and of the process's CPU time, and each run's
// throughput as a share of decoding's ("of-decode"): compute and writing
// hidden behind decoding would be 1.
//
//	go test ./compute/pipeline -run '^$' -bench Pipeline -benchtime 3x [-args -pipeline-red R -pipeline-nir N | -pipeline-size N]
func BenchmarkPipeline(b *testing.B) {
	red, nir := benchInputs(b)
	ndvi, _ := index.Lookup("ndvi")
	be, err := compute.New(compute.NameGoParallel)
	if err != nil {
		b.Fatal(err)
	}
	defer be.Close()
	var decodeRate float64
	for _, c := range []struct {
		name          string
		decodeOnly    bool
		write, verify bool
		comp          geotiff.Compression
	}{
		{"decode", true, false, false, geotiff.Deflate},
		{"ndvi", false, false, false, geotiff.Deflate},
		{"ndvi+cog", false, true, false, geotiff.Deflate},
		{"ndvi+cog+verify", false, true, true, geotiff.Deflate},
		{"ndvi+cog-zstd", false, true, false, geotiff.ZSTD},
		{"ndvi+cog-none", false, true, false, geotiff.NoCompression},
		{"ndvi+cog-none+verify", false, true, true, geotiff.NoCompression},
	} {
		b.Run(c.name, func(b *testing.B) {
			var px int64
			var decodeBusy, sinkBusy float64 // shares of each run's wall time
			var cogT geotiff.COGTimes
			runtime.GC()
			debug.FreeOSMemory()
			resetPeak()
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			c0 := processCPU()
			t0 := time.Now()
			for b.Loop() {
				in, err := raster.OpenStored([]string{"red", "nir"}, []string{red, nir})
				if err != nil {
					b.Fatal(err)
				}
				var sinks []pipeline.Sink
				var cog *geotiff.COGWriter
				var f *os.File
				if c.write {
					f, err = os.CreateTemp(b.TempDir(), "out-*.tif")
					if err != nil {
						b.Fatal(err)
					}
					cog, err = geotiff.NewCOG(f, in.Width, in.Height, 1, in.Geo, geotiff.COGOptions{Compression: c.comp})
					if err != nil {
						b.Fatal(err)
					}
					sinks = append(sinks, pipeline.SinkFunc(func(bl *pipeline.Block) error { return cog.WriteRows(bl.Y0, bl.Rows, bl.Out) }))
				}
				res, err := pipeline.Run(context.Background(), in.Input, pipeline.Options{Backend: be, Names: []string{"ndvi"}, Exprs: []*index.Expr{ndvi.Expr},
					Verify: c.verify, DecodeOnly: c.decodeOnly}, sinks...)
				if err != nil {
					b.Fatal(err)
				}
				decodeBusy += res.Decode.Seconds() / res.Wall.Seconds()
				sinkBusy += res.Encode.Seconds() / res.Wall.Seconds()
				if cog != nil {
					if err := cog.Close(); err != nil {
						b.Fatal(err)
					}
					ct := cog.Times()
					cogT.Copy += ct.Copy
					cogT.Wait += ct.Wait
					cogT.Compress += ct.Compress
					cogT.Write += ct.Write
					cogT.Reduce += ct.Reduce
					cogT.Close += ct.Close
					f.Close()
					os.Remove(f.Name())
				}
				px += int64(in.Width) * int64(in.Height)
				in.Close()
			}
			wall, cpu := time.Since(t0).Seconds(), (processCPU() - c0).Seconds()
			runtime.ReadMemStats(&m1)
			rate := float64(px) / 1e6 / wall
			b.ReportMetric(rate, "Mpx/s")
			b.ReportMetric(float64(px)/1e6/cpu, "cpuMpx/s")
			// The peak resident memory of the process (the input pair's
			// planes are not in it: the reader decodes block by block) and
			// what the runs allocated.
			b.ReportMetric(peakMiB(), "peakMiB")
			// How busy the decoder and the busiest sink were: the stage
			// near 1 is the one the run waits on.
			b.ReportMetric(decodeBusy/float64(b.N), "decode-busy")
			if c.write {
				b.ReportMetric(sinkBusy/float64(b.N), "sink-busy")
				// The COG writer's parts, ms a run.
				ms := func(d time.Duration) float64 { return d.Seconds() * 1e3 / float64(b.N) }
				b.ReportMetric(ms(cogT.Compress), "cog-compress-ms")
				b.ReportMetric(ms(cogT.Write), "cog-write-ms")
				b.ReportMetric(ms(cogT.Reduce), "cog-reduce-ms")
				b.ReportMetric(ms(cogT.Wait), "cog-wait-ms")
				b.ReportMetric(ms(cogT.Close), "cog-close-ms")
			}
			b.ReportMetric(float64(m1.TotalAlloc-m0.TotalAlloc)/float64(b.N)/(1<<20), "allocMiB/op")
			if c.decodeOnly {
				decodeRate = rate
			} else if decodeRate > 0 {
				b.ReportMetric(rate/decodeRate, "of-decode")
			}
		})
	}
}

var benchBackend = flag.String("pipeline-backend", compute.NameCUDA, "backend of BenchmarkStreamedBlocks")

// poolReader fills each block plane it is given once, with a uint16
// band of the fake landscape, and leaves it alone afterwards (the pipeline
// recycles a few blocks' planes): reading costs nothing, so the run's
// throughput is the backend's.
type poolReader struct {
	red, nir []uint16
	w        int
	seen     map[*byte]bool
}

func (r *poolReader) BlockRows() int { return 1 }

func (r *poolReader) ReadRows(y0, y1 int, dst []compute.Plane) error {
	for k, p := range dst {
		key := &p.Data[0]
		if r.seen[key] {
			continue
		}
		r.seen[key] = true
		src := [][]uint16{r.red, r.nir}[k][y0*r.w : y1*r.w]
		for i, v := range src {
			p.Data[2*i], p.Data[2*i+1] = byte(v), byte(v>>8)
		}
	}
	return nil
}

// BenchmarkStreamedBlocks runs NDVI over a -pipeline-size² Sentinel-2
// uint16 pair (digital numbers, nodata 0) through the pipeline on a GPU
// backend (-pipeline-backend, cuda by default), with nothing to decode or
// write, one block of about a million pixels waited for at a time
// ("depth1") and streamed with 2, 3 and 4 blocks in flight; beside it, the
// ceiling measured in the same run: the whole image as one overlapped job
// ("whole", its transfers pipelined in chunks). It reports megapixels per
// second, GB/s over the bus (4 bytes up and 4 down a pixel) and each
// run's throughput as a share of the whole image's ("of-whole").
//
//	go test ./compute/pipeline -run '^$' -bench StreamedBlocks -benchtime 10x -args -pipeline-size 10980
func BenchmarkStreamedBlocks(b *testing.B) {
	be, err := compute.New(*benchBackend)
	if err != nil {
		b.Fatal(err)
	}
	defer be.Close()
	if info := be.Info(); !info.Available {
		b.Skipf("%s cannot run here: %s", *benchBackend, info.Reason)
	}
	n := *benchSize
	s, _ := fake.NewScene(fake.Landscape, n, n, 1)
	redF, nirF := make([]float32, n*n), make([]float32, n*n)
	s.Rows(0, n, redF, nirF)
	red, nir := make([]uint16, n*n), make([]uint16, n*n)
	for i := range redF {
		red[i] = uint16(min(redF[i], 5.5)*10000) + 1000
		nir[i] = uint16(min(nirF[i], 5.5)*10000) + 1000
	}
	redF, nirF = nil, nil
	ndvi, _ := index.Lookup("ndvi")
	band := func(role string) compute.BandInput {
		return compute.BandInput{Role: role, Plane: compute.Plane{Type: compute.U16, Width: n, Height: n},
			Radiometry: compute.Radiometry{Add: -1000, Scale: 1e-4}, NoData: 0, HasNoData: true, Source: role}
	}
	r := &poolReader{red: red, nir: nir, w: n, seen: map[*byte]bool{}}
	in := &pipeline.Input{Width: n, Height: n, Bands: []pipeline.Band{{BandInput: band("red"), Reader: r, Index: 0}, {BandInput: band("nir"), Reader: r, Index: 1}}}

	// The ceiling: the whole image in one job, its chunks overlapped.
	whole := func() (*compute.Job, error) {
		bands := []compute.BandInput{band("red"), band("nir")}
		bands[0].Plane = compute.Plane{Type: compute.U16, Width: n, Height: n, Data: u16bytes(red)}
		bands[1].Plane = compute.Plane{Type: compute.U16, Width: n, Height: n, Data: u16bytes(nir)}
		return compute.NewJob(bands, nil, []string{"ndvi"}, []*index.Expr{ndvi.Expr})
	}
	wj, err := whole()
	if err != nil {
		b.Fatal(err)
	}
	var wholeRate float64
	report := func(b *testing.B, px int64, wall float64) float64 {
		rate := float64(px) / 1e6 / wall
		b.ReportMetric(rate, "Mpx/s")
		b.ReportMetric(float64(px)*8/1e9/wall, "GB/s")
		if wholeRate > 0 {
			b.ReportMetric(rate/wholeRate, "of-whole")
		}
		return rate
	}
	b.Run("whole", func(b *testing.B) {
		if _, err := compute.RunJob(be, wj); err != nil { // set-up, JIT
			b.Fatal(err)
		}
		var px int64
		var busy time.Duration
		for b.Loop() {
			t := time.Now()
			if _, err := compute.RunJob(be, wj); err != nil {
				b.Fatal(err)
			}
			busy += time.Since(t)
			px += int64(n) * int64(n)
		}
		wholeRate = report(b, px, busy.Seconds())
	})
	for _, depth := range []int{1, 2, 3, 4} {
		b.Run(fmt.Sprintf("depth%d", depth), func(b *testing.B) {
			opt := pipeline.Options{Backend: be, Names: []string{"ndvi"}, Exprs: []*index.Expr{ndvi.Expr}, StreamDepth: depth}
			if _, err := pipeline.Run(context.Background(), in, opt); err != nil { // set-up, JIT, page-locking the pool
				b.Fatal(err)
			}
			var px int64
			var busy time.Duration
			for b.Loop() {
				t := time.Now()
				if _, err := pipeline.Run(context.Background(), in, opt); err != nil {
					b.Fatal(err)
				}
				busy += time.Since(t)
				px += int64(n) * int64(n)
			}
			report(b, px, busy.Seconds())
		})
	}
}

func u16bytes(v []uint16) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), 2*len(v))
}
