package layout

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"flag"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"canopy/ui/render/colormap"
)

var update = flag.Bool("update", false, "rewrite the golden PNGs in testdata/")

func classesLUT(t *testing.T, name string) *colormap.LUT {
	t.Helper()
	tb, ok := colormap.PresetFor(name)
	if !ok {
		t.Fatalf("no preset %s", name)
	}
	l, err := colormap.NewClasses(tb)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func nrgba(c color.Color) color.NRGBA { return color.NRGBAModel.Convert(c).(color.NRGBA) }

// count returns how many pixels of img inside r are exactly c.
func count(img image.Image, r image.Rectangle, c color.Color) int {
	want := nrgba(c)
	n := 0
	r = r.Intersect(img.Bounds())
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if nrgba(img.At(x, y)) == want {
				n++
			}
		}
	}
	return n
}

// countNear returns how many pixels of img inside r are within d of c in
// every channel.
func countNear(img image.Image, r image.Rectangle, c color.Color, d int) int {
	want := nrgba(c)
	n := 0
	r = r.Intersect(img.Bounds())
	near := func(a, b uint8) bool { return int(a)-int(b) <= d && int(b)-int(a) <= d }
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if g := nrgba(img.At(x, y)); near(g.R, want.R) && near(g.G, want.G) && near(g.B, want.B) {
				n++
			}
		}
	}
	return n
}

