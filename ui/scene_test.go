package ui

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"fyne.io/fyne/v2/test"

	"canopy/compute"
	"canopy/compute/fake"
	"canopy/compute/geotiff"
	"canopy/ui/render/chart"
)

// writeOrtho writes a w×h float32 multi-band GeoTIFF (an orthomosaic) with
// band descriptions desc (empty: none), band b holding 0.05·(b+1) plus a
// ramp along x so that indices vary; an "alpha" band is 0 on the first
// cols columns, 255 elsewhere. It returns the path.
func writeOrtho(t *testing.T, name string, w, h, cols int, desc []string) string {
	t.Helper()
	bands := make([][]float32, len(desc))
	for b := range bands {
		bands[b] = make([]float32, w*h)
		for i := range bands[b] {
			x := i % w
			switch {
			case desc[b] == "alpha" && x < cols:
				bands[b][i] = 0
			case desc[b] == "alpha":
				bands[b][i] = 255
			default:
				bands[b][i] = 0.05*float32(b+1) + 0.002*float32(x)
			}
		}
	}
	path := filepath.Join(t.TempDir(), name)
	if err := geotiff.WriteBands(path, w, h, bands, fake.GeoRef(), geotiff.WriteOptions{Descriptions: desc}); err != nil {
		t.Fatal(err)
	}
	return path
}

// openTyped opens a product by typing its path, as a user does.
func openTyped(w *window, path string) {
	w.source.Path.SetText("")
	test.Type(w.source.Path, path)
	test.Tap(w.source.OpenPath)
	w.Wait()
}

// TestOpenOrthomosaic: an orthomosaic whose bands are described opens as a
// scene: the scene line says what it is, every role is filled from the
// descriptions, its alpha band masks, and the mask toggle changes the
// masked pixel count.
func TestOpenOrthomosaic(t *testing.T) {
	const w0, h0, cols = 40, 30, 7
	path := writeOrtho(t, "ortho.tif", w0, h0, cols, []string{"blue", "green", "red", "nir", "alpha"})
	w := newTestWindow(t, options{})
	openTyped(w, path)
	if msg := dialogText(w); msg != "" {
		t.Fatalf("opening the orthomosaic: %s", msg)
	}
	if got := w.source.SceneLine.Text; got != "orthomosaic · date unknown · ortho · cloud share unknown" {
		t.Errorf("scene line %q", got)
	}
	if got := w.bands.Row("red").Detail.Text; got != "band 3 of ortho.tif (its band description) · values as stored (float)" {
		t.Errorf("red row %q", got)
	}
	if got := w.bands.Row("nir").Band.Selected; got != "Band 4" {
		t.Errorf("nir row's band %q", got)
	}
	plane, name, wd, ht := w.Plane()
	if name != "ndvi" || wd != w0 || ht != h0 {
		t.Fatalf("map %s %d×%d", name, wd, ht)
	}
	if w.Masked() != cols*h0 {
		t.Errorf("masked %d pixels, want the alpha band's %d", w.Masked(), cols*h0)
	}
	if !strings.Contains(w.Status.Text, fmt.Sprintf("masked %d pixels", cols*h0)) {
		t.Errorf("status %q does not say what the mask removed", w.Status.Text)
	}
	for y := range h0 {
		for x := range w0 {
			v := plane[y*w0+x]
			red, nir := float64(float32(0.15+0.002*float32(x))), float64(float32(0.2+0.002*float32(x)))
			want := (nir - red) / (nir + red)
			if x < cols && v == v || x >= cols && math.Abs(float64(v)-want) > 1e-6 {
				t.Fatalf("ndvi at (%d,%d) = %v, want %v (masked: %v)", x, y, v, want, x < cols)
			}
		}
	}

	// No mask: nothing masked, the alpha-0 pixels computed.
	test.Tap(w.source.Mask)
	w.Wait()
	if w.source.Mask.Checked || w.Masked() != 0 {
		t.Fatalf("mask off: checked %v, %d masked", w.source.Mask.Checked, w.Masked())
	}
	if p, _, _, _ := w.Plane(); p[0] != p[0] {
		t.Error("with no mask, the alpha-0 pixel is still NaN")
	}
	test.Tap(w.source.Mask)
	w.Wait()
	if w.Masked() != cols*h0 {
		t.Errorf("mask back on: %d masked", w.Masked())
	}

	// Another index of the same scene: blue comes from band 1.
	w.index.Index.SetSelected("EVI")
	w.Wait()
	if _, name, _, _ := w.Plane(); name != "evi" {
		t.Fatalf("map %s after picking EVI", name)
	}
	if b, _ := w.shown.set.band("blue"); !strings.HasSuffix(b.Source, ":1") {
		t.Errorf("blue read from %q, want band 1", b.Source)
	}
}

