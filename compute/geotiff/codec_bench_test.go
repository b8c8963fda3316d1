package geotiff

import (
	"bytes"
	"io"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/zlib"

	"canopy/compute/fake"
	libdeflate "canopy/native/deflate"
)

// codecTiles are realistic tiles as the writer hands them to the
// compressor, predictor applied: 256² uint16 tiles of the fake landscape
// as Sentinel-2 digital numbers (predictor 2) and 512² float32 tiles of
// its NDVI (predictor 3), cut from a 2048² scene.
var codecTiles = sync.OnceValue(func() map[string][][]byte {
	const n = 2048
	red, nir, err := fake.RedNIR(fake.Landscape, n, n, 1)
	if err != nil {
		panic(err)
	}
	dn := make([]uint16, n*n)
	ndvi := make([]float32, n*n)
	for i := range dn {
		dn[i] = uint16(min(max(red.Data[i], 0), 6.5)*10000) + 1000
		ndvi[i] = (nir.Data[i] - red.Data[i]) / (nir.Data[i] + red.Data[i])
	}
	cut := func(ts int, pred int, put func(dst []byte, x0, y0, r int)) [][]byte {
		var out [][]byte
		size := 2
		if pred == 3 {
			size = 4
		}
		tmp := make([]byte, ts*size)
		for y0 := 0; y0 < n; y0 += ts {
			for x0 := 0; x0 < n; x0 += ts {
				t := make([]byte, ts*ts*size)
				for r := range ts {
					row := t[r*ts*size : (r+1)*ts*size]
					put(row, x0, y0, r)
					if pred == 2 {
						applyHorizontal(row, size)
					} else {
						applyFloatPredictor(row, tmp, size)
					}
				}
				out = append(out, t)
			}
		}
		return out
	}
	return map[string][][]byte{
		"uint16": cut(256, 2, func(dst []byte, x0, y0, r int) { putLE(dst, dn[(y0+r)*n+x0:][:256]) }),
		"ndvi":   cut(512, 3, func(dst []byte, x0, y0, r int) { putLE(dst, ndvi[(y0+r)*n+x0:][:512]) }),
	}
})

// threadCPU measures the CPU time of the benchmark's own thread, which a
// machine shared with other work does not inflate as it inflates wall
// time: lock the goroutine to its thread first.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(1, &ru) // RUSAGE_THREAD
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuRate reports the raw MB per second of the thread's CPU time.
func cpuRate(b *testing.B, bytes int64, t0 time.Duration) {
	b.ReportMetric(float64(bytes)*float64(b.N)/1e6/(threadCPU()-t0).Seconds(), "cpuMB/s")
}

func tileBytes(tiles [][]byte) (n int64) {
	for _, t := range tiles {
		n += int64(len(t))
	}
	return n
}

// BenchmarkDeflateEncode compresses the tiles as zlib streams with
// klauspost/compress and with libdeflate at levels 1 and 6, reporting
// MB/s of raw tile data and the compression ratio.
func BenchmarkDeflateEncode(b *testing.B) {
	for _, kind := range []string{"uint16", "ndvi"} {
		tiles := codecTiles()[kind]
		for _, level := range []int{-2, 1, 6} {
			name := string(rune('0' + level))
			if level == -2 {
				name = "huffman"
			}
			b.Run(kind+"/klauspost/"+name, func(b *testing.B) {
				b.SetBytes(tileBytes(tiles))
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				t0 := threadCPU()
				var out bytes.Buffer
				zw, _ := zlib.NewWriterLevel(&out, level)
				var total int
				for b.Loop() {
					total = 0
					for _, t := range tiles {
						out.Reset()
						zw.Reset(&out)
						zw.Write(t)
						zw.Close()
						total += out.Len()
					}
				}
				cpuRate(b, tileBytes(tiles), t0)
				b.ReportMetric(float64(tileBytes(tiles))/float64(total), "ratio")
			})
			if !libdeflate.Available || level < 1 {
				continue
			}
			b.Run(kind+"/libdeflate/"+name, func(b *testing.B) {
				b.SetBytes(tileBytes(tiles))
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				t0 := threadCPU()
				c, _ := libdeflate.NewCompressor(level)
				defer c.Close()
				var out []byte
				var total int
				for b.Loop() {
					total = 0
					for _, t := range tiles {
						out = c.ZlibCompress(out[:0], t)
						total += len(out)
					}
				}
				cpuRate(b, tileBytes(tiles), t0)
				b.ReportMetric(float64(tileBytes(tiles))/float64(total), "ratio")
			})
		}
	}
}

// BenchmarkDeflateDecode inflates the same tiles (compressed at level 6)
// with klauspost/compress's streaming reader, as the decoder reads rows,
// and with libdeflate into the whole tile, reporting MB/s of raw data.
func BenchmarkDeflateDecode(b *testing.B) {
	for _, kind := range []string{"uint16", "ndvi"} {
		tiles := codecTiles()[kind]
		var zs [][]byte
		for _, t := range tiles {
			var out bytes.Buffer
			zw, _ := zlib.NewWriterLevel(&out, 6)
			zw.Write(t)
			zw.Close()
			zs = append(zs, out.Bytes())
		}
		b.Run(kind+"/klauspost", func(b *testing.B) {
			b.SetBytes(tileBytes(tiles))
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			t0 := threadCPU()
			dst := make([]byte, len(tiles[0]))
			br := bytes.NewReader(nil)
			fr := flate.NewReader(br)
			for b.Loop() {
				for _, z := range zs {
					br.Reset(z[2:])
					fr.(flate.Resetter).Reset(br, nil)
					if _, err := io.ReadFull(fr, dst); err != nil {
						b.Fatal(err)
					}
				}
			}
			cpuRate(b, tileBytes(tiles), t0)
		})
		if !libdeflate.Available {
			continue
		}
		b.Run(kind+"/libdeflate", func(b *testing.B) {
			b.SetBytes(tileBytes(tiles))
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			t0 := threadCPU()
			dst := make([]byte, len(tiles[0]))
			d, _ := libdeflate.NewDecompressor()
			defer d.Close()
			for b.Loop() {
				for _, z := range zs {
					if _, _, err := d.Inflate(dst, z[2:]); err != nil {
						b.Fatal(err)
					}
				}
			}
			cpuRate(b, tileBytes(tiles), t0)
		})
	}
}
