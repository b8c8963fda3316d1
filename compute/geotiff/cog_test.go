package geotiff

import (
	"bytes"
	"encoding/binary"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"canopy/compute"
)

// cogBands is a w×h scene of n float32 bands: smooth values, a NaN
// rectangle, scattered NaN, and NaN with other payloads (which the writer
// must write as one NaN).
func cogBands(w, h, n int) [][]float32 {
	g := rand.New(rand.NewPCG(3, uint64(w)))
	out := make([][]float32, n)
	for b := range out {
		out[b] = make([]float32, w*h)
		for y := range h {
			for x := range w {
				v := float32(math.Sin(float64(x)/37+float64(b))*0.6 + float64(y)/float64(h)*0.3)
				switch {
				case x > w/3 && x < w/2 && y > h/4 && y < h/3:
					v = float32(math.NaN())
				case g.IntN(50) == 0:
					v = math.Float32frombits(0xffc00000 | uint32(g.IntN(1000)))
				}
				out[b][y*w+x] = v
			}
		}
	}
	return out
}

// nanMean2 is the reference overview: the mean of the valid pixels of
// every 2×2 (fewer on an odd edge) in float64, NaN where none is valid.
func nanMean2(src []float32, w, h int) ([]float32, int, int) {
	ow, oh := (w+1)/2, (h+1)/2
	out := make([]float32, ow*oh)
	for y := range oh {
		for x := range ow {
			var s float64
			n := 0
			for _, p := range [][2]int{{2 * x, 2 * y}, {2*x + 1, 2 * y}, {2 * x, 2*y + 1}, {2*x + 1, 2*y + 1}} {
				if p[0] < w && p[1] < h {
					if v := src[p[1]*w+p[0]]; !math.IsNaN(float64(v)) {
						s += float64(v)
						n++
					}
				}
			}
			out[y*ow+x] = float32(math.NaN())
			if n > 0 {
				out[y*ow+x] = float32(s / float64(n))
			}
		}
	}
	return out, ow, oh
}

// noFd hides a file's descriptor, so that Close moves the data itself.
type noFd struct{ f *os.File }

func (n noFd) WriteAt(p []byte, off int64) (int, error) { return n.f.WriteAt(p, off) }
func (n noFd) ReadAt(p []byte, off int64) (int, error)  { return n.f.ReadAt(p, off) }

