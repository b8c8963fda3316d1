package geotiff

import (
	"bytes"
	"encoding/binary"
	"math"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// countingReader counts the bytes read through it, so that a test can
// tell how often the same bytes of a file were decoded.
type countingReader struct {
	r *bytes.Reader
	n atomic.Int64
}

func (c *countingReader) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.n.Add(int64(n))
	return n, err
}

func openCounting(t *testing.T, b []byte) (*File, *countingReader) {
	t.Helper()
	c := &countingReader{r: bytes.NewReader(b)}
	f, err := NewReader(c, int64(len(b)), "x.tif")
	if err != nil {
		t.Fatal(err)
	}
	c.n.Store(0)
	return f, c
}

// tilePattern is a 256² uint16 tile whose pixel (x, y) is k*10000 + x + 7y
// (mod 65536), DEFLATE-compressed.
func tilePattern(k int) []byte {
	raw := make([]byte, 256*256*2)
	for y := range 256 {
		for x := range 256 {
			binary.LittleEndian.PutUint16(raw[2*(y*256+x):], uint16(k*10000+x+7*y))
		}
	}
	return deflate(raw)
}

// sharedTiles builds a w×h uint16 image of 256² DEFLATE tiles where tile
// c holds the bytes of blob blobOf[c] (several tiles may share a blob).
func sharedTiles(w, h int, blobs [][]byte, blobOf []int) []byte {
	ft := &fakeTIFF{entries: map[uint16]wentry{}}
	var at []uint64
	for _, b := range blobs {
		at = append(at, ft.dataOff()+uint64(len(ft.data)))
		ft.data = append(ft.data, b...)
	}
	var offs, counts []uint64
	for _, k := range blobOf {
		offs = append(offs, at[k])
		counts = append(counts, uint64(len(blobs[k])))
	}
	ft.set(tagImageWidth, typeLong, uint64(w))
	ft.set(tagImageLength, typeLong, uint64(h))
	ft.set(tagBitsPerSample, typeShort, 16)
	ft.set(tagCompression, typeShort, compAdobeDflt)
	ft.set(tagPhotometric, typeShort, 1)
	ft.set(tagTileWidth, typeShort, 256)
	ft.set(tagTileLength, typeShort, 256)
	ft.set(tagTileOffsets, typeLong, offs...)
	ft.set(tagTileByteCounts, typeLong, counts...)
	return ft.bytes()
}

// checkTiles checks every pixel against the pattern of its tile's blob.
func checkTiles(t *testing.T, f *File, blobOf []int) {
	t.Helper()
	b, err := f.ReadBand(1)
	if err != nil {
		t.Fatal(err)
	}
	across := (f.Width() + 255) / 256
	for y := range f.Height() {
		for x := range f.Width() {
			k := blobOf[(y/256)*across+x/256]
			if want := float32(uint16(k*10000 + x%256 + 7*(y%256))); b.Data[y*f.Width()+x] != want {
				t.Fatalf("pixel (%d, %d) = %v, want %v", x, y, b.Data[y*f.Width()+x], want)
			}
		}
	}
}

func TestSharedTilesDecodedOnce(t *testing.T) {
	blob := tilePattern(0)
	blobOf := make([]int, 16)
	f, c := openCounting(t, sharedTiles(1000, 1000, [][]byte{blob}, blobOf))
	checkTiles(t, f, blobOf)
	// 16 tiles, one blob: the blob is read (and decoded) once.
	if got := c.n.Load(); got != int64(len(blob)) {
		t.Errorf("read %d bytes for 16 tiles sharing one %d-byte blob, want the blob once", got, len(blob))
	}

	// Only the right and the bottom edge tiles share a blob: neither
	// covers the other, so that blob is decoded twice, the others once.
	blobs := [][]byte{tilePattern(0), tilePattern(1), tilePattern(2)}
	blobOf = []int{0, 1, 1, 2}
	f, c = openCounting(t, sharedTiles(300, 300, blobs, blobOf))
	checkTiles(t, f, blobOf)
	if got, want := c.n.Load(), int64(len(blobs[0])+2*len(blobs[1])+len(blobs[2])); got != want {
		t.Errorf("read %d bytes, want %d", got, want)
	}
	// The same image with every tile's bytes stored apart reads the same.
	f2, err := openBytes(sharedTiles(300, 300, [][]byte{blobs[0], blobs[1], blobs[1], blobs[2]}, []int{0, 1, 2, 3}))
	if err != nil {
		t.Fatal(err)
	}
	checkTiles(t, f2, blobOf)
}

