package geo

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"canopy/compute"
)

// projected returns the georeferencing of a north-up raster in EPSG:code
// with its top-left corner at (x0, y0) and square pixels of size px.
func projected(code uint16, x0, y0, px float64) *compute.GeoRef {
	return &compute.GeoRef{
		PixelScale:      []float64{px, px, 0},
		Tiepoints:       []float64{0, 0, 0, x0, y0, 0},
		GeoKeyDirectory: []uint16{1, 1, 0, 2, 1024, 0, 1, 1, 3072, 0, 1, code},
	}
}

// geographic is the same for a geographic system (x longitude, y latitude).
func geographic(code uint16, lon0, lat0, deg float64) *compute.GeoRef {
	return &compute.GeoRef{
		PixelScale:      []float64{deg, deg, 0},
		Tiepoints:       []float64{0, 0, 0, lon0, lat0, 0},
		GeoKeyDirectory: []uint16{1, 1, 0, 2, 1024, 0, 1, 2, 2048, 0, 1, code},
	}
}

// gdal runs a GDAL tool, skipping the test when GDAL is not installed
// (failing when CANOPY_EXPECT_GDAL=1 says it must be).
func gdal(t *testing.T, stdin string, name string, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		if os.Getenv("CANOPY_EXPECT_GDAL") == "1" {
			t.Fatalf("%s not found and CANOPY_EXPECT_GDAL=1: %v", name, err)
		}
		t.Skipf("%s not installed (gdal-bin)", name)
	}
	cmd := exec.Command(name, args...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return string(out)
}

func TestToLatLonAgreesWithGDAL(t *testing.T) {
	for _, c := range []struct {
		geo  *compute.GeoRef
		srs  string
		x, y float64
	}{
		{projected(32633, 0, 0, 10), "EPSG:32633", 500000, 5500000},
		{projected(32633, 0, 0, 10), "EPSG:32633", 712345.6, 4123456.7},
		{projected(32756, 0, 0, 30), "EPSG:32756", 300000, 6200000}, // southern hemisphere
		{projected(3035, 0, 0, 100), "EPSG:3035", 4321000, 3210000}, // LAEA Europe: northing first in EPSG
		{projected(2263, 0, 0, 1), "EPSG:2263", 987654, 210000},     // NY Long Island, US survey feet
		{projected(27700, 0, 0, 5), "EPSG:27700", 530000, 180000},   // British National Grid (datum shift)
		{geographic(4326, 0, 0, 0.001), "EPSG:4326", 13.4, 52.5},    // lon, lat
		{geographic(4269, 0, 0, 0.001), "EPSG:4269", -74.0, 40.7},   // NAD83
	} {
		lat, lon, err := ToLatLon(c.geo, c.x, c.y)
		if err != nil {
			t.Fatalf("%s (%g, %g): %v", c.srs, c.x, c.y, err)
		}
		out := gdal(t, fmt.Sprintf("%.10f %.10f\n", c.x, c.y), "gdaltransform", "-s_srs", c.srs, "-t_srs", "EPSG:4326", "-output_xy")
		f := strings.Fields(out)
		if len(f) < 2 {
			t.Fatalf("gdaltransform printed %q", out)
		}
		glon, _ := strconv.ParseFloat(f[0], 64)
		glat, _ := strconv.ParseFloat(f[1], 64)
		if math.Abs(lat-glat) > 1e-8 || math.Abs(lon-glon) > 1e-8 {
			t.Errorf("%s (%g, %g): lat %.10f lon %.10f, gdaltransform lat %.10f lon %.10f", c.srs, c.x, c.y, lat, lon, glat, glon)
		}
		// And back.
		x, y, err := FromLatLon(c.geo, lat, lon)
		if err != nil {
			t.Fatal(err)
		}
		tol := 1e-4 // 0.1 mm
		if c.srs == "EPSG:27700" {
			tol = 5e-3 // the datum shift's inverse is not exact
		}
		if c.geo.GeoKeyDirectory[4+4] == 2048 {
			tol = 1e-9
		}
		if math.Abs(x-c.x) > tol || math.Abs(y-c.y) > tol {
			t.Errorf("%s: round trip (%g, %g) -> (%.6f, %.6f)", c.srs, c.x, c.y, x, y)
		}
	}
}

