package geotiff

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
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
// an error, never panic, hang or allocate without bound. Seeds: the
// hand-made files of the malformed tests, files from our writer, and the
// committed corpus of GDAL-made layouts.
func FuzzOpen(f *testing.F) {
	f.Add(validStrip(false).bytes())
	f.Add(validStrip(true).bytes())
	f.Add(validTiles().bytes())
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
	f.Fuzz(func(t *testing.T, data []byte) {
		done := make(chan struct{})
		defer close(done)
		go func() {
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				panic(fmt.Sprintf("reader still busy after 10 s on a %d-byte input", len(data)))
			}
		}()
		tf, err := NewReader(bytes.NewReader(data), int64(len(data)), "fuzz.tif")
		if err != nil {
			if tf != nil {
				t.Fatal("error with a non-nil file")
			}
			return
		}
		if tf.Width() <= 0 || tf.Height() <= 0 || tf.Bands() <= 0 {
			t.Fatalf("accepted a %dx%d file with %d bands", tf.Width(), tf.Height(), tf.Bands())
		}
		// Validation bounds every allocation; small images keep each
		// iteration fast.
		if tf.Width()*tf.Height()*min(tf.Bands(), 3) > 1<<20 || tf.chunkNeed(0) > 16<<20 {
			return
		}
		idx := []int{1}
		if tf.Bands() > 1 {
			idx = append(idx, tf.Bands())
		}
		bs, err := tf.ReadBands(idx...)
		if err == nil && (len(bs) != len(idx) || len(bs[0].Data) != tf.Width()*tf.Height()) {
			t.Fatalf("ReadBands returned %d bands for %d", len(bs), len(idx))
		}
	})
}
