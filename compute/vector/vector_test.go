package vector

import (
	"bytes"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/paulmach/orb"

	"canopy/compute"
	"canopy/compute/fake"
)

// needTool skips the test when a command-line tool is missing, unless
// CANOPY_EXPECT_GDAL=1 says the machine must have it.
func needTool(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CANOPY_EXPECT_GDAL") == "1" {
				t.Fatalf("%s not found but CANOPY_EXPECT_GDAL=1: install gdal-bin", tool)
			}
			t.Skipf("%s not found: the GDAL cross-check needs gdal-bin", tool)
		}
	}
}

// gdalPython returns a Python interpreter that has GDAL's bindings, or
// skips (fails under CANOPY_EXPECT_GDAL=1) when there is none.
func gdalPython(t *testing.T) string {
	t.Helper()
	for _, py := range []string{"python3", "/usr/bin/python3"} {
		if exec.Command(py, "-c", "import osgeo_utils.samples.validate_gpkg, numpy").Run() == nil {
			return py
		}
	}
	if os.Getenv("CANOPY_EXPECT_GDAL") == "1" {
		t.Fatal("no python3 with GDAL's bindings and NumPy but CANOPY_EXPECT_GDAL=1: install python3-gdal python3-numpy")
	}
	t.Skip("no python3 with GDAL's bindings and NumPy (python3-gdal, python3-numpy)")
	return ""
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out.String())
	}
	return out.String()
}

func square(x0, y0, s float64) orb.Ring {
	return orb.Ring{{x0, y0}, {x0 + s, y0}, {x0 + s, y0 + s}, {x0, y0 + s}, {x0, y0}}
}

// testLayer: a square, a square with a hole, a two-part multipolygon, in
// UTM 33N.
func testLayer() *Layer {
	return &Layer{
		Name:   "stands",
		CRS:    "EPSG:32633",
		Fields: []Field{{Name: "name", Type: "TEXT"}, {Name: "age", Type: "INTEGER"}, {Name: "mean", Type: "REAL"}},
		Features: []Feature{
			{FID: 7, Attrs: map[string]any{"name": "A-1", "age": int64(40), "mean": 9.0}, Geom: orb.Polygon{square(500000, 5700000, 100)}},
			{FID: 8, Attrs: map[string]any{"name": "B'2 \"x\"", "age": nil, "mean": 9.0}, Geom: orb.Polygon{square(500200, 5700000, 100), square(500220, 5700020, 10)}},
			{FID: 12, Attrs: map[string]any{"name": "C", "age": int64(3), "mean": 9.0}, Geom: orb.MultiPolygon{{square(500400, 5700000, 50)}, {square(500500, 5700000, 50)}}},
		},
	}
}

func TestWriteReadGPKG(t *testing.T) {
	l := testLayer()
	path := filepath.Join(t.TempDir(), "out.gpkg")
	cols := []Column{{Name: "mean", Type: "REAL"}, {Name: "pixels", Type: "INTEGER"}, {Name: "note", Type: "TEXT"}}
	rows := [][]any{{0.5, 100, "ok"}, {math.NaN(), int64(0), nil}, {float32(0.25), 25, "two parts"}}
	if err := WriteGPKG(path, l, cols, rows); err != nil {
		t.Fatal(err)
	}
	got, err := Read(path, "")
	if err != nil {
		t.Fatal(err)
	}
	if got.CRS != "EPSG:32633" || got.Name != "stands" || len(got.Features) != 3 {
		t.Fatalf("read back %q %q with %d features", got.Name, got.CRS, len(got.Features))
	}
	var names []string
	for _, f := range got.Fields {
		names = append(names, f.Name+":"+f.Type)
	}
	if s := strings.Join(names, ","); s != "name:TEXT,age:INTEGER,mean:REAL,pixels:INTEGER,note:TEXT" {
		t.Fatalf("fields %s", s)
	}
	for i, f := range got.Features {
		want := l.Features[i]
		if f.FID != want.FID {
			t.Errorf("feature %d: fid %d, want %d", i, f.FID, want.FID)
		}
		// The layer mixes polygons and multipolygons: all come back multi.
		if !orb.Equal(f.Geom, asMultiPolygon(want.Geom)) {
			t.Errorf("feature %d: geometry %v, want %v", i, f.Geom, want.Geom)
		}
		if f.Attrs["name"] != want.Attrs["name"] || f.Attrs["age"] != want.Attrs["age"] {
			t.Errorf("feature %d: attributes %v, want %v", i, f.Attrs, want.Attrs)
		}
	}
	if v := got.Features[0].Attrs["mean"]; v != 0.5 {
		t.Errorf("mean replaced: %v, want 0.5", v)
	}
	if v := got.Features[1].Attrs["mean"]; v != nil {
		t.Errorf("NaN written as %v, want NULL", v)
	}
	if v := got.Features[2].Attrs["pixels"]; v != int64(25) {
		t.Errorf("pixels %v (%T)", v, v)
	}
	if v := got.Features[2].Attrs["mean"]; v != 0.25 {
		t.Errorf("float32 mean %v", v)
	}
	// No temporary file is left beside the output.
	ents, _ := os.ReadDir(filepath.Dir(path))
	if len(ents) != 1 {
		t.Errorf("directory holds %d entries, want the GeoPackage only", len(ents))
	}
	// The application id and version.
	raw, _ := os.ReadFile(path)
	if string(raw[68:72]) != "GPKG" {
		t.Errorf("application_id bytes %q, want GPKG", raw[68:72])
	}
}

