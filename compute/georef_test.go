package compute

import (
	"math"
	"strings"
	"testing"
)

// utm returns a north-up 10 m grid in EPSG code with the given raster type
// (1 PixelIsArea, 2 PixelIsPoint) and tiepoint.
func utm(code uint16, rasterType uint16, x, y float64) *GeoRef {
	return &GeoRef{
		PixelScale:      []float64{10, 10, 0},
		Tiepoints:       []float64{0, 0, 0, x, y, 0},
		GeoKeyDirectory: []uint16{1, 1, 0, 3, 1024, 0, 1, 1, 1025, 0, 1, rasterType, 3072, 0, 1, code},
	}
}

func TestPixelIsPoint(t *testing.T) {
	area := utm(32633, 1, 600000, 5300000)
	// The same pixels described by their centres: the tiepoint is half a
	// pixel right of and below the corner.
	point := utm(32633, 2, 600005, 5299995)
	if area.PixelIsPoint() || !point.PixelIsPoint() {
		t.Fatal("raster type not read")
	}
	a, _ := area.Affine()
	p, _ := point.Affine()
	if a != p || a[0] != 600000 || a[3] != 5300000 {
		t.Errorf("area %v, point %v: want both with the corner at (600000, 5300000)", a, p)
	}
	if why := area.Mismatch(point); why != "" {
		t.Error(why)
	}
	if x, y, _ := point.PixelToMap(0, 0); x != 600005 || y != 5299995 {
		t.Errorf("centre of pixel (0, 0) of the point file: %v %v", x, y)
	}
	// A point file with the area file's numbers is half a pixel off.
	if why := area.Mismatch(utm(32633, 2, 600000, 5300000)); why != "are not on the same georeferenced grid" {
		t.Errorf("same numbers, other raster type: %q", why)
	}
}

func TestSameCRS(t *testing.T) {
	user := func(lon float64, citation string) *GeoRef {
		g := utm(geoUserDefined, 1, 600000, 5300000)
		// 3075 ProjCoordTrans = 1 (transverse Mercator), 3088 central meridian in the doubles,
		// 3073 citation in the ASCII parameters.
		g.GeoKeyDirectory = []uint16{1, 1, 0, 6, 1024, 0, 1, 1, 1025, 0, 1, 1, 3072, 0, 1, geoUserDefined,
			3073, tagGeoASCII, uint16(len(citation) + 1), 0, 3075, 0, 1, 1, 3088, tagGeoDoubles, 1, 0}
		g.GeoDoubleParams = []float64{lon}
		g.GeoASCIIParams = citation + "|"
		return g
	}
	none := &GeoRef{PixelScale: []float64{10, 10, 0}, Tiepoints: []float64{0, 0, 0, 600000, 5300000, 0}}
	extra := utm(32633, 1, 600000, 5300000)
	extra.GeoKeyDirectory = append([]uint16{1, 1, 0, 4}, append(extra.GeoKeyDirectory[4:], 3076, 0, 1, 9001)...)
	feet := utm(32633, 1, 600000, 5300000)
	feet.GeoKeyDirectory = append([]uint16{1, 1, 0, 4}, append(feet.GeoKeyDirectory[4:], 3076, 0, 1, 9002)...)
	for _, c := range []struct {
		name string
		a, b *GeoRef
		same bool
	}{
		{"same code", utm(32633, 1, 0, 0), utm(32633, 2, 5, 5), true},
		{"other zone, same numbers", utm(32633, 1, 0, 0), utm(32634, 1, 0, 0), false},
		{"code and a redundant key", utm(32633, 1, 0, 0), extra, true},
		{"code, keys disagree", extra, feet, false},
		{"user-defined, citations differ", user(15, "mine"), user(15, "yours"), true},
		{"user-defined, meridians differ", user(15, "mine"), user(16, "mine"), false},
		{"code and user-defined", utm(32633, 1, 0, 0), user(15, "UTM 33N"), false},
		{"no CRS", none, utm(32633, 1, 0, 0), true},
	} {
		if got := c.a.SameCRS(c.b); got != c.same || c.b.SameCRS(c.a) != got {
			t.Errorf("%s: SameCRS = %v, want %v (%s, %s)", c.name, got, c.same, c.a.CRSName(), c.b.CRSName())
		}
	}
	if n := utm(32633, 1, 0, 0).CRSName(); n != "EPSG:32633" {
		t.Errorf("CRSName %q", n)
	}
	if n := user(15, "my grid").CRSName(); n != `a user-defined projected CRS ("my grid")` {
		t.Errorf("CRSName %q", n)
	}
	if why := utm(32633, 1, 0, 0).Mismatch(utm(32634, 1, 0, 0)); why != "are in different coordinate reference systems (EPSG:32633 and EPSG:32634)" {
		t.Errorf("Mismatch %q", why)
	}
}

