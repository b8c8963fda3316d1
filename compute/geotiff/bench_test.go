package geotiff

import (
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"canopy/compute"
	"canopy/compute/fake"
)

var (
	benchSize = flag.Int("bench-size", 10980, "side of the square uint16 DEFLATE red/NIR pair that BenchmarkReadPair reads (10980: a Sentinel-2 10 m tile)")
	benchDir  = flag.String("bench-dir", "", "directory that keeps BenchmarkReadPair's input files between runs (default: a fresh temporary directory)")
)

// benchPair returns a red/NIR pair of uint16 GeoTIFFs like Sentinel-2 L2A
// bands (reflectance × 10000 of the fake landscape), in the given layout:
// "tiled" is our writer's (256² tiles, DEFLATE, predictor 2), "strips" is
// gdal_translate's default for COMPRESS=DEFLATE.
func benchPair(b *testing.B, layout string) (red, nir string) {
	b.Helper()
	dir := *benchDir
	if dir == "" {
		dir = b.TempDir()
	}
	n := *benchSize
	red = filepath.Join(dir, fmt.Sprintf("red-%d-%s.tif", n, layout))
	nir = filepath.Join(dir, fmt.Sprintf("nir-%d-%s.tif", n, layout))
	if _, err := os.Stat(nir); err == nil {
		return red, nir
	}
	rb, nb, err := fake.RedNIR(fake.Landscape, n, n, 1)
	if err != nil {
		b.Fatal(err)
	}
	for _, p := range []struct {
		band *compute.Band
		path string
	}{{rb, red}, {nb, nir}} {
		dn := make([]uint16, len(p.band.Data))
		for i, v := range p.band.Data {
			dn[i] = uint16(min(max(v, 0), 6.5) * 10000)
		}
		tmp := p.path
		if layout == "strips" {
			tmp += ".src.tif"
		}
		if err := WriteBands(tmp, n, n, [][]uint16{dn}, p.band.Geo, WriteOptions{}); err != nil {
			b.Fatal(err)
		}
		if layout == "strips" {
			needGDAL(b)
			gdal(b, "gdal_translate", "-q", "-co", "COMPRESS=DEFLATE", tmp, p.path)
			os.Remove(tmp)
		}
	}
	return red, nir
}

// BenchmarkReadPair reads a red/NIR pair of uint16 DEFLATE GeoTIFFs into
// float32 planes (canopy) and, for comparison, converts the same files to
// raw ENVI with gdal_translate, as the speed target is stated.
// Run with -bench-size to change the side and -bench-dir to keep the files:
//
//	go test -run '^$' -bench ReadPair -benchtime 3x ./compute/geotiff/
func BenchmarkReadPair(b *testing.B) {
	for _, layout := range []string{"tiled", "strips"} {
		b.Run(layout, func(b *testing.B) {
			red, nir := benchPair(b, layout)
			pixels := int64(*benchSize) * int64(*benchSize)
			b.Run("canopy", func(b *testing.B) {
				b.SetBytes(2 * pixels * 2)
				for b.Loop() {
					for _, p := range []string{red, nir} {
						f, err := Open(p)
						if err != nil {
							b.Fatal(err)
						}
						if _, err := f.ReadBand(1); err != nil {
							b.Fatal(err)
						}
						f.Close()
					}
				}
			})
			b.Run("gdal_translate", func(b *testing.B) {
				needGDAL(b)
				out := b.TempDir()
				b.SetBytes(2 * pixels * 2)
				for b.Loop() {
					for i, p := range []string{red, nir} {
						cmd := exec.Command("gdal_translate", "-q", "-of", "ENVI", p, filepath.Join(out, fmt.Sprint(i, ".img")))
						if msg, err := cmd.CombinedOutput(); err != nil {
							b.Fatalf("gdal_translate: %v\n%s", err, msg)
						}
					}
				}
			})
		})
	}
}

// BenchmarkWriteNDVI writes a -bench-size² float32 NDVI plane of the fake
// landscape as the CLI does (tiled, floating-point predictor), with each
// compression.
func BenchmarkWriteNDVI(b *testing.B) {
	n := *benchSize
	red, nir, err := fake.RedNIR(fake.Landscape, n, n, 1)
	if err != nil {
		b.Fatal(err)
	}
	ndvi := compute.NewBand(n, n)
	ndvi.Geo = red.Geo
	for i := range ndvi.Data {
		ndvi.Data[i] = ndvi32(red.Data[i], nir.Data[i])
	}
	red, nir = nil, nil
	dir := b.TempDir()
	for _, c := range []Compression{Deflate, ZSTD, NoCompression} {
		b.Run(c.String(), func(b *testing.B) {
			b.SetBytes(int64(n) * int64(n) * 4)
			path := filepath.Join(dir, c.String()+".tif")
			for b.Loop() {
				if err := Write(path, ndvi, WriteOptions{Compression: c}); err != nil {
					b.Fatal(err)
				}
			}
			st, err := os.Stat(path)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(st.Size())/float64(n*n*4), "ratio")
		})
	}
}

// ndvi32 is NDVI of one pixel in float32: NaN where nir + red is 0.
func ndvi32(red, nir float32) float32 {
	s := nir + red
	if s == 0 {
		return float32(math.NaN())
	}
	return (nir - red) / s
}