func TestWriteGPKGOpensInGDAL(t *testing.T) {
	needTool(t, "ogrinfo")
	l := testLayer()
	path := filepath.Join(t.TempDir(), "zonal out.gpkg")
	cols := []Column{{Name: "mean", Type: "REAL"}, {Name: "ha_dense", Type: "REAL"}}
	rows := [][]any{{0.5, 1.0}, {0.25, math.NaN()}, {0.75, 0.5}}
	if err := WriteGPKG(path, l, cols, rows); err != nil {
		t.Fatal(err)
	}
	out := run(t, "ogrinfo", "-al", "-so", path)
	for _, want := range []string{
		"Layer name: stands",
		"Geometry: Multi Polygon",
		"Feature Count: 3",
		"Extent: (500000.000000, 5700000.000000) - (500550.000000, 5700100.000000)",
		`ID["EPSG",32633]`,
		"name: String",
		"age: Integer",
		"mean: Real",
		"ha_dense: Real",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("ogrinfo summary lacks %q:\n%s", want, out)
		}
	}
	full := run(t, "ogrinfo", "-al", "-q", "-fid", "8", path)
	for _, want := range []string{"name (String) = B'2 \"x\"", "mean (Real) = 0.25", "ha_dense (Real) = (null)", "MULTIPOLYGON (((500200 5700000,500300 5700000,500300 5700100,500200 5700100,500200 5700000),(500220 5700020,500230 5700020,500230 5700030,500220 5700030,500220 5700020)))"} {
		if !strings.Contains(full, want) {
			t.Errorf("ogrinfo feature 8 lacks %q:\n%s", want, full)
		}
	}
	// GDAL's GeoPackage validator finds nothing wrong, with features and
	// without.
	py := gdalPython(t)
	empty := filepath.Join(filepath.Dir(path), "empty.gpkg")
	if err := WriteGPKG(empty, &Layer{Name: "none"}, cols, nil); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, empty} {
		if out, err := exec.Command(py, "-m", "osgeo_utils.samples.validate_gpkg", p).CombinedOutput(); err != nil || len(out) != 0 {
			t.Errorf("validate_gpkg %s: %v\n%s", filepath.Base(p), err, out)
		}
	}
	// GDAL's own reading of the area agrees: 100² − 10².
	sqlOut := run(t, "ogrinfo", "-q", "-dialect", "SQLite", "-sql", "SELECT ST_Area(geom) AS a FROM stands WHERE fid = 8", path)
	if !strings.Contains(sqlOut, "a (Real) = 9900") {
		t.Errorf("area by GDAL: %s", sqlOut)
	}
}

