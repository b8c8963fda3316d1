package geotiff

import (
	"encoding/binary"
	"fmt"
	"math"
	"path/filepath"
	"testing"
	"unsafe"
)

// garbage values a caller's plane may hold before ReadBandsInto: every one
// must be overwritten.
var garbage = []float32{float32(math.NaN()), 12345}

// plane returns n pixels set to v.
func plane(n int, v float32) []float32 {
	p := make([]float32, n)
	for i := range p {
		p[i] = v
	}
	return p
}

// sameAsReadBands reads bands with ReadBands and then, for each garbage
// value, with ReadBandsInto into planes pre-filled with it, and checks that
// the pixels (bit for bit), the metadata and the planes returned agree.
func sameAsReadBands(t *testing.T, f *File, bands ...int) {
	t.Helper()
	want, err := f.ReadBands(bands...)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range garbage {
		dst := make([][]float32, len(bands))
		for i := range dst {
			dst[i] = plane(f.Width()*f.Height(), g)
		}
		got, err := f.ReadBandsInto(dst, bands...)
		if err != nil {
			t.Fatalf("into planes of %v: %v", g, err)
		}
		for i := range bands {
			if unsafe.SliceData(got[i].Data) != unsafe.SliceData(dst[i]) || len(got[i].Data) != len(dst[i]) {
				t.Fatalf("band %d: Data is not the plane given", bands[i])
			}
			w, b := want[i], got[i]
			if b.Width != w.Width || b.Height != w.Height || b.Source != w.Source || b.Geo != w.Geo || b.HasNoData != w.HasNoData ||
				math.Float64bits(b.NoData) != math.Float64bits(w.NoData) {
				t.Fatalf("band %d: got %dx%d %q geo %p nodata %v/%v, ReadBands gives %dx%d %q geo %p nodata %v/%v", bands[i],
					b.Width, b.Height, b.Source, b.Geo, b.NoData, b.HasNoData, w.Width, w.Height, w.Source, w.Geo, w.NoData, w.HasNoData)
			}
			for k, v := range w.Data {
				if math.Float32bits(b.Data[k]) != math.Float32bits(v) {
					t.Fatalf("band %d pixel (%d,%d), plane pre-filled with %v: got %v, ReadBands gives %v",
						bands[i], k%f.Width(), k/f.Width(), g, b.Data[k], v)
				}
			}
		}
	}
}

// chunkyTIFF hand-builds a w×h pixel-interleaved uint16 file of spp bands,
// sample (x, y, s) = s*1000 + (x*7+y*13)%900, in DEFLATE tiles of cw×ch
// (tiled) or strips of ch rows, with the horizontal predictor when pred2.
// Chunks listed in sparse are left out (offset and byte count 0); nodata,
// when not empty, is written as GDAL_NODATA.
func chunkyTIFF(w, h, spp, cw, ch int, tiled, pred2 bool, sparse []int, nodata string) []byte {
	ft := &fakeTIFF{entries: map[uint16]wentry{}}
	if !tiled {
		cw = w
	}
	across, down := (w+cw-1)/cw, (h+ch-1)/ch
	skip := map[int]bool{}
	for _, c := range sparse {
		skip[c] = true
	}
	var offs, counts []uint64
	for c := 0; c < across*down; c++ {
		if skip[c] {
			offs, counts = append(offs, 0), append(counts, 0)
			continue
		}
		x0, y0 := (c%across)*cw, (c/across)*ch
		rows := ch
		if !tiled {
			rows = min(ch, h-y0)
		}
		row := make([]uint16, cw*spp)
		var chunk []byte
		for r := range rows {
			for x := range cw {
				for s := range spp {
					v := uint16(0) // padding past the image's edge
					if X, Y := x0+x, y0+r; X < w && Y < h {
						v = uint16(s*1000 + (X*7+Y*13)%900)
					}
					row[x*spp+s] = v
				}
			}
			if pred2 {
				for i := len(row) - 1; i >= spp; i-- {
					row[i] -= row[i-spp]
				}
			}
			for _, v := range row {
				chunk = binary.LittleEndian.AppendUint16(chunk, v)
			}
		}
		z := deflate(chunk)
		offs = append(offs, ft.dataOff()+uint64(len(ft.data)))
		counts = append(counts, uint64(len(z)))
		ft.data = append(ft.data, z...)
	}
	bps := make([]uint64, spp)
	for i := range bps {
		bps[i] = 16
	}
	ft.set(tagImageWidth, typeShort, uint64(w))
	ft.set(tagImageLength, typeShort, uint64(h))
	ft.set(tagBitsPerSample, typeShort, bps...)
	ft.set(tagSamplesPerPixel, typeShort, uint64(spp))
	ft.set(tagPlanarConfig, typeShort, 1)
	ft.set(tagCompression, typeShort, compAdobeDflt)
	ft.set(tagPhotometric, typeShort, 1)
	if pred2 {
		ft.set(tagPredictor, typeShort, 2)
	}
	if tiled {
		ft.set(tagTileWidth, typeShort, uint64(cw))
		ft.set(tagTileLength, typeShort, uint64(ch))
		ft.set(tagTileOffsets, typeLong, offs...)
		ft.set(tagTileByteCounts, typeLong, counts...)
	} else {
		ft.set(tagRowsPerStrip, typeShort, uint64(ch))
		ft.set(tagStripOffsets, typeLong, offs...)
		ft.set(tagStripByteCounts, typeLong, counts...)
	}
	if nodata != "" {
		ft.ascii(tagGDALNoData, nodata)
	}
	return ft.bytes()
}