func writeCOGFile(t *testing.T, path string, w, h int, bands [][]float32, opt COGOptions, hideFd bool, step int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out io.WriterAt = f
	if hideFd {
		out = noFd{f}
	}
	c, err := NewCOG(out, w, h, len(bands), utmGeo(), opt)
	if err != nil {
		t.Fatal(err)
	}
	for y := 0; y < h; y += step {
		n := min(step, h-y)
		rows := make([][]float32, len(bands))
		for b := range bands {
			rows[b] = bands[b][y*w : (y+n)*w]
		}
		if err := c.WriteRows(y, n, rows); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	switch {
	case reserveRoom && c.moveBytes != 0:
		t.Errorf("the room reserved before the full resolution was too small: %d bytes moved", c.moveBytes)
	case !reserveRoom && hideFd && c.moveBytes == 0:
		t.Error("without a descriptor the data was not moved")
	}
}

func TestCOGReadsBackAndLaysOutTheSameWayEveryWay(t *testing.T) {
	dir := t.TempDir()
	const w, h = 1100, 613
	bands := cogBands(w, h, 2)
	opt := COGOptions{Descriptions: []string{"ndvi", "evi"}}
	a := filepath.Join(dir, "a.tif")
	writeCOGFile(t, a, w, h, bands, opt, false, 7)
	// Other row steps, and moving the data instead of fallocate: the very
	// same bytes (with room reserved before the full resolution, nothing
	// moves either way). Without the room, a gap is opened (fallocate) or
	// the data moved, and the file holds the same images.
	for _, c := range []struct {
		hide bool
		step int
	}{{true, 613}, {false, 512}, {true, 100}} {
		b := filepath.Join(dir, "b.tif")
		writeCOGFile(t, b, w, h, bands, opt, c.hide, c.step)
		ab, _ := os.ReadFile(a)
		bb, _ := os.ReadFile(b)
		if !bytes.Equal(ab, bb) {
			t.Fatalf("rows %d at a time (data moved: %v) give other bytes than 7 at a time", c.step, c.hide)
		}
	}
	reserveRoom = false
	defer func() { reserveRoom = true }()
	noRoom := filepath.Join(dir, "c.tif")
	for _, hide := range []bool{false, true} {
		writeCOGFile(t, noRoom, w, h, bands, opt, hide, 100)
		same := func(x, y *File) {
			t.Helper()
			for b := 1; b <= 2; b++ {
				dx, dy := compute.NewPlane(compute.F32, x.Width(), x.Height()), compute.NewPlane(compute.F32, y.Width(), y.Height())
				if err := x.ReadRowsInto(b, 0, x.Height(), dx); err != nil {
					t.Fatal(err)
				}
				if err := y.ReadRowsInto(b, 0, y.Height(), dy); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(dx.Data, dy.Data) {
					t.Fatalf("%dx%d band %d differs without room reserved (data moved: %v)", x.Width(), x.Height(), b, hide)
				}
			}
		}
		nf, err := Open(noRoom)
		if err != nil {
			t.Fatal(err)
		}
		af, _ := Open(a)
		same(af, nf)
		ao, err1 := af.Overviews()
		no, err2 := nf.Overviews()
		if err1 != nil || err2 != nil || len(ao) != 2 || len(no) != 2 {
			t.Fatal(err1, err2, len(ao), len(no))
		}
		for k := range ao {
			same(ao[k], no[k])
		}
		af.Close()
		nf.Close()
		os.Remove(noRoom)
	}
	// No scratch file is left with a name.
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		t.Errorf("files left: %v", ents)
	}
	f, err := Open(a)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Images() != 3 || !f.Tiled() || f.Planar() || f.Predictor() != 3 || f.Bands() != 2 {
		t.Errorf("%d images, tiled %v planar %v predictor %d, %d bands", f.Images(), f.Tiled(), f.Planar(), f.Predictor(), f.Bands())
	}
	got, err := f.ReadBands(1, 2)
	if err != nil {
		t.Fatal(err)
	}
	for b := range bands {
		for i, v := range bands[b] {
			g := got[b].Data[i]
			if v != v {
				if math.Float32bits(g) != canonicalNaN {
					t.Fatalf("band %d pixel %d: NaN %08x written as %08x", b+1, i, math.Float32bits(v), math.Float32bits(g))
				}
			} else if math.Float32bits(g) != math.Float32bits(v) {
				t.Fatalf("band %d pixel %d: %v, wrote %v", b+1, i, g, v)
			}
		}
	}
}