func TestSharedTilesBomb(t *testing.T) {
	// 80000² pixels from one shared tile: the file holds a few hundred
	// distinct bytes, so it is refused before anything is allocated.
	blobOf := make([]int, 313*313)
	_, err := openBytes(sharedTiles(80000, 80000, [][]byte{deflate(make([]byte, 256*256*2))}, blobOf))
	if err == nil || !strings.Contains(err.Error(), "decompression bomb") || !strings.Contains(err.Error(), "80000x80000") {
		t.Fatalf("shared-tile bomb: %v", err)
	}
}

func TestOverlappingChunksRefused(t *testing.T) {
	// A 1-pixel-wide float32 image 200000 rows high in 4096×16 tiles
	// whose byte ranges all start one byte apart within the same 2000
	// bytes: each tile is a distinct stream, but the file has no more
	// than 14000 distinct bytes for 3.3 GB of decoding.
	ft := &fakeTIFF{entries: map[uint16]wentry{}, data: make([]byte, 14000)}
	n := 200000 / 16
	offs, counts := make([]uint64, n), make([]uint64, n)
	for i := range offs {
		offs[i], counts[i] = ft.dataOff()+uint64(i%12000), 2000
	}
	ft.set(tagImageWidth, typeLong, 1)
	ft.set(tagImageLength, typeLong, 200000)
	ft.set(tagBitsPerSample, typeShort, 32)
	ft.set(tagSampleFormat, typeShort, 3)
	ft.set(tagCompression, typeShort, compAdobeDflt)
	ft.set(tagTileWidth, typeShort, 4096)
	ft.set(tagTileLength, typeShort, 16)
	ft.set(tagTileOffsets, typeLong, offs...)
	ft.set(tagTileByteCounts, typeLong, counts...)
	_, err := openBytes(ft.bytes())
	if err == nil || !strings.Contains(err.Error(), "tiles overlap") {
		t.Fatalf("overlapping tiles: %v", err)
	}
	// The same tiles with bytes of their own: no overlap, but 3.3 GB of
	// decoding for an 800 KB image is still refused.
	ft.data = make([]byte, 2000*n)
	for i := range offs {
		offs[i] = ft.dataOff() + uint64(2000*i)
	}
	ft.set(tagTileOffsets, typeLong, offs...)
	_, err = openBytes(ft.bytes())
	if err == nil || !strings.Contains(err.Error(), "would decode") || !strings.Contains(err.Error(), "1x200000") {
		t.Fatalf("tiles far wider than the image: %v", err)
	}
}

func TestHugeTileOverTinyImage(t *testing.T) {
	// A 1×1 image in one 16384² uint16 tile: only the first row is
	// decoded, so reading costs a row, not a 512 MiB tile per worker.
	row := make([]byte, 16384*2)
	binary.LittleEndian.PutUint16(row, 4242)
	z := deflate(row)
	ft := &fakeTIFF{entries: map[uint16]wentry{}, data: z}
	ft.set(tagImageWidth, typeShort, 1)
	ft.set(tagImageLength, typeShort, 1)
	ft.set(tagBitsPerSample, typeShort, 16)
	ft.set(tagCompression, typeShort, compAdobeDflt)
	ft.set(tagTileWidth, typeShort, 16384)
	ft.set(tagTileLength, typeShort, 16384)
	ft.set(tagTileOffsets, typeLong, ft.dataOff())
	ft.set(tagTileByteCounts, typeLong, uint64(len(z)))
	f, err := openBytes(ft.bytes())
	if err != nil {
		t.Fatal(err)
	}
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	b, err := f.ReadBand(1)
	runtime.ReadMemStats(&m1)
	if err != nil || b.Data[0] != 4242 {
		t.Fatalf("read: %v %v", b, err)
	}
	if alloc := m1.TotalAlloc - m0.TotalAlloc; alloc > 4<<20 {
		t.Errorf("reading a 1x1 image from a 16384² tile allocated %d bytes", alloc)
	}
}

