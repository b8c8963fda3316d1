package cli

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"canopy/compute/geotiff"
	"canopy/compute/raster"
)

// date writes a two-band uint16 GeoTIFF (red, nir; DN 0 nodata) whose NIR
// drops by cut inside the rectangle [c0, c1) × [r0, r1), at origin x0.
func date(t *testing.T, path string, w, h int, x0 float64, cut uint16, c0, r0, c1, r1 int) {
	t.Helper()
	red, nir := make([]uint16, w*h), make([]uint16, w*h)
	for y := range h {
		for x := range w {
			i := y*w + x
			red[i] = uint16(400 + 7*x + 3*y)
			nir[i] = uint16(3000 + 11*x - 5*y)
			if x >= c0 && x < c1 && y >= r0 && y < r1 {
				nir[i] -= cut
			}
		}
	}
	red[w+1] = 0 // nodata on this date
	g := geoIn(32632)
	g.Tiepoints = []float64{0, 0, 0, x0, 5300000, 0}
	err := geotiff.WriteBands(path, w, h, [][]uint16{red, nir}, g, geotiff.WriteOptions{NoData: "0", Descriptions: []string{"red", "nir"}})
	if err != nil {
		t.Fatal(err)
	}
}

func ndvi32(r, n float64) float32 { return float32(float32(n-r) / float32(n+r)) }

func TestChangeAgainstDirectDifference(t *testing.T) {
	dir := t.TempDir()
	before, after := filepath.Join(dir, "before.tif"), filepath.Join(dir, "after.tif")
	date(t, before, 30, 20, 600000, 0, 0, 0, 0, 0)
	date(t, after, 30, 20, 600000, 2500, 10, 5, 20, 15) // a clear-cut of 10 × 10 pixels
	tif, png := filepath.Join(dir, "dndvi.tif"), filepath.Join(dir, "dndvi.png")
	// The dates are digital numbers: the change classes are refused
	// without --raw, nothing written.
	code, _, e := run(t, "change", "--before", before, "--after", after, "--tif", tif, "--png", png, "--json")
	if code != 2 || !strings.Contains(e, "change classes of ndvi (hectares by class) needs reflectance") || strings.Count(strings.TrimSpace(e), "\n") != 0 {
		t.Fatalf("change on digital numbers without --raw: exit %d: %s", code, e)
	}
	if _, err := os.Stat(tif); err == nil {
		t.Fatalf("refused but wrote %s", tif)
	}
	code, out, e := run(t, "change", "--before", before, "--after", after, "--tif", tif, "--png", png, "--json", "--raw")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, e)
	}
	var rep changeReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	got, err := raster.Load(tif)
	if err != nil {
		t.Fatal(err)
	}
	bt, _ := raster.Load(before + ":1")
	bn, _ := raster.Load(before + ":2")
	an, _ := raster.Load(after + ":2")
	for i, v := range got.Data {
		r := float64(bt.Data[i])
		want := ndvi32(r, float64(bn.Data[i])) - ndvi32(r, float64(an.Data[i]))
		if r == 0 {
			if !math.IsNaN(float64(v)) {
				t.Fatalf("pixel %d: %g where a date is nodata, want NaN", i, v)
			}
			continue
		}
		if v != want {
			t.Fatalf("pixel %d: %g, want %g", i, v, want)
		}
	}
	if rep.Valid != 599 || rep.Invalid != 1 || rep.Alignment.Resampled {
		t.Errorf("report %+v", rep)
	}
	// The clear-cut is a loss: 100 pixels of 0.01 ha in the loss classes.
	var loss float64
	for _, c := range rep.Classes {
		if strings.Contains(c.Name, "loss") {
			loss += c.Hectares
		}
	}
	if math.Abs(loss-1) > 1e-9 {
		t.Errorf("loss classes hold %g ha, want 1 (100 pixels of 100 m²): %+v", loss, rep.Classes)
	}
	if st, err := os.Stat(png); err != nil || st.Size() == 0 {
		t.Errorf("no change PNG: %v", err)
	}
	if py, err := exec.LookPath("/usr/bin/python3"); err == nil && exec.Command(py, "-c", "from osgeo import gdal").Run() == nil {
		o, err := exec.Command(py, "-c", "import sys; from osgeo import gdal; d = gdal.Open(sys.argv[1]); print(d.GetRasterBand(1).GetDescription())", tif).Output()
		if err != nil || strings.TrimSpace(string(o)) != "dndvi" {
			t.Errorf("GDAL reads the band description as %q (%v), want dndvi", o, err)
		}
	}
}

// The after date on another grid is resampled onto the before date's, and
// the report says so; pixels it does not cover are NaN.
func TestChangeResamplesTheAfterDate(t *testing.T) {
	dir := t.TempDir()
	before, after := filepath.Join(dir, "before.tif"), filepath.Join(dir, "after.tif")
	date(t, before, 30, 20, 600000, 0, 0, 0, 0, 0)
	date(t, after, 30, 20, 600010, 0, 0, 0, 0, 0) // one pixel east
	tif := filepath.Join(dir, "d.tif")
	code, out, e := run(t, "change", "--before", before, "--after", after, "--tif", tif, "--json", "--raw")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, e)
	}
	var rep changeReport
	json.Unmarshal([]byte(out), &rep)
	if !rep.Alignment.Resampled || rep.Alignment.Method != "nearest" || math.Abs(rep.Alignment.Overlap-29.0/30) > 1e-9 {
		t.Errorf("alignment %+v", rep.Alignment)
	}
	got, _ := raster.Load(tif)
	if !math.IsNaN(float64(got.Data[0])) || math.IsNaN(float64(got.Data[1])) {
		t.Errorf("column 0 (outside the after date) %g, column 1 %g", got.Data[0], got.Data[1])
	}
	// Another CRS: a clear error, nothing written.
	other := filepath.Join(dir, "other.tif")
	b, _ := raster.Load(after + ":1")
	b.Geo = geoIn(32633)
	n, _ := raster.Load(after + ":2")
	geotiff.WriteBands(other, 30, 20, [][]float32{b.Data, n.Data}, b.Geo, geotiff.WriteOptions{Descriptions: []string{"red", "nir"}})
	tif2 := filepath.Join(dir, "never.tif")
	code, _, e = run(t, "change", "--before", before, "--after", other, "--tif", tif2, "--raw")
	if code != 1 || !strings.Contains(e, "coordinate reference systems") {
		t.Errorf("CRS mismatch: exit %d, %s", code, e)
	}
	if _, err := os.Stat(tif2); err == nil {
		t.Error("an output was written")
	}
}