func TestToLatLonErrors(t *testing.T) {
	if _, _, err := ToLatLon(nil, 0, 0); err == nil {
		t.Error("nil georef accepted")
	}
	user := &compute.GeoRef{GeoKeyDirectory: []uint16{1, 1, 0, 2, 1024, 0, 1, 1, 3072, 0, 1, 32767}}
	if _, _, err := ToLatLon(user, 0, 0); err == nil || !strings.Contains(err.Error(), "user-defined") {
		t.Errorf("user-defined CRS: %v", err)
	}
	bogus := projected(1, 0, 0, 1) // EPSG:1 is no CRS
	if _, _, err := ToLatLon(bogus, 0, 0); err == nil {
		t.Error("EPSG:1 accepted")
	}
	if _, _, err := ToLatLon(projected(32633, 0, 0, 1), math.NaN(), 0); err == nil {
		t.Error("NaN accepted")
	}
	if _, _, err := FromLatLon(projected(32633, 0, 0, 1), 91, 0); err == nil {
		t.Error("latitude 91 accepted")
	}
}

func TestWKTAgreesWithGDAL(t *testing.T) {
	for _, code := range []uint16{32633, 3035, 2263, 27700, 4326, 4258} {
		g := projected(code, 0, 0, 1)
		if code == 4326 || code == 4258 {
			g = geographic(code, 0, 0, 1)
		}
		srs := fmt.Sprintf("EPSG:%d", code)
		wkt, err := WKT(g)
		if err != nil {
			t.Fatal(err)
		}
		if want := strings.TrimSpace(gdal(t, "", "gdalsrsinfo", "--single-line", "-o", "wkt1", srs)); wkt != want {
			t.Errorf("%s WKT\n%s\ngdalsrsinfo -o wkt1\n%s", srs, wkt, want)
		}
		esri, err := ESRIWKT(g)
		if err != nil {
			t.Fatal(err)
		}
		want := strings.Join(strings.Fields(gdal(t, "", "gdalsrsinfo", "-o", "wkt_esri", srs)), "")
		if strings.Join(strings.Fields(esri), "") != want {
			t.Errorf("%s ESRI WKT\n%s\ngdalsrsinfo -o wkt_esri\n%s", srs, esri, want)
		}
		// GDAL reads our WKT back as the same code.
		if got := strings.TrimSpace(gdal(t, "", "gdalsrsinfo", "-o", "epsg", wkt)); !strings.Contains(got, srs) {
			t.Errorf("gdalsrsinfo reads our WKT of %s as %q", srs, got)
		}
	}
}

func TestDescribe(t *testing.T) {
	c, err := Of(projected(32633, 0, 0, 10))
	if err != nil {
		t.Fatal(err)
	}
	if c.EPSG != 32633 || c.Name != "WGS 84 / UTM zone 33N" || !c.Projected || c.Geographic || c.Unit != "metre" || c.UnitSI != 1 || c.A != 6378137 || c.InvF != 298.257223563 {
		t.Errorf("EPSG:32633: %+v", c)
	}
	if c.Label() != "EPSG:32633 · WGS 84 / UTM zone 33N" {
		t.Errorf("label %q", c.Label())
	}
	ft, err := Of(projected(2263, 0, 0, 1))
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := ft.MetresPerUnit(); !ok || math.Abs(m-1200.0/3937) > 1e-12 || ft.Unit != "US survey foot" {
		t.Errorf("EPSG:2263 unit %q, %g m (%v)", ft.Unit, m, ok)
	}
	gc, err := Of(geographic(4326, 0, 0, 1))
	if err != nil {
		t.Fatal(err)
	}
	if !gc.Geographic || gc.Projected || gc.Unit != "degree" || math.Abs(gc.UnitSI-math.Pi/180) > 1e-15 {
		t.Errorf("EPSG:4326: %+v", gc)
	}
	if _, ok := gc.MetresPerUnit(); ok {
		t.Error("a degree has a fixed length in metres")
	}
	// A WKT definition is identified as its code.
	if w, code, err := Info(c.WKT); err != nil || code != 32633 || w == "" {
		t.Errorf("Info(WKT): %d %v", code, err)
	}
	if same, err := Same("EPSG:4326", gc.WKT); err != nil || !same {
		t.Errorf("EPSG:4326 and its WKT: %v %v", same, err)
	}
	if same, _ := Same("EPSG:4326", "EPSG:32633"); same {
		t.Error("EPSG:4326 and EPSG:32633 the same")
	}
	if _, err := Describe("EPSG:999999"); err == nil || strings.Contains(err.Error(), "\n") {
		t.Errorf("unknown code: %v", err)
	}
}

