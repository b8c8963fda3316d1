package layout

import (
	"image"
	"image/png"
	"os"
	"path/filepath"
	"testing"
)

// golden compares img with testdata/name, or rewrites it with -update.
// Pixels may differ by a few levels (anti-aliasing arithmetic); more than
// 0.2% of them differing by more is a failure.
func golden(t *testing.T, name string, img image.Image) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := png.Encode(f, img); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
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
		t.Fatal(err)
	}
	if want.Bounds() != img.Bounds() {
		t.Fatalf("%s: size %v, golden %v", name, img.Bounds(), want.Bounds())
	}
	b := img.Bounds()
	bad := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			g, w := nrgba(img.At(x, y)), nrgba(want.At(x, y))
			d := max(absDiff(g.R, w.R), absDiff(g.G, w.G), absDiff(g.B, w.B), absDiff(g.A, w.A))
			if d > 16 {
				bad++
			}
		}
	}
	if bad*500 > b.Dx()*b.Dy() {
		t.Errorf("%s: %d pixels differ from the golden image (go test -update rewrites it)", name, bad)
	}
}

func absDiff(a, b uint8) int {
	if a > b {
		return int(a - b)
	}
	return int(b - a)
}

func TestGoldenLayouts(t *testing.T) {
	w, h := 150, 100
	plane := landscape(t, w, h)
	classes := Map{Plane: plane, Width: w, Height: h, Geo: utm(500000, 5500000, 10), LUT: classesLUT(t, "ndvi")}
	img, _, err := Render(classes, Options{Width: 480, Height: 360, Title: "Stand 12", Subtitle: "NDVI classes", Date: "2023-06-15", Source: "generated landscape"})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "layout_classes.png", img)

	ramp := Map{Plane: plane, Width: w, Height: h, Geo: wgs84(15, 60.05, 0.0005)}
	img, _, err = Render(ramp, Options{Width: 480, Height: 360, Grid: true, Title: "NDVI with a grid"})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "layout_ramp_grid.png", img)

	dnbr := Map{Plane: plane, Width: w, Height: h, Geo: utm(500000, 5500000, 10), LUT: classesLUT(t, "dnbr").WithHeading("dNBR")}
	img, _, err = Render(dnbr, Options{Width: 360, Height: 480, Title: "Burn severity"})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "layout_dnbr_portrait.png", img)
}