// TestStartOnProduct: the window opens on a product and an index given on
// the command line.
func TestStartOnProduct(t *testing.T) {
	path := writeOrtho(t, "start.tif", 16, 12, 3, []string{"blue", "green", "red", "nir", "alpha"})
	w := newTestWindow(t, options{Product: path, Index: "evi", Mask: "none"})
	if _, name, wd, _ := w.Plane(); name != "evi" || wd != 16 {
		t.Fatalf("start map %s, %d wide", name, wd)
	}
	if w.Masked() != 0 || w.source.Mask.Checked {
		t.Errorf("--mask none: %d masked, toggle on %v", w.Masked(), w.source.Mask.Checked)
	}
	if w.index.Index.Selected != "EVI" || !strings.HasPrefix(w.source.SceneLine.Text, "orthomosaic") {
		t.Errorf("picker %q, scene line %q", w.index.Index.Selected, w.source.SceneLine.Text)
	}
}

// TestStartOnFormula: a formula given on the command line is computed.
func TestStartOnFormula(t *testing.T) {
	w := newTestWindow(t, options{Expr: "nir / red"})
	if _, name, _, _ := w.Plane(); name != "nir / red" || w.index.Index.Selected != customLabel {
		t.Errorf("start map %q, picker %q", name, w.index.Index.Selected)
	}
}

// TestOrthomosaicAsksForRoles: an index needing a role the descriptions do
// not give is refused with the role it needs; picking the band of that role
// computes it.
func TestOrthomosaicAsksForRoles(t *testing.T) {
	path := writeOrtho(t, "drone.tif", 24, 16, 0, []string{"", "", "red", "nir", ""})
	w := newTestWindow(t, options{})
	openTyped(w, path)
	if _, name, wd, _ := w.Plane(); name != "ndvi" || wd != 24 {
		t.Fatalf("NDVI of the described bands: %s, %d wide", name, wd)
	}
	w.index.Index.SetSelected("NDRE")
	w.Wait()
	if !w.Compute.Disabled() || !strings.Contains(w.Status.Text, "NDRE needs the rededge1 band: choose its band under Bands") {
		t.Errorf("NDRE without rededge1: Compute enabled %v, status %q", !w.Compute.Disabled(), w.Status.Text)
	}
	row := w.bands.Row("rededge1")
	if !row.Band.Visible() || row.Band.Selected != "" || !strings.Contains(row.Detail.Text, "choose its band") {
		t.Errorf("the rededge1 row does not ask: band %q, %q", row.Band.Selected, row.Detail.Text)
	}
	row.Band.SetSelected("Band 5")
	w.Wait()
	if _, name, _, _ := w.Plane(); name != "ndre" {
		t.Fatalf("after choosing band 5 the map shows %s", name)
	}
	if b, _ := w.shown.set.band("rededge1"); !strings.HasSuffix(b.Source, ":5") {
		t.Errorf("rededge1 read from %q", b.Source)
	}
	if !strings.Contains(row.Detail.Text, "band 5 of drone.tif (your choice)") {
		t.Errorf("rededge1 row %q", row.Detail.Text)
	}
}

