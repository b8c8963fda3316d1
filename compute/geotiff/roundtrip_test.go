package geotiff

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"canopy/compute"
)

// utmGeo is a WGS 84 / UTM 33N grid with 10 m pixels, as Sentinel-2 has.
func utmGeo() *compute.GeoRef {
	return &compute.GeoRef{
		PixelScale: []float64{10, 10, 0},
		Tiepoints:  []float64{0, 0, 0, 399960, 5900040, 0},
		GeoKeyDirectory: []uint16{1, 1, 0, 3,
			1024, 0, 1, 1, // GTModelTypeGeoKey = projected
			1025, 0, 1, 1, // GTRasterTypeGeoKey = PixelIsArea
			3072, 0, 1, 32633}, // ProjectedCSTypeGeoKey = EPSG:32633
	}
}

// synth returns n bands of w×h samples of T with a pattern that uses the
// type's range (negative values for signed types, fractions for floats).
func synth[T Sample](w, h, n int, seed uint64) [][]T {
	rng := rand.New(rand.NewPCG(seed, 7))
	typ := typeOf[T]()
	out := make([][]T, n)
	for b := range out {
		p := make([]T, w*h)
		for i := range p {
			x, y := i%w, i/w
			base := float64((x*7+y*13+b*31)%200) + rng.Float64()*50
			switch {
			case typ.Float():
				p[i] = T(base - 60.25 + rng.Float64())
			case typ == Int8 || typ == Int16 || typ == Int32 || typ == Int64:
				p[i] = T(int64(base) - 100)
			default:
				p[i] = T(base)
			}
		}
		out[b] = p
	}
	return out
}

func checkBands[T Sample](t *testing.T, f *File, want [][]T) {
	t.Helper()
	idx := make([]int, len(want))
	for i := range idx {
		idx[i] = i + 1
	}
	got, err := f.ReadBands(idx...)
	if err != nil {
		t.Fatal(err)
	}
	for b := range want {
		for i, v := range want[b] {
			if g := got[b].Data[i]; g != float32(v) && !(math.IsNaN(float64(g)) && math.IsNaN(float64(v))) {
				t.Fatalf("band %d pixel %d (%d,%d): got %v, want %v", b+1, i, i%f.Width(), i/f.Width(), g, float32(v))
			}
		}
	}
}

func roundTrip[T Sample](t *testing.T, w, h, n int, opt WriteOptions) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rt.tif")
	want := synth[T](w, h, n, uint64(w*h+n))
	geo := utmGeo()
	if err := WriteBands(path, w, h, want, geo, opt); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Width() != w || f.Height() != h || f.Bands() != n || f.Type() != typeOf[T]() {
		t.Fatalf("header: %dx%d %d bands %v, want %dx%d %d bands %v", f.Width(), f.Height(), f.Bands(), f.Type(), w, h, n, typeOf[T]())
	}
	if f.BigTIFF() != opt.BigTIFF {
		t.Errorf("BigTIFF = %v, want %v", f.BigTIFF(), opt.BigTIFF)
	}
	if !f.Geo().SameGrid(geo) || f.Geo().GeoKeyDirectory[len(geo.GeoKeyDirectory)-1] != 32633 {
		t.Errorf("georeferencing lost: %+v", f.Geo())
	}
	checkBands(t, f, want)
}

func TestRoundTripTypes(t *testing.T) {
	for _, c := range []Compression{Deflate, ZSTD, NoCompression} {
		for _, big := range []bool{false, true} {
			opt := WriteOptions{Compression: c, BigTIFF: big, TileSize: 32}
			t.Run(fmt.Sprintf("%v/big=%v", c, big), func(t *testing.T) {
				roundTrip[uint8](t, 70, 45, 2, opt)
				roundTrip[int8](t, 70, 45, 1, opt)
				roundTrip[uint16](t, 70, 45, 3, opt)
				roundTrip[int16](t, 33, 17, 1, opt)
				roundTrip[uint32](t, 33, 17, 2, opt)
				roundTrip[int32](t, 33, 17, 1, opt)
				roundTrip[uint64](t, 33, 17, 1, opt)
				roundTrip[int64](t, 33, 17, 1, opt)
				roundTrip[float32](t, 70, 45, 4, opt)
				roundTrip[float64](t, 33, 17, 2, opt)
			})
		}
	}
	roundTrip[float32](t, 100, 3, 1, WriteOptions{NoPredictor: true, TileSize: 16})
	roundTrip[uint16](t, 1, 1, 1, WriteOptions{})
}

