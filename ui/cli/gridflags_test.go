package cli

import (
	"bytes"
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

// TestComputeGrid computes NDVI of two bands in UTM zone 32 on a grid in
// zone 33 (--grid EPSG:32633,10,...) and checks it against NDVI computed
// from the bands gdalwarp put on that grid (bilinear, uint16 as stored):
// the same file's pixels, bit for bit.
func TestComputeGrid(t *testing.T) {
	gdal, err := exec.LookPath("gdalwarp")
	if err != nil {
		if os.Getenv("CANOPY_EXPECT_GDAL") == "1" {
			t.Fatal("gdalwarp not found but CANOPY_EXPECT_GDAL=1")
		}
		t.Skip("gdalwarp not found")
	}
	dir := t.TempDir()
	red, nir := filepath.Join(dir, "red.tif"), filepath.Join(dir, "nir.tif")
	writeTile(t, red, 32632, 713500, 5600000, 200, 1)
	writeTile(t, nir, 32632, 713500, 5600000, 200, 2)
	var so, se bytes.Buffer
	ours := filepath.Join(dir, "ours.tif")
	if rc := Run([]string{"compute", "--red", red, "--nir", nir, "--grid", "EPSG:32633,10", "--backend", "go", "--tif", ours}, &so, &se); rc != 0 {
		t.Fatalf("compute --grid: rc %d: %s", rc, se.String())
	}
	fo, a := readTIF(t, ours)
	defer fo.Close()
	ga, _ := fo.Geo().Affine()
	W, H := fo.Width(), fo.Height()
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	var warped []string
	for _, b := range []string{red, nir} {
		w := strings.TrimSuffix(b, ".tif") + "-33.tif"
		args := []string{"-q", "-t_srs", "EPSG:32633", "-tr", "10", "10", "-te", f(ga[0]), f(ga[3] - 10*float64(H)), f(ga[0] + 10*float64(W)), f(ga[3]),
			"-r", "bilinear", "-wm", "2000", b, w}
		if o, err := exec.Command(gdal, args...).CombinedOutput(); err != nil {
			t.Fatalf("gdalwarp: %v %s", err, o)
		}
		warped = append(warped, w)
	}
	theirs := filepath.Join(dir, "theirs.tif")
	se.Reset()
	if rc := Run([]string{"compute", "--red", warped[0], "--nir", warped[1], "--backend", "go", "--tif", theirs}, &so, &se); rc != 0 {
		t.Fatalf("compute on gdalwarp's bands: rc %d: %s", rc, se.String())
	}
	ft, b := readTIF(t, theirs)
	defer ft.Close()
	if ft.Width() != W || ft.Height() != H {
		t.Fatalf("sizes %d×%d and gdalwarp's %d×%d", W, H, ft.Width(), ft.Height())
	}
	gb, _ := ft.Geo().Affine()
	if ga != gb {
		t.Fatalf("georeferencing %v, gdalwarp's %v", ga, gb)
	}
	diff, valid := 0, 0
	for i := range a {
		if a[i] == a[i] {
			valid++
		}
		if a[i] != b[i] && !(a[i] != a[i] && b[i] != b[i]) {
			diff++
		}
	}
	t.Logf("%d×%d on EPSG:32633 from (%g, %g): %d valid, %d differ", W, H, ga[0], ga[3], valid, diff)
	if diff > 0 || valid < len(a)/2 {
		t.Fatalf("%d of %d pixels differ (%d valid)", diff, len(a), valid)
	}
	se.Reset()
	if rc := Run([]string{"compute", "--red", red, "--nir", nir, "--grid", "EPSG:999999", "--tif", filepath.Join(dir, "x.tif")}, &so, &se); rc != 2 {
		t.Errorf("--grid EPSG:999999: rc %d, %q", rc, se.String())
	}
}

// writeOrtho writes an n×n two-band uint16 GeoTIFF (red, nir by their
// descriptions) at 10 m in UTM zone epsg, nodata 0.
func writeOrtho(t *testing.T, path string, epsg uint16, x0, y0 float64, n int, seed uint64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	red, nir := make([]uint16, n*n), make([]uint16, n*n)
	for i := range red {
		red[i] = uint16(300 + rng.IntN(1000))
		nir[i] = uint16(2000 + rng.IntN(2000))
	}
	red[5*n+5] = 0
	g := &compute.GeoRef{PixelScale: []float64{10, 10, 0}, Tiepoints: []float64{0, 0, 0, x0, y0, 0},
		GeoKeyDirectory: []uint16{1, 1, 0, 3, 1024, 0, 1, 1, 1025, 0, 1, 1, 3072, 0, 1, epsg}}
	if err := geotiff.WriteBands(path, n, n, [][]uint16{red, nir}, g, geotiff.WriteOptions{NoData: "0", Descriptions: []string{"red", "nir"}}); err != nil {
		t.Fatal(err)
	}
}

// TestComputeMosaicScenes computes NDVI over two products of one date in
// UTM zones 32 and 33 (--scene A --scene B): one map on the UTM zone
// covering most of them, equal to NDVI of canopy warp's mosaic of the
// same products.
func TestComputeMosaicScenes(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.tif"), filepath.Join(dir, "b.tif")
	writeOrtho(t, a, 32632, 713500, 5600000, 120, 1)
	writeOrtho(t, b, 32633, 286500, 5601000, 160, 2)
	var so, se bytes.Buffer
	ours := filepath.Join(dir, "ours.tif")
	if rc := Run([]string{"compute", "--scene", a, "--scene", b, "--backend", "go", "--tif", ours}, &so, &se); rc != 0 {
		t.Fatalf("compute --scene --scene: rc %d: %s", rc, se.String())
	}
	mos := filepath.Join(dir, "mosaic.tif")
	if rc := Run([]string{"warp", a, b, "--resampling", "bilinear", "--tif", mos}, &so, &se); rc != 0 {
		t.Fatalf("warp: rc %d: %s", rc, se.String())
	}
	theirs := filepath.Join(dir, "theirs.tif")
	if rc := Run([]string{"compute", "--red", mos + ":1", "--nir", mos + ":2", "--backend", "go", "--tif", theirs}, &so, &se); rc != 0 {
		t.Fatalf("compute on the mosaic: rc %d: %s", rc, se.String())
	}
	fo, x := readTIF(t, ours)
	defer fo.Close()
	ft, y := readTIF(t, theirs)
	defer ft.Close()
	ga, _ := fo.Geo().Affine()
	gb, _ := ft.Geo().Affine()
	if fo.Width() != ft.Width() || fo.Height() != ft.Height() || ga != gb {
		t.Fatalf("grids %d×%d %v and %d×%d %v", fo.Width(), fo.Height(), ga, ft.Width(), ft.Height(), gb)
	}
	if code := fo.Geo().GeoKeyDirectory; code[len(code)-1] != 32633 {
		t.Errorf("the mosaic is not on UTM 33N: %v", code)
	}
	diff, valid := 0, 0
	for i := range x {
		if x[i] == x[i] {
			valid++
		}
		if x[i] != y[i] && !(x[i] != x[i] && y[i] != y[i]) {
			diff++
		}
	}
	t.Logf("%d×%d, %d valid, %d differ", fo.Width(), fo.Height(), valid, diff)
	if diff > 0 || valid < len(x)/3 {
		t.Fatalf("%d of %d pixels differ (%d valid)", diff, len(x), valid)
	}
}

// TestZonalGrid: zonal statistics with the bands warped onto another
// zone's grid (--grid EPSG:32633,10) while the stands stay in zone 32:
// each stand's area and mean agree with those on the bands' own grid
// (the stands reprojected to the grid, the areas within the difference of
// the two zones' scale, the means within the resampling's smoothing).
func TestZonalGrid(t *testing.T) {
	dir := t.TempDir()
	red, nir, stands := zonalFixture(t, dir, 3, 24)
	rows := func(extra ...string) [][]string {
		t.Helper()
		out := filepath.Join(dir, "z"+strconv.Itoa(len(extra))+".csv")
		var so, se bytes.Buffer
		args := append([]string{"zonal", "--red", red, "--nir", nir, "--stands", stands, "--backend", "go", "--csv", out}, extra...)
		if rc := Run(args, &so, &se); rc != 0 {
			t.Fatalf("%v: rc %d: %s", args, rc, se.String())
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		var r [][]string
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n")[1:] {
			r = append(r, strings.Split(l, ","))
		}
		return r
	}
	own, warped := rows(), rows("--grid", "EPSG:32633,10", "--grid-resampling", "bilinear")
	if len(own) != 3 || len(warped) != 3 {
		t.Fatalf("%d and %d stands", len(own), len(warped))
	}
	for i := range own {
		a1, _ := strconv.ParseFloat(own[i][3], 64)
		a2, _ := strconv.ParseFloat(warped[i][3], 64)
		m1, _ := strconv.ParseFloat(own[i][5], 64)
		m2, _ := strconv.ParseFloat(warped[i][5], 64)
		t.Logf("stand %s: area %.4f / %.4f ha, mean %.4f / %.4f", own[i][0], a1, a2, m1, m2)
		if !(a1 > 0) || math.Abs(a2-a1) > 0.03*a1 || math.Abs(m2-m1) > 0.05 {
			t.Errorf("stand %s: area %g ha against %g, mean %g against %g", own[i][0], a2, a1, m2, m1)
		}
	}
}
