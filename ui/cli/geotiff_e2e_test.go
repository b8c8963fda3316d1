package cli

import (
	"bytes"
	"encoding/json"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"canopy/compute/geotiff"
	"canopy/compute/raster"
)

// gdalTool runs a GDAL command-line tool, skipping the test when it is not
// installed and failing it with the tool's output when it fails.
func gdalTool(t *testing.T, tool string, args ...string) []byte {
	t.Helper()
	if _, err := exec.LookPath(tool); err != nil {
		t.Skipf("%s not found: the end-to-end GeoTIFF check needs gdal-bin and python3-gdal (CI installs them)", tool)
	}
	cmd := exec.Command(tool, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s%s", tool, strings.Join(args, " "), err, out, stderr.String())
	}
	return out
}

// geoOf is the georeferencing part of `gdalinfo -json`.
type geoOf struct {
	Size         []int     `json:"size"`
	GeoTransform []float64 `json:"geoTransform"`
	CRS          struct {
		WKT string `json:"wkt"`
	} `json:"coordinateSystem"`
}

func gdalGeo(t *testing.T, path string) geoOf {
	t.Helper()
	var g geoOf
	if err := json.Unmarshal(gdalTool(t, "gdalinfo", "-json", path), &g); err != nil {
		t.Fatalf("gdalinfo -json %s: %v", path, err)
	}
	return g
}

// TestComputeMultiBandGeoTIFFEndToEnd runs `canopy compute --red a.tif:3
// --nir a.tif:4 --tif out.tif --png out.png` on a 4-band pixel-interleaved
// GeoTIFF made by gdal_translate (with GDAL_NODATA = 0), then checks with
// gdalinfo that out.tif sits exactly where a.tif does, and with
// gdal_calc.py that our NDVI equals GDAL's within 1e-6, NaN exactly where
// gdal_calc writes nodata.
func TestComputeMultiBandGeoTIFFEndToEnd(t *testing.T) {
	dir := t.TempDir()
	const w, h = 257, 181
	bands := make([][]uint16, 4)
	for b := range bands {
		bands[b] = make([]uint16, w*h)
		for i := range bands[b] {
			x, y := i%w, i/w
			bands[b][i] = uint16((x*37+y*11+b*500)%4000 + b*300)
		}
	}
	bands[2][5], bands[3][9] = 0, 0 // nodata in red, in NIR
	plain := filepath.Join(dir, "plain.tif")
	if err := geotiff.WriteBands(plain, w, h, bands, nil, geotiff.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	a := filepath.Join(dir, "a.tif")
	gdalTool(t, "gdal_translate", "-q", "-a_srs", "EPSG:32633", "-a_ullr", "399960", "5900040", "402530", "5898230",
		"-a_nodata", "0", "-co", "INTERLEAVE=PIXEL", "-co", "COMPRESS=DEFLATE", "-co", "PREDICTOR=2", "-co", "TILED=YES", plain, a)

	out, outPNG := filepath.Join(dir, "out.tif"), filepath.Join(dir, "out.png")
	code, stdout, stderr := run(t, "compute", "--red", a+":3", "--nir", a+":4", "--backend", "go", "--tif", out, "--png", outPNG)
	if code != 0 {
		t.Fatalf("canopy compute: exit %d\n%s%s", code, stdout, stderr)
	}

	in, res := gdalGeo(t, a), gdalGeo(t, out)
	if len(in.GeoTransform) != 6 || len(res.GeoTransform) != 6 {
		t.Fatalf("geotransforms: input %v, output %v", in.GeoTransform, res.GeoTransform)
	}
	for i := range in.GeoTransform {
		if in.GeoTransform[i] != res.GeoTransform[i] {
			t.Fatalf("output geotransform %v, input %v", res.GeoTransform, in.GeoTransform)
		}
	}
	if in.CRS.WKT == "" || in.CRS.WKT != res.CRS.WKT {
		t.Errorf("output coordinate system differs from the input's:\n%s\n---\n%s", res.CRS.WKT, in.CRS.WKT)
	}
	if res.Size[0] != w || res.Size[1] != h {
		t.Errorf("output size %v, want %dx%d", res.Size, w, h)
	}

	calc := filepath.Join(dir, "calc.tif")
	gdalTool(t, "gdal_calc.py", "--quiet", "-A", a, "--A_band", "3", "-B", a, "--B_band", "4",
		"--calc", "(B.astype(float32)-A.astype(float32))/(B.astype(float32)+A.astype(float32))",
		"--type", "Float32", "--outfile", calc)
	want, err := raster.Load(calc)
	if err != nil {
		t.Fatal(err)
	}
	got, err := raster.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if !want.HasNoData {
		t.Fatal("gdal_calc's output has no nodata value")
	}
	calcNoData := float32(want.NoData) // gdal_calc's Float32 default, 3.4028235e+38
	nan := 0
	for i, g := range got.Data {
		e := want.Data[i]
		if e == calcNoData || math.IsNaN(float64(g)) {
			if (e == calcNoData) != math.IsNaN(float64(g)) {
				t.Fatalf("pixel (%d,%d): canopy %v, gdal_calc %v", i%w, i/w, g, e)
			}
			nan++
			continue
		}
		if math.Abs(float64(g-e)) > 1e-6 {
			t.Fatalf("pixel (%d,%d): canopy %v, gdal_calc %v", i%w, i/w, g, e)
		}
	}
	if nan != 2 {
		t.Errorf("%d NaN pixels, want the 2 nodata pixels", nan)
	}

	f, err := os.Open(outPNG)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cfg, err := png.DecodeConfig(f)
	if err != nil || cfg.Width < w || cfg.Height < h {
		t.Errorf("out.png: %v, %dx%d, want at least %dx%d", err, cfg.Width, cfg.Height, w, h)
	}
}