func TestReadGDALWritten(t *testing.T) {
	needTool(t, "ogr2ogr")
	dir := t.TempDir()
	src := filepath.Join(dir, "in.geojson")
	gj := `{"type":"FeatureCollection","features":[
 {"type":"Feature","properties":{"stand":"S1","area":1.5},"geometry":{"type":"Polygon","coordinates":[[[10,50,100],[10.001,50,100],[10.001,50.001,101],[10,50.001,100],[10,50,100]]]}},
 {"type":"Feature","properties":{"stand":"S2","area":2},"geometry":{"type":"MultiPolygon","coordinates":[[[[11,50,1],[11.001,50,1],[11.001,50.001,1],[11,50,1]]]]}}]}`
	if err := os.WriteFile(src, []byte(gj), 0o644); err != nil {
		t.Fatal(err)
	}
	gpkg := filepath.Join(dir, "two.gpkg")
	run(t, "ogr2ogr", "-f", "GPKG", "-nln", "forest", "-dim", "XYZ", "-t_srs", "EPSG:3035", gpkg, src)
	run(t, "ogr2ogr", "-update", "-nln", "roads", gpkg, src)

	_, err := Read(gpkg, "")
	if err == nil || !strings.Contains(err.Error(), "2 layers (forest, roads)") || !strings.Contains(err.Error(), ":LAYER") {
		t.Fatalf("several layers, none named: %v", err)
	}
	if _, err := Read(gpkg, "lakes"); err == nil || !strings.Contains(err.Error(), `no layer "lakes" (layers: forest, roads)`) {
		t.Fatalf("unknown layer: %v", err)
	}
	l, err := Read(gpkg, "forest")
	if err != nil {
		t.Fatal(err)
	}
	if l.CRS != "EPSG:3035" || len(l.Features) != 2 {
		t.Fatalf("CRS %q, %d features", l.CRS, len(l.Features))
	}
	ids, err := l.IDs("stand")
	if err != nil || ids[0] != "S1" || ids[1] != "S2" {
		t.Fatalf("ids %v %v", ids, err)
	}
	if _, err := l.IDs("nope"); err == nil || !strings.Contains(err.Error(), "fields: area, stand") {
		t.Fatalf("missing id field: %v", err)
	}
	// The XYZ polygon came back flat, and reprojecting it back to
	// EPSG:4326 gives the GeoJSON corners again.
	if err := Reproject(l, "EPSG:4326"); err != nil {
		t.Fatal(err)
	}
	p := asMultiPolygon(l.Features[0].Geom)[0][0]
	if math.Abs(p[1][0]-10.001) > 1e-7 || math.Abs(p[1][1]-50) > 1e-7 { // 1 cm
		t.Fatalf("corner after round trip %v", p[1])
	}
}

func TestGeoJSON(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	p := write("a.geojson", `{"type":"FeatureCollection","features":[
 {"type":"Feature","id":"X1","properties":{"n":1,"v":2.5,"s":"a"},"geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,0]]]}},
 {"type":"Feature","id":"X2","properties":{"n":2,"v":3,"s":null},"geometry":null}]}`)
	l, err := Read(p, "")
	if err != nil {
		t.Fatal(err)
	}
	if l.CRS != "EPSG:4326" || l.Name != "a" || len(l.Features) != 2 {
		t.Fatalf("%+v", l)
	}
	f0, f1 := l.Features[0], l.Features[1]
	if f0.FID != 1 || f1.FID != 2 || f0.Attrs["n"] != int64(1) || f0.Attrs["v"] != 2.5 || f1.Attrs["v"] != 3.0 || f0.Attrs["id"] != "X1" || f1.Attrs["s"] != nil {
		t.Fatalf("features %+v %+v", f0, f1)
	}
	if !isEmpty(f1.Geom) {
		t.Fatalf("null geometry read as %v", f1.Geom)
	}
	p = write("b.json", `{"type":"FeatureCollection","crs":{"type":"name","properties":{"name":"urn:ogc:def:crs:EPSG::3067"}},"features":[{"type":"Feature","id":5,"properties":{},"geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,0]]]}}]}`)
	if l, err = Read(p, ""); err != nil || l.CRS != "EPSG:3067" || l.Features[0].FID != 5 {
		t.Fatalf("legacy crs: %v %+v", err, l)
	}
	p = write("c.geojson", `{"type":"Feature","properties":{},"geometry":{"type":"LineString","coordinates":[[0,0],[1,1]]}}`)
	if _, err = Read(p, ""); err == nil || !strings.Contains(err.Error(), "feature 1: is a LineString; stands must be polygons") {
		t.Fatalf("line: %v", err)
	}
	p = write("d.geojson", `{"type":"FeatureCollection","features":[`)
	if _, err = Read(p, ""); err == nil || !strings.Contains(err.Error(), "not valid JSON") {
		t.Fatalf("truncated: %v", err)
	}
	p = write("e.geojson", `{"type":"FeatureCollection","crs":{"type":"name","properties":{"name":"urn:ogc:def:crs:FOO::1"}},"features":[]}`)
	if _, err = Read(p, ""); err == nil || !strings.Contains(err.Error(), "not an EPSG code") {
		t.Fatalf("unknown crs name: %v", err)
	}
	if _, err = Read(p, "other"); err == nil || !strings.Contains(err.Error(), "one layer") {
		t.Fatalf("layer on GeoJSON: %v", err)
	}
}

