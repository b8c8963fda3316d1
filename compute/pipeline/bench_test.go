package pipeline_test

import (
	"flag"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"canopy/compute"
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
	s, _ := compute.NewFakeScene(compute.SceneLandscape, n, n, 1)
	red, nir := make([]float32, n*n), make([]float32, n*n)
	s.Rows(0, n, red, nir)
	var paths []string
	for k, band := range [][]float32{red, nir} {
		dn := make([]uint16, n*n)
		for i, v := range band {
			dn[i] = uint16(min(v, 6.5) * 10000)
		}
		p := filepath.Join(dir, []string{"red.tif", "nir.tif"}[k])
		if err := geotiff.WriteBands(p, n, n, [][]uint16{dn}, compute.FakeGeoRef(), geotiff.WriteOptions{}); err != nil {
			b.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths[0], paths[1]
}

// BenchmarkPipeline reads a uint16 red/NIR pair through the pipeline:
// decoding alone, then NDVI on go-parallel, then NDVI written as a COG,
// then the same verified against the float64 truth. It reports megapixels
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
	}{
		{"decode", true, false, false},
		{"ndvi", false, false, false},
		{"ndvi+cog", false, true, false},
		{"ndvi+cog+verify", false, true, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			var px int64
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
					cog, err = geotiff.NewCOG(f, in.Width, in.Height, 1, in.Geo, geotiff.COGOptions{})
					if err != nil {
						b.Fatal(err)
					}
					sinks = append(sinks, pipeline.SinkFunc(func(bl *pipeline.Block) error { return cog.WriteRows(bl.Y0, bl.Rows, bl.Out) }))
				}
				_, err = pipeline.Run(in.Input, pipeline.Options{Backend: be, Names: []string{"ndvi"}, Exprs: []*index.Expr{ndvi.Expr},
					Verify: c.verify, DecodeOnly: c.decodeOnly}, sinks...)
				if err != nil {
					b.Fatal(err)
				}
				if cog != nil {
					if err := cog.Close(); err != nil {
						b.Fatal(err)
					}
					f.Close()
					os.Remove(f.Name())
				}
				px += int64(in.Width) * int64(in.Height)
				in.Close()
			}
			wall, cpu := time.Since(t0).Seconds(), (processCPU() - c0).Seconds()
			rate := float64(px) / 1e6 / wall
			b.ReportMetric(rate, "Mpx/s")
			b.ReportMetric(float64(px)/1e6/cpu, "cpuMpx/s")
			if c.decodeOnly {
				decodeRate = rate
			} else if decodeRate > 0 {
				b.ReportMetric(rate/decodeRate, "of-decode")
			}
		})
	}
}
