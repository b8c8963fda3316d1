package colormap

import (
	"bytes"
	"flag"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden PNGs in testdata/")

// checkGolden compares img pixel by pixel with testdata/name, or rewrites
// the file with -update.
func checkGolden(t *testing.T, name string, img image.Image) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		var buf bytes.Buffer
		if err := png.Encode(&buf, img); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("golden %s: %v (run go test -update to create it)", path, err)
	}
	defer f.Close()
	want, err := png.Decode(f)
	if err != nil {
		t.Fatalf("golden %s: %v", path, err)
	}
	compareImages(t, path, img, want)
}

func compareImages(t *testing.T, name string, got, want image.Image) {
	t.Helper()
	if got.Bounds() != want.Bounds() {
		t.Fatalf("%s: size %v, golden %v", name, got.Bounds(), want.Bounds())
	}
	bad := 0
	b := got.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			g := color.NRGBAModel.Convert(got.At(x, y))
			w := color.NRGBAModel.Convert(want.At(x, y))
			if g != w {
				if bad < 5 {
					t.Errorf("%s: pixel (%d,%d) = %v, golden %v", name, x, y, g, w)
				}
				bad++
			}
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d pixels differ from the golden image (go test -update rewrites it)", name, bad)
	}
}

func TestLegendGolden(t *testing.T) {
	for _, c := range []struct {
		name   string
		ramp   string
		lo, hi float64
		scale  float64
	}{
		{"legend_rdylgn.png", RampRdYlGn, -1, 1, 1},
		{"legend_viridis_stretch.png", RampViridis, 0.137, 0.842, 1},
		{"legend_classes.png", RampClasses, -1, 1, 1},
		{"legend_rdylgn_x2.png", RampRdYlGn, -1, 1, 2},
	} {
		l := mustNew(t, c.ramp, c.lo, c.hi)
		checkGolden(t, c.name, l.Legend(c.scale))
	}
}
