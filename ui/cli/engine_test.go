package cli

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"canopy/compute"
	"canopy/compute/geotiff"
	"canopy/compute/index"
	"canopy/compute/raster"
)

// geoIn is a UTM 32N grid at 10 m.
func geoIn(epsg uint16) *compute.GeoRef {
	return &compute.GeoRef{
		PixelScale:      []float64{10, 10, 0},
		Tiepoints:       []float64{0, 0, 0, 600000, 5300000, 0},
		GeoKeyDirectory: []uint16{1, 1, 0, 3, 1024, 0, 1, 1, 1025, 0, 1, 1, 3072, 0, 1, epsg},
	}
}

// multiBand writes a w×h uint16 GeoTIFF with bands blue, green, red, nir,
// swir1, swir2 (reflectance × 10000, some zeros) and returns its path.
func multiBand(t *testing.T, dir string, w, h int, epsg uint16) string {
	t.Helper()
	g := rand.New(rand.NewPCG(5, 6))
	bands := make([][]uint16, 6)
	for b := range bands {
		bands[b] = make([]uint16, w*h)
		for i := range bands[b] {
			switch g.IntN(30) {
			case 0:
				bands[b][i] = 0
			default:
				bands[b][i] = uint16(200 + g.IntN(6000))
			}
		}
	}
	p := filepath.Join(dir, "scene.tif")
	err := geotiff.WriteBands(p, w, h, bands, geoIn(epsg), geotiff.WriteOptions{Descriptions: []string{"blue", "green", "red", "nir", "swir1", "swir2"}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func bandArgs(p string) []string {
	var a []string
	for i, r := range []string{"blue", "green", "red", "nir", "swir1", "swir2"} {
		a = append(a, "--band", r+"="+p+":"+string(rune('1'+i)))
	}
	return a
}

func TestIndicesCommand(t *testing.T) {
	code, out, e := run(t, "indices")
	if code != 0 {
		t.Fatal(e)
	}
	for _, c := range index.Catalogue() {
		if !strings.Contains(out, c.Name+" ") || !strings.Contains(out, c.Formula) {
			t.Errorf("indices does not list %s %s", c.Name, c.Formula)
		}
	}
	code, out, e = run(t, "indices", "--json")
	if code != 0 {
		t.Fatal(e)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != len(index.Catalogue()) {
		t.Fatalf("%d JSON lines for %d indices", len(lines), len(index.Catalogue()))
	}
	var first indexEntry
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil || first.Name != "ndvi" || len(first.Roles) != 2 {
		t.Errorf("first entry %+v (%v)", first, err)
	}
}

// Several indices in one run: one GeoTIFF band each, named after it, equal
// to NumPy's evaluation of the same formulas on GDAL's reading of the same
// file (float64, compared within float32 rounding).
func TestComputeSeveralIndicesAgainstNumPy(t *testing.T) {
	dir := t.TempDir()
	src := multiBand(t, dir, 67, 41, 32632)
	tif := filepath.Join(dir, "out.tif")
	args := append([]string{"compute", "--index", "ndvi,evi,ndmi,nbr,savi", "--raw", "--backend", "go-parallel", "--tif", tif, "--json"}, bandArgs(src)...)
	code, out, e := run(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, e)
	}
	var rep computeReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Index != "ndvi,evi,ndmi,nbr,savi" || len(rep.Indices) != 5 || !rep.Verified || !rep.DigitalNumbers {
		t.Errorf("report %+v", rep)
	}
	py, err := exec.LookPath("/usr/bin/python3")
	if err != nil || exec.Command(py, "-c", "import numpy; from osgeo import gdal").Run() != nil {
		if os.Getenv("CANOPY_EXPECT_GDAL") != "" {
			t.Fatal("CANOPY_EXPECT_GDAL is set but python3 with numpy and GDAL is missing")
		}
		t.Skip("python3-numpy and python3-gdal are needed for the NumPy cross-check")
	}
	script := `
import sys, numpy as np
from osgeo import gdal
s = gdal.Open(sys.argv[1]); o = gdal.Open(sys.argv[2])
B, G, R, N, S1, S2 = [s.GetRasterBand(i + 1).ReadAsArray().astype(np.float64) for i in range(6)]
with np.errstate(all="ignore"):
    want = {"ndvi": (N - R) / (N + R), "evi": 2.5 * (N - R) / (N + 6 * R - 7.5 * B + 1),
            "ndmi": (N - S1) / (N + S1), "nbr": (N - S2) / (N + S2), "savi": 1.5 * (N - R) / (N + R + 0.5)}
for i in range(o.RasterCount):
    band = o.GetRasterBand(i + 1); name = band.GetDescription()
    got = band.ReadAsArray().astype(np.float64); w = want[name]
    w[~np.isfinite(w)] = np.nan
    same_nan = np.array_equal(np.isnan(got), np.isnan(w))
    ok = ~np.isnan(w)
    err = float(np.max(np.abs(got[ok] - w[ok]) / np.maximum(1, np.abs(w[ok])))) if ok.any() else 0.0
    print(name, same_nan, err)
`
	res, err := exec.Command(py, "-c", script, src, tif).CombinedOutput()
	if err != nil {
		t.Fatalf("numpy: %v: %s", err, res)
	}
	seen := 0
	for _, l := range strings.Split(strings.TrimSpace(string(res)), "\n") {
		f := strings.Fields(l)
		if len(f) != 3 {
			t.Fatalf("numpy line %q", l)
		}
		seen++
		if f[1] != "True" {
			t.Errorf("%s: NaN pixels differ from NumPy's", f[0])
		}
		var v float64
		json.Unmarshal([]byte(f[2]), &v)
		if !(v <= 1e-5) {
			t.Errorf("%s: max error %s against NumPy", f[0], f[2])
		}
	}
	if seen != 5 {
		t.Errorf("GDAL sees %d bands, want 5 named ndvi, evi, ndmi, nbr, savi: %s", seen, res)
	}
}

// A custom formula runs on every CPU backend with the same bits.
func TestComputeExprEveryCPUBackend(t *testing.T) {
	dir := t.TempDir()
	src := multiBand(t, dir, 31, 17, 32632)
	var first []float32
	for _, b := range []string{"go", "go-parallel", "c"} {
		tif := filepath.Join(dir, b+".tif")
		args := append([]string{"compute", "--expr", "clamp((nir - swir1) / (nir + swir1) * 2, -1, 1)", "--backend", b, "--tif", tif}, bandArgs(src)...)
		if code, _, e := run(t, args...); code != 0 {
			t.Fatalf("%s: exit %d: %s", b, code, e)
		}
		got, err := raster.Load(tif)
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = got.Data
			continue
		}
		for i := range first {
			if first[i] != got.Data[i] && !(math.IsNaN(float64(first[i])) && math.IsNaN(float64(got.Data[i]))) {
				t.Fatalf("%s pixel %d: %g, go gives %g", b, i, got.Data[i], first[i])
			}
		}
	}
}

// Malformed formulas: one line naming the column, exit 2, nothing written.
func TestComputeMalformedExpressions(t *testing.T) {
	dir := t.TempDir()
	red, nir := fakePair(t, dir, "8x8")
	tif := filepath.Join(dir, "never.tif")
	bad := []string{
		"", " ", "nir -", "(nir - red", "nir - red)", "nir ** red", "1..2", "nri", "red +* nir",
		"min(red)", "min(red, nir, blue)", "clamp(red, 0)", "sqrt()", "sqrt(red, nir)", "abs", "red(nir)",
		"foo(red)", "nir red", "2 3", "()", "(", ")", "nir / ", "* red", "red - - ", "1e", "1e+",
		"red,nir", "max(red,)", "max(,red)", "nir − red", "nir × red", "red @ nir", "1e99", "clamp(,,)",
		"sqrt(red))", "((red)", "red^2", "nir -- ", "$red",
	}
	for _, expr := range bad {
		code, _, e := run(t, "compute", "--red", red, "--nir", nir, "--expr", expr, "--tif", tif)
		if code != 2 {
			t.Errorf("--expr %q: exit %d, want 2 (%s)", expr, code, e)
		}
		if strings.Count(strings.TrimSpace(e), "\n") != 0 {
			t.Errorf("--expr %q: not one line: %q", expr, e)
		}
		if expr != "" && !strings.Contains(e, "column ") {
			t.Errorf("--expr %q: %q names no column", expr, e)
		}
	}
	if _, err := os.Stat(tif); err == nil {
		t.Error("a malformed formula wrote an output")
	}
	if len(bad) < 30 {
		t.Fatalf("only %d malformed formulas", len(bad))
	}
}

// Usage and data errors of the index engine's command line.
func TestComputeIndexErrors(t *testing.T) {
	dir := t.TempDir()
	red, nir := fakePair(t, dir, "8x8")
	red9, _ := fakePair(t, dir, "9x8")
	other := filepath.Join(dir, "utm33.tif")
	band, err := raster.Load(nir)
	if err != nil {
		t.Fatal(err)
	}
	band.Geo = geoIn(32633)
	if err := raster.WriteGeoTIFF(other, band); err != nil {
		t.Fatal(err)
	}
	tif := filepath.Join(dir, "never.tif")
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown index", []string{"--red", red, "--nir", nir, "--index", "ndvx"}, 2, "ndvx"},
		{"missing role", []string{"--red", red, "--nir", nir, "--index", "evi"}, 2, "needs the blue band"},
		{"missing role expr", []string{"--red", red, "--nir", nir, "--expr", "swir1 - nir"}, 2, "needs the swir1 band"},
		{"index and expr", []string{"--red", red, "--nir", nir, "--index", "ndvi", "--expr", "nir"}, 2, "not both"},
		{"unknown role", []string{"--band", "redd=" + red, "--nir", nir}, 2, "unknown role"},
		{"bad band flag", []string{"--band", red, "--nir", nir}, 2, "ROLE=FILE"},
		{"size mismatch", []string{"--red", red9, "--nir", nir}, 1, "not the same size"},
		{"crs mismatch", []string{"--red", red, "--nir", other}, 1, "coordinate reference systems"},
		{"bad mode", []string{"--red", red, "--nir", nir, "--backend", "go:fast"}, 2, "no modes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, e := run(t, append([]string{"compute", "--tif", tif}, c.args...)...)
			if code != c.code || !strings.Contains(e, c.want) || strings.Count(strings.TrimSpace(e), "\n") != 0 {
				t.Errorf("exit %d (want %d), stderr %q (want %q, one line)", code, c.code, e, c.want)
			}
			if _, err := os.Stat(tif); err == nil {
				t.Error("an output was written")
			}
		})
	}
}