func TestSizes(t *testing.T) {
	m := Map{Plane: make([]float32, 300*200), Width: 300, Height: 200}
	for _, c := range []struct {
		opt  Options
		w, h int
		dpi  float64
	}{
		{Options{Width: 800, Height: 600}, 800, 600, 96},
		{Options{}, 1600, 1200, 96},
		{Options{Paper: "a4", DPI: 150}, 1754, 1240, 150}, // wide map: landscape
		{Options{Paper: "A4", DPI: 300, Orientation: "portrait"}, 2480, 3508, 300},
		{Options{Paper: "letter"}, 1650, 1275, 150},
		{Options{Width: 600, Height: 800, Orientation: "landscape"}, 800, 600, 96},
	} {
		g, err := Plan(m, c.opt)
		if err != nil {
			t.Fatalf("%+v: %v", c.opt, err)
		}
		if g.Width != c.w || g.Height != c.h || g.DPI != c.dpi {
			t.Errorf("%+v: %d×%d at %g DPI, want %d×%d at %g", c.opt, g.Width, g.Height, g.DPI, c.w, c.h, c.dpi)
		}
		// The map keeps its aspect to within a pixel and lies on the page.
		if r := float64(g.Map.Dx()) / float64(g.Map.Dy()); math.Abs(r-1.5) > 1.5/float64(g.Map.Dy()) {
			t.Errorf("%+v: map frame %v has aspect %.4f, the map 1.5", c.opt, g.Map, r)
		}
		if !g.Map.In(image.Rect(0, 0, g.Width, g.Height)) || !g.Legend.In(image.Rect(0, 0, g.Width, g.Height)) || g.Map.Overlaps(g.Legend) {
			t.Errorf("%+v: map %v, legend %v on a %d×%d page", c.opt, g.Map, g.Legend, g.Width, g.Height)
		}
	}
	// A tall map gets a portrait page.
	tall := Map{Plane: make([]float32, 100*300), Width: 100, Height: 300}
	if g, _ := Plan(tall, Options{Paper: "a4"}); g.Width > g.Height {
		t.Errorf("tall map on a %d×%d page", g.Width, g.Height)
	}
	for name, o := range map[string]Options{
		"unknown paper":   {Paper: "a11"},
		"too few dpi":     {Paper: "a4", DPI: 10},
		"too small":       {Width: 100, Height: 100},
		"too large":       {Width: 20000, Height: 1000},
		"one side":        {Width: 800},
		"bad orientation": {Orientation: "sideways"},
	} {
		if _, err := Plan(m, o); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := Plan(Map{Plane: make([]float32, 10), Width: 4, Height: 4}, Options{}); err == nil {
		t.Error("a plane of the wrong length accepted")
	}
}

// lengthOf reads a scale bar label back into metres.
func lengthOf(t *testing.T, label string) float64 {
	t.Helper()
	m := regexp.MustCompile(`^([0-9.]+) (cm|m|km)$`).FindStringSubmatch(label)
	if m == nil {
		t.Fatalf("scale bar label %q", label)
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v * map[string]float64{"cm": 0.01, "m": 1, "km": 1000}[m[2]]
}

// barLength measures the scale bar: the run of dark pixels along the
// middle row of its box (widened, so that the bar's ends are found, not
// assumed).
func barLength(img image.Image, r image.Rectangle) int {
	y := (r.Min.Y + r.Max.Y) / 2
	first, last := -1, -1
	for x := r.Min.X - 20; x < r.Max.X+20; x++ {
		c := nrgba(img.At(x, y))
		if c.R < 64 && c.G < 64 && c.B < 64 {
			if first < 0 {
				first = x
			}
			last = x
		}
	}
	if first < 0 {
		return 0
	}
	return last - first + 1
}

func TestLayoutPicture(t *testing.T) {
	w, h := 300, 200
	plane := landscape(t, w, h)
	lut := classesLUT(t, "ndvi")
	m := Map{Plane: plane, Width: w, Height: h, Geo: utm(500000, 5500000, 10), LUT: lut}
	img, g, err := Render(m, Options{Width: 900, Height: 640, Title: "Stand 12", Date: "2023-06-15", Source: "test scene"})
	if err != nil {
		t.Fatal(err)
	}
	if img.Bounds() != image.Rect(0, 0, 900, 640) {
		t.Fatalf("picture %v", img.Bounds())
	}
	if len(g.Notes) != 0 {
		t.Errorf("notes %q", g.Notes)
	}
	// The map area shows the map: each frame pixel is the class colour of
	// the map pixel under it (nearest neighbour when enlarged), white
	// where there is no data.
	z := g.Zoom
	if math.Abs(z-float64(g.Map.Dx())/float64(w)) > 1e-12 {
		t.Errorf("zoom %g for a frame %d wide", z, g.Map.Dx())
	}
	bad, nodata := 0, 0
	for sy := 0; sy < g.Map.Dy(); sy++ {
		for sx := 0; sx < g.Map.Dx(); sx++ {
			mx, my := int(math.Floor((float64(sx)+0.5)/z)), int(math.Floor((float64(sy)+0.5)/z))
			v := plane[my*w+mx]
			want := lut.Color(v)
			if v != v {
				want = color.NRGBA{255, 255, 255, 255}
				nodata++
			}
			if nrgba(img.At(g.Map.Min.X+sx, g.Map.Min.Y+sy)) != want {
				bad++
			}
		}
	}
	if bad > 0 || nodata == 0 {
		t.Errorf("%d of %d map pixels are not the map's colour (%d no data)", bad, g.Map.Dx()*g.Map.Dy(), nodata)
	}
	// The legend holds every class's colour, in swatches.
	for _, c := range lut.Classes() {
		if n := count(img, g.Legend, c.Color); n < 60 {
			t.Errorf("legend has %d pixels of %q", n, c.Name)
		}
	}
	// The scale bar is as long as its label says: ground length / ground
	// size of a picture pixel (10 m pixels shown at zoom z).
	metres := lengthOf(t, g.ScaleBarLabel)
	if metres != g.ScaleBarMetres {
		t.Errorf("label %q, %g m", g.ScaleBarLabel, g.ScaleBarMetres)
	}
	want := metres / (10 / z)
	got := barLength(img, g.ScaleBar)
	if math.Abs(float64(got)-want) > 1 {
		t.Errorf("scale bar %q is %d pixels, want %.1f", g.ScaleBarLabel, got, want)
	}
	if got > g.Map.Dx()/2 || got < g.Map.Dx()/10 {
		t.Errorf("scale bar %d pixels for a %d-pixel map", got, g.Map.Dx())
	}
	// On the central meridian north is up; the arrow is drawn.
	if math.Abs(g.North) > 1e-3 {
		t.Errorf("north %g rad at the central meridian", g.North)
	}
	if dark := count(img, g.NorthArrow, color.NRGBA{0x1a, 0x1a, 0x1a, 0xff}); dark < 20 {
		t.Errorf("north arrow box has %d ink pixels", dark)
	}
	if g.CRS != "EPSG:32633 · WGS 84 / UTM zone 33N" {
		t.Errorf("CRS %q", g.CRS)
	}
}

func TestContinuousLegendAndGrid(t *testing.T) {
	w, h := 300, 200
	m := Map{Plane: landscape(t, w, h), Width: w, Height: h, Geo: utm(500000, 5500000, 10)}
	img, g, err := Render(m, Options{Width: 800, Height: 600, Grid: true})
	if err != nil {
		t.Fatal(err)
	}
	lut, _ := colormap.New("", -1, 1)
	// The bar runs the ramp's colours from the top (1) to the bottom (−1).
	for _, v := range []float32{-1, 0, 1} {
		if n := countNear(img, g.Legend, lut.Color(v), 4); n < 10 {
			t.Errorf("legend bar has %d pixels of the colour of %g", n, v)
		}
	}
	if g.GridStep != 1000 {
		t.Fatalf("grid step %g for a 3 × 2 km map", g.GridStep)
	}
	// The grid line at 501 000 E darkens its column of the frame.
	x := g.Map.Min.X + int(math.Round(1000/10*g.Zoom))
	darker := 0
	for y := g.Map.Min.Y; y < g.Map.Max.Y; y++ {
		on, off := nrgba(img.At(x, y)), nrgba(img.At(x+3, y))
		if int(on.R)+int(on.G)+int(on.B) < int(off.R)+int(off.G)+int(off.B) {
			darker++
		}
	}
	if darker < g.Map.Dy()*3/4 {
		t.Errorf("grid line at 501 000 E darker in %d of %d rows", darker, g.Map.Dy())
	}
}

func TestGeographicScaleBar(t *testing.T) {
	// 0.0005° pixels at 60°N: a pixel is about 27.9 m wide.
	w, h := 300, 200
	geo := wgs84(15, 60.05, 0.0005)
	m := Map{Plane: landscape(t, w, h), Width: w, Height: h, Geo: geo}
	img, g, err := Render(m, Options{Width: 900, Height: 640})
	if err != nil {
		t.Fatal(err)
	}
	// The width of a pixel at the centre's latitude along its parallel:
	// N(φ) cos φ Δλ on WGS 84.
	lat := 60.05 - 100*0.0005
	a, f := 6378137.0, 1/298.257223563
	e2 := f * (2 - f)
	phi := lat * math.Pi / 180
	n := a / math.Sqrt(1-e2*math.Sin(phi)*math.Sin(phi))
	pixel := n * math.Cos(phi) * 0.0005 * math.Pi / 180
	want := g.ScaleBarMetres / (pixel / g.Zoom)
	if got := barLength(img, g.ScaleBar); math.Abs(float64(got)-want) > 1 {
		t.Errorf("geographic scale bar %q is %d pixels, want %.1f", g.ScaleBarLabel, got, want)
	}
	if math.Abs(g.North) > 1e-6 {
		t.Errorf("north %g on a north-up geographic raster", g.North)
	}
}

func TestNorthArrowConvergence(t *testing.T) {
	// Zone 33 at about 12°E, 50°N: true north is 2.3° clockwise of up.
	w, h := 100, 100
	m := Map{Plane: landscape(t, w, h), Width: w, Height: h, Geo: utm(285000, 5545000, 10)}
	g, err := Plan(m, Options{Width: 600, Height: 500})
	if err != nil {
		t.Fatal(err)
	}
	want := math.Atan(math.Tan(3*math.Pi/180) * math.Sin(50*math.Pi/180))
	if math.Abs(g.North-want) > 0.1*math.Pi/180 {
		t.Errorf("north %.3f°, want about %.3f°", g.North*180/math.Pi, want*180/math.Pi)
	}
}

func TestNotGeoreferenced(t *testing.T) {
	w, h := 120, 80
	m := Map{Plane: landscape(t, w, h), Width: w, Height: h}
	img, g, err := Render(m, Options{Width: 500, Height: 400, Grid: true})
	if err != nil {
		t.Fatal(err)
	}
	if !g.ScaleBar.Empty() || !g.NorthArrow.Empty() || g.GridStep != 0 || len(g.Notes) == 0 || g.CRS != "not georeferenced" {
		t.Errorf("bar %v arrow %v grid %g notes %q CRS %q", g.ScaleBar, g.NorthArrow, g.GridStep, g.Notes, g.CRS)
	}
	if img.Bounds().Dx() != 500 || g.Legend.Empty() {
		t.Errorf("picture %v legend %v", img.Bounds(), g.Legend)
	}
	// A CRS PROJ does not know: a scale bar in map units.
	m.Geo = utm(0, 0, 2)
	m.Geo.GeoKeyDirectory = []uint16{1, 1, 0, 2, 1024, 0, 1, 1, 3072, 0, 1, 32767}
	g, err = Plan(m, Options{Width: 500, Height: 400})
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(g.Notes, "; ")
	if !strings.HasSuffix(g.ScaleBarLabel, " map units") || !strings.Contains(notes, "not known to PROJ") || !strings.Contains(notes, "grid north") || g.NorthArrow.Empty() {
		t.Errorf("user-defined CRS: bar %q arrow %v notes %q", g.ScaleBarLabel, g.NorthArrow, g.Notes)
	}
}

func TestPDF(t *testing.T) {
	w, h := 300, 200
	m := Map{Plane: landscape(t, w, h), Width: w, Height: h, Geo: utm(500000, 5500000, 10), LUT: classesLUT(t, "ndvi")}
	var buf bytes.Buffer
	g, err := Encode(&buf, PDF, m, Options{Paper: "a4", DPI: 200, Title: "Stand 12 − NDVI ≥ 0.6", Date: "2023-06-15"})
	if err != nil {
		t.Fatal(err)
	}
	pdf := buf.String()
	if !strings.HasPrefix(pdf, "%PDF-") {
		t.Fatal("not a PDF")
	}
	// The page is A4 landscape in points; the map raster is embedded at
	// the frame's size in pixels at 200 DPI.
	if mb := regexp.MustCompile(`/MediaBox \[0 0 ([0-9.]+) ([0-9.]+)\]`).FindStringSubmatch(pdf); mb == nil {
		t.Error("no MediaBox")
	} else if w, _ := strconv.ParseFloat(mb[1], 64); math.Abs(w-297/25.4*72) > 1 {
		t.Errorf("page %s × %s pt", mb[1], mb[2])
	}
	im := regexp.MustCompile(`/Subtype /Image\s*/Width (\d+)\s*/Height (\d+)`).FindAllStringSubmatch(pdf, -1)
	if len(im) != 1 || im[0][1] != strconv.Itoa(g.Map.Dx()) || im[0][2] != strconv.Itoa(g.Map.Dy()) {
		t.Errorf("images %v, map frame %v", im, g.Map)
	}
	if g.Map.Dx() < 1500 {
		t.Errorf("map frame %v on A4 at 200 DPI", g.Map)
	}
	if !strings.Contains(pdf, "/FontFile2") {
		t.Error("fonts not embedded")
	}
}

func TestSVG(t *testing.T) {
	w, h := 120, 80
	m := Map{Plane: landscape(t, w, h), Width: w, Height: h, Geo: utm(500000, 5500000, 10)}
	var buf bytes.Buffer
	g, err := Encode(&buf, SVG, m, Options{Width: 600, Height: 450, Title: "Stand 12"})
	if err != nil {
		t.Fatal(err)
	}
	svg := buf.String()
	for _, s := range []string{">Stand 12<", ">NDVI<", ">" + g.ScaleBarLabel + "<", ">no data<"} {
		if !strings.Contains(svg, s) {
			t.Errorf("SVG has no text %s", s)
		}
	}
	mm := regexp.MustCompile(`<image [^>]*xlink:href="data:image/png;base64,([^"]+)"`).FindStringSubmatch(svg)
	if mm == nil {
		t.Fatal("no embedded PNG")
	}
	raw, err := base64.StdEncoding.DecodeString(mm[1])
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if img.Bounds().Size() != g.Map.Size() {
		t.Errorf("embedded map %v, frame %v", img.Bounds(), g.Map)
	}
}

func TestWriteFormats(t *testing.T) {
	dir := t.TempDir()
	w, h := 60, 40
	m := Map{Plane: landscape(t, w, h), Width: w, Height: h, Geo: utm(500000, 5500000, 10)}
	for _, ext := range []string{"png", "pdf", "svg"} {
		p := filepath.Join(dir, "map."+ext)
		if _, err := Write(p, m, Options{Width: 400, Height: 300}); err != nil {
			t.Fatal(err)
		}
		if st, err := os.Stat(p); err != nil || st.Size() < 1000 {
			t.Errorf("%s: %v", p, err)
		}
	}
	if _, err := Write(filepath.Join(dir, "map.jpg"), m, Options{}); err == nil {
		t.Error(".jpg accepted")
	}
	if _, err := os.Stat(filepath.Join(dir, "map.jpg")); !os.IsNotExist(err) {
		t.Error("a refused layout left a file")
	}
}

// gdalinfo runs gdalinfo -json, skipping without GDAL (failing when
// CANOPY_EXPECT_GDAL=1).
func gdalinfo(t *testing.T, path string) map[string]any {
	t.Helper()
	if _, err := exec.LookPath("gdalinfo"); err != nil {
		if os.Getenv("CANOPY_EXPECT_GDAL") == "1" {
			t.Fatal("gdalinfo not found and CANOPY_EXPECT_GDAL=1")
		}
		t.Skip("gdalinfo not installed (gdal-bin)")
	}
	out, err := exec.Command("gdalinfo", "-json", path).Output()
	if err != nil {
		t.Fatalf("gdalinfo %s: %v", path, err)
	}
	var info map[string]any
	if err := json.Unmarshal(out, &info); err != nil {
		t.Fatal(err)
	}
	return info
}

func TestWriteMapPNG(t *testing.T) {
	dir := t.TempDir()
	w, h := 70, 50
	geo := utm(512340, 5498760, 10)
	lut := classesLUT(t, "ndvi")
	m := Map{Plane: landscape(t, w, h), Width: w, Height: h, Geo: geo, LUT: lut}
	p := filepath.Join(dir, "map.png")
	paths, err := WriteMapPNG(p, m)
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 4 {
		t.Errorf("wrote %q", paths)
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
			if got, want := nrgba(img.At(x, y)), lut.Color(m.Plane[y*w+x]); got != want {
				t.Fatalf("pixel (%d,%d) %v, want %v", x, y, got, want)
			}
		}
	}
	wf, _ := os.ReadFile(filepath.Join(dir, "map.pgw"))
	if want := "10\n0\n0\n-10\n512345\n5498755\n"; string(wf) != want {
		t.Errorf("world file %q, want %q", wf, want)
	}
	prj, _ := os.ReadFile(filepath.Join(dir, "map.prj"))
	if !strings.HasPrefix(string(prj), `PROJCS["WGS_1984_UTM_Zone_33N"`) {
		t.Errorf(".prj %.60s", prj)
	}
	// GDAL places the pixels exactly where the raster's are, in its CRS.
	info := gdalinfo(t, p)
	gt, _ := info["geoTransform"].([]any)
	want := []float64{512340, 10, 0, 5498760, 0, -10}
	for i := range want {
		if len(gt) != 6 || gt[i].(float64) != want[i] {
			t.Fatalf("gdalinfo geotransform %v, want %v", gt, want)
		}
	}
	cs, _ := info["coordinateSystem"].(map[string]any)
	if wkt, _ := cs["wkt"].(string); !strings.Contains(wkt, `ID["EPSG",32633]`) {
		t.Errorf("gdalinfo CRS %.100s", wkt)
	}
	// Without georeferencing: the PNG alone.
	m.Geo = nil
	if paths, err := WriteMapPNG(filepath.Join(dir, "plain.png"), m); err != nil || len(paths) != 1 {
		t.Errorf("plain map wrote %q %v", paths, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "plain.pgw")); !os.IsNotExist(err) {
		t.Error("world file for a map without georeferencing")
	}
}
