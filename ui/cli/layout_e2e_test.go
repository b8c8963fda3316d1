package cli

import (
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// canopy compute --png writes the map alone with its world file, a .prj and
// GDAL's .aux.xml, which gdalinfo reads back as the input's CRS; --layout
// writes a print layout as PNG and as PDF.
func TestComputeLayoutAndSidecars(t *testing.T) {
	dir := t.TempDir()
	red, nir := fakePair(t, dir, "120x80")
	mp := filepath.Join(dir, "map.png")
	lp, pdf := filepath.Join(dir, "layout.png"), filepath.Join(dir, "layout.pdf")
	for _, args := range [][]string{
		{"--png", mp, "--layout", lp, "--layout-size", "800x600", "--title", ""},
		{"--layout", pdf, "--paper", "A4", "--grid"},
	} {
		if code, _, e := run(t, append([]string{"compute", "--red", red, "--nir", nir}, args...)...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, e)
		}
	}
	for _, p := range []string{"map.pgw", "map.prj", "map.png.aux.xml"} {
		if st, err := os.Stat(filepath.Join(dir, p)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", p, err)
		}
	}
	prj, _ := os.ReadFile(filepath.Join(dir, "map.prj"))
	if !strings.Contains(string(prj), "UTM") {
		t.Errorf(".prj %q names no UTM zone", prj)
	}
	f, err := os.Open(lp)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := png.DecodeConfig(f)
	f.Close()
	if err != nil || cfg.Width != 800 || cfg.Height != 600 {
		t.Errorf("layout PNG %dx%d (%v), want 800x600", cfg.Width, cfg.Height, err)
	}
	if b, err := os.ReadFile(pdf); err != nil || !strings.HasPrefix(string(b), "%PDF-") {
		t.Errorf("layout PDF: %v", err)
	}
	if _, err := exec.LookPath("gdalinfo"); err == nil {
		out, err := exec.Command("gdalinfo", mp).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "32632") || !strings.Contains(string(out), "Pixel Size = (10.000000000000000,-10.000000000000000)") {
			t.Errorf("gdalinfo of the map: %v\n%s", err, out)
		}
	}
}
