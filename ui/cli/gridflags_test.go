package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
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