func TestGeodesicOnTheEquator(t *testing.T) {
	// Along the equator a geodesic (shorter than half the circumference
	// minus a little) is an arc of a circle of radius a.
	want := 2 * math.Pi * 6378137 / 360
	s, az := Geodesic(0, 10, 0, 11)
	if math.Abs(s-want) > 1e-6 || math.Abs(az-90) > 1e-9 {
		t.Errorf("1° of longitude on the equator: %.6f m azimuth %g, want %.6f m, 90", s, az, want)
	}
	// A meridian quadrant of WGS 84 is 10 001 965.729 m.
	if s, _ := Geodesic(0, 0, 90, 0); math.Abs(s-10001965.729) > 1e-3 {
		t.Errorf("meridian quadrant %.4f m", s)
	}
}

func TestGroundDistance(t *testing.T) {
	utm := projected(32633, 400000, 5600000, 10)
	if d, err := GroundDistance(utm, 500000, 5500000, 503000, 5504000); err != nil || d != 5000 {
		t.Errorf("UTM 3-4-5: %g %v", d, err)
	}
	ft := projected(2263, 0, 0, 1)
	if d, err := GroundDistance(ft, 0, 0, 3937, 0); err != nil || math.Abs(d-1200) > 1e-9 {
		t.Errorf("3937 US survey feet: %g m %v", d, err)
	}
	// On the central meridian of a UTM zone the grid is shrunk by the
	// scale factor 0.9996: 1 km of grid is 1 km / 0.9996 on the ground.
	lat1, lon1, _ := ToLatLon(utm, 499500, 5500000)
	lat2, lon2, _ := ToLatLon(utm, 500500, 5500000)
	s, _ := Geodesic(lat1, lon1, lat2, lon2)
	if math.Abs(s-1000/0.9996) > 1e-3 {
		t.Errorf("1 km of UTM grid on the central meridian is %.4f m on the ground, want %.4f", s, 1000/0.9996)
	}
	wgs := geographic(4326, 10, 1, 0.01)
	if d, err := GroundDistance(wgs, 10, 0, 11, 0); err != nil || math.Abs(d-2*math.Pi*6378137/360) > 1e-6 {
		t.Errorf("geographic: %g %v", d, err)
	}
	// Pixel size: 0.01° at 60°N is about half as wide as it is tall.
	g60 := geographic(4326, 10, 60.005, 0.01)
	dx, dy, err := PixelSize(g60, 0.5, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	if r := dx / dy; math.Abs(r-0.5) > 0.01 || dy < 1110 || dy > 1120 {
		t.Errorf("0.01° pixel at 60°N: %.2f × %.2f m", dx, dy)
	}
	if dx, dy, err := PixelSize(utm, 3, 4); err != nil || dx != 10 || dy != 10 {
		t.Errorf("UTM pixel: %g × %g %v", dx, dy, err)
	}
}

func TestPixelMapRoundTrip(t *testing.T) {
	rot := &compute.GeoRef{Transformation: []float64{
		8.660254, 5, 0, 1000,
		5, -8.660254, 0, 2000,
		0, 0, 0, 0, 0, 0, 0, 1}}
	for _, p := range [][2]float64{{0, 0}, {0.5, 0.5}, {123.25, 77.75}} {
		x, y, err := PixelToMap(rot, p[0], p[1])
		if err != nil {
			t.Fatal(err)
		}
		c, r, err := MapToPixel(rot, x, y)
		if err != nil || math.Abs(c-p[0]) > 1e-9 || math.Abs(r-p[1]) > 1e-9 {
			t.Errorf("%v -> (%g, %g) -> (%g, %g) %v", p, x, y, c, r, err)
		}
	}
	// PixelToMap at a pixel centre is GeoRef.PixelToMap.
	g := projected(32633, 300000, 5000000, 10)
	x, y, _ := PixelToMap(g, 3.5, 7.5)
	gx, gy, _ := g.PixelToMap(3, 7)
	if x != gx || y != gy {
		t.Errorf("(3.5, 7.5) -> (%g, %g), GeoRef says (%g, %g)", x, y, gx, gy)
	}
	if _, _, err := PixelToMap(&compute.GeoRef{}, 0, 0); err == nil {
		t.Error("no georeferencing accepted")
	}
}

func TestNorthAngle(t *testing.T) {
	// North-up geographic raster: north is up.
	if a, err := NorthAngle(geographic(4326, 10, 50, 0.001), 10, 10); err != nil || math.Abs(a) > 1e-6 {
		t.Errorf("geographic: %g %v", a, err)
	}
	// UTM 33N (central meridian 15°E): west of the central meridian the
	// meridians lean towards it as they go north, so at 12°E, 50°N true
	// north is clockwise of grid north by atan(tan(Δλ) sin φ) ≈ 2.3°.
	utm := projected(32633, 0, 0, 10)
	x, y, _ := FromLatLon(utm, 50, 12)
	col, row, _ := MapToPixel(utm, x, y)
	a, err := NorthAngle(utm, col, row)
	if err != nil {
		t.Fatal(err)
	}
	want := math.Atan(math.Tan(3*math.Pi/180) * math.Sin(50*math.Pi/180))
	if math.Abs(a-want) > 0.02*math.Pi/180 {
		t.Errorf("UTM at 12°E 50°N: north at %.3f°, want %.3f°", a*180/math.Pi, want*180/math.Pi)
	}
	// A raster rotated 30° clockwise (its rows run 30° south of east).
	s, c := math.Sin(math.Pi/6), math.Cos(math.Pi/6)
	rot := &compute.GeoRef{
		Transformation:  []float64{c, s, 0, 10, -s, c * -1, 0, 50, 0, 0, 0, 0, 0, 0, 0, 1},
		GeoKeyDirectory: []uint16{1, 1, 0, 2, 1024, 0, 1, 2, 2048, 0, 1, 4326},
	}
	rot.Transformation[0], rot.Transformation[1] = c*1e-4, s*1e-4
	rot.Transformation[4], rot.Transformation[5] = -s*1e-4, -c*1e-4
	a, err = NorthAngle(rot, 5, 5)
	if err != nil {
		t.Fatal(err)
	}
	// Columns step (c, −s)·1e-4 in (lon, lat), rows (s, −c): up on the
	// image, (−s, c), points 30° west of north, so north is 30° clockwise
	// of up.
	if want := math.Pi / 6; math.Abs(a-want) > 1e-3 {
		t.Errorf("rotated raster: north at %.3f°, want %.3f°", a*180/math.Pi, want*180/math.Pi)
	}
}

func TestScaled(t *testing.T) {
	for _, g := range []*compute.GeoRef{
		projected(32633, 500000, 5500000, 10),
		{ // PixelIsPoint: the tiepoint is a pixel centre.
			PixelScale: []float64{30, 30, 0}, Tiepoints: []float64{0, 0, 0, 300015, 4000015, 0},
			GeoKeyDirectory: []uint16{1, 1, 0, 3, 1024, 0, 1, 1, 1025, 0, 1, 2, 3072, 0, 1, 32633}},
		{Transformation: []float64{8.66, 5, 0, 1000, 5, -8.66, 0, 2000, 0, 0, 0, 0, 0, 0, 0, 1}},
	} {
		s := Scaled(g, 4, 2.5)
		for _, p := range [][2]float64{{0, 0}, {0.5, 0.5}, {10, 7}} {
			x, y, err := PixelToMap(s, p[0], p[1])
			if err != nil {
				t.Fatal(err)
			}
			wx, wy, _ := PixelToMap(g, p[0]*4, p[1]*2.5)
			if math.Abs(x-wx) > 1e-6 || math.Abs(y-wy) > 1e-6 {
				t.Errorf("scaled pixel %v at (%g, %g), the original's (%g, %g)", p, x, y, wx, wy)
			}
		}
		if g.HasCRS() && s.CRSName() != g.CRSName() {
			t.Errorf("CRS %s became %s", g.CRSName(), s.CRSName())
		}
	}
	if Scaled(nil, 2, 2) != nil || Scaled(projected(32633, 0, 0, 1), 0, 1) != nil {
		t.Error("scaled what cannot be")
	}
}
