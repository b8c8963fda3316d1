package geotiff

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"canopy/compute"
)

// needGDAL skips the test when the GDAL command-line tools are missing.
func needGDAL(t testing.TB) {
	t.Helper()
	for _, tool := range []string{"gdal_translate", "gdalinfo"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found: GDAL cross-checks need gdal-bin (CI installs it)", tool)
		}
	}
}

// gdal runs a GDAL tool and fails the test with its output on error.
func gdal(t testing.TB, tool string, args ...string) string {
	t.Helper()
	cmd := exec.Command(tool, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s%s", tool, strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String() + stderr.String()
}

// gdalDump returns every band of path as GDAL reads it, converted to
// float64 (exact for every type but 64-bit integers beyond 2^53), through
// a raw ENVI dump.
func gdalDump(t testing.TB, path string) (w, h int, bands [][]float64) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "dump.img")
	gdal(t, "gdal_translate", "-q", "-of", "ENVI", "-ot", "Float64", "-co", "INTERLEAVE=BSQ", path, out)
	hdr, err := os.ReadFile(strings.TrimSuffix(out, ".img") + ".hdr")
	if err != nil {
		t.Fatal(err)
	}
	var nb int
	for _, line := range strings.Split(string(hdr), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		var dst *int
		switch strings.TrimSpace(k) {
		case "samples":
			dst = &w
		case "lines":
			dst = &h
		case "bands":
			dst = &nb
		case "byte order":
			if strings.TrimSpace(v) != "0" {
				t.Fatalf("ENVI dump of %s is big-endian", path)
			}
		}
		if dst != nil {
			if err := json.Unmarshal([]byte(strings.TrimSpace(v)), dst); err != nil {
				t.Fatalf("ENVI header %s: %v", k, err)
			}
		}
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) != w*h*nb*8 {
		t.Fatalf("ENVI dump of %s: %d bytes for %dx%dx%d", path, len(raw), w, h, nb)
	}
	bands = make([][]float64, nb)
	for b := range bands {
		bands[b] = make([]float64, w*h)
		for i := range bands[b] {
			bands[b][i] = math.Float64frombits(binary.LittleEndian.Uint64(raw[(b*w*h+i)*8:]))
		}
	}
	return w, h, bands
}

// sameAsGDAL checks that every band of path reads, through this package,
// exactly as GDAL reads it (converted to float32).
func sameAsGDAL(t *testing.T, path string) *File {
	t.Helper()
	w, h, want := gdalDump(t, path)
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if f.Width() != w || f.Height() != h || f.Bands() != len(want) {
		t.Fatalf("%dx%d with %d bands, GDAL says %dx%d with %d", f.Width(), f.Height(), f.Bands(), w, h, len(want))
	}
	idx := make([]int, f.Bands())
	for i := range idx {
		idx[i] = i + 1
	}
	got, err := f.ReadBands(idx...)
	if err != nil {
		t.Fatal(err)
	}
	for b := range want {
		for i, v := range want[b] {
			g, e := got[b].Data[i], float32(v)
			if math.Float32bits(g) != math.Float32bits(e) && !(g != g && e != e) {
				t.Fatalf("band %d pixel (%d,%d): got %v, GDAL reads %v", b+1, i%w, i/w, g, e)
			}
		}
	}
	// Window reads at the stored type: aligned to the strips or tiles,
	// and cutting them.
	windowsAndColumnsMatch(t, f, want, f.BlockRows(), 13)
	return f
}

