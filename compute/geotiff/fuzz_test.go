package geotiff

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"testing"
	"time"
)

var updateCorpus = flag.Bool("update-fuzz-corpus", false, "regenerate testdata/fuzz/FuzzOpen from small files made with gdal_translate")

// corpusLayouts are the gdal_translate options of the committed seed
// corpus: one small file per layout family the reader decodes.
var corpusLayouts = map[string][]string{
	"u8-strips":            {"-ot", "Byte", "-co", "INTERLEAVE=PIXEL", "-co", "BLOCKYSIZE=5"},
	"u16-lzw-pred2-be":     {"-ot", "UInt16", "-co", "COMPRESS=LZW", "-co", "PREDICTOR=2", "-co", "ENDIANNESS=BIG", "-co", "INTERLEAVE=PIXEL"},
	"i16-packbits-tiled":   {"-ot", "Int16", "-co", "COMPRESS=PACKBITS", "-co", "TILED=YES", "-co", "BLOCKXSIZE=16", "-co", "BLOCKYSIZE=16"},
	"u32-deflate-planar":   {"-ot", "UInt32", "-co", "COMPRESS=DEFLATE", "-co", "INTERLEAVE=BAND"},
	"f32-zstd-pred3-tiled": {"-ot", "Float32", "-co", "COMPRESS=ZSTD", "-co", "PREDICTOR=3", "-co", "TILED=YES", "-co", "BLOCKXSIZE=16", "-co", "BLOCKYSIZE=16"},
	"f64-deflate-pred3-be": {"-ot", "Float64", "-co", "COMPRESS=DEFLATE", "-co", "PREDICTOR=3", "-co", "ENDIANNESS=BIG"},
	"bigtiff-i32-lzw":      {"-ot", "Int32", "-co", "BIGTIFF=YES", "-co", "COMPRESS=LZW", "-co", "TILED=YES", "-co", "BLOCKXSIZE=16", "-co", "BLOCKYSIZE=16"},
	"cog-u16-deflate":      {"-of", "COG", "-ot", "UInt16", "-co", "COMPRESS=DEFLATE", "-co", "BLOCKSIZE=16", "-co", "PREDICTOR=YES"},
}

