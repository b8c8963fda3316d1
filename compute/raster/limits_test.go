package raster

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pngChunk appends one PNG chunk (length, type, data, CRC).
func pngChunk(b []byte, typ string, data []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(data)))
	start := len(b)
	b = append(append(b, typ...), data...)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b[start:]))
}

// grayPNG is a w×h PNG header (8-bit gray when depth is 8, else 16),
// followed by a padding chunk of pad bytes and idat bytes of a zlib
// stream of zeros, then IEND.
func grayPNG(w, h, depth, pad, idat int) []byte {
	b := []byte("\x89PNG\r\n\x1a\n")
	ihdr := binary.BigEndian.AppendUint32(nil, uint32(w))
	ihdr = binary.BigEndian.AppendUint32(ihdr, uint32(h))
	ihdr = append(ihdr, byte(depth), 0, 0, 0, 0)
	b = pngChunk(b, "IHDR", ihdr)
	if pad > 0 {
		b = pngChunk(b, "tEXt", append([]byte("Comment\x00"), bytes.Repeat([]byte{' '}, pad)...))
	}
	var z bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&z, zlib.NoCompression)
	zw.Write(make([]byte, idat))
	zw.Close()
	b = pngChunk(b, "IDAT", z.Bytes())
	return pngChunk(b, "IEND", nil)
}

func TestPNGLimits(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// Padded: the file is large enough for 16000² pixels, its image data
	// is not.
	padded := write("padded.png", grayPNG(16000, 16000, 8, 400<<10, 100))
	if _, err := Load(padded); err == nil || !strings.Contains(err.Error(), "the PNG claims 16000x16000 pixels but holds only") {
		t.Errorf("padded PNG: %v", err)
	}
	// Enough image data for the size, but decoding would take 1.3 GB.
	big := write("big.png", grayPNG(16000, 16000, 8, 0, 240<<10))
	_, err := Load(big)
	if err == nil || !strings.Contains(err.Error(), "the PNG is 16000x16000 pixels; decoding it would take 1.2 GiB of memory, more than the 1.0 GiB") {
		t.Errorf("16000² PNG: %v", err)
	}
	if _, err := Count(big); err == nil {
		t.Error("Count of the 16000² PNG: no error")
	}
	// A small real one loads, and its estimate is its decoded size.
	small := write("small.png", grayPNG(300, 200, 16, 1000, 200*(1+600)))
	if _, err := Load(small); err != nil {
		t.Fatal(err)
	}
	if n, err := Estimate(small); err != nil || n.Memory != 300*200*6 || n.Large() {
		t.Errorf("estimate of a 300x200 16-bit PNG: %+v %v", n, err)
	}
}

func TestEstimate(t *testing.T) {
	dir := t.TempDir()
	multi := filepath.Join(dir, "multi.tif")
	multiband(t, multi, 500, 400, geo(399960))
	n, err := EstimatePair(multi+":3", multi+":4")
	if err != nil {
		t.Fatal(err)
	}
	planes := int64(2 * 500 * 400 * 4)
	if n.Width != 500 || n.Height != 400 || n.Memory < planes || n.Memory > planes+64<<20 || n.Large() {
		t.Errorf("estimate %+v, want 2 planes of 500x400 plus the decoders' buffers", n)
	}
	if got := n.WithPlanes(1).Memory - n.Memory; got != 500*400*4 {
		t.Errorf("WithPlanes(1) adds %d", got)
	}
	big := Need{Width: 40000, Height: 40000, Memory: 3 * 40000 * 40000 * 4}
	if !big.Large() || big.String() != "the bands are 40000x40000 pixels: this needs about 18 GiB of memory" {
		t.Errorf("%v %q", big.Large(), big.String())
	}
	if _, err := Estimate(filepath.Join(dir, "none.tif")); err == nil {
		t.Error("estimate of a missing file")
	}
}

func TestLoadPairRefusesOtherCRS(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.tif"), filepath.Join(dir, "b.tif")
	multiband(t, a, 20, 10, geo(399960))
	g := geo(399960)
	g.GeoKeyDirectory = []uint16{1, 1, 0, 1, 3072, 0, 1, 32634}
	multiband(t, b, 20, 10, g)
	_, _, err := LoadPair(a+":1", b+":2")
	if err == nil || !strings.Contains(err.Error(), "are in different coordinate reference systems (EPSG:32633 and EPSG:32634)") {
		t.Errorf("two CRSs, the same numbers: %v", err)
	}
	// A PixelIsPoint twin of a, placed by its pixel centres, pairs with a.
	p := geo(399965)
	p.Tiepoints[4] -= 5
	p.GeoKeyDirectory = []uint16{1, 1, 0, 2, 1025, 0, 1, 2, 3072, 0, 1, 32633}
	c := filepath.Join(dir, "c.tif")
	multiband(t, c, 20, 10, p)
	if _, _, err := LoadPair(a+":1", c+":2"); err != nil {
		t.Errorf("PixelIsPoint twin: %v", err)
	}
}
