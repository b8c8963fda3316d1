package cli

import (
	"context"
	"flag"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"canopy/compute"
	"canopy/compute/fake"
	"canopy/compute/pipeline"
	"canopy/compute/request"
)

// layoutRunOf parses the layout flags from args and runs a fake
// landscape of w×h through the block pipeline into the layouts.
func layoutRunOf(t *testing.T, w, h int, index string, st pngStyle, args ...string) ([]string, error) {
	t.Helper()
	fs := flag.NewFlagSet("compute", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var lf layoutFlags
	lf.register(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	ix := indexFlags{list: index}
	sel, err := ix.parse()
	if err != nil {
		t.Fatal(err)
	}
	if err := lf.check(sel, st.ramp); err != nil {
		return nil, err
	}
	bands, geo, err := fake.Bands(fake.Landscape, w, h, 3, sel.roles())
	if err != nil {
		t.Fatal(err)
	}
	in, err := pipeline.Memory(bands, nil)
	if err != nil {
		t.Fatal(err)
	}
	run, err := lf.start(w, h, sel.names)
	if err != nil {
		t.Fatal(err)
	}
	b, err := compute.New(compute.NameGo)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	// Small blocks, so that the maps arrive in many pieces.
	if _, err := pipeline.Run(context.Background(), in, pipeline.Options{Backend: b, Names: sel.names, Exprs: sel.exprs, BlockRows: 37}, run.sinks...); err != nil {
		t.Fatal(err)
	}
	return run.finish(nil, geo, sel, st, lf.metaOf(nil, in.Bands, false))
}

func TestLayoutFlagsWriteLayouts(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "stand.png")
	paths, err := layoutRunOf(t, 600, 400, "ndvi,ndmi", pngStyle{ramp: "classes"}, "--layout", out, "--layout-size", "800x600", "--grid", "--date", "2023-06-15")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{filepath.Join(dir, "stand-ndvi.png"), filepath.Join(dir, "stand-ndmi.png")}; strings.Join(paths, ",") != strings.Join(want, ",") {
		t.Fatalf("wrote %q, want %q", paths, want)
	}
	f, err := os.Open(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(f)
	f.Close()
	if err != nil || img.Bounds().Dx() != 800 || img.Bounds().Dy() != 600 {
		t.Fatalf("layout %v %v", img, err)
	}
	// A PDF on paper: the map embedded at the frame's pixels at the DPI.
	pdf := filepath.Join(dir, "stand.pdf")
	if _, err := layoutRunOf(t, 600, 400, "evi", pngStyle{ramp: "rdylgn", stretch: "percentile", title: "Stand 12"}, "--layout", pdf, "--paper", "a5", "--dpi", "120"); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(pdf)
	if err != nil || !strings.HasPrefix(string(data), "%PDF") {
		t.Fatalf("PDF: %v", err)
	}
	if m := regexp.MustCompile(`/Subtype /Image\s*/Width (\d+)`).FindStringSubmatch(string(data)); m == nil {
		t.Error("no map image in the PDF")
	}
}

func TestLayoutFlagsCheck(t *testing.T) {
	dir := t.TempDir()
	for name, c := range map[string]struct {
		index string
		ramp  string
		args  []string
		want  string
	}{
		"extension":       {"ndvi", "rdylgn", []string{"--layout", filepath.Join(dir, "a.jpg")}, ".png, .pdf or .svg"},
		"size":            {"ndvi", "rdylgn", []string{"--layout", filepath.Join(dir, "a.png"), "--layout-size", "big"}, "WxH"},
		"size and paper":  {"ndvi", "rdylgn", []string{"--layout", filepath.Join(dir, "a.png"), "--layout-size", "800x600", "--paper", "a4"}, "choose one"},
		"paper":           {"ndvi", "rdylgn", []string{"--layout", filepath.Join(dir, "a.pdf"), "--paper", "b7"}, "unknown paper"},
		"dpi":             {"ndvi", "rdylgn", []string{"--layout", filepath.Join(dir, "a.pdf"), "--paper", "a4", "--dpi", "5000"}, "DPI"},
		"classes for evi": {"evi", "classes", []string{"--layout", filepath.Join(dir, "a.png")}, "no established classes"},
		"no layout":       {"ndvi", "rdylgn", []string{"--paper", "a4"}, "give --layout"},
	} {
		_, err := layoutRunOf(t, 60, 40, c.index, pngStyle{ramp: c.ramp}, c.args...)
		var ue request.Error
		if err == nil || !strings.Contains(err.Error(), c.want) || !asUsage(err, &ue) {
			t.Errorf("%s: %v, want a usage error saying %q", name, err, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "a.png")); !os.IsNotExist(err) {
		t.Error("a refused layout left a file")
	}
}

func asUsage(err error, ue *request.Error) bool {
	u, ok := err.(request.Error)
	*ue = u
	return ok
}