func TestReadBandsIntoChunky(t *testing.T) {
	const w, h = 37, 23 // 16² tiles and 5-row strips both end part-way
	for _, c := range []struct {
		name   string
		tiled  bool
		pred2  bool
		sparse []int
		nodata string
	}{
		{"tiles", true, false, nil, ""},
		{"tiles-pred2", true, true, nil, ""},
		{"tiles-sparse", true, false, []int{2, 4}, ""}, // an edge tile and the middle one
		{"tiles-sparse-nodata", true, true, []int{5}, "7"},
		{"strips", false, false, nil, ""},
		{"strips-pred2", false, true, nil, ""},
		{"strips-sparse", false, false, []int{1, 4}, ""}, // 4: the short last strip
		{"strips-sparse-nodata", false, false, []int{0}, "-9999"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, err := openBytes(chunkyTIFF(w, h, 3, 16, 5, c.tiled, c.pred2, c.sparse, c.nodata))
			if err != nil {
				t.Fatal(err)
			}
			if f.Planar() || f.Tiled() != c.tiled || f.Bands() != 3 {
				t.Fatalf("layout: planar %v tiled %v %d bands", f.Planar(), f.Tiled(), f.Bands())
			}
			b, err := f.ReadBand(2)
			if err != nil {
				t.Fatal(err)
			}
			if c.sparse == nil {
				// The file is what it claims, so comparing with ReadBands means something.
				if got, want := b.Data[22*w+36], float32(1000+(36*7+22*13)%900); got != want {
					t.Fatalf("band 2 pixel (36,22) = %v, want %v", got, want)
				}
			}
			sameAsReadBands(t, f, 1, 2, 3)
			sameAsReadBands(t, f, 3, 1)
			sameAsReadBands(t, f, 2)
		})
	}
}

func TestReadBandsIntoWritten(t *testing.T) {
	dir := t.TempDir()
	// Our writer's files: tiled, one plane per band, 32² tiles ending
	// part-way across and down.
	for _, c := range []Compression{Deflate, ZSTD, NoCompression} {
		t.Run(fmt.Sprint(c), func(t *testing.T) {
			p := filepath.Join(dir, fmt.Sprint(c, ".tif"))
			if err := WriteBands(p, 70, 45, synth[uint16](70, 45, 3, 5), utmGeo(), WriteOptions{Compression: c, TileSize: 32}); err != nil {
				t.Fatal(err)
			}
			f, err := Open(p)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if !f.Planar() || !f.Tiled() {
				t.Fatalf("layout: planar %v tiled %v", f.Planar(), f.Tiled())
			}
			sameAsReadBands(t, f, 1, 2, 3)
			sameAsReadBands(t, f, 2)
		})
	}
	// A single float32 band with NaN and the floating-point predictor.
	p := filepath.Join(dir, "f32.tif")
	bands := synth[float32](100, 3, 1, 9)
	bands[0][17] = float32(math.NaN())
	if err := WriteBands(p, 100, 3, bands, nil, WriteOptions{TileSize: 16}); err != nil {
		t.Fatal(err)
	}
	f, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sameAsReadBands(t, f, 1)
}