// TestBandsFromFiles: bands of plain files are asked for role by role, the
// band of a multi-band file without descriptions picked per role (4 bands:
// B, G, R, NIR preselected); and a described file opened for one role
// fills every role it describes.
func TestBandsFromFiles(t *testing.T) {
	plain := writeOrtho(t, "plain.tif", 20, 10, 0, []string{"", "", "", ""})
	w := newTestWindow(t, options{})
	if err := w.bands.SetFile("red", plain); err != nil {
		t.Fatal(err)
	}
	if err := w.bands.SetFile("nir", plain); err != nil {
		t.Fatal(err)
	}
	w.Wait()
	if got := w.bands.Row("red").Band.Selected + "," + w.bands.Row("nir").Band.Selected; got != "Band 3,Band 4" {
		t.Errorf("preselected bands %s", got)
	}
	ndvi, wd, _ := ndviOf(w)
	if wd != 20 {
		t.Fatalf("map %d wide", wd)
	}
	red, nir := float64(float32(0.15)), float64(float32(0.2))
	if want := (nir - red) / (nir + red); math.Abs(float64(ndvi[0])-want) > 1e-6 {
		t.Errorf("ndvi[0] = %v, want %v (bands 3 and 4)", ndvi[0], want)
	}
	w.bands.Row("red").Band.SetSelected("Band 2")
	w.Wait()
	ndvi, _, _ = ndviOf(w)
	red = float64(float32(0.1))
	if want := (nir - red) / (nir + red); math.Abs(float64(ndvi[0])-want) > 1e-6 {
		t.Errorf("with red from band 2: ndvi[0] = %v, want %v", ndvi[0], want)
	}

	described := writeOrtho(t, "ms.tif", 20, 10, 0, []string{"blue", "green", "red", "nir"})
	if err := w.bands.SetFile("red", described); err != nil {
		t.Fatal(err)
	}
	w.Wait()
	if w.src.kind != srcProduct || !strings.Contains(w.bands.Row("nir").Detail.Text, "band 4 of ms.tif") {
		t.Errorf("a described file did not fill the roles: nir row %q", w.bands.Row("nir").Detail.Text)
	}
}

// Product fixtures, made once by scripts/fixtures-products (GDAL's Python
// bindings and NumPy).
var (
	fixtureOnce sync.Once
	fixtureDir  string
	fixtureErr  string
)

const s2New = "S2A_MSIL2A_20230615T102021_N0500_R065_T32TQM_20230615T163207"

// productFixture returns the path of a fixture product, skipping the test
// (failing it under CANOPY_EXPECT_GDAL=1) when they cannot be made.
func productFixture(t *testing.T, name string) string {
	t.Helper()
	fixtureOnce.Do(func() {
		dir, err := os.MkdirTemp("", "canopy-ui-products-")
		if err != nil {
			fixtureErr = err.Error()
			return
		}
		script, _ := filepath.Abs("../scripts/fixtures-products")
		if _, err := exec.LookPath("gdal_translate"); err != nil {
			fixtureErr = "GDAL (Debian gdal-bin, python3-gdal) is not installed: the fixture products cannot be made"
		} else if out, err := exec.Command(script, dir).CombinedOutput(); err != nil {
			fixtureErr = fmt.Sprintf("scripts/fixtures-products failed: %v: %s", err, strings.TrimSpace(string(out)))
		} else {
			fixtureDir = dir
		}
	})
	if fixtureDir == "" {
		if os.Getenv("CANOPY_EXPECT_GDAL") == "1" {
			t.Fatal(fixtureErr)
		}
		t.Skip(fixtureErr)
	}
	return filepath.Join(fixtureDir, name)
}

func TestMain(m *testing.M) {
	code := m.Run()
	if fixtureDir != "" {
		os.RemoveAll(fixtureDir)
	}
	os.Exit(code)
}