func TestCOGIsValidForGDAL(t *testing.T) {
	needGDAL(t)
	validate := "/usr/lib/python3/dist-packages/osgeo_utils/samples/validate_cloud_optimized_geotiff.py"
	if _, err := os.Stat(validate); err != nil {
		t.Skip("GDAL's validate_cloud_optimized_geotiff.py not found (python3-gdal)")
	}
	dir := t.TempDir()
	const w, h = 1300, 1100
	bands := cogBands(w, h, 1)
	for _, c := range []struct {
		name string
		opt  COGOptions
	}{
		{"deflate", COGOptions{Descriptions: []string{"ndvi"}}},
		{"zstd-bigtiff", COGOptions{Compression: ZSTD, BigTIFF: true, TileSize: 256}},
		{"deflate-level9", COGOptions{Level: 9}},
	} {
		p := filepath.Join(dir, c.name+".tif")
		writeCOGFile(t, p, w, h, bands, c.opt, false, 300)
		out, err := exec.Command("/usr/bin/python3", validate, "--full-check=yes", p).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "is a valid cloud optimized GeoTIFF") {
			t.Fatalf("%s: validate_cloud_optimized_geotiff.py: %v\n%s", c.name, err, out)
		}
		info := gdal(t, "gdalinfo", p)
		for _, want := range []string{"LAYOUT=COG", "NoData Value=nan", "Type=Float32"} {
			if !strings.Contains(info, want) {
				t.Errorf("%s: gdalinfo lacks %q:\n%s", c.name, want, info)
			}
		}
		if strings.Contains(info, "Warning") || strings.Contains(info, "ERROR") {
			t.Errorf("%s: gdalinfo complains:\n%s", c.name, info)
		}
		ts := 512
		if c.opt.TileSize != 0 {
			ts = c.opt.TileSize
		}
		// The overviews GDAL reads are the NaN-aware 2×2 means, level by
		// level, down to the first that fits in a tile.
		ref, rw, rh := bands[0], w, h
		var sizes []string
		for level := 0; rw > ts || rh > ts; level++ {
			ref, rw, rh = nanMean2(ref, rw, rh)
			sizes = append(sizes, strconv.Itoa(rw)+"x"+strconv.Itoa(rh))
			dump := filepath.Join(dir, "ovr.img")
			gdal(t, "gdal_translate", "-q", "-of", "ENVI", "-ot", "Float32", "-oo", "OVERVIEW_LEVEL="+strconv.Itoa(level), p, dump)
			raw, _ := os.ReadFile(dump)
			if len(raw) != 4*rw*rh {
				t.Fatalf("%s overview %d: GDAL gives %d bytes, want %dx%d", c.name, level, len(raw), rw, rh)
			}
			for i, v := range ref {
				g := math.Float32frombits(uint32(raw[4*i]) | uint32(raw[4*i+1])<<8 | uint32(raw[4*i+2])<<16 | uint32(raw[4*i+3])<<24)
				if math.Float32bits(g) != math.Float32bits(v) && !(g != g && v != v) {
					t.Fatalf("%s overview %d pixel (%d,%d): GDAL reads %v, want %v", c.name, level, i%rw, i/rw, g, v)
				}
			}
		}
		if !strings.Contains(info, "Overviews: "+strings.Join(sizes, ", ")) {
			t.Errorf("%s: want overviews %v:\n%s", c.name, sizes, info)
		}
		if c.opt.Descriptions != nil && !strings.Contains(info, "Description = ndvi") {
			t.Errorf("%s: no band description:\n%s", c.name, info)
		}
	}
	// GDAL's own AVERAGE overview of the full resolution is our first
	// level, bit for bit.
	p := filepath.Join(dir, "deflate.tif")
	plain := filepath.Join(dir, "plain.tif")
	gdal(t, "gdal_translate", "-q", "-co", "TILED=YES", p, plain)
	gdal(t, "gdaladdo", "-q", "-r", "average", plain, "2")
	a, b := filepath.Join(dir, "ours.img"), filepath.Join(dir, "gdal.img")
	gdal(t, "gdal_translate", "-q", "-of", "ENVI", "-oo", "OVERVIEW_LEVEL=0", p, a)
	gdal(t, "gdal_translate", "-q", "-of", "ENVI", "-oo", "OVERVIEW_LEVEL=0", plain, b)
	ab, _ := os.ReadFile(a)
	bb, _ := os.ReadFile(b)
	if !bytes.Equal(ab, bb) {
		t.Error("our first overview differs from gdaladdo -r average's")
	}
	// The overviews of a COG GDAL wrote read as GDAL reads them.
	gcog := filepath.Join(dir, "gdal-cog.tif")
	gdal(t, "gdal_translate", "-q", "-of", "COG", "-co", "COMPRESS=ZSTD", "-co", "BLOCKSIZE=256", plain, gcog)
	f, err := Open(gcog)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ovs, err := f.Overviews()
	if err != nil || len(ovs) == 0 {
		t.Fatalf("GDAL's COG: %d overviews, %v", len(ovs), err)
	}
	for k, o := range ovs {
		dump := filepath.Join(dir, "govr.img")
		gdal(t, "gdal_translate", "-q", "-of", "ENVI", "-ot", "Float32", "-oo", "OVERVIEW_LEVEL="+strconv.Itoa(k), gcog, dump)
		raw, _ := os.ReadFile(dump)
		dst := compute.NewPlane(compute.F32, o.Width(), o.Height())
		if err := o.ReadRowsInto(1, 0, o.Height(), dst); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(raw, dst.Data) && len(raw) == len(dst.Data) {
			for i := range dst.F32() {
				g, e := dst.F32()[i], math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
				if math.Float32bits(g) != math.Float32bits(e) && !(g != g && e != e) {
					t.Fatalf("GDAL's COG overview %d pixel %d: %v, GDAL reads %v", k, i, g, e)
				}
			}
		} else if len(raw) != len(dst.Data) {
			t.Fatalf("GDAL's COG overview %d: %d bytes, GDAL gives %d", k, len(dst.Data), len(raw))
		}
	}
}

