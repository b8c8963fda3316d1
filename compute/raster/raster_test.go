package raster

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"canopy/compute"
	"canopy/compute/geotiff"
)

func TestParseSpec(t *testing.T) {
	cases := []struct {
		spec, path string
		band       int
		err        string
	}{
		{"red.tif", "red.tif", 0, ""},
		{"red.tif:3", "red.tif", 3, ""},
		{"/data/s2/B04.tif:1", "/data/s2/B04.tif", 1, ""},
		{`C:\data\red.tif`, `C:\data\red.tif`, 0, ""},
		{`C:\data\multi.tif:12`, `C:\data\multi.tif`, 12, ""},
		{"scenes:2024/red.tif", "scenes:2024/red.tif", 0, ""},
		{"scenes:2024/red.tif:2", "scenes:2024/red.tif", 2, ""},
		{"odd:", "odd:", 0, ""},
		{"a.tif:x1", "a.tif:x1", 0, ""},
		{"a.tif:0", "", 0, "numbered from 1"},
		{"a.tif:70000", "", 0, "out of range"},
		{":3", "", 0, "names no file"},
		{"", "", 0, "empty band spec"},
	}
	for _, c := range cases {
		p, b, err := ParseSpec(c.spec)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseSpec(%q) error = %v, want one mentioning %q", c.spec, err, c.err)
			}
			continue
		}
		if err != nil || p != c.path || b != c.band {
			t.Errorf("ParseSpec(%q) = %q, %d, %v; want %q, %d", c.spec, p, b, err, c.path, c.band)
		}
	}
}

func geo(x0 float64) *compute.GeoRef {
	return &compute.GeoRef{
		PixelScale:      []float64{10, 10, 0},
		Tiepoints:       []float64{0, 0, 0, x0, 5900040, 0},
		GeoKeyDirectory: []uint16{1, 1, 0, 1, 3072, 0, 1, 32633},
	}
}

