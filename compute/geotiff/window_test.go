package geotiff

import (
	"canopy/compute/internal/cputime"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"canopy/compute"
)

// windowsMatch reads every band of f in windows of the given heights at
// the stored type and checks each sample against want (what GDAL or
// ReadBands reads, as float64): exactly for the types the engine has, and
// rounded to float32 for the others, which arrive as float32.
func windowsMatch(t *testing.T, f *File, want [][]float64, heights ...int) {
	t.Helper()
	windowsMatchCols(t, f, want, false, heights...)
}

// windowsAndColumnsMatch is windowsMatch with, for every window of rows,
// windows of columns too (columnWindowsMatch).
func windowsAndColumnsMatch(t *testing.T, f *File, want [][]float64, heights ...int) {
	t.Helper()
	windowsMatchCols(t, f, want, true, heights...)
}

func windowsMatchCols(t *testing.T, f *File, want [][]float64, cols bool, heights ...int) {
	t.Helper()
	typ, exact := f.DataType()
	bands := make([]int, f.Bands())
	for i := range bands {
		bands[i] = i + 1
	}
	for _, wh := range heights {
		for y0 := 0; y0 < f.Height(); y0 += wh {
			y1 := min(y0+wh, f.Height())
			dst := make([]compute.Plane, len(bands))
			for i := range dst {
				dst[i] = compute.NewPlane(typ, f.Width(), y1-y0)
				for k := range dst[i].Data {
					dst[i].Data[k] = 0xa5 // garbage every sample must overwrite
				}
			}
			if err := f.ReadRowsBandsInto(y0, y1, bands, dst); err != nil {
				t.Fatalf("rows %d-%d: %v", y0, y1, err)
			}
			for b := range bands {
				for i := range dst[b].Pixels() {
					g, e := dst[b].At(i), want[b][y0*f.Width()+i]
					if !exact {
						e = float64(float32(e))
					}
					if g != e && !(math.IsNaN(g) && math.IsNaN(e)) {
						t.Fatalf("%s windows of %d rows, band %d pixel (%d,%d): got %v, want %v", typ, wh, b+1, i%f.Width(), y0+i/f.Width(), g, e)
					}
				}
			}
			if cols {
				columnWindowsMatch(t, f, want, bands, y0, y1)
			}
		}
	}
}

// columnWindowsMatch reads rows [y0, y1) of f in windows of columns
// (ReadWindowBandsInto): one inside the image, one column, the right edge
// and odd widths across strip or tile edges, and checks them against want.
func columnWindowsMatch(t *testing.T, f *File, want [][]float64, bands []int, y0, y1 int) {
	t.Helper()
	typ, exact := f.DataType()
	w := f.Width()
	xs := [][2]int{{w / 3, w/3 + 1}, {max(0, w-5), w}, {min(1, w-1), max(w-1, 1)}, {w / 2, min(w, w/2+17)}}
	for _, x := range xs {
		x0, x1 := x[0], x[1]
		if x0 >= x1 {
			continue
		}
		dst := make([]compute.Plane, len(bands))
		for i := range dst {
			dst[i] = compute.NewPlane(typ, x1-x0, y1-y0)
			for k := range dst[i].Data {
				dst[i].Data[k] = 0x5a
			}
		}
		if err := f.ReadWindowBandsInto(x0, y0, x1, y1, bands, dst); err != nil {
			t.Fatalf("columns %d-%d rows %d-%d: %v", x0, x1, y0, y1, err)
		}
		for b := range bands {
			for i := range dst[b].Pixels() {
				col, row := x0+i%(x1-x0), y0+i/(x1-x0)
				g, e := dst[b].At(i), want[b][row*w+col]
				if !exact {
					e = float64(float32(e))
				}
				if g != e && !(math.IsNaN(g) && math.IsNaN(e)) {
					t.Fatalf("%s window of columns %d-%d, band %d pixel (%d,%d): got %v, want %v", typ, x0, x1, b+1, col, row, g, e)
				}
			}
		}
	}
}

