package layout

import (
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"testing"

	"canopy/compute"
	"canopy/compute/fake"
	"canopy/ui/render/composite"
)

// landscapeComposite is a false-colour composite (NIR, red, and red again
// as green) of a generated w×h landscape, its top-left eighth masked.
func landscapeComposite(t testing.TB, w, h int) *composite.Composite {
	t.Helper()
	red, nir, err := fake.RedNIR(fake.Landscape, w, h, 7)
	if err != nil {
		t.Fatal(err)
	}
	mask := make([]uint8, w*h)
	for y := range h / 8 {
		for x := range w / 8 {
			mask[y*w+x] = 1
		}
	}
	band := func(role string, s []float32) compute.BandInput {
		return compute.BandInput{Role: role, Plane: compute.PlaneOf(w, h, s), Radiometry: compute.Identity()}
	}
	c, err := composite.New([3]compute.BandInput{band("nir", nir.Data), band("red", red.Data), band("green", red.Data)}, mask,
		composite.Options{Title: "False colour (NIR)", Names: [3]string{"B08", "B04", "B03"}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestCompositeLayout: a layout of a composite shows its pixels in the
// map frame (white where masked), a legend with the three channel
// swatches, and the composite's title.
func TestCompositeLayout(t *testing.T) {
	w, h := 300, 200
	c := landscapeComposite(t, w, h)
	m := Map{Width: w, Height: h, Geo: utm(500000, 5500000, 10), Composite: c}
	img, g, err := Render(m, Options{Width: 900, Height: 640})
	if err != nil {
		t.Fatal(err)
	}
	if pl, err := newPlan(m, Options{Width: 900, Height: 640}); err != nil || pl.title != "False colour (NIR)" || pl.legend.head != "False colour (NIR)" {
		t.Errorf("title and legend heading of a composite: %v", err)
	}
	z := g.Zoom
	bad, masked := 0, 0
	for sy := 0; sy < g.Map.Dy(); sy++ {
		for sx := 0; sx < g.Map.Dx(); sx++ {
			mx, my := int(math.Floor((float64(sx)+0.5)/z)), int(math.Floor((float64(sy)+0.5)/z))
			want := c.Color(mx, my)
			if want.A == 0 {
				want = color.NRGBA{255, 255, 255, 255}
				masked++
			}
			if nrgba(img.At(g.Map.Min.X+sx, g.Map.Min.Y+sy)) != want {
				bad++
			}
		}
	}
	if bad > 0 || masked == 0 {
		t.Errorf("%d of %d map pixels are not the composite's (%d masked)", bad, g.Map.Dx()*g.Map.Dy(), masked)
	}
	for i, col := range composite.ChannelColors {
		if n := count(img, g.Legend, col); n < 60 {
			t.Errorf("legend has %d pixels of channel %d's swatch", n, i)
		}
	}
	if _, _, err := Render(Map{Width: w + 1, Height: h, Composite: c}, Options{}); err == nil {
		t.Error("a composite of another size is accepted")
	}
}

// TestCompositeMapPNG: the map-only PNG of a composite is its pixels at
// full resolution, transparent where masked, with its world file.
func TestCompositeMapPNG(t *testing.T) {
	dir := t.TempDir()
	w, h := 70, 50
	c := landscapeComposite(t, w, h)
	p := filepath.Join(dir, "fc.png")
	paths, err := WriteMapPNG(p, Map{Width: w, Height: h, Geo: utm(512340, 5498760, 10), Composite: c})
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) < 2 {
		t.Errorf("wrote %q, no world file", paths)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if img.Bounds() != image.Rect(0, 0, w, h) {
		t.Fatalf("map-only PNG %v", img.Bounds())
	}
	for y := range h {
		for x := range w {
			if got, want := nrgba(img.At(x, y)), c.Color(x, y); got != want {
				t.Fatalf("pixel (%d,%d) %v, want %v", x, y, got, want)
			}
		}
	}
	if wf, _ := os.ReadFile(filepath.Join(dir, "fc.pgw")); string(wf) != "10\n0\n0\n-10\n512345\n5498755\n" {
		t.Errorf("world file %q", wf)
	}
}
