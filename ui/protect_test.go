package ui

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"canopy/ui/render/layout"
)

// TestExportsNeverOverwriteInputs: with a product open, every export of
// the window refuses a path that is one of the product's files (a band
// JPEG 2000, the SCL mask, the metadata) and leaves it as it was.
func TestExportsNeverOverwriteInputs(t *testing.T) {
	src := productFixture(t, s2New+".SAFE")
	safe := filepath.Join(t.TempDir(), s2New+".SAFE")
	if out, err := exec.Command("cp", "-r", src, safe).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v: %s", err, out)
	}
	w := newTestWindow(t, options{})
	openTyped(w, safe)
	if msg := dialogText(w); msg != "" {
		t.Fatalf("opening the product: %s", msg)
	}
	var targets []string
	for _, pat := range []string{"GRANULE/*/IMG_DATA/R10m/*_B04_10m.jp2", "GRANULE/*/IMG_DATA/R20m/*_SCL_20m.jp2", "MTD_MSIL2A.xml"} {
		m, _ := filepath.Glob(filepath.Join(safe, pat))
		if len(m) != 1 {
			t.Fatalf("%s: %v", pat, m)
		}
		targets = append(targets, m[0])
	}
	exports := map[string]func(string) error{
		"GeoTIFF": w.ExportGeoTIFF,
		"PNG":     func(p string) error { return w.ExportPNG(p, true, "t") },
		"map":     func(p string) error { _, err := w.ExportMap(p); return err },
		"layout":  func(p string) error { _, err := w.ExportLayout(p, layout.Options{}); return err },
		"session": w.SaveSession,
	}
	for _, target := range targets {
		before, _ := os.ReadFile(target)
		for what, export := range exports {
			err := export(target)
			if err == nil || !strings.Contains(err.Error(), "an input") {
				t.Errorf("%s export over %s: %v, want a refusal", what, filepath.Base(target), err)
			}
			if after, _ := os.ReadFile(target); !bytes.Equal(before, after) {
				t.Fatalf("%s export changed %s", what, filepath.Base(target))
			}
		}
	}
}
