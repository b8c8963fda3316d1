package ui

import (
	"encoding/json"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestPrintLayoutDialog drives File › Print layout…: the dialog opens on
// the map shown with its header as the title, previews the page in its
// shape, writes the page the user set as PDF (A4 in points) and as PNG
// (A5 at 100 DPI in pixels, without the legend when it is unchecked), and
// refuses a resolution out of range with the reason beside the form.
func TestPrintLayoutDialog(t *testing.T) {
	w := newTestWindow(t, options{Size: 96})
	w.printLayoutDialog()
	w.Wait()
	p := w.printer
	if p == nil || w.Win.Canvas().Overlays().Top() == nil {
		t.Fatal("File › Print layout… showed no dialog")
	}
	if p.Title.Text != w.SceneLabel.Text {
		t.Errorf("title %q, want the map's header %q", p.Title.Text, w.SceneLabel.Text)
	}
	img := p.Preview.Image
	if img == nil || flat(img) {
		t.Fatal("no preview")
	}
	// A square map goes on a portrait page: the preview is A4's shape.
	if b := img.Bounds(); math.Abs(float64(b.Dx())/float64(b.Dy())-210.0/297) > 0.01 {
		t.Errorf("preview %v is not A4 portrait", b)
	}

	dir := t.TempDir()
	p.Format.SetSelected("PDF")
	write, err := p.writer()
	if err != nil {
		t.Fatal(err)
	}
	pdfPath := filepath.Join(dir, "map"+p.ext())
	if _, err := write(pdfPath); err != nil {
		t.Fatal(err)
	}
	pdf, err := os.ReadFile(pdfPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(pdf), "%PDF-") {
		t.Fatal("the PDF is not a PDF")
	}
	mb := regexp.MustCompile(`/MediaBox \[0 0 ([0-9.]+) ([0-9.]+)\]`).FindStringSubmatch(string(pdf))
	if mb == nil {
		t.Fatal("the PDF has no page size")
	}
	pw, _ := strconv.ParseFloat(mb[1], 64)
	ph, _ := strconv.ParseFloat(mb[2], 64)
	if math.Abs(pw-210/25.4*72) > 1 || math.Abs(ph-297/25.4*72) > 1 {
		t.Errorf("PDF page %.1f × %.1f pt, want A4 portrait", pw, ph)
	}

	p.Paper.SetSelected("A5")
	p.DPI.SetText("100")
	p.Format.SetSelected("PNG")
	p.Title.SetText("Stand 12")
	w.Wait()
	if !strings.Contains(p.Info.Text, "583 × 827") {
		t.Errorf("page size said %q, want A5 at 100 DPI, 583 × 827", p.Info.Text)
	}
	for _, legend := range []bool{true, false} {
		p.Legend.SetChecked(legend)
		write, err := p.writer()
		if err != nil {
			t.Fatal(err)
		}
		pngPath := filepath.Join(dir, "map-"+strconv.FormatBool(legend)+p.ext())
		g, err := write(pngPath)
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(pngPath)
		if err != nil {
			t.Fatal(err)
		}
		im, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if b := im.Bounds(); b.Dx() != 583 || b.Dy() != 827 {
			t.Errorf("PNG %v, want A5 at 100 DPI", b)
		}
		if g.Legend.Empty() == legend {
			t.Errorf("legend checked %v, the page's legend box %v", legend, g.Legend)
		}
		if g.ScaleBar.Empty() {
			t.Error("no scale bar on a georeferenced map")
		}
	}

	p.DPI.SetText("5")
	if _, err := p.writer(); err == nil || !strings.Contains(p.Info.Text, "DPI") {
		t.Errorf("5 DPI: error %v, the dialog says %q", err, p.Info.Text)
	}
}

// TestExportPNGGeoreferenced: File › Export map as PNG… writes by default
// the map alone, georeferenced: one PNG pixel a raster pixel, with the
// world file, .prj and .aux.xml GDAL reads the geotransform back from; a
// title makes it a page layout, which the dialog says before it is written.
func TestExportPNGGeoreferenced(t *testing.T) {
	w := newTestWindow(t, options{Size: 80})
	w.exportPNGDialog()
	f := w.pngForm
	if f == nil {
		t.Fatal("no PNG dialog")
	}
	if f.Legend.Checked || f.Title.Text != "" || f.Note.Text != pngMapNote {
		t.Errorf("defaults: legend %v, title %q, note %q; want the map alone", f.Legend.Checked, f.Title.Text, f.Note.Text)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "ndvi.png")
	if err := w.ExportPNG(path, f.Legend.Checked, f.Title.Text); err != nil {
		t.Fatal(err)
	}
	for _, side := range []string{".pgw", ".png.aux.xml"} {
		name := strings.TrimSuffix(path, ".png") + side
		if side == ".png.aux.xml" {
			name = path + ".aux.xml"
		}
		if _, err := os.Stat(name); err != nil {
			t.Errorf("no %s beside the PNG: %v", side, err)
		}
	}
	fi, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	im, err := png.Decode(fi)
	fi.Close()
	if err != nil {
		t.Fatal(err)
	}
	if b := im.Bounds(); b.Dx() != 80 || b.Dy() != 80 {
		t.Errorf("the map alone is %v, want 80×80 (a pixel a pixel)", b)
	}
	want, ok := w.shown.set.geo.Affine()
	if !ok {
		t.Fatal("the generated scene is not georeferenced")
	}
	if _, err := exec.LookPath("gdalinfo"); err != nil {
		if os.Getenv("CANOPY_EXPECT_GDAL") == "1" {
			t.Fatal("gdalinfo is missing")
		}
		t.Skip("GDAL's gdalinfo is not installed")
	}
	out, err := exec.Command("gdalinfo", "-json", path).Output()
	if err != nil {
		t.Fatalf("gdalinfo: %v", err)
	}
	var info struct {
		GeoTransform []float64 `json:"geoTransform"`
	}
	if err := json.Unmarshal(out, &info); err != nil {
		t.Fatal(err)
	}
	if len(info.GeoTransform) != 6 {
		t.Fatalf("GDAL reads no geotransform from the PNG: %s", out)
	}
	for i := range want {
		if math.Abs(info.GeoTransform[i]-want[i]) > 1e-6*math.Max(1, math.Abs(want[i])) {
			t.Errorf("GDAL's geotransform %v, the map's %v", info.GeoTransform, want)
			break
		}
	}

	f.Title.SetText("Stand 12")
	if f.Note.Text != pngLayoutNote {
		t.Errorf("with a title the dialog says %q", f.Note.Text)
	}
	lay := filepath.Join(dir, "layout.png")
	if err := w.ExportPNG(lay, f.Legend.Checked, f.Title.Text); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(strings.TrimSuffix(lay, ".png") + ".pgw"); err == nil {
		t.Error("a layout PNG has a world file")
	}
}
