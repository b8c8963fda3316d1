package ui

import (
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2/widget"

	"canopy/compute"
	"canopy/compute/fake"
	"canopy/compute/geotiff"
)

// dnPair writes red and NIR digital numbers (uint16, no scale or offset)
// as two georeferenced files.
func dnPair(t *testing.T) map[string]string {
	t.Helper()
	dir := t.TempDir()
	const wd, ht = 16, 8
	red, nir := make([]uint16, wd*ht), make([]uint16, wd*ht)
	for i := range red {
		red[i], nir[i] = uint16(800+i), 3000
	}
	rp, np := filepath.Join(dir, "red.tif"), filepath.Join(dir, "nir.tif")
	for p, b := range map[string][]uint16{rp: red, np: nir} {
		if err := geotiff.WriteBands(p, wd, ht, [][]uint16{b}, fake.GeoRef(), geotiff.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return map[string]string{"red": rp, "nir": np}
}

// classText is the statistics panel's class area as text.
func classText(w *window) string {
	var out []string
	for _, o := range w.stats.classes.Objects {
		if l, ok := o.(*widget.Label); ok {
			out = append(out, l.Text)
		}
	}
	return strings.Join(out, "\n")
}

// TestGUIScaleAndRaw: canopy gui takes --scale and --raw as the terminal
// does. On digital numbers the class table is refused with the terminal's
// line and SAVI (an index with constants) is refused; --raw shows and runs
// both; --scale makes the bands reflectance, and the bands panel says
// each band's scale.
func TestGUIScaleAndRaw(t *testing.T) {
	f, err := parseFlags([]string{"--red", "r.tif", "--nir", "n.tif", "--scale", "red=0.0001", "--scale", "nir=2.75e-5,-0.2", "--raw"})
	if err != nil || !f.opts.Raw || f.opts.Scale["red"] != (compute.Radiometry{Scale: 1e-4}) || f.opts.Scale["nir"] != (compute.Radiometry{Scale: 2.75e-5, Offset: -0.2}) {
		t.Fatalf("flags: %v %+v", err, f.opts)
	}
	if _, err := parseFlags([]string{"--scale", "red"}); err == nil || !strings.Contains(err.Error(), "bad --scale") {
		t.Errorf("a bad --scale: %v", err)
	}
	for _, f := range []string{"--bands ROLE=B", "--scale ROLE=S[,O]", "--raw "} {
		if !strings.Contains(usage, "\n  "+f) {
			t.Errorf("canopy gui --help does not list %s", f)
		}
	}
	bands := dnPair(t)

	w := newTestWindow(t, options{Bands: bands})
	if got := classText(w); !strings.Contains(got, "the class table of NDVI needs reflectance") || !strings.Contains(got, "--raw") || w.stats.clsTitle.Visible() {
		t.Errorf("class table on digital numbers: %q", got)
	}
	w.index.Index.SetSelected("SAVI")
	w.Wait()
	if !strings.Contains(w.Status.Text, "needs reflectance") && !strings.Contains(dialogText(w), "needs reflectance") {
		t.Errorf("SAVI on digital numbers: status %q, dialog %q", w.Status.Text, dialogText(w))
	}

	w = newTestWindow(t, options{Bands: bands, Raw: true})
	if got := classText(w); strings.Contains(got, "needs reflectance") || !w.stats.clsTitle.Visible() {
		t.Errorf("class table with --raw: %q", got)
	}
	w.index.Index.SetSelected("SAVI")
	w.Wait()
	if _, name, _, _ := w.Plane(); name != "savi" {
		t.Errorf("SAVI with --raw: the map shows %q (status %q)", name, w.Status.Text)
	}

	w = newTestWindow(t, options{Bands: bands, Scale: map[string]compute.Radiometry{"red": {Scale: 1e-4}, "nir": {Scale: 2.75e-5, Offset: -0.2}}})
	if w.stats.Raw.Visible() || !w.stats.clsTitle.Visible() {
		t.Errorf("scaled bands flagged as digital numbers: %q, classes %q", w.stats.Raw.Text, classText(w))
	}
	if got := w.bands.Row("red").Detail.Text; !strings.HasSuffix(got, " · value = DN × 0.0001 (--scale)") {
		t.Errorf("red row %q", got)
	}
	if got := w.bands.Row("nir").Detail.Text; !strings.HasSuffix(got, " · value = DN × 2.75e-05 − 0.2 (--scale)") {
		t.Errorf("nir row %q", got)
	}
	_, _, wd, _ := w.Plane()
	plane, _, _, _ := w.Plane()
	red, nir := float32(800*1e-4), float32(3000*2.75e-5-0.2)
	if want := (nir - red) / (nir + red); wd != 16 || plane[0] != want {
		t.Errorf("NDVI of the scaled bands at 0: %v, want %v", plane[0], want)
	}
}

// TestLargeDigitalNumbersRefused: the large-image path (read by views)
// keeps the rule: SAVI on digital numbers is refused, and runs with --raw.
func TestLargeDigitalNumbersRefused(t *testing.T) {
	defer func(b int64) { largeBytes = b }(largeBytes)
	largeBytes = 100 // the 16 x 8 pair is larger
	bands := dnPair(t)
	w := newTestWindow(t, options{Bands: bands, Index: "savi"})
	if w.shown != nil && w.shown.large != nil {
		t.Fatalf("SAVI of digital numbers shown by views (status %q)", w.Status.Text)
	}
	if !strings.Contains(w.Status.Text+dialogText(w), "needs reflectance") {
		t.Errorf("status %q, dialog %q", w.Status.Text, dialogText(w))
	}
	w = newTestWindow(t, options{Bands: bands, Index: "savi", Raw: true})
	if w.shown == nil || w.shown.large == nil || !w.shown.set.raw {
		t.Fatalf("SAVI with --raw not shown by views as digital numbers (status %q)", w.Status.Text)
	}
}
