package openjp2

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"image"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// needGDAL skips a test when gdal_translate is missing, and fails it when
// CANOPY_EXPECT_GDAL=1 says GDAL must be there.
func needGDAL(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("gdal_translate"); err != nil {
		if os.Getenv("CANOPY_EXPECT_GDAL") == "1" {
			t.Fatal("gdal_translate not found but CANOPY_EXPECT_GDAL=1")
		}
		t.Skip("gdal_translate not found (Debian gdal-bin): skipping the GDAL cross-check")
	}
}

func gdal(t *testing.T, args ...string) {
	t.Helper()
	out, err := exec.Command("gdal_translate", append([]string{"-q"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("gdal_translate %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// writeENVI writes samples (uint8 or uint16, little-endian) as an ENVI
// raw file GDAL can read, and returns the .raw path.
func writeENVI(t *testing.T, dir, name string, w, h int, bits int, px []uint16) string {
	t.Helper()
	raw := filepath.Join(dir, name+".raw")
	var buf bytes.Buffer
	typ := 12
	if bits <= 8 {
		typ = 1
		for _, v := range px {
			buf.WriteByte(byte(v))
		}
	} else {
		binary.Write(&buf, binary.LittleEndian, px)
	}
	if err := os.WriteFile(raw, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	hdr := fmt.Sprintf("ENVI\nsamples = %d\nlines = %d\nbands = 1\nheader offset = 0\nfile type = ENVI Standard\ndata type = %d\ninterleave = bsq\nbyte order = 0\n", w, h, typ)
	if err := os.WriteFile(filepath.Join(dir, name+".hdr"), []byte(hdr), 0o644); err != nil {
		t.Fatal(err)
	}
	return raw
}

// readENVI reads what gdal_translate -of ENVI wrote (uint8 or uint16).
func readENVI(t *testing.T, path string, bits int) []uint16 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bits <= 8 {
		v := make([]uint16, len(b))
		for i, x := range b {
			v[i] = uint16(x)
		}
		return v
	}
	v := make([]uint16, len(b)/2)
	binary.Read(bytes.NewReader(b), binary.LittleEndian, v)
	return v
}

// samples are p's uint8 or uint16 samples as uint16.
func samples(p Plane) []uint16 {
	v := make([]uint16, p.Width*p.Height)
	for i := range v {
		if p.Type == U8 {
			v[i] = uint16(p.Data[i])
		} else {
			v[i] = binary.NativeEndian.Uint16(p.Data[2*i:])
		}
	}
	return v
}

// openFile opens the JPEG 2000 file at path for the test, which closes
// it when done.
func openFile(tb testing.TB, path string) (*Decoder, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	tb.Cleanup(func() { f.Close() })
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	return Open(f, st.Size(), path)
}

func firstDiff(a, b []uint16) string {
	if len(a) != len(b) {
		return fmt.Sprintf("lengths %d and %d", len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			return fmt.Sprintf("sample %d: %d vs %d", i, a[i], b[i])
		}
	}
	return ""
}

// makeJP2 writes a w×h image of `bits` bits as a lossless JP2 with GDAL and
// returns its path and the samples.
func makeJP2(t *testing.T, dir string, w, h, bits, block int) (string, []uint16) {
	t.Helper()
	rng := rand.New(rand.NewPCG(uint64(w), uint64(h*bits)))
	px := make([]uint16, w*h)
	for y := range h {
		for x := range w {
			// Smooth field plus noise, like land; a few zeros (nodata).
			v := (x*37+y*11)%(1<<bits-200) + rng.IntN(200)
			if (x+y)%97 == 0 {
				v = 0
			}
			px[y*w+x] = uint16(min(v, 1<<bits-1))
		}
	}
	name := fmt.Sprintf("img_%dx%d_%d_%d", w, h, bits, block)
	raw := writeENVI(t, dir, name, w, h, bits, px)
	jp2 := filepath.Join(dir, name+".jp2")
	args := []string{"-of", "JP2OpenJPEG", "-co", "QUALITY=100", "-co", "REVERSIBLE=YES", "-co", "YCBCR420=NO"}
	if block > 0 {
		args = append(args, "-co", fmt.Sprintf("BLOCKXSIZE=%d", block), "-co", fmt.Sprintf("BLOCKYSIZE=%d", block))
	}
	if bits != 8 && bits != 16 {
		args = append(args, "-co", fmt.Sprintf("NBITS=%d", bits))
	}
	gdal(t, append(args, raw, jp2)...)
	return jp2, px
}

func TestDecodeMatchesGDAL(t *testing.T) {
	needGDAL(t)
	dir := t.TempDir()
	cases := []struct{ w, h, bits, block int }{
		{300, 200, 15, 128}, // tiled, Sentinel-2's 15 bits, edge tiles
		{257, 131, 16, 0},   // one tile
		{190, 170, 8, 64},   // bytes
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%dx%d_%dbit_tile%d", c.w, c.h, c.bits, c.block), func(t *testing.T) {
			path, px := makeJP2(t, dir, c.w, c.h, c.bits, c.block)
			d, err := openFile(t, path)
			if err != nil {
				t.Fatal(err)
			}
			in := d.Info()
			if in.Width != c.w || in.Height != c.h || in.Components != 1 || in.Precision != c.bits || in.Signed || in.Codec != "JP2" {
				t.Fatalf("info %+v", in)
			}
			if c.block > 0 && (in.TileWidth != c.block || in.TilesAcross != (c.w+c.block-1)/c.block) {
				t.Fatalf("tiling %+v, want %d² tiles", in, c.block)
			}
			wantType := U16
			if c.bits == 8 {
				wantType = U8
			}
			for _, threads := range []int{1, 2, 3} {
				p, err := d.Decode(Options{Threads: threads})
				if err != nil {
					t.Fatal(err)
				}
				if p.Type != wantType || p.Width != c.w || p.Height != c.h {
					t.Fatalf("plane %s %dx%d", p.Type, p.Width, p.Height)
				}
				if s := firstDiff(samples(p), px); s != "" {
					t.Fatalf("threads %d: decode differs from the lossless source: %s", threads, s)
				}
			}
			// GDAL's own reading, full, windowed and at reduced levels.
			gd := filepath.Join(dir, "gdal.raw")
			gdal(t, "-of", "ENVI", path, gd)
			p, _ := d.Decode(Options{})
			if s := firstDiff(samples(p), readENVI(t, gd, c.bits)); s != "" {
				t.Fatalf("decode differs from GDAL's: %s", s)
			}
			win := image.Rect(c.w/5, c.h/3, c.w-7, c.h-2)
			gdal(t, "-of", "ENVI", "-srcwin", fmt.Sprint(win.Min.X), fmt.Sprint(win.Min.Y), fmt.Sprint(win.Dx()), fmt.Sprint(win.Dy()), path, gd)
			for _, threads := range []int{1, 2} {
				p, err = d.Decode(Options{Window: win, Threads: threads})
				if err != nil {
					t.Fatal(err)
				}
				if p.Width != win.Dx() || p.Height != win.Dy() {
					t.Fatalf("window plane %dx%d, want %dx%d", p.Width, p.Height, win.Dx(), win.Dy())
				}
				if s := firstDiff(samples(p), readENVI(t, gd, c.bits)); s != "" {
					t.Fatalf("window, threads %d: differs from GDAL's: %s", threads, s)
				}
			}
			// GDAL 3.6 crashes reading overviews of a single-tile JP2; the
			// tiled cases cover both decoding paths at reduced levels
			// (threads 1 decodes areas, threads 2 tiles).
			for r := 1; r < min(in.Levels, 3) && in.Tiles() > 1; r++ {
				gdal(t, "-of", "ENVI", "-ovr", fmt.Sprint(r-1), path, gd)
				for _, threads := range []int{1, 2} {
					p, err = d.Decode(Options{Reduce: r, Threads: threads})
					if err != nil {
						t.Fatal(err)
					}
					if w, h := d.OutputSize(image.Rectangle{}, r); p.Width != w || p.Height != h || w != (c.w+(1<<r)-1)>>r {
						t.Fatalf("reduce %d: plane %dx%d, OutputSize %dx%d", r, p.Width, p.Height, w, h)
					}
					if s := firstDiff(samples(p), readENVI(t, gd, c.bits)); s != "" {
						t.Fatalf("reduce %d, threads %d: differs from GDAL's overview: %s", r, threads, s)
					}
				}
			}
		})
	}
}

func TestDecodeFromMemoryAndJ2K(t *testing.T) {
	needGDAL(t)
	dir := t.TempDir()
	path, px := makeJP2(t, dir, 100, 90, 12, 32)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d, err := Open(bytes.NewReader(b), int64(len(b)), "mem.jp2")
	if err != nil {
		t.Fatal(err)
	}
	p, err := d.Decode(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s := firstDiff(samples(p), px); s != "" {
		t.Fatal(s)
	}
	// The raw codestream inside the JP2 (the jp2c box) decodes the same.
	i := bytes.Index(b, []byte("jp2c"))
	if i < 4 {
		t.Fatal("no jp2c box")
	}
	cs := b[i+4:]
	d, err = Open(bytes.NewReader(cs), int64(len(cs)), "mem.j2k")
	if err != nil {
		t.Fatal(err)
	}
	if d.Info().Codec != "J2K" {
		t.Fatalf("codec %q", d.Info().Codec)
	}
	p, err = d.Decode(Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	if s := firstDiff(samples(p), px); s != "" {
		t.Fatal(s)
	}
}

func TestRefusals(t *testing.T) {
	needGDAL(t)
	dir := t.TempDir()
	path, _ := makeJP2(t, dir, 300, 200, 15, 128)
	d, err := openFile(t, path)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		opt  Options
		want string
	}{
		{Options{MaxPixels: 300*200 - 1}, "exceeds the budget"},
		{Options{Reduce: d.Info().Levels}, "resolution level"},
		{Options{Reduce: -1}, "resolution level"},
		{Options{Component: 1}, "component 1"},
		{Options{Window: image.Rect(250, 0, 301, 10)}, "outside"},
	} {
		_, err := d.Decode(c.opt)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: error %v, want one line with %q", c.opt, err, c.want)
		}
	}
	if _, err := d.Decode(Options{MaxPixels: 300 * 200}); err != nil {
		t.Errorf("a decode at the budget is refused: %v", err)
	}
	for _, b := range [][]byte{nil, []byte("II*\x00hello"), []byte("\x00\x00\x00\x0cjP  \r\n\x87\n")} {
		_, err := Open(bytes.NewReader(b), int64(len(b)), "bad.jp2")
		if err == nil || !strings.HasPrefix(err.Error(), "jpeg2000 bad.jp2: ") {
			t.Errorf("%q: error %v", b, err)
		}
	}
}

// A truncated file is an error; a garbled one is an error or a plane of
// the right size, never a crash or a hang.
func TestCorrupt(t *testing.T) {
	needGDAL(t)
	dir := t.TempDir()
	path, _ := makeJP2(t, dir, 300, 200, 15, 128)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	decode := func(data []byte, threads int) error {
		d, err := Open(bytes.NewReader(data), int64(len(data)), "bad.jp2")
		if err != nil {
			return err
		}
		p, err := d.Decode(Options{Threads: threads})
		if err == nil && (p.Width != 300 || p.Height != 200) {
			t.Fatalf("garbled file gave a %dx%d plane", p.Width, p.Height)
		}
		return err
	}
	for _, frac := range []float64{0.02, 0.1, 0.3, 0.5, 0.8, 0.95, 0.999} {
		n := int(float64(len(b)) * frac)
		for _, threads := range []int{1, 2} {
			err := decode(b[:n], threads)
			if err == nil {
				t.Errorf("truncated to %d of %d bytes (threads %d): no error", n, len(b), threads)
			} else if strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), "jpeg2000 bad.jp2: ") {
				t.Errorf("truncated: error is not one line naming the file: %q", err)
			}
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	errs := 0
	for i := range 60 {
		g := bytes.Clone(b)
		for range 1 + i%8 {
			g[rng.IntN(len(g))] = byte(rng.Uint32())
		}
		if err := decode(g, 1+i%2); err != nil {
			errs++
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("garbled: error spans lines: %q", err)
			}
		}
	}
	t.Logf("%d of 60 garbled files were refused, the others decoded to noise", errs)
	// Garbage in the main header is always caught.
	h := bytes.Clone(b)
	i := bytes.Index(h, []byte{0xff, 0x51})
	copy(h[i+4:], bytes.Repeat([]byte{0xff}, 16))
	if err := decode(h, 2); err == nil {
		t.Error("a garbled SIZ marker decoded")
	}
}