// gdalSource writes the 4-band float32 scene every layout is made from:
// 301×203 (so tiles and strips end part-way), values with fractions and
// negatives, a few NaN, georeferenced in UTM 33N.
func gdalSource(t *testing.T, dir string) string {
	t.Helper()
	const w, h = 301, 203
	bands := synth[float32](w, h, 4, 42)
	bands[2][1234] = float32(math.NaN())
	src := filepath.Join(dir, "src.tif")
	if err := WriteBands(src, w, h, bands, utmGeo(), WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	return src
}

// TestLayoutsMatchGDAL converts one scene with gdal_translate into every
// layout the reader supports and checks each reads pixel-identical to
// GDAL's own raw dump, with the same georeferencing.
func TestLayoutsMatchGDAL(t *testing.T) {
	needGDAL(t)
	dir := t.TempDir()
	src := gdalSource(t, dir)
	layouts := []struct {
		name string
		args []string
		// check verifies what the layout is meant to exercise.
		check func(f *File) bool
	}{
		{"u8-strips-none", []string{"-ot", "Byte"}, func(f *File) bool { return !f.Tiled() && f.Type() == Uint8 && !f.Planar() }},
		{"u8-lzw-pred2-planar-rows5", []string{"-ot", "Byte", "-co", "COMPRESS=LZW", "-co", "PREDICTOR=2", "-co", "INTERLEAVE=BAND", "-co", "BLOCKYSIZE=5"}, func(f *File) bool { return f.Planar() && f.Predictor() == 2 }},
		{"u16-deflate-tiled", []string{"-ot", "UInt16", "-co", "COMPRESS=DEFLATE", "-co", "TILED=YES", "-co", "BLOCKXSIZE=128", "-co", "BLOCKYSIZE=64"}, func(f *File) bool { return f.Tiled() && f.Type() == Uint16 }},
		{"u16-deflate-pred2-be", []string{"-ot", "UInt16", "-co", "COMPRESS=DEFLATE", "-co", "PREDICTOR=2", "-co", "ENDIANNESS=BIG"}, func(f *File) bool { return f.BigEndian() && f.Predictor() == 2 }},
		{"u16-deflate-pred2-planar", []string{"-ot", "UInt16", "-co", "COMPRESS=DEFLATE", "-co", "PREDICTOR=2", "-co", "INTERLEAVE=BAND", "-co", "TILED=YES"}, func(f *File) bool { return f.Planar() && f.Predictor() == 2 }},
		{"u32-lzw-pred2-be", []string{"-ot", "UInt32", "-co", "COMPRESS=LZW", "-co", "PREDICTOR=2", "-co", "ENDIANNESS=BIG"}, func(f *File) bool { return f.BigEndian() && f.Type() == Uint32 }},
		{"f64-deflate-pred3-be-planar", []string{"-ot", "Float64", "-co", "COMPRESS=DEFLATE", "-co", "PREDICTOR=3", "-co", "ENDIANNESS=BIG", "-co", "INTERLEAVE=BAND"}, func(f *File) bool { return f.BigEndian() && f.Type() == Float64 && f.Predictor() == 3 }},
		{"u16-packbits-tiled-planar", []string{"-ot", "UInt16", "-co", "COMPRESS=PACKBITS", "-co", "TILED=YES", "-co", "INTERLEAVE=BAND"}, func(f *File) bool { return f.Planar() && f.Tiled() }},
		{"i16-lzw-pred2", []string{"-ot", "Int16", "-co", "COMPRESS=LZW", "-co", "PREDICTOR=2"}, func(f *File) bool { return f.Type() == Int16 }},
		{"i16-zstd-pred2-be-tiled", []string{"-ot", "Int16", "-co", "COMPRESS=ZSTD", "-co", "PREDICTOR=2", "-co", "ENDIANNESS=BIG", "-co", "TILED=YES"}, func(f *File) bool { return f.BigEndian() && f.Tiled() }},
		{"u32-zstd-pred2-planar", []string{"-ot", "UInt32", "-co", "COMPRESS=ZSTD", "-co", "PREDICTOR=2", "-co", "INTERLEAVE=BAND"}, func(f *File) bool { return f.Type() == Uint32 }},
		{"i32-packbits-be", []string{"-ot", "Int32", "-co", "COMPRESS=PACKBITS", "-co", "ENDIANNESS=BIG"}, func(f *File) bool { return f.Type() == Int32 && f.BigEndian() }},
		{"u64-deflate-pred2", []string{"-ot", "UInt64", "-co", "COMPRESS=DEFLATE", "-co", "PREDICTOR=2"}, func(f *File) bool { return f.Type() == Uint64 }},
		{"i64-none-be-tiled", []string{"-ot", "Int64", "-co", "ENDIANNESS=BIG", "-co", "TILED=YES"}, func(f *File) bool { return f.Type() == Int64 }},
		{"f32-deflate-pred3", []string{"-ot", "Float32", "-co", "COMPRESS=DEFLATE", "-co", "PREDICTOR=3"}, func(f *File) bool { return f.Predictor() == 3 && !f.Tiled() }},
		{"f32-deflate-pred3-be-tiled", []string{"-ot", "Float32", "-co", "COMPRESS=DEFLATE", "-co", "PREDICTOR=3", "-co", "ENDIANNESS=BIG", "-co", "TILED=YES"}, func(f *File) bool { return f.BigEndian() && f.Predictor() == 3 }},
		{"f32-zstd-pred3-planar-be", []string{"-ot", "Float32", "-co", "COMPRESS=ZSTD", "-co", "PREDICTOR=3", "-co", "INTERLEAVE=BAND", "-co", "ENDIANNESS=BIG"}, func(f *File) bool { return f.Planar() && f.BigEndian() }},
		{"f32-lzw-pred2", []string{"-ot", "Float32", "-co", "COMPRESS=LZW", "-co", "PREDICTOR=2"}, func(f *File) bool { return f.Predictor() == 2 && f.Type() == Float32 }},
		{"f64-lzw-pred3-tiled", []string{"-ot", "Float64", "-co", "COMPRESS=LZW", "-co", "PREDICTOR=3", "-co", "TILED=YES"}, func(f *File) bool { return f.Type() == Float64 && f.Predictor() == 3 }},
		{"f64-none-be", []string{"-ot", "Float64", "-co", "ENDIANNESS=BIG"}, func(f *File) bool { return f.Type() == Float64 && f.BigEndian() }},
		{"bigtiff-u16-lzw-tiled", []string{"-ot", "UInt16", "-co", "BIGTIFF=YES", "-co", "COMPRESS=LZW", "-co", "TILED=YES"}, func(f *File) bool { return f.BigTIFF() && f.Tiled() }},
		{"bigtiff-f32-zstd-pred3-be-planar", []string{"-ot", "Float32", "-co", "BIGTIFF=YES", "-co", "COMPRESS=ZSTD", "-co", "PREDICTOR=3", "-co", "ENDIANNESS=BIG", "-co", "INTERLEAVE=BAND"}, func(f *File) bool { return f.BigTIFF() && f.BigEndian() }},
		{"bigtiff-i16-strips", []string{"-ot", "Int16", "-co", "BIGTIFF=YES", "-co", "BLOCKYSIZE=3"}, func(f *File) bool { return f.BigTIFF() && !f.Tiled() }},
		{"cog-u16-deflate", []string{"-of", "COG", "-ot", "UInt16", "-co", "COMPRESS=DEFLATE", "-co", "PREDICTOR=YES", "-co", "BLOCKSIZE=128", "-co", "OVERVIEWS=AUTO"}, func(f *File) bool { return f.Tiled() && f.Images() > 1 }},
		{"cog-f32-zstd-bigtiff", []string{"-of", "COG", "-ot", "Float32", "-co", "COMPRESS=ZSTD", "-co", "PREDICTOR=YES", "-co", "BLOCKSIZE=256", "-co", "BIGTIFF=YES"}, func(f *File) bool { return f.BigTIFF() && f.Predictor() == 3 }},
		{"nodata-f32", []string{"-ot", "Float32", "-a_nodata", "-9999", "-co", "COMPRESS=DEFLATE"}, func(f *File) bool { nd, ok := f.NoData(); return ok && nd == -9999 }},
	}
	for i, l := range layouts {
		if testing.Short() && i%12 != 0 {
			// -short is the race detector's run in make test: one layout
			// in twelve (the decoders' workers are the same for all); the
			// run without it reads every one.
			continue
		}
		t.Run(l.name, func(t *testing.T) {
			path := filepath.Join(dir, l.name+".tif")
			of := []string{"-q"}
			if !slices.Contains(l.args, "-of") {
				of = append(of, "-of", "GTiff")
				if !slices.Contains(l.args, "INTERLEAVE=BAND") {
					of = append(of, "-co", "INTERLEAVE=PIXEL")
				}
			}
			gdal(t, "gdal_translate", append(append(of, l.args...), src, path)...)
			f := sameAsGDAL(t, path)
			if !l.check(f) {
				t.Errorf("layout not as intended: %s, %v, tiled %v, planar %v, predictor %d, bigtiff %v, big-endian %v, %d images",
					f.Compression(), f.Type(), f.Tiled(), f.Planar(), f.Predictor(), f.BigTIFF(), f.BigEndian(), f.Images())
			}
			if !f.Geo().SameGrid(utmGeo()) || !f.Geo().Valid() {
				t.Errorf("georeferencing %+v, want the source's", f.Geo())
			}
		})
	}
}

// gdalInfo is the part of `gdalinfo -json` the georeferencing checks use.
type gdalInfo struct {
	Size             []int     `json:"size"`
	GeoTransform     []float64 `json:"geoTransform"`
	CoordinateSystem struct {
		WKT string `json:"wkt"`
	} `json:"coordinateSystem"`
	Metadata map[string]map[string]string `json:"metadata"`
	Bands    []struct {
		Type        string `json:"type"`
		NoDataValue any    `json:"noDataValue"`
	} `json:"bands"`
}

func gdalInfoJSON(t testing.TB, path string) gdalInfo {
	t.Helper()
	cmd := exec.Command("gdalinfo", "-json", path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("gdalinfo -json %s: %v\n%s", path, err, stderr.String())
	}
	if s := strings.TrimSpace(stderr.String()); s != "" {
		t.Errorf("gdalinfo warns about %s:\n%s", path, s)
	}
	var info gdalInfo
	if err := json.Unmarshal(out, &info); err != nil {
		t.Fatalf("gdalinfo -json %s: %v", path, err)
	}
	return info
}

// TestWrittenGeoreferencingMatchesGDAL writes NDVI-like results on grids
// GDAL made (north-up UTM, geographic, pixel-is-point) and on a rotated
// grid (ModelTransformation), and checks that gdalinfo places the output
// exactly where it places the input, warns about nothing, sees
// GDAL_NODATA = nan, and reads the same pixels.
func TestWrittenGeoreferencingMatchesGDAL(t *testing.T) {
	needGDAL(t)
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain.tif")
	if err := WriteBands(plain, 300, 200, synth[uint16](300, 200, 2, 3), nil, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	rotated := filepath.Join(dir, "rotated.tif")
	rot := &compute.GeoRef{
		Transformation:  []float64{8.66, -5, 0, 500000, -5, -8.66, 0, 4649776, 0, 0, 0, 0, 0, 0, 0, 1},
		GeoKeyDirectory: []uint16{1, 1, 0, 3, 1024, 0, 1, 1, 1025, 0, 1, 1, 3072, 0, 1, 32632},
	}
	if err := WriteBands(rotated, 300, 200, synth[uint16](300, 200, 2, 3), rot, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	inputs := map[string]string{"rotated": rotated}
	for name, args := range map[string][]string{
		"utm":   {"-a_srs", "EPSG:32633", "-a_ullr", "399960", "5900040", "402960", "5898040"},
		"wgs84": {"-a_srs", "EPSG:4326", "-a_ullr", "13.5", "53.25", "13.53", "53.23"},
		"point": {"-a_srs", "EPSG:25832", "-a_ullr", "600000", "5300000", "600600", "5299600", "-mo", "AREA_OR_POINT=Point"},
		"laea":  {"-a_srs", "EPSG:3035", "-a_ullr", "4321000", "3210000", "4330000", "3204000", "-co", "TILED=YES", "-co", "COMPRESS=LZW"},
	} {
		p := filepath.Join(dir, name+".tif")
		gdal(t, "gdal_translate", append(append([]string{"-q"}, args...), plain, p)...)
		inputs[name] = p
	}
	for name, in := range inputs {
		for _, opt := range []WriteOptions{{}, {Compression: ZSTD, BigTIFF: true, TileSize: 64}} {
			t.Run(fmt.Sprintf("%s/%v/bigtiff=%v", name, opt.Compression, opt.BigTIFF), func(t *testing.T) {
				f, err := Open(in)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				bs, err := f.ReadBands(1, 2)
				if err != nil {
					t.Fatal(err)
				}
				ndvi := compute.NewBand(f.Width(), f.Height())
				ndvi.Geo = bs[0].Geo
				for i := range ndvi.Data {
					ndvi.Data[i] = ndvi32(bs[0].Data[i], bs[1].Data[i])
				}
				out := filepath.Join(t.TempDir(), "ndvi.tif")
				if err := Write(out, ndvi, opt); err != nil {
					t.Fatal(err)
				}
				want, got := gdalInfoJSON(t, in), gdalInfoJSON(t, out)
				if len(want.GeoTransform) != 6 {
					t.Fatalf("input has no geotransform: %+v", want)
				}
				for i := range want.GeoTransform {
					if got.GeoTransform[i] != want.GeoTransform[i] {
						t.Errorf("geotransform %v, input has %v", got.GeoTransform, want.GeoTransform)
						break
					}
				}
				if got.CoordinateSystem.WKT != want.CoordinateSystem.WKT || got.CoordinateSystem.WKT == "" {
					t.Errorf("coordinate system differs:\n%s\ninput:\n%s", got.CoordinateSystem.WKT, want.CoordinateSystem.WKT)
				}
				if a, b := got.Metadata[""]["AREA_OR_POINT"], want.Metadata[""]["AREA_OR_POINT"]; a != b {
					t.Errorf("AREA_OR_POINT = %q, input has %q", a, b)
				}
				if got.Bands[0].Type != "Float32" || got.Bands[0].NoDataValue != "NaN" {
					t.Errorf("band: %s nodata %v, want Float32 with nodata NaN", got.Bands[0].Type, got.Bands[0].NoDataValue)
				}
				w, h, dump := gdalDump(t, out)
				if w != ndvi.Width || h != ndvi.Height {
					t.Fatalf("GDAL reads %dx%d", w, h)
				}
				for i, v := range dump[0] {
					if e := ndvi.Data[i]; float32(v) != e && !(v != v && e != e) {
						t.Fatalf("pixel %d: GDAL reads %v, we wrote %v", i, v, e)
					}
				}
			})
		}
	}
}

// TestSparseMatchesGDAL reads files whose blocks GDAL left out
// (SPARSE_OK, byte count 0): GDAL shows them as the nodata value, or 0.
func TestSparseMatchesGDAL(t *testing.T) {
	needGDAL(t)
	if _, err := exec.LookPath("gdal_create"); err != nil {
		t.Skip("gdal_create not found (GDAL 3.2 or later needed)")
	}
	dir := t.TempDir()
	for name, args := range map[string][]string{
		"nodata": {"-a_nodata", "7", "-co", "TILED=YES"},
		"zero":   {"-co", "BLOCKYSIZE=16"},
	} {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(dir, name+".tif")
			gdal(t, "gdal_create", append([]string{"-q", "-of", "GTiff", "-outsize", "300", "200", "-bands", "2", "-ot", "UInt16", "-co", "SPARSE_OK=TRUE"}, append(args, p)...)...)
			f := sameAsGDAL(t, p)
			for _, c := range f.counts {
				if c != 0 {
					t.Fatalf("GDAL wrote a non-empty block: byte counts %v", f.counts)
				}
			}
		})
	}
}

// TestGeoreferencingAsGDALPlacesIt checks that the transform we derive
// from the tags is GDAL's geotransform for files GDAL georeferenced
// (PixelIsPoint included: GDAL shifts its tiepoint by half a pixel), that
// a PixelIsArea and a PixelIsPoint file GDAL places identically are on
// the same grid to us, and that identical numbers in two CRSs are not.
func TestGeoreferencingAsGDALPlacesIt(t *testing.T) {
	needGDAL(t)
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain.tif")
	if err := WriteBands(plain, 30, 20, synth[uint16](30, 20, 1, 3), nil, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	ullr := []string{"-a_ullr", "600000", "5300000", "600300", "5299800"}
	geos := map[string]*compute.GeoRef{}
	for name, args := range map[string][]string{
		"area":     append([]string{"-a_srs", "EPSG:32633", "-mo", "AREA_OR_POINT=Area"}, ullr...),
		"point":    append([]string{"-a_srs", "EPSG:32633", "-mo", "AREA_OR_POINT=Point"}, ullr...),
		"zone34":   append([]string{"-a_srs", "EPSG:32634"}, ullr...),
		"wgs84":    {"-a_srs", "EPSG:4326", "-a_ullr", "13.5", "53.25", "13.53", "53.23", "-mo", "AREA_OR_POINT=Point"},
		"userdef":  append([]string{"-a_srs", "+proj=tmerc +lat_0=0 +lon_0=15 +k=0.9996 +x_0=500000 +y_0=0 +ellps=GRS80 +units=m +no_defs"}, ullr...),
		"userdef2": append([]string{"-a_srs", "+proj=tmerc +lat_0=0 +lon_0=16 +k=0.9996 +x_0=500000 +y_0=0 +ellps=GRS80 +units=m +no_defs"}, ullr...),
	} {
		p := filepath.Join(dir, name+".tif")
		gdal(t, "gdal_translate", append(append([]string{"-q"}, args...), plain, p)...)
		f, err := Open(p)
		if err != nil {
			t.Fatal(err)
		}
		geos[name] = f.Geo()
		f.Close()
		want := gdalInfoJSON(t, p).GeoTransform
		got, ok := f.Geo().Affine()
		if !ok || len(want) != 6 {
			t.Fatalf("%s: no transform (%v, GDAL %v)", name, ok, want)
		}
		for i := range got {
			if math.Abs(got[i]-want[i]) > 1e-9*math.Max(1, math.Abs(want[i])) {
				t.Errorf("%s: transform %v, GDAL says %v", name, got, want)
				break
			}
		}
	}
	for _, n := range []string{"userdef", "userdef2"} {
		if name := geos[n].CRSName(); !strings.HasPrefix(name, "a user-defined projected CRS") {
			t.Fatalf("%s: GDAL wrote %s, the test needs a user-defined CRS", n, name)
		}
	}
	if !geos["point"].PixelIsPoint() || geos["area"].PixelIsPoint() {
		t.Fatal("AREA_OR_POINT did not reach the raster type GeoKey")
	}
	if why := geos["area"].Mismatch(geos["point"]); why != "" {
		t.Errorf("PixelIsArea and PixelIsPoint files GDAL places identically: %s", why)
	}
	if why := geos["area"].Mismatch(geos["zone34"]); !strings.Contains(why, "different coordinate reference systems (EPSG:32633 and EPSG:32634)") {
		t.Errorf("same numbers in UTM 33N and 34N: %q", why)
	}
	if why := geos["userdef"].Mismatch(geos["userdef2"]); !strings.Contains(why, "different coordinate reference systems") {
		t.Errorf("user-defined CRSs with different central meridians: %q", why)
	}
	if why := geos["userdef"].Mismatch(geos["userdef"]); why != "" {
		t.Errorf("a user-defined CRS against itself: %q", why)
	}
}