func TestReadRefusals(t *testing.T) {
	dir := t.TempDir()
	shp := filepath.Join(dir, "stands.shp")
	os.WriteFile(shp, []byte{0, 0, 0x27, 0x0a}, 0o644)
	if _, err := Read(shp, ""); err == nil || !strings.Contains(err.Error(), "ogr2ogr -f GPKG stands.gpkg stands.shp") {
		t.Fatalf("shapefile: %v", err)
	}
	txt := filepath.Join(dir, "x.gpkg")
	os.WriteFile(txt, []byte("hello"), 0o644)
	if _, err := Read(txt, ""); err == nil || !strings.Contains(err.Error(), "not a GeoPackage or GeoJSON") {
		t.Fatalf("text: %v", err)
	}
	if _, err := Read(filepath.Join(dir, "missing.gpkg"), ""); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Fatalf("missing: %v", err)
	}
	// An SQLite file that is not a GeoPackage.
	db := filepath.Join(dir, "plain.gpkg")
	l := testLayer()
	if err := WriteGPKG(db, l, nil, make([][]any, 3)); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(db)
	bad := bytes.ReplaceAll(raw, []byte("gpkg_contents"), []byte("gpkg_xontents"))
	os.WriteFile(db, bad, 0o644)
	if _, err := Read(db, ""); err == nil || !strings.Contains(err.Error(), "not a GeoPackage") {
		t.Fatalf("no gpkg_contents: %v", err)
	}
	// An empty layer reads as a layer without features.
	empty := &Layer{Name: "none", CRS: "EPSG:3067"}
	ep := filepath.Join(dir, "empty.gpkg")
	if err := WriteGPKG(ep, empty, nil, nil); err != nil {
		t.Fatal(err)
	}
	if l, err := Read(ep, ""); err != nil || len(l.Features) != 0 || l.CRS != "EPSG:3067" {
		t.Fatalf("empty: %v %+v", err, l)
	}
}

