package cli

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"canopy/compute/geotiff"
	"canopy/compute/index"
	"canopy/compute/raster"
	"canopy/compute/source"
)

// twoBandDN writes a plain two-band uint16 TIFF (red, NIR digital
// numbers) without georeferencing, as a camera or a scanner makes one.
func twoBandDN(t *testing.T, path string, w, h int) {
	t.Helper()
	r, n := make([]uint16, w*h), make([]uint16, w*h)
	for i := range r {
		r[i], n[i] = uint16(300+i%50), uint16(2000+i%300)
	}
	if err := geotiff.WriteBands(path, w, h, [][]uint16{r, n}, nil, geotiff.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestRadiometryOneWord: an integer TIFF with no known scale is digital
// numbers whether it comes through --band or --scene, and compute's text
// and JSON and batch.jsonl say it with canopy scene's word.
func TestRadiometryOneWord(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "cam.tif")
	twoBandDN(t, p, 16, 8)
	for _, args := range [][]string{
		{"--band", "red=" + p + ":1", "--band", "nir=" + p + ":2"},
		{"--scene", p, "--bands", "red=1,nir=2"},
	} {
		code, out, e := run(t, append([]string{"compute", "--backend", "go", "--index", "ndvi"}, args...)...)
		if code != 0 || !strings.Contains(out, "raw digital numbers") {
			t.Errorf("%v: exit %d, no digital-numbers note: %s %s", args, code, out, e)
		}
		code, out, e = run(t, append([]string{"compute", "--backend", "go", "--index", "ndvi", "--json"}, args...)...)
		var rep computeReport
		if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || !rep.DigitalNumbers || rep.Values != "digital numbers" {
			t.Errorf("%v --json: exit %d, %s %s", args, code, out, e)
		}
	}
	out := filepath.Join(dir, "out")
	code, so, e := run(t, "batch", "--out", out, "--index", "ndvi", "--bands", "red=1,nir=2", "--progress", "off", p)
	ls := readBatchLog(t, out)
	if code != 0 || len(ls) != 1 || ls[0].Status != "done" || ls[0].Values != "digital numbers" {
		t.Errorf("batch of a plain two-band TIFF: exit %d, %+v: %s %s", code, ls, so, e)
	}
}

// TestRawRefused: an index with constants (EVI, SAVI) on digital numbers
// is refused with the reason on every command, through --band and
// --scene alike, nothing written; --raw runs it; NDVI (a normalised
// difference, scale-free) runs without it.
func TestRawRefused(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "cam.tif")
	twoBandDN(t, p, 16, 8)
	tif := filepath.Join(dir, "savi.tif")
	for _, args := range [][]string{
		{"--band", "red=" + p + ":1", "--band", "nir=" + p + ":2"},
		{"--scene", p, "--bands", "red=1,nir=2"},
	} {
		code, out, e := run(t, append([]string{"compute", "--backend", "go", "--index", "ndvi,savi", "--tif", tif}, args...)...)
		if code != 2 || !strings.Contains(e, "savi needs reflectance") || !strings.Contains(e, "--raw") {
			t.Errorf("%v: exit %d: %s %s", args, code, out, e)
		}
		if _, err := os.Stat(tif); err == nil {
			t.Errorf("%v: refused but wrote %s", args, tif)
		}
		if code, out, e := run(t, append([]string{"compute", "--backend", "go", "--index", "ndvi,savi", "--raw"}, args...)...); code != 0 {
			t.Errorf("%v --raw: exit %d: %s %s", args, code, out, e)
		}
	}
	out := filepath.Join(dir, "out")
	code, _, _ := run(t, "batch", "--out", out, "--index", "evi2", "--bands", "red=1,nir=2", "--progress", "off", p)
	if ls := readBatchLog(t, out); code != 1 || len(ls) != 1 || !strings.Contains(ls[0].Error, "evi2 needs reflectance") {
		t.Errorf("batch evi2 on digital numbers: exit %d, %+v", code, ls)
	}
	code, _, e := run(t, "batch", "--out", out, "--index", "evi2", "--raw", "--bands", "red=1,nir=2", "--progress", "off", p)
	if code != 0 {
		t.Errorf("batch --raw: exit %d: %s", code, e)
	}
	if !source.NeedsReflectance(index.MustParse("2.5 * (nir - red) / (nir + 6 * red + 1)")) || source.NeedsReflectance(index.MustParse("(nir - red) / (nir + red)")) || source.NeedsReflectance(index.MustParse("nir / red")) ||
		source.NeedsReflectance(index.MustParse("clamp((nir - swir1) / (nir + swir1) * 2, -1, 1)")) || !source.NeedsReflectance(index.MustParse("(1 + 0.5) * (nir - red) / (nir + red + 0.5)")) {
		t.Error("NeedsReflectance: constants are the rule")
	}
}