// multiband writes a 4-band uint16 file whose band b holds b*1000 + i%977.
func multiband(t *testing.T, path string, w, h int, g *compute.GeoRef) {
	t.Helper()
	bands := make([][]uint16, 4)
	for b := range bands {
		bands[b] = make([]uint16, w*h)
		for i := range bands[b] {
			bands[b][i] = uint16((b+1)*1000 + i%977)
		}
	}
	if err := geotiff.WriteBands(path, w, h, bands, g, geotiff.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
}

func writePNG(t *testing.T, path string, img image.Image) {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	multi := filepath.Join(dir, "multi.tif")
	multiband(t, multi, 50, 40, geo(399960))
	b, err := Load(multi + ":3")
	if err != nil {
		t.Fatal(err)
	}
	if b.Width != 50 || b.Height != 40 || b.Data[0] != 3000 || b.Data[1999] != float32(3000+1999%977) || !b.Geo.Valid() || b.Source != multi+":3" {
		t.Errorf("band 3: %dx%d, data[0]=%v data[last]=%v geo %v source %q", b.Width, b.Height, b.Data[0], b.Data[1999], b.Geo.Valid(), b.Source)
	}
	if _, err := Load(multi); err == nil || !strings.Contains(err.Error(), "has 4 bands; pick one as "+multi+":B") {
		t.Errorf("Load without band: %v", err)
	}
	if _, err := Load(multi + ":5"); err == nil || !strings.Contains(err.Error(), "band 5 does not exist (the file has 4 bands)") {
		t.Errorf("Load band 5: %v", err)
	}
	if n, err := Count(multi); n != 4 || err != nil {
		t.Errorf("Count = %d, %v; want 4", n, err)
	}

	single := filepath.Join(dir, "single.tif")
	if err := geotiff.Write(single, &compute.Band{Width: 3, Height: 2, Data: []float32{1, 2, 3, 4, 5, 6}}, geotiff.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, spec := range []string{single, single + ":1"} {
		b, err := Load(spec)
		if err != nil || b.Data[5] != 6 || b.Geo != nil {
			t.Errorf("Load(%q) = %v, %v", spec, b, err)
		}
	}

	g8 := image.NewGray(image.Rect(0, 0, 3, 2))
	g8.Pix = []uint8{0, 10, 255, 3, 4, 5}
	writePNG(t, filepath.Join(dir, "g8.png"), g8)
	g16 := image.NewGray16(image.Rect(0, 0, 2, 2))
	g16.SetGray16(1, 1, color.Gray16{Y: 60000})
	writePNG(t, filepath.Join(dir, "g16.png"), g16)
	rgb := image.NewRGBA(image.Rect(0, 0, 2, 2))
	rgb.Set(0, 0, color.RGBA{200, 10, 10, 255})
	writePNG(t, filepath.Join(dir, "rgb.png"), rgb)
	if b, err := Load(filepath.Join(dir, "g8.png")); err != nil || b.Data[2] != 255 || b.Data[5] != 5 || b.Geo != nil {
		t.Errorf("8-bit PNG: %v, %v", b, err)
	}
	if b, err := Load(filepath.Join(dir, "g16.png:1")); err != nil || b.Data[3] != 60000 || b.Data[0] != 0 {
		t.Errorf("16-bit PNG: %v, %v", b, err)
	}
	if _, err := Load(filepath.Join(dir, "g16.png:2")); err == nil || !strings.Contains(err.Error(), "a PNG has 1 band") {
		t.Errorf("PNG band 2: %v", err)
	}
	if _, err := Load(filepath.Join(dir, "rgb.png")); err == nil || !strings.Contains(err.Error(), "grayscale") {
		t.Errorf("RGB PNG: %v", err)
	}
	txt := filepath.Join(dir, "notes.txt")
	os.WriteFile(txt, []byte("hello, world"), 0o644)
	if _, err := Load(txt); err == nil || !strings.Contains(err.Error(), "read "+txt+": not a GeoTIFF or PNG") {
		t.Errorf("text file: %v", err)
	}
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "read "+dir+": is a directory") {
		t.Errorf("directory: %v", err)
	}
	if _, err := Count(txt); err == nil || !strings.Contains(err.Error(), "not a GeoTIFF or PNG") {
		t.Errorf("Count of a text file: %v", err)
	}
	missing := filepath.Join(dir, "missing.tif")
	if _, err := Load(missing + ":2"); err == nil || !strings.Contains(err.Error(), "read "+missing+": no such file") {
		t.Errorf("missing file: %v", err)
	}
	// A file whose name ends in ":digits" is still found.
	odd := filepath.Join(dir, "odd.tif:7")
	if err := geotiff.Write(odd, &compute.Band{Width: 1, Height: 1, Data: []float32{42}}, geotiff.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if b, err := Load(odd); err != nil || b.Data[0] != 42 {
		t.Errorf("file named %q: %v, %v", odd, b, err)
	}
}

func TestLoadPair(t *testing.T) {
	dir := t.TempDir()
	multi := filepath.Join(dir, "multi.tif")
	multiband(t, multi, 64, 33, geo(399960))
	red, nir, err := LoadPair(multi+":3", multi+":4")
	if err != nil {
		t.Fatal(err)
	}
	if red.Data[7] != 3007 || nir.Data[7] != 4007 || red.Source != multi+":3" || nir.Source != multi+":4" {
		t.Errorf("pair from one file: red %v (%s), nir %v (%s)", red.Data[7], red.Source, nir.Data[7], nir.Source)
	}

	other := filepath.Join(dir, "other.tif")
	multiband(t, other, 64, 33, geo(399960))
	if red, nir, err = LoadPair(other+":1", multi+":2"); err != nil || red.Data[0] != 1000 || nir.Data[0] != 2000 {
		t.Errorf("pair from two files: %v", err)
	}

	small := filepath.Join(dir, "small.tif")
	multiband(t, small, 32, 33, geo(399960))
	_, _, err = LoadPair(small+":3", multi+":4")
	if err == nil || !strings.Contains(err.Error(), small) || !strings.Contains(err.Error(), multi) || !strings.Contains(err.Error(), "size") {
		t.Errorf("size mismatch: %v", err)
	}
	shifted := filepath.Join(dir, "shifted.tif")
	multiband(t, shifted, 64, 33, geo(400000))
	_, _, err = LoadPair(shifted+":3", multi+":4")
	if err == nil || !strings.Contains(err.Error(), shifted) || !strings.Contains(err.Error(), multi) || !strings.Contains(err.Error(), "grid") {
		t.Errorf("grid mismatch: %v", err)
	}
	_, _, err = LoadPair(filepath.Join(dir, "nope.tif"), multi+":4")
	if err == nil || !strings.Contains(err.Error(), "nope.tif") {
		t.Errorf("missing red: %v", err)
	}
}

func TestWriteGeoTIFFAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ndvi.tif")
	b := &compute.Band{Width: 4, Height: 2, Data: []float32{-1, -0.5, 0, 0.5, 1, compute.NaN32, 0.25, 0.75}, Geo: geo(399960)}
	if err := WriteGeoTIFF(path, b); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	bad := &compute.Band{Width: 4, Height: 2, Data: make([]float32, 3)}
	if err := WriteGeoTIFF(path, bad); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("writing a broken band: %v", err)
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) {
		t.Error("a failed write changed the existing file")
	}
	if m, _ := filepath.Glob(filepath.Join(dir, ".*")); len(m) != 0 {
		t.Errorf("temporary files left: %v", m)
	}
	got, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Geo.SameGrid(b.Geo) || !got.HasNoData || got.Data[6] != 0.25 || got.Data[5] == got.Data[5] {
		t.Errorf("read back: %+v", got)
	}
}

func TestHostilePNG(t *testing.T) {
	dir := t.TempDir()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewGray(image.Rect(0, 0, 1, 1))); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	// IHDR: length(4) "IHDR" width(4) height(4) ... CRC over type+data.
	binary.BigEndian.PutUint32(b[16:], 100000)
	binary.BigEndian.PutUint32(b[20:], 100000)
	binary.BigEndian.PutUint32(b[29:], crc32.ChecksumIEEE(b[12:29]))
	p := filepath.Join(dir, "huge.png")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(p); err == nil || !strings.Contains(err.Error(), "the PNG claims 100000x100000 pixels but holds only") {
		t.Errorf("Load of a tiny PNG claiming 100000² pixels: %v", err)
	}
	trunc := filepath.Join(dir, "trunc.png")
	if err := os.WriteFile(trunc, b[:20], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(trunc); err == nil || !strings.Contains(err.Error(), "read "+trunc) {
		t.Errorf("Load of a truncated PNG: %v", err)
	}
}