// TestOpenSentinel2: a Sentinel-2 L2A product (folder and zip) opens with
// its sensor, date, tile and cloud share; its roles are filled from its
// metadata; the NDVI equals NumPy's reference (offset −1000, SCL mask);
// the mask toggle and the mask buffer change the masked pixel count.
func TestOpenSentinel2(t *testing.T) {
	safe := productFixture(t, s2New+".SAFE")
	w := newTestWindow(t, options{})
	openTyped(w, safe)
	if msg := dialogText(w); msg != "" {
		t.Fatalf("opening the product: %s", msg)
	}
	if got := w.source.SceneLine.Text; got != "Sentinel-2A · 2023-06-15 · tile 32TQM · cloud 12.5 %" {
		t.Errorf("scene line %q", got)
	}
	if got := w.bands.Row("red").Detail.Text; got != "B04 · 10 m · uint16 · reflectance = (DN − 1000) × 0.0001" {
		t.Errorf("red row %q", got)
	}
	if got := w.bands.note.Text; !strings.Contains(got, "swir1") {
		t.Errorf("the other roles are not listed: %q", got)
	}
	ref := ndviReference(t, s2New)
	plane, _, wd, ht := ndviPlane(t, w)
	if len(ref) != wd*ht {
		t.Fatalf("map %d×%d, reference %d pixels", wd, ht, len(ref))
	}
	for i, v := range plane {
		r := ref[i]
		if math.IsNaN(r) != (v != v) || !math.IsNaN(r) && math.Abs(float64(v)-r) > 1e-6 {
			t.Fatalf("ndvi[%d] = %v, NumPy %v", i, v, r)
		}
	}
	masked := w.Masked()
	if masked == 0 {
		t.Fatal("the SCL mask masked nothing")
	}
	test.Tap(w.source.Mask)
	w.Wait()
	if w.Masked() != 0 {
		t.Errorf("with no mask %d pixels masked", w.Masked())
	}
	test.Tap(w.source.Mask)
	w.source.Buffer.SetText("2")
	w.source.Buffer.OnSubmitted("2")
	w.Wait()
	if w.Masked() <= masked {
		t.Errorf("a 2-pixel buffer masks %d pixels, no more than %d without", w.Masked(), masked)
	}

	// The zip opens the same.
	openTyped(w, safe+".zip")
	if got := w.source.SceneLine.Text; !strings.HasPrefix(got, "Sentinel-2A · 2023-06-15 · tile 32TQM") {
		t.Errorf("zip scene line %q", got)
	}
	if _, name, wd2, _ := w.Plane(); name != "ndvi" || wd2 != wd {
		t.Errorf("zip map %s %d wide", name, wd2)
	}
}

// ndviPlane is the NDVI shown.
func ndviPlane(t *testing.T, w *window) ([]float32, string, int, int) {
	t.Helper()
	p, name, wd, ht := w.Plane()
	if name != "ndvi" {
		t.Fatalf("the map shows %q", name)
	}
	return p, name, wd, ht
}

// ndviReference reads the fixtures' NumPy NDVI of a product (NaN as null).
func ndviReference(t *testing.T, product string) []float64 {
	t.Helper()
	b, err := os.ReadFile(productFixture(t, "reference.json"))
	if err != nil {
		t.Fatal(err)
	}
	var all map[string]map[string][][]*float64
	if err := json.Unmarshal(b, &all); err != nil {
		t.Fatal(err)
	}
	var out []float64
	for _, row := range all[product]["ndvi"] {
		for _, v := range row {
			if v == nil {
				out = append(out, math.NaN())
			} else {
				out = append(out, *v)
			}
		}
	}
	return out
}

// TestCompareOnMaskedScene: Compare all on a masked product times every
// backend in every mode and all verify.
func TestCompareOnMaskedScene(t *testing.T) {
	path := writeOrtho(t, "masked.tif", 16, 12, 4, []string{"blue", "green", "red", "nir", "alpha"})
	cpu := &fakeBackend{name: compute.NameGo, available: true}
	gl := &fakeGL{fakeBackend: fakeBackend{name: compute.NameGL, available: true, gpu: true}}
	w := newTestWindow(t, options{Product: path, Repeat: 1}, hooks{backends: []compute.Backend{cpu, gl}})
	if w.Masked() == 0 {
		t.Fatal("nothing masked")
	}
	test.Tap(w.CompareAll)
	w.Wait()
	var labels []string
	for _, r := range w.Results() {
		labels = append(labels, chart.Label(r.Backend, r.Mode))
	}
	if got := strings.Join(labels, ","); got != "go,gl:mapped,gl:subdata" {
		t.Errorf("Compare all ran %s", got)
	}
	if !strings.Contains(w.Status.Text, "all verified") {
		t.Errorf("status %q", w.Status.Text)
	}
}
