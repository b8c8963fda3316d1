package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"canopy/compute/geotiff"
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