func TestWriteBandKeepsNoDataAndNaN(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ndvi.tif")
	b := compute.NewBand(40, 30)
	for i := range b.Data {
		b.Data[i] = float32(i%21-10) / 10
	}
	b.Data[5] = compute.NaN32
	b.Geo = utmGeo()
	if err := Write(path, b, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if nd, ok := f.NoData(); !ok || !math.IsNaN(nd) {
		t.Errorf("NoData = %v, %v; want NaN, true", nd, ok)
	}
	if f.Predictor() != 3 || f.Type() != Float32 || !f.Tiled() {
		t.Errorf("layout: predictor %d, %v, tiled %v; want 3, float32, tiled", f.Predictor(), f.Type(), f.Tiled())
	}
	got, err := f.ReadBand(1)
	if err != nil {
		t.Fatal(err)
	}
	if got.Source != path+":1" {
		t.Errorf("Source = %q", got.Source)
	}
	for i, v := range b.Data {
		g := got.Data[i]
		if math.Float32bits(g) != math.Float32bits(v) {
			t.Fatalf("pixel %d: got %v, want %v", i, g, v)
		}
	}

	b.NoData, b.HasNoData = -9999, true
	if err := Write(path, b, WriteOptions{Compression: ZSTD}); err != nil {
		t.Fatal(err)
	}
	f2, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f2.Close()
	if nd, ok := f2.NoData(); !ok || nd != -9999 {
		t.Errorf("NoData = %v, %v; want -9999, true", nd, ok)
	}
}

func TestReadBandErrors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "two.tif")
	if err := WriteBands(path, 8, 8, synth[uint16](8, 8, 2, 1), nil, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Geo() != nil {
		t.Errorf("Geo = %+v, want nil for a file without georeferencing", f.Geo())
	}
	for _, b := range []int{0, 3} {
		_, err := f.ReadBand(b)
		if err == nil || !contains(err, "band "+fmt.Sprint(b)+" does not exist (the file has 2 bands)") {
			t.Errorf("ReadBand(%d) = %v", b, err)
		}
	}
}

func TestWriteRejects(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"size", WriteBands(filepath.Join(dir, "a.tif"), 0, 5, [][]float32{{}}, nil, WriteOptions{}), "image size 0x5"},
		{"short band", WriteBands(filepath.Join(dir, "a.tif"), 4, 4, [][]float32{make([]float32, 15)}, nil, WriteOptions{}), "band 1 holds 15 samples"},
		{"tile", WriteBands(filepath.Join(dir, "a.tif"), 4, 4, [][]float32{make([]float32, 16)}, nil, WriteOptions{TileSize: 20}), "tile size 20"},
		{"level", WriteBands(filepath.Join(dir, "a.tif"), 4, 4, [][]float32{make([]float32, 16)}, nil, WriteOptions{Level: 12}), "DEFLATE level 12"},
		{"dir", WriteBands(filepath.Join(dir, "missing", "a.tif"), 4, 4, [][]float32{make([]float32, 16)}, nil, WriteOptions{}), "missing"},
	}
	for _, c := range cases {
		if c.err == nil || !contains(c.err, c.want) {
			t.Errorf("%s: error %v, want it to mention %q", c.name, c.err, c.want)
		}
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*")); len(m) != 0 {
		t.Errorf("failed writes left files behind: %v", m)
	}
}

func TestWriteIsDeterministic(t *testing.T) {
	dir := t.TempDir()
	bands := synth[float32](300, 270, 2, 11)
	for _, c := range []Compression{Deflate, ZSTD} {
		var files [2][]byte
		for i := range files {
			p := filepath.Join(dir, fmt.Sprint(c, i, ".tif"))
			if err := WriteBands(p, 300, 270, bands, utmGeo(), WriteOptions{Compression: c, TileSize: 64}); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			files[i] = b
		}
		if !bytes.Equal(files[0], files[1]) {
			t.Errorf("%v: two writes of the same bands differ", c)
		}
	}
}

func TestNeedBigTIFF(t *testing.T) {
	tiles := func(w, h int) int { return ((w + 255) / 256) * ((h + 255) / 256) }
	for _, c := range []struct {
		w, h, bands, size int
		want              bool
	}{
		{10980, 10980, 1, 4, false},  // a Sentinel-2 NDVI: 482 MB
		{10980, 10980, 4, 8, false},  // 3.86 GB raw: fits, margin included
		{30000, 30000, 1, 4, false},  // 3.6 GB
		{32768, 32000, 1, 4, true},   // 4.19 GB: past 4 GiB
		{32768, 31000, 1, 4, true},   // 4.06 GB raw: within the margin of 4 GiB
		{100000, 100000, 1, 1, true}, // 10 GB of bytes
		{1, 1, 1, 1, false},
	} {
		got := needBigTIFF(c.w, c.h, c.bands, c.size, tiles(c.w, c.h)*c.bands)
		if got != c.want {
			t.Errorf("%dx%d, %d bands of %d bytes: BigTIFF %v, want %v", c.w, c.h, c.bands, c.size, got, c.want)
		}
	}
}