func TestDataTypes(t *testing.T) {
	for typ, want := range map[SampleType]compute.DataType{Uint8: compute.U8, Uint16: compute.U16, Int16: compute.I16, Uint32: compute.U32,
		Int32: compute.I32, Float32: compute.F32, Int8: compute.F32, Uint64: compute.F32, Int64: compute.F32, Float64: compute.F32} {
		f := &File{typ: typ}
		got, exact := f.DataType()
		if got != want || exact != (typ != Int8 && typ != Uint64 && typ != Int64 && typ != Float64) {
			t.Errorf("%s: %s %v", typ, got, exact)
		}
	}
}

func TestWindowsEveryType(t *testing.T) {
	dir := t.TempDir()
	check := func(t *testing.T, path string, bands [][]float64) {
		f, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		windowsAndColumnsMatch(t, f, bands, f.BlockRows(), 7, 1, f.Height())
	}
	for _, opt := range []WriteOptions{{TileSize: 16}, {TileSize: 32, Compression: ZSTD}, {TileSize: 16, Compression: NoCompression}} {
		name := filepath.Join(dir, opt.Compression.String()+".tif")
		t.Run("int8/"+opt.Compression.String(), func(t *testing.T) {
			b := synth[int8](45, 37, 2, 1)
			if err := WriteBands(name, 45, 37, b, nil, opt); err != nil {
				t.Fatal(err)
			}
			check(t, name, asFloat(b))
		})
		t.Run("uint16/"+opt.Compression.String(), func(t *testing.T) {
			b := synth[uint16](45, 37, 3, 2)
			if err := WriteBands(name, 45, 37, b, nil, opt); err != nil {
				t.Fatal(err)
			}
			check(t, name, asFloat(b))
		})
		t.Run("int32/"+opt.Compression.String(), func(t *testing.T) {
			b := synth[int32](45, 37, 1, 3)
			if err := WriteBands(name, 45, 37, b, nil, opt); err != nil {
				t.Fatal(err)
			}
			check(t, name, asFloat(b))
		})
		t.Run("float64/"+opt.Compression.String(), func(t *testing.T) {
			b := synth[float64](45, 37, 2, 4)
			if err := WriteBands(name, 45, 37, b, nil, opt); err != nil {
				t.Fatal(err)
			}
			check(t, name, asFloat(b))
		})
	}
}

func asFloat[T Sample](b [][]T) [][]float64 {
	out := make([][]float64, len(b))
	for i := range b {
		out[i] = make([]float64, len(b[i]))
		for k, v := range b[i] {
			out[i][k] = float64(v)
		}
	}
	return out
}

func TestWindowErrors(t *testing.T) {
	f, err := openBytes(validTiles().bytes())
	if err != nil {
		t.Fatal(err)
	}
	p := compute.NewPlane(compute.U16, 20, 4)
	big := make([]byte, 162)
	a := compute.Plane{Type: compute.U16, Width: 20, Height: 4, Data: big[:160]}
	b := compute.Plane{Type: compute.U16, Width: 20, Height: 4, Data: big[2:162]}
	for _, c := range []struct {
		y0, y1 int
		bands  []int
		dst    []compute.Plane
		want   string
	}{
		{-1, 3, []int{1}, []compute.Plane{compute.NewPlane(compute.U16, 20, 4)}, "rows -1 to 3 are not a window of an image 20 rows high"},
		{18, 22, []int{1}, []compute.Plane{p}, "rows 18 to 22 are not a window"},
		{4, 4, []int{1}, []compute.Plane{p}, "rows 4 to 4 are not a window"},
		{0, 4, []int{2}, []compute.Plane{p}, "band 2 does not exist (the file has 1 band)"},
		{0, 4, []int{1}, nil, "0 destination planes for 1 bands"},
		{0, 4, []int{1}, []compute.Plane{compute.NewPlane(compute.F32, 20, 4)}, "destination for band 1 is a 20x4 float32 plane of 320 bytes, the window needs 20x4 uint16"},
		{0, 3, []int{1}, []compute.Plane{p}, "the window needs 20x3 uint16"},
		{0, 4, []int{1, 1}, []compute.Plane{a, b}, "overlap"},
	} {
		err := f.ReadRowsBandsInto(c.y0, c.y1, c.bands, c.dst)
		if err == nil || !strings.HasPrefix(err.Error(), "read x.tif: ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("rows %d-%d bands %v: %v, want %q", c.y0, c.y1, c.bands, err, c.want)
		}
	}
	// The same plane for a band listed twice is allowed.
	if err := f.ReadRowsBandsInto(0, 4, []int{1, 1}, []compute.Plane{p, p}); err != nil {
		t.Error(err)
	}
}