func TestCheckPairChecksCRS(t *testing.T) {
	red, nir := NewBand(2, 2), NewBand(2, 2)
	red.Geo, nir.Geo = utm(32633, 1, 0, 0), utm(32634, 1, 0, 0)
	red.Source, nir.Source = "red.tif:1", "nir.tif:1"
	err := CheckPair(red, nir)
	if err == nil || err.Error() != "the bands are not on one grid: red red.tif:1 and nir nir.tif:1 are in different coordinate reference systems (EPSG:32633 and EPSG:32634); the bands of one computation must share a grid" {
		t.Errorf("CheckPair: %v", err)
	}
	nir.Geo = utm(32633, 2, 5, -5)
	if err := CheckPair(red, nir); err != nil {
		t.Errorf("PixelIsPoint twin: %v", err)
	}
}

func TestCheck(t *testing.T) {
	nan := math.NaN()
	for _, c := range []struct {
		g    *GeoRef
		want string
	}{
		{nil, ""},
		{utm(32633, 1, 0, 0), ""},
		{&GeoRef{PixelScale: []float64{nan, 10, 0}, Tiepoints: make([]float64, 6)}, "ModelPixelScale value 1 is NaN"},
		{&GeoRef{PixelScale: []float64{10, 10, 0}, Tiepoints: []float64{0, 0, 0, math.Inf(-1), 0, 0}}, "ModelTiepoint value 4 is -Inf"},
		{&GeoRef{Transformation: make([]float64, 16)}, "maps the image to a line or a point"},
		{&GeoRef{Transformation: []float64{1, 2}}, "ModelTransformation has 2 values"},
		{&GeoRef{PixelScale: []float64{0, 10, 0}, Tiepoints: make([]float64, 6)}, "the pixel size is 0 x 10"},
		{&GeoRef{GeoKeyDirectory: []uint16{1, 1, 0, 2, 1024, 0, 1, 1}}, "claims 2 keys but holds 1"},
		{&GeoRef{GeoKeyDirectory: []uint16{1, 1, 0, 1, 3088, tagGeoDoubles, 1, 3}}, "GeoKey 3088 points past the 0 GeoDoubleParams"},
		{&GeoRef{GeoKeyDirectory: []uint16{1, 1, 0, 1, 1026, tagGeoASCII, 10, 0}, GeoASCIIParams: "ab|"}, "GeoKey 1026 points past the 3 bytes"},
		{&GeoRef{GeoKeyDirectory: []uint16{2, 1, 0, 0}}, "version 2"},
		{&GeoRef{GeoDoubleParams: []float64{nan}}, "GeoDoubleParams value 1 is NaN"},
	} {
		err := c.g.Check()
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("Check(%+v) = %v, want %q", c.g, err, c.want)
		}
	}
}

func TestExcerpt(t *testing.T) {
	if got := Excerpt("short", 40); got != `"short"` {
		t.Errorf("%s", got)
	}
	long := strings.Repeat("é", 100) // 200 bytes
	got := Excerpt(long, 41)
	if want := `"` + strings.Repeat("é", 20) + `…" (200 bytes)`; got != want {
		t.Errorf("%s, want %s", got, want)
	}
}
