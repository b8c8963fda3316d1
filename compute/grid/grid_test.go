package grid

import (
	"math"
	"testing"
)

func TestAlignedAsTap(t *testing.T) {
	// gdalwarp -tap -tr 10 10 -te 500003 5600001 500097 5600055: the
	// corners on multiples of 10, 10×6 pixels.
	g, err := Aligned("EPSG:32633", 32633, 10, 10, [4]float64{500003, 5600001, 500097, 5600055})
	if err != nil {
		t.Fatal(err)
	}
	if g.X0 != 500000 || g.Y0 != 5600060 || g.Width != 10 || g.Height != 6 {
		t.Fatalf("got %+v", g)
	}
	if b := g.Bounds(); b != [4]float64{500000, 5600000, 500100, 5600060} {
		t.Fatalf("bounds %v", b)
	}
	if _, err := Aligned("EPSG:32633", 32633, 0, 10, [4]float64{0, 0, 1, 1}); err == nil {
		t.Fatal("a zero resolution was taken")
	}
	if _, err := Aligned("EPSG:32633", 32633, 10, 10, [4]float64{1, 0, 0, 1}); err == nil {
		t.Fatal("an empty extent was taken")
	}
}

func TestUTMZone(t *testing.T) {
	for _, c := range []struct {
		areas [][4]float64
		want  int
	}{
		{[][4]float64{{11.5, 50, 12.8, 50.5}}, 32633},       // more of it east of 12°
		{[][4]float64{{10, 50, 12.2, 50.5}}, 32632},         // more west
		{[][4]float64{{-47.9, -15.9, -47.7, -15.6}}, 32723}, // Brasília
		{[][4]float64{{11, 50, 11.5, 50.1}, {12, 50, 14, 50.1}}, 32633},
	} {
		got, err := UTMZone(c.areas...)
		if err != nil || got != c.want {
			t.Errorf("UTMZone(%v) = %d, %v; want %d", c.areas, got, err, c.want)
		}
	}
}

func TestFootprintAndParse(t *testing.T) {
	def, epsg, err := ParseCRS("epsg:32633")
	if err != nil || def != "EPSG:32633" || epsg != 32633 {
		t.Fatalf("ParseCRS: %q %d %v", def, epsg, err)
	}
	if _, _, err := ParseCRS("EPSG:999999"); err == nil {
		t.Fatal("an unknown code was taken")
	}
	g := Grid{CRS: "EPSG:32633", EPSG: 32633, X0: 500000, Y0: 5600000, ResX: 10, ResY: 10, Width: 1000, Height: 1000}
	ll, err := LonLat(g)
	if err != nil {
		t.Fatal(err)
	}
	// UTM 33N's central meridian is 15° E; 5600 km north is about 50.5° N.
	if math.Abs((ll[0]+ll[2])/2-15.07) > 0.05 || math.Abs((ll[1]+ll[3])/2-50.5) > 0.2 {
		t.Fatalf("footprint %v", ll)
	}
	geoRef, err := g.GeoRef()
	if err != nil || !geoRef.Valid() {
		t.Fatalf("GeoRef: %v", err)
	}
	back, err := Of(geoRef, g.Width, g.Height)
	if err != nil || back != g {
		t.Fatalf("Of(GeoRef) = %+v, %v; want %+v", back, err, g)
	}
	if _, err := ParseBBox("1,2,3"); err == nil {
		t.Fatal("three numbers taken as a box")
	}
}