// TestReadBandsIntoGDALLayouts reads GDAL-made files in the layouts our
// writer does not make: pixel-interleaved strips and tiles, planar strips.
func TestReadBandsIntoGDALLayouts(t *testing.T) {
	needGDAL(t)
	dir := t.TempDir()
	src := gdalSource(t, dir)
	for name, args := range map[string][]string{
		"chunky-strips":     {"-ot", "UInt16", "-co", "INTERLEAVE=PIXEL", "-co", "COMPRESS=DEFLATE", "-co", "BLOCKYSIZE=7"},
		"chunky-tiles":      {"-ot", "Float32", "-co", "INTERLEAVE=PIXEL", "-co", "COMPRESS=ZSTD", "-co", "PREDICTOR=3", "-co", "TILED=YES", "-co", "BLOCKXSIZE=64", "-co", "BLOCKYSIZE=48"},
		"planar-strips-lzw": {"-ot", "Int16", "-co", "INTERLEAVE=BAND", "-co", "COMPRESS=LZW", "-co", "PREDICTOR=2", "-co", "BLOCKYSIZE=10"},
	} {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(dir, name+".tif")
			gdal(t, "gdal_translate", append(append([]string{"-q", "-of", "GTiff"}, args...), src, p)...)
			f := sameAsGDAL(t, p)
			sameAsReadBands(t, f, 1, 2, 3, 4)
			sameAsReadBands(t, f, 4, 3)
		})
	}
}

func TestReadBandsIntoRepeatsAndErrors(t *testing.T) {
	const w, h = 37, 23
	planar := filepath.Join(t.TempDir(), "planar.tif")
	if err := WriteBands(planar, w, h, synth[int16](w, h, 3, 3), nil, WriteOptions{TileSize: 16}); err != nil {
		t.Fatal(err)
	}
	pf, err := Open(planar)
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	files := []*File{pf}
	for _, tiled := range []bool{false, true} {
		f, err := openBytes(chunkyTIFF(w, h, 3, 16, 5, tiled, false, nil, ""))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	for _, f := range files {
		layout := fmt.Sprintf("planar %v, tiled %v", f.Planar(), f.Tiled())
		want, err := f.ReadBand(2)
		if err != nil {
			t.Fatal(err)
		}
		same := func(what string, got []float32) {
			t.Helper()
			for i, v := range want.Data {
				if math.Float32bits(got[i]) != math.Float32bits(v) {
					t.Fatalf("%s, %s: pixel %d = %v, want %v", what, layout, i, got[i], v)
				}
			}
		}
		// A band listed twice: one plane for both, a plane and nil, two
		// planes.
		p := plane(w*h, 12345)
		bs, err := f.ReadBandsInto([][]float32{p, p}, 2, 2)
		if err != nil {
			t.Fatalf("one plane for band 2 twice, %s: %v", layout, err)
		}
		same("one plane twice", bs[0].Data)
		same("one plane twice", bs[1].Data)
		p, q := plane(w*h, 12345), plane(w*h, float32(math.NaN()))
		if bs, err = f.ReadBandsInto([][]float32{p, nil}, 2, 2); err != nil {
			t.Fatal(err)
		}
		same("plane and nil", bs[0].Data)
		same("plane and nil", bs[1].Data)
		if bs, err = f.ReadBandsInto([][]float32{p, q}, 2, 2); err != nil {
			t.Fatal(err)
		}
		same("two planes", bs[0].Data)
		same("two planes", bs[1].Data)
		// Nil entries or an empty dst: allocated, as ReadBands does.
		for _, dst := range [][][]float32{{nil}, {}} {
			if bs, err = f.ReadBandsInto(dst, 2); err != nil {
				t.Fatal(err)
			}
			same("allocated", bs[0].Data)
		}

		shared := make([]float32, w*h+5)
		for _, c := range []struct {
			name  string
			dst   [][]float32
			bands []int
			want  string
		}{
			{"short", [][]float32{make([]float32, 10)}, []int{2}, ": destination for band 2 holds 10 pixels, band is 37x23"},
			{"long", [][]float32{nil, make([]float32, w*h+1)}, []int{1, 3}, ": destination for band 3 holds 852 pixels, band is 37x23"},
			{"count", [][]float32{nil, nil}, []int{1}, ": 2 destination planes for 1 bands"},
			{"alias", [][]float32{p, p}, []int{1, 2}, ": the destination planes of bands 1 and 2 overlap"},
			{"partial", [][]float32{shared[5:], shared[:w*h]}, []int{3, 3}, ": the destination planes of bands 3 and 3 overlap"},
			{"band", [][]float32{p}, []int{4}, ": band 4 does not exist"},
		} {
			_, err := f.ReadBandsInto(c.dst, c.bands...)
			if want := "read " + f.Name() + c.want; err == nil || !contains(err, want) {
				t.Errorf("%s, %s: error %v, want one with %q", c.name, layout, err, want)
			}
		}
	}
}