func TestWindowsOfSharedTiles(t *testing.T) {
	// Tiles sharing one blob inside a window are decoded once; every
	// window reads right.
	blob := tilePattern(0)
	blobOf := make([]int, 16)
	f, c := openCounting(t, sharedTiles(1000, 1000, [][]byte{blob}, blobOf))
	want := make([]float64, 1000*1000)
	for y := range 1000 {
		for x := range 1000 {
			want[y*1000+x] = float64(uint16(x%256 + 7*(y%256)))
		}
	}
	windowsMatch(t, f, [][]float64{want}, 256)
	if got := c.n.Load(); got != 4*int64(len(blob)) {
		t.Errorf("read %d bytes for 4 windows of 4 tiles sharing one %d-byte blob, want the blob once a window", got, len(blob))
	}
}

func TestWindowsRefuseRedecodingSharedData(t *testing.T) {
	// One 16384-pixel-wide uint8 tile 256 rows high shared by every row of
	// tiles of an image 1 pixel wide: the whole image decodes it once,
	// but every window of rows would decode all of it again, 16384 times
	// the samples it delivers. The cumulative bound stops that.
	raw := make([]byte, 16384*256)
	z := deflate(raw)
	ft := &fakeTIFF{entries: map[uint16]wentry{}, data: z}
	const h = 256 * 4096
	offs, counts := make([]uint64, h/256), make([]uint64, h/256)
	for i := range offs {
		offs[i], counts[i] = ft.dataOff(), uint64(len(z))
	}
	ft.set(tagImageWidth, typeLong, 1)
	ft.set(tagImageLength, typeLong, h)
	ft.set(tagBitsPerSample, typeShort, 8)
	ft.set(tagCompression, typeShort, compAdobeDflt)
	ft.set(tagPhotometric, typeShort, 1)
	ft.set(tagTileWidth, typeShort, 16384)
	ft.set(tagTileLength, typeShort, 256)
	ft.set(tagTileOffsets, typeLong, offs...)
	ft.set(tagTileByteCounts, typeLong, counts...)
	f, err := openBytes(ft.bytes())
	if err != nil {
		t.Fatal(err)
	}
	p := compute.NewPlane(compute.U8, 1, 256)
	start := cputime.Now()
	for y := 0; y < h; y += 256 {
		if err = f.ReadRowsInto(1, y, y+256, p); err != nil {
			break
		}
	}
	if err == nil || !strings.Contains(err.Error(), "every window would decode again") {
		t.Fatalf("re-decoding a shared tile for every window: %v", err)
	}
	if d := cputime.Since(start); d > 20*time.Second {
		t.Errorf("took %v of CPU time to refuse", d)
	}
}

func TestWindowTimeBudget(t *testing.T) {
	defer func(b time.Duration) { timeBase = b }(timeBase)
	timeBase = -time.Hour
	f, err := openBytes(validTiles().bytes())
	if err != nil {
		t.Fatal(err)
	}
	err = f.ReadRowsInto(1, 0, 16, compute.NewPlane(compute.U16, 20, 16))
	if err == nil || !strings.Contains(err.Error(), "decoding took longer than") {
		t.Fatalf("past the time budget: %v", err)
	}
}
