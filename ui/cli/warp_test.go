package cli

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"canopy/compute"
	"canopy/compute/geotiff"
)

// writeTile writes an n×n uint16 tile at 10 m in UTM zone epsg with its
// top-left corner at (x0, y0), nodata 0 and a block of it.
func writeTile(t *testing.T, path string, epsg uint16, x0, y0 float64, n int, seed uint64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	v := make([]uint16, n*n)
	for i := range v {
		v[i] = uint16(500 + rng.IntN(3000))
	}
	for y := n / 5; y < n/5+20; y++ {
		for x := n / 3; x < n/3+40; x++ {
			v[y*n+x] = 0
		}
	}
	g := &compute.GeoRef{PixelScale: []float64{10, 10, 0}, Tiepoints: []float64{0, 0, 0, x0, y0, 0},
		GeoKeyDirectory: []uint16{1, 1, 0, 3, 1024, 0, 1, 1, 1025, 0, 1, 1, 3072, 0, 1, epsg}}
	if err := geotiff.WriteBands(path, n, n, [][]uint16{v}, g, geotiff.WriteOptions{NoData: "0"}); err != nil {
		t.Fatal(err)
	}
}

func readTIF(t *testing.T, path string) (*geotiff.File, []float32) {
	t.Helper()
	f, err := geotiff.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := f.ReadBand(1)
	if err != nil {
		t.Fatal(err)
	}
	return f, b.Data
}

// TestWarpTwoZones mosaics two tiles in UTM zones 32 and 33 onto the
// zone that covers most of them and checks the result against gdalwarp
// on the same grid (gdalwarp takes the inputs in reverse order: its later
// inputs overwrite, canopy's first valid input wins). gdalwarp is kept
// to one chunk (a large -wm, no splitting for a low source fill ratio):
// it runs the approximate transformer over each chunk's rows, so its
// chunks place pixels differently within the error bound.
func TestWarpTwoZones(t *testing.T) {
	gdal, err := exec.LookPath("gdalwarp")
	if err != nil {
		if os.Getenv("CANOPY_EXPECT_GDAL") == "1" {
			t.Fatal("gdalwarp not found but CANOPY_EXPECT_GDAL=1")
		}
		t.Skip("gdalwarp not found")
	}
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.tif"), filepath.Join(dir, "b.tif")
	// A (3 km, about 11.99° E) in zone 32, B (4 km, just east of 12° E)
	// in zone 33: they overlap, and more of them lies in zone 33.
	writeTile(t, a, 32632, 713500, 5600000, 300, 1)
	writeTile(t, b, 32633, 286500, 5601000, 400, 2)
	for _, r := range []string{"nearest", "bilinear"} {
		out := filepath.Join(dir, r+".tif")
		var so, se bytes.Buffer
		if rc := Run([]string{"warp", a, b, "--resampling", r, "--json", "--tif", out}, &so, &se); rc != 0 {
			t.Fatalf("rc %d: %s", rc, se.String())
		}
		var rep struct {
			EPSG          int
			Width, Height int
			X0            float64 `json:"x0"`
			Y0            float64 `json:"y0"`
			ResX          float64 `json:"res_x"`
			ValidPixels   int     `json:"valid_pixels"`
		}
		if err := json.Unmarshal(so.Bytes(), &rep); err != nil {
			t.Fatal(err)
		}
		if rep.EPSG != 32633 || rep.ResX != 10 {
			t.Fatalf("grid %+v: want UTM 33N at 10 m (the tiles lie mostly east of 12° E)", rep)
		}
		f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
		ref := filepath.Join(dir, "gdal-"+r+".tif")
		args := []string{"-q", "-t_srs", "EPSG:32633", "-tr", "10", "10", "-te", f(rep.X0), f(rep.Y0 - 10*float64(rep.Height)), f(rep.X0 + 10*float64(rep.Width)), f(rep.Y0),
			"-r", r, "-wm", "2000", "-wo", "SRC_FILL_RATIO_HEURISTICS=NO", "-ot", "Float32", "-dstnodata", "nan", b, a, ref}
		if o, err := exec.Command(gdal, args...).CombinedOutput(); err != nil {
			t.Fatalf("gdalwarp: %v %s", err, o)
		}
		fo, ours := readTIF(t, out)
		fo.Close()
		fg, theirs := readTIF(t, ref)
		fg.Close()
		if len(ours) != len(theirs) {
			t.Fatalf("%d pixels against gdalwarp's %d", len(ours), len(theirs))
		}
		same, bad := 0, 0
		for i := range ours {
			o, g := float64(ours[i]), float64(theirs[i])
			if math.IsNaN(o) && math.IsNaN(g) || o == g {
				same++
				continue
			}
			// gdalwarp -ot Float32 keeps bilinear's fractions, canopy the
			// input's uint16 (rounded as gdalwarp rounds without -ot).
			if r == "bilinear" && math.Abs(o-g) <= 0.5 {
				same++
				continue
			}
			bad++
			if bad < 6 {
				t.Logf("%s (%d, %d): ours %g gdalwarp %g", r, i%rep.Width, i/rep.Width, o, g)
			}
		}
		t.Logf("%s: %d×%d, %d valid, %d of %d as gdalwarp's", r, rep.Width, rep.Height, rep.ValidPixels, same, len(ours))
		if float64(same) < 0.999*float64(len(ours)) {
			t.Errorf("%s: %d pixels differ from gdalwarp's", r, bad)
		}
	}
	var so, se bytes.Buffer
	if rc := Run([]string{"warp", a, "--like", a, "--crs", "EPSG:4326", "--tif", filepath.Join(dir, "x.tif")}, &so, &se); rc != 2 || !strings.Contains(se.String(), "--like") {
		t.Errorf("--like with --crs: rc %d, %q", rc, se.String())
	}
	se.Reset()
	if rc := Run([]string{"warp", a, filepath.Join(dir, "missing.tif"), "--tif", filepath.Join(dir, "y.tif")}, &so, &se); rc != 1 || !strings.Contains(se.String(), "missing.tif") {
		t.Errorf("missing input: rc %d, %q", rc, se.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "y.tif")); err == nil {
		t.Error("a failed warp left its output behind")
	}
}