// TestClassTablesRefused: a class table (zonal's hectares by NDVI class)
// on digital numbers is refused with one line, nothing written; --raw or a
// --scale runs it.
func TestClassTablesRefused(t *testing.T) {
	dir := t.TempDir()
	red, nir := filepath.Join(dir, "red.tif"), filepath.Join(dir, "nir.tif")
	r, n := make([]uint16, 40*30), make([]uint16, 40*30)
	for i := range r {
		r[i], n[i] = uint16(300+i%50), uint16(2000+i%300)
	}
	for _, f := range []struct {
		p string
		v []uint16
	}{{red, r}, {nir, n}} {
		if err := geotiff.WriteBands(f.p, 40, 30, [][]uint16{f.v}, geoIn(32632), geotiff.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	_, _, stands := zonalFixture(t, dir, 2, 12)
	csv := filepath.Join(dir, "z.csv")
	code, out, e := run(t, "zonal", "--red", red, "--nir", nir, "--stands", stands, "--backend", "go", "--csv", csv)
	if code != 2 || !strings.Contains(e, "the class table of ndvi (hectares by class in every stand) needs reflectance") || !strings.Contains(e, "--raw") ||
		strings.Count(strings.TrimSpace(e), "\n") != 0 {
		t.Fatalf("zonal on digital numbers: exit %d: %s %s", code, out, e)
	}
	if _, err := os.Stat(csv); err == nil {
		t.Fatalf("refused but wrote %s", csv)
	}
	for _, extra := range [][]string{{"--raw"}, {"--scale", "red=0.0001", "--scale", "nir=0.0001"}} {
		if code, out, e := run(t, append([]string{"zonal", "--red", red, "--nir", nir, "--stands", stands, "--backend", "go", "--csv", csv}, extra...)...); code != 0 {
			t.Errorf("zonal %v: exit %d: %s %s", extra, code, out, e)
		}
	}
}

// TestScaleFlag: --scale ROLE=S[,O] makes digital numbers reflectance on
// every command: SAVI runs, and its values are those of the scaled bands.
func TestScaleFlag(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "cam.tif")
	twoBandDN(t, p, 16, 8)
	sc := []string{"--scale", "red=0.0001", "--scale", "nir=0.0001,0.01"}
	for _, args := range [][]string{
		{"--band", "red=" + p + ":1", "--band", "nir=" + p + ":2"},
		{"--scene", p, "--bands", "red=1,nir=2"},
	} {
		tif := filepath.Join(t.TempDir(), "savi.tif")
		code, out, e := run(t, append(append([]string{"compute", "--backend", "go", "--index", "savi", "--json", "--tif", tif}, sc...), args...)...)
		var rep computeReport
		if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || rep.DigitalNumbers || rep.Values != "reflectance" {
			t.Fatalf("%v: exit %d: %s %s", args, code, out, e)
		}
		g, err := raster.Load(tif)
		if err != nil {
			t.Fatal(err)
		}
		// Pixel 0: red 300, NIR 2000 stored.
		r, n := 300*0.0001, 2000*0.0001+0.01
		if want := 1.5 * (n - r) / (n + r + 0.5); math.Abs(float64(g.Data[0])-want) > 1e-6 {
			t.Errorf("%v: SAVI %g, want %g", args, g.Data[0], want)
		}
	}
	out := filepath.Join(dir, "out")
	code, _, e := run(t, append(append([]string{"batch", "--out", out, "--index", "savi", "--bands", "red=1,nir=2", "--progress", "off"}, sc...), p)...)
	if ls := readBatchLog(t, out); code != 0 || ls[0].Values != "reflectance" {
		t.Errorf("batch --scale: exit %d %s %+v", code, e, ls)
	}
	if code, _, e := run(t, "compute", "--scale", "red=x", "--band", "red="+p+":1", "--band", "nir="+p+":2"); code != 2 || !strings.Contains(e, "bad --scale") {
		t.Errorf("bad --scale: exit %d %s", code, e)
	}
}