func TestCOGErrors(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "x.tif"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c, err := NewCOG(f, 100, 50, 1, nil, COGOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.WriteRows(10, 5, [][]float32{make([]float32, 500)}); err == nil || !strings.Contains(err.Error(), "the next rows are 0 on") {
		t.Errorf("rows out of order: %v", err)
	}
	if err := c.WriteRows(0, 5, [][]float32{make([]float32, 400)}); err == nil || !strings.Contains(err.Error(), "band 1 holds 400 samples for 5 rows of 100") {
		t.Errorf("short rows: %v", err)
	}
	if err := c.WriteRows(0, 5, [][]float32{make([]float32, 500)}); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err == nil || err.Error() != "only 5 of 50 rows were written" {
		t.Errorf("closed early: %v", err)
	}
	if _, err := NewCOG(f, 100, 50, 1, nil, COGOptions{TileSize: 100}); err == nil {
		t.Error("tile size 100 accepted")
	}
	if _, err := NewCOG(onlyWriter{}, 100, 50, 1, nil, COGOptions{}); err == nil || !strings.Contains(err.Error(), "readable") {
		t.Errorf("write-only output: %v", err)
	}
}

type onlyWriter struct{}

func (onlyWriter) WriteAt(p []byte, off int64) (int, error) { return len(p), nil }

func TestPredictorFastPathsMatchTheDefinition(t *testing.T) {
	g := rand.New(rand.NewPCG(9, 9))
	for _, spp := range []int{1, 2, 3} {
		for _, c := range []struct{ w, vw, rows int }{{16, 16, 16}, {32, 7, 5}, {48, 48, 1}} {
			bands := make([][]float32, spp)
			for b := range bands {
				bands[b] = make([]float32, c.w*c.rows)
				for i := range bands[b] {
					bands[b][i] = float32(g.NormFloat64())
					if g.IntN(9) == 0 {
						bands[b][i] = float32(math.NaN())
					}
				}
			}
			ts := 16 * ((c.w + 15) / 16)
			fast, _ := newTileEncoder(NoCompression, 0, Float32, spp, ts, 3)
			fast.pred = 3
			fast.fill(bands, c.w, 0, c.vw, c.rows)
			got, _ := fast.compress()
			// The definition: little-endian samples, then libtiff's
			// byte split and difference.
			want := make([]byte, ts*ts*spp*4)
			tmp := make([]byte, ts*spp*4)
			rb := ts * spp * 4
			for r := range c.rows {
				for b := range bands {
					for x := range c.vw {
						v := bands[b][r*c.w+x]
						bits := math.Float32bits(v)
						if v != v {
							bits = canonicalNaN
						}
						binary.LittleEndian.PutUint32(want[r*rb+4*(x*spp+b):], bits)
					}
				}
			}
			for r := 0; r < len(want); r += rb {
				applyFloatPredictorStride(want[r:r+rb], tmp, 4, spp)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%d bands, %+v: the fast predictor differs from the definition", spp, c)
			}
		}
	}
}

func TestOverviewsReadBack(t *testing.T) {
	dir := t.TempDir()
	const w, h = 1300, 1100
	bands := cogBands(w, h, 1)
	p := filepath.Join(dir, "o.tif")
	writeCOGFile(t, p, w, h, bands, COGOptions{}, false, 256)
	f, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ovs, err := f.Overviews()
	if err != nil {
		t.Fatal(err)
	}
	if len(ovs) != 2 {
		t.Fatalf("%d overviews, want 2", len(ovs))
	}
	ref, rw, rh := bands[0], w, h
	for k, o := range ovs {
		ref, rw, rh = nanMean2(ref, rw, rh)
		if o.Width() != rw || o.Height() != rh || o.Geo() != nil {
			t.Fatalf("overview %d: %dx%d geo %v, want %dx%d", k, o.Width(), o.Height(), o.Geo(), rw, rh)
		}
		if nd, ok := o.NoData(); !ok || !math.IsNaN(nd) {
			t.Errorf("overview %d nodata %v %v", k, nd, ok)
		}
		dst := compute.NewPlane(compute.F32, rw, rh)
		if err := o.ReadRowsInto(1, 0, rh, dst); err != nil {
			t.Fatal(err)
		}
		for i, v := range ref {
			if g := dst.F32()[i]; math.Float32bits(g) != math.Float32bits(v) && !(g != g && v != v) {
				t.Fatalf("overview %d pixel %d: %v, want %v", k, i, g, v)
			}
		}
	}
	// A file without overviews has none.
	plain := filepath.Join(dir, "p.tif")
	if err := WriteBands(plain, 40, 30, [][]float32{make([]float32, 1200)}, nil, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	g, _ := Open(plain)
	defer g.Close()
	if ovs, err := g.Overviews(); err != nil || len(ovs) != 0 {
		t.Errorf("plain file: %d overviews, %v", len(ovs), err)
	}
}