func TestParseStands(t *testing.T) {
	dir := t.TempDir()
	odd := filepath.Join(dir, "a:b.gpkg")
	os.WriteFile(odd, nil, 0o644)
	for _, c := range []struct{ in, path, layer, err string }{
		{"stands.gpkg", "stands.gpkg", "", ""},
		{"stands.gpkg:forest", "stands.gpkg", "forest", ""},
		{"dir/x.gpkg:my layer", "dir/x.gpkg", "my layer", ""},
		{`C:\data\x.gpkg`, `C:\data\x.gpkg`, "", ""},
		{"scenes:2024/x.gpkg", "scenes:2024/x.gpkg", "", ""},
		{odd, odd, "", ""},
		{"x.gpkg:", "", "", "empty layer name"},
		{":forest", "", "", "names no file"},
		{"", "", "", "empty stands"},
	} {
		p, l, err := ParseStands(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || p != c.path || l != c.layer {
			t.Errorf("%q: %q %q %v, want %q %q", c.in, p, l, err, c.path, c.layer)
		}
	}
}

func TestReproject(t *testing.T) {
	// 15°E is UTM 33's central meridian: easting 500000 exactly; the
	// northing of 52°N is k0 × the WGS 84 meridian arc, 5 761 038.2 m.
	l := &Layer{Name: "t", CRS: "EPSG:4326", Features: []Feature{{FID: 1, Geom: orb.Polygon{{{15, 52}, {15.01, 52}, {15.01, 52.01}, {15, 52}}}}}}
	orig := l.Clone()
	if err := Reproject(l, "EPSG:32633"); err != nil {
		t.Fatal(err)
	}
	p := l.Features[0].Geom.(orb.Polygon)[0][0]
	if math.Abs(p[0]-500000) > 1e-6 || math.Abs(p[1]-5761038.2) > 0.5 {
		t.Fatalf("15E 52N -> %v", p)
	}
	if l.CRS != "EPSG:32633" {
		t.Fatalf("CRS %q", l.CRS)
	}
	if q := orig.Features[0].Geom.(orb.Polygon)[0][0]; q != (orb.Point{15, 52}) {
		t.Fatalf("clone changed: %v", q)
	}
	// The same system given as WKT: nothing moves.
	wkt, code, err := CRSInfo("EPSG:32633")
	if err != nil || code != 32633 || !strings.HasPrefix(wkt, `PROJCS["WGS 84 / UTM zone 33N"`) {
		t.Fatalf("CRSInfo: %d %v %.60s", code, err, wkt)
	}
	if _, code, _ := CRSInfo(wkt); code != 32633 {
		t.Fatalf("WKT identified as EPSG:%d", code)
	}
	before := orb.Clone(l.Features[0].Geom)
	if err := Reproject(l, wkt); err != nil || !orb.Equal(before, l.Features[0].Geom) {
		t.Fatalf("same CRS as WKT: %v", err)
	}
	// Unknown systems and missing ones.
	err = Reproject(orig.Clone(), "EPSG:999999")
	if err == nil || !regexp.MustCompile(`unknown CRS "EPSG:999999"`).MatchString(err.Error()) {
		t.Fatalf("unknown target: %v", err)
	}
	bad := orig.Clone()
	bad.CRS = "EPSG:123456789"
	if err := Reproject(bad, "EPSG:32633"); err == nil || !strings.Contains(err.Error(), "unknown CRS") {
		t.Fatalf("unknown source: %v", err)
	}
	if bad.Features[0].Geom.(orb.Polygon)[0][0] != (orb.Point{15, 52}) {
		t.Fatal("failed reprojection moved the stands")
	}
	none := orig.Clone()
	none.CRS = ""
	if err := Reproject(none, "EPSG:32633"); err == nil || !strings.Contains(err.Error(), "have no CRS") {
		t.Fatalf("no CRS: %v", err)
	}
	if err := Reproject(orig.Clone(), ""); err == nil || !strings.Contains(err.Error(), "has no CRS") {
		t.Fatalf("no target: %v", err)
	}
}

func TestRasterCRS(t *testing.T) {
	ref := fake.GeoRef()
	if s, err := RasterCRS(ref); err != nil || s != "EPSG:32632" {
		t.Fatalf("fake scene: %q %v", s, err)
	}
	geo := &compute.GeoRef{GeoKeyDirectory: []uint16{1, 1, 0, 2, 1024, 0, 1, 2, 2048, 0, 1, 4326}}
	if s, err := RasterCRS(geo); err != nil || s != "EPSG:4326" {
		t.Fatalf("geographic: %q %v", s, err)
	}
	user := &compute.GeoRef{GeoKeyDirectory: []uint16{1, 1, 0, 2, 1024, 0, 1, 1, 3072, 0, 1, 32767}}
	if _, err := RasterCRS(user); err == nil || !strings.Contains(err.Error(), "user-defined") {
		t.Fatalf("user-defined: %v", err)
	}
	if _, err := RasterCRS(nil); err == nil {
		t.Fatal("nil georef accepted")
	}
}

func TestGPKGGeometryBlob(t *testing.T) {
	g := orb.Polygon{square(1, 2, 3)}
	b, err := EncodeGPKGGeometry(g, 3067)
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeGPKGGeometry(b)
	if err != nil || !orb.Equal(back, g) {
		t.Fatalf("round trip %v %v", back, err)
	}
	for _, c := range []struct {
		b   []byte
		err string
	}{
		{[]byte("XX\x00\x01\x00\x00\x00\x00"), "no GP header"},
		{[]byte("GP\x00\x03\x00\x00\x00\x00"), "truncated"},
		{[]byte("GP\x00\x0f\x00\x00\x00\x00"), "invalid envelope"},
		{append([]byte("GP\x00\x01\x00\x00\x00\x00"), 1, 10, 0, 0, 0, 0, 0, 0, 0), "curved"},
		{append([]byte("GP\x00\x01\x00\x00\x00\x00"), 1, 0xeb, 3, 0, 0, 1, 0, 0, 0), "truncated"},
	} {
		if _, err := DecodeGPKGGeometry(c.b); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("blob %q: %v, want %q", c.b, err, c.err)
		}
	}
}

// TestOnRaster places a WGS 84 layer on a UTM 32N raster: the copy is in
// the raster's system (9°E, 32N's central meridian, is easting 500000),
// the layer given is untouched, and a raster of no known system is an
// error.
func TestOnRaster(t *testing.T) {
	l := &Layer{Name: "t", CRS: "EPSG:4326", Features: []Feature{{FID: 1, Geom: orb.Polygon{{{9, 48}, {9.01, 48}, {9.01, 48.01}, {9, 48}}}}}}
	work, crs, err := OnRaster(l, fake.GeoRef())
	if err != nil {
		t.Fatal(err)
	}
	if crs != "EPSG:32632" || work.CRS != crs {
		t.Fatalf("system %q, layer %q", crs, work.CRS)
	}
	if p := work.Features[0].Geom.(orb.Polygon)[0][0]; math.Abs(p[0]-500000) > 1e-6 {
		t.Fatalf("9E 48N -> %v", p)
	}
	if l.CRS != "EPSG:4326" || l.Features[0].Geom.(orb.Polygon)[0][0] != (orb.Point{9, 48}) {
		t.Fatalf("the layer given changed: %s %v", l.CRS, l.Features[0].Geom)
	}
	if _, _, err := OnRaster(l, nil); err == nil {
		t.Fatal("a raster with no georeference accepted")
	}
}