// TestWarpRefusals: bad requests fail in one line naming the problem,
// writing nothing.
func TestWarpRefusals(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.tif")
	writeTile(t, a, 32632, 713500, 5600000, 40, 1)
	out := filepath.Join(dir, "out.tif")
	for _, c := range []struct {
		args []string
		rc   int
		want string
	}{
		{[]string{"warp", a, "--crs", "EPSG:32633", "--bbox", "0,0,1000,1000", "--tif", out}, 1, "no input has a valid pixel"},
		{[]string{"warp", a, "--crs", "EPSG:32633", "--res", "0.001", "--tif", out}, 1, "too large"},
		{[]string{"warp", a, "--crs", "EPSG:4326", "--tif", out}, 2, "--res"},
		{[]string{"warp", a, "--crs", "nowhere", "--tif", out}, 2, "--crs"},
		{[]string{"warp", a, "--resampling", "lanczos", "--tif", out}, 2, "lanczos"},
		{[]string{"warp", a, "--bbox", "1,2,3", "--tif", out}, 2, "--bbox"},
		{[]string{"warp", a, "--backend", "fortran", "--tif", out}, 2, "fortran"},
		{[]string{"warp", a}, 2, "--tif"},
	} {
		var so, se bytes.Buffer
		rc := Run(c.args, &so, &se)
		if rc != c.rc || !strings.Contains(se.String(), c.want) || strings.Count(strings.TrimSpace(se.String()), "\n") > 0 {
			t.Errorf("%v: rc %d, %q; want rc %d and %q", c.args[1:], rc, se.String(), c.rc, c.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Fatalf("%v left %s behind", c.args[1:], out)
		}
	}
}

// TestWarpStands: --stands takes the stands' system and covers their
// extent, aligned to the pixel.
func TestWarpStands(t *testing.T) {
	dir := t.TempDir()
	red, _, stands := zonalFixture(t, dir, 3, 16)
	out := filepath.Join(dir, "out.tif")
	var so, se bytes.Buffer
	if rc := Run([]string{"warp", red, "--stands", stands, "--json", "--tif", out}, &so, &se); rc != 0 {
		t.Fatalf("rc %d: %s", rc, se.String())
	}
	var rep struct {
		EPSG          int
		Width, Height int
		X0            float64 `json:"x0"`
		Y0            float64 `json:"y0"`
		ResX          float64 `json:"res_x"`
	}
	if err := json.Unmarshal(so.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	// Three stands of radius 40 m centred 10 m apart from (600050, 5299950).
	if rep.EPSG != 32632 || rep.X0 > 600010 || rep.X0 < 599990 || rep.Y0 < 5299990 || rep.Y0 > 5300010 || math.Mod(rep.X0, rep.ResX) != 0 || rep.Width < 9 || rep.Width > 13 {
		t.Fatalf("grid %+v: want the stands' system and extent, aligned", rep)
	}
}