func TestTimeBudget(t *testing.T) {
	defer func(b time.Duration) { timeBase = b }(timeBase)
	f, err := openBytes(validTiles().bytes())
	if err != nil {
		t.Fatal(err)
	}
	// 10 s, stretched by the race detector's slowdown in race builds.
	if d := f.TimeBudget(); d != 10*time.Second*slowdown {
		t.Errorf("budget for a tiny image: %v, want %v", d, 10*time.Second*slowdown)
	}
	timeBase = -time.Hour
	_, err = f.ReadBand(1)
	if err == nil || !strings.Contains(err.Error(), "decoding took longer than") || !strings.HasPrefix(err.Error(), "read x.tif: ") {
		t.Fatalf("past the time budget: %v", err)
	}
}

func TestErrorLinesCapped(t *testing.T) {
	ft := validStrip(false)
	ft.ascii(tagGDALNoData, strings.Repeat("1", 1<<20-10)+"x")
	_, err := openBytes(ft.bytes())
	if err == nil || len(err.Error()) > 200 || !strings.Contains(err.Error(), `GDAL_NODATA "11111`) || !strings.Contains(err.Error(), "(1048567 bytes) is not a number") {
		t.Errorf("1 MB GDAL_NODATA: %.300q", err)
	}
	ft.ascii(tagGDALNoData, strings.Repeat(" ", 2<<20))
	if _, err = openBytes(ft.bytes()); err == nil || !strings.Contains(err.Error(), "GDAL_NODATA is 2097153 bytes long") {
		t.Errorf("2 MB GDAL_NODATA: %.300q", err)
	}
	ft = validStrip(false)
	ft.ascii(tagGeoASCIIParams, strings.Repeat("WGS 84|", 200000))
	if _, err = openBytes(ft.bytes()); err == nil || !strings.Contains(err.Error(), "GeoAsciiParams is 1400001 bytes long") {
		t.Errorf("1.4 MB GeoAsciiParams: %.300q", err)
	}
	// A huge number is a number (GDAL reads it as infinity).
	ft = validStrip(false)
	ft.ascii(tagGDALNoData, "1e999")
	if f, err := openBytes(ft.bytes()); err != nil {
		t.Error(err)
	} else if v, ok := f.NoData(); !ok || !math.IsInf(v, 1) {
		t.Errorf("nodata 1e999: %v %v", v, ok)
	}
	// Any message is one line of at most maxErrorLine bytes after the name.
	if m := (capped{errString(strings.Repeat("é", 1000))}).Error(); len(m) > maxErrorLine+3 || !strings.HasSuffix(m, "é…") {
		t.Errorf("capped: %d bytes, ends %q", len(m), m[len(m)-8:])
	}
}

type errString string

func (e errString) Error() string { return string(e) }

func TestNonFiniteGeoreferencing(t *testing.T) {
	for _, c := range []struct {
		tag  uint16
		vals []float64
		want string
	}{
		{tagModelPixelScale, []float64{math.NaN(), 10, 0}, "ModelPixelScale value 1 is NaN"},
		{tagModelPixelScale, []float64{10, 0, 0}, "the pixel size is 10 x 0"},
		{tagModelTiepoint, []float64{0, 0, 0, math.Inf(1), 0, 0}, "ModelTiepoint value 4 is +Inf"},
	} {
		ft := validStrip(false)
		put := func(tag uint16, v []float64) {
			b := make([]byte, 8*len(v))
			for i, x := range v {
				binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
			}
			ft.entries[tag] = wentry{tag, typeDouble, uint64(len(v)), b}
		}
		put(tagModelPixelScale, []float64{10, 10, 0})
		put(tagModelTiepoint, []float64{0, 0, 0, 500000, 4000000, 0})
		put(c.tag, c.vals)
		_, err := openBytes(ft.bytes())
		if err == nil || !strings.Contains(err.Error(), "the georeferencing is not usable: "+c.want) {
			t.Errorf("%s: %v", c.want, err)
		}
	}
}