// TestUpdateFuzzCorpus regenerates the committed seed corpus when run with
// -update-fuzz-corpus (and gdal_translate installed).
func TestUpdateFuzzCorpus(t *testing.T) {
	if !*updateCorpus {
		t.Skip("run with -update-fuzz-corpus to regenerate testdata/fuzz/FuzzOpen")
	}
	needGDAL(t)
	tmp := t.TempDir()
	src := filepath.Join(tmp, "src.tif")
	if err := WriteBands(src, 24, 18, synth[float32](24, 18, 2, 9), utmGeo(), WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzOpen")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, args := range corpusLayouts {
		out := filepath.Join(tmp, name+".tif")
		of := []string{"-q"}
		if args[0] != "-of" {
			of = append(of, "-of", "GTiff")
		}
		gdal(t, "gdal_translate", append(append(of, args...), src, out)...)
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		seed := fmt.Sprintf("go test fuzz v1\n[]byte(%s)\n", strconv.Quote(string(b)))
		if err := os.WriteFile(filepath.Join(dir, name), []byte(seed), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// FuzzOpen feeds arbitrary bytes to the reader: it must return a file or
// an error, never panic or hang, and what it opens it must decode within
// the memory it says it needs (File.Memory), which for any input this
// small must be far below 1 GiB: so a decompression bomb that gets past
// the open-time limits is found. Seeds: the hand-made files of the
// malformed tests, files from our writer, shared-tile and huge-tile files,
// and the committed corpus of GDAL-made layouts.
func FuzzOpen(f *testing.F) {
	f.Add(validStrip(false).bytes())
	f.Add(validStrip(true).bytes())
	f.Add(validTiles().bytes())
	f.Add(chunkyTIFF(37, 21, 3, 16, 16, true, true, []int{1}, "7"))
	f.Add(sharedTiles(600, 300, [][]byte{tilePattern(0), tilePattern(1)}, []int{0, 1, 1, 0, 1, 0}))
	f.Add(hugeTile())
	dir := f.TempDir()
	for i, opt := range []WriteOptions{{TileSize: 16}, {Compression: ZSTD, TileSize: 16, BigTIFF: true}, {Compression: NoCompression, TileSize: 16}} {
		p := filepath.Join(dir, fmt.Sprint(i, ".tif"))
		if err := WriteBands(p, 20, 17, synth[uint16](20, 17, 2, 5), utmGeo(), opt); err != nil {
			f.Fatal(err)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	debug.SetMemoryLimit(1 << 30)
	f.Fuzz(func(t *testing.T, data []byte) {
		done := make(chan struct{})
		defer close(done)
		go func() {
			select {
			case <-done:
			case <-time.After(time.Minute): // a hang: every input is refused or read in well under a second
				panic(fmt.Sprintf("reader still busy after a minute on a %d-byte input", len(data)))
			}
		}()
		tf, err := NewReader(bytes.NewReader(data), int64(len(data)), "fuzz.tif")
		if err != nil {
			if tf != nil {
				t.Fatal("error with a non-nil file")
			}
			if m := err.Error(); strings.Contains(m, "\n") || len(m) > maxErrorLine+40 {
				t.Fatalf("error is not one short line: %.400q", m)
			}
			return
		}
		if tf.Width() <= 0 || tf.Height() <= 0 || tf.Bands() <= 0 {
			t.Fatalf("accepted a %dx%d file with %d bands", tf.Width(), tf.Height(), tf.Bands())
		}
		idx := []int{1}
		if tf.Bands() > 1 {
			idx = append(idx, tf.Bands())
		}
		need := tf.Memory(len(idx))
		if need > 1<<30 {
			t.Fatalf("a %d-byte input opens as %dx%d, %d bands, needing %d bytes to decode", len(data), tf.Width(), tf.Height(), tf.Bands(), need)
		}
		base, peak := heapObjects(), watchHeap()
		bs, err := tf.ReadBands(idx...)
		high := peak()
		if err == nil && (len(bs) != len(idx) || len(bs[0].Data) != tf.Width()*tf.Height()) {
			t.Fatalf("ReadBands returned %d bands for %d", len(bs), len(idx))
		}
		if err != nil && (strings.Contains(err.Error(), "\n") || len(err.Error()) > maxErrorLine+40) {
			t.Fatalf("error is not one short line: %.400q", err)
		}
		// The heap while decoding: the planes and the workers' buffers
		// (the estimate), garbage the collector has not reclaimed yet (up
		// to as much again), and decompressor state the estimate rounds
		// off.
		if high > base+2*uint64(need)+64<<20 {
			t.Fatalf("decoding a %d-byte input (%dx%d, %d bands, %s) grew the heap by %d bytes, %d estimated", len(data), tf.Width(), tf.Height(), tf.Bands(), tf.Compression(), high-base, need)
		}
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		if ms.HeapSys > 3<<29 {
			t.Fatalf("the heap has reached %d MiB", ms.HeapSys>>20)
		}
	})
}

// heapObjects is the bytes of heap objects, live or not yet collected.
func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// watchHeap samples heapObjects every half millisecond until the
// returned function is called, which returns the highest value seen.
func watchHeap() func() uint64 {
	stop := make(chan struct{})
	res := make(chan uint64)
	go func() {
		high := heapObjects()
		tick := time.NewTicker(500 * time.Microsecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				res <- max(high, heapObjects())
				return
			case <-tick.C:
				high = max(high, heapObjects())
			}
		}
	}()
	return func() uint64 {
		close(stop)
		return <-res
	}
}

// hugeTile is a 3×2 uint16 image in one 4096² DEFLATE tile whose stream
// holds only the rows the image shows.
func hugeTile() []byte {
	ft := &fakeTIFF{entries: map[uint16]wentry{}}
	ft.data = deflate(make([]byte, 4096*2*2))
	ft.set(tagImageWidth, typeShort, 3)
	ft.set(tagImageLength, typeShort, 2)
	ft.set(tagBitsPerSample, typeShort, 16)
	ft.set(tagCompression, typeShort, compAdobeDflt)
	ft.set(tagTileWidth, typeShort, 4096)
	ft.set(tagTileLength, typeShort, 4096)
	ft.set(tagTileOffsets, typeLong, ft.dataOff())
	ft.set(tagTileByteCounts, typeLong, uint64(len(ft.data)))
	return ft.bytes()
}
