package vector

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paulmach/orb"
)

// TestHostileGeometries: geometries nested a million levels deep (WKB
// collections, GeoJSON collections) are refused in one line instead of
// overflowing the stack; a GeoJSON file over the limit is refused before
// it is read, saying how to go round it.
func TestHostileGeometries(t *testing.T) {
	deep := []byte{'G', 'P', 0, 0, 0, 0, 0, 0}
	for range 1000000 {
		deep = append(deep, 1)
		deep = binary.LittleEndian.AppendUint32(deep, 7)
		deep = binary.LittleEndian.AppendUint32(deep, 1)
	}
	if _, err := DecodeGPKGGeometry(deep); err == nil || !strings.Contains(err.Error(), "nested too deeply") {
		t.Errorf("a WKB collection nested a million deep: %v", err)
	}
	dir := t.TempDir()
	nested := filepath.Join(dir, "nested.geojson")
	os.WriteFile(nested, []byte(`{"type":"Feature","properties":{},"geometry":`+strings.Repeat(`{"type":"GeometryCollection","geometries":[`, 100)+strings.Repeat(`]}`, 100)+`}`), 0o644)
	if _, err := Read(nested, ""); err == nil || !strings.Contains(err.Error(), "nested more than") {
		t.Errorf("a GeoJSON collection nested 100 deep: %v", err)
	}
	huge := filepath.Join(dir, "huge.geojson")
	f, _ := os.Create(huge)
	f.WriteString(`{"type":"FeatureCollection","features":[]}`)
	f.Truncate(maxGeoJSON + 1)
	f.Close()
	if _, err := Read(huge, ""); err == nil || !strings.Contains(err.Error(), "more than the 256 MiB of GeoJSON") || !strings.Contains(err.Error(), "ogr2ogr") {
		t.Errorf("a GeoJSON file over the limit: %v", err)
	}
	bad := filepath.Join(dir, "bad.geojson")
	for _, c := range []struct{ geom, want string }{
		{`{"type":"Polygon","coordinates":[[[0,0],[1,0],[1e999,1],[0,0]]]}`, "bad coordinates"},
		{`{"type":"Polygon","coordinates":[[[0],[1,0],[1,1],[0,0]]]}`, "two numbers"},
		{`{"type":"Polygon","coordinates":[[0,0]]}`, "an array expected"},
		{`{"type":"Curve","coordinates":[]}`, "not a GeoJSON geometry"},
		{`{"type":"Point","coordinates":[1,2]}`, "is a Point; stands must be polygons"},
	} {
		os.WriteFile(bad, []byte(`{"type":"Feature","properties":{},"geometry":`+c.geom+`}`), 0o644)
		if _, err := Read(bad, ""); err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), bad) {
			t.Errorf("%s: %v, want %q", c.geom, err, c.want)
		}
	}
	ok := filepath.Join(dir, "ok.geojson")
	os.WriteFile(ok, []byte(`{"type":"FeatureCollection","features":[{"type":"Feature","id":3,"properties":{"a":1},"geometry":{"type":"MultiPolygon","coordinates":[[[[0,0,5],[2,0,5],[2,2,5],[0,0,5]]],[]]}},{"type":"Feature","properties":{},"geometry":null}]}`), 0o644)
	l, err := Read(ok, "")
	if err != nil || len(l.Features) != 2 || l.Features[0].FID != 1 {
		t.Fatalf("a valid file: %v %+v", err, l)
	}
	mp, isMP := l.Features[0].Geom.(orb.MultiPolygon)
	if !isMP || len(mp) != 2 || len(mp[0][0]) != 4 || mp[0][0][1] != (orb.Point{2, 0}) || l.Features[0].Attrs["a"] != int64(1) {
		t.Errorf("a valid file reads as %#v %v", l.Features[0].Geom, l.Features[0].Attrs)
	}
}
