package vector

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/paulmach/orb"
)

func watch(what string, n int) func() {
	done := make(chan struct{})
	go func() {
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			panic(fmt.Sprintf("%s still busy after 10 s on a %d-byte input", what, n))
		}
	}()
	return func() { close(done) }
}

// FuzzGPKGGeometry: any bytes as a GeoPackage geometry blob: a geometry
// or an error, never a panic or a hang, and what decodes validates.
func FuzzGPKGGeometry(f *testing.F) {
	square := orb.Polygon{{{0, 0}, {1, 0}, {1, 1}, {0, 1}, {0, 0}}}
	for _, g := range []orb.Geometry{square, orb.MultiPolygon{square, square}, orb.Polygon{{{1e300, -1e300}, {-1e300, 1e300}, {0, 0}, {1e300, -1e300}}}} {
		b, err := EncodeGPKGGeometry(g, 4326)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	// A collection nested deeply, in ISO Z form.
	deep := []byte{'G', 'P', 0, 0, 0, 0, 0, 0}
	for range 100 {
		deep = append(deep, 1)
		deep = binary.LittleEndian.AppendUint32(deep, 1007)
		deep = binary.LittleEndian.AppendUint32(deep, 1)
	}
	f.Add(deep)
	nan := []byte{'G', 'P', 0, 1, 0, 0, 0, 0, 1, 3, 0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0}
	for range 8 {
		nan = binary.LittleEndian.AppendUint64(nan, math.Float64bits(math.NaN()))
	}
	f.Add(nan)
	debug.SetMemoryLimit(1 << 30)
	f.Fuzz(func(t *testing.T, b []byte) {
		defer watch("DecodeGPKGGeometry", len(b))()
		g, err := DecodeGPKGGeometry(b)
		if err != nil {
			if strings.ContainsAny(err.Error(), "\r\n") {
				t.Fatalf("the error is not one line: %.300q", err)
			}
			return
		}
		if g, err := polygonal(g); err == nil {
			Validate(g)
		}
	})
}

// FuzzGeoJSON: any bytes as a stands file (.geojson): a layer or a
// one-line error naming the file, never a panic or a hang.
func FuzzGeoJSON(f *testing.F) {
	f.Add([]byte(`{"type":"FeatureCollection","features":[{"type":"Feature","id":7,"properties":{"name":"A","ha":1.5},"geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,0]]]}}]}`))
	f.Add([]byte(`{"type":"Feature","properties":null,"geometry":{"type":"MultiPolygon","coordinates":[[[[1e300,-1e300],[1,0],[1,1],[1e300,-1e300]]]]}}`))
	f.Add([]byte(`{"type":"GeometryCollection","geometries":[{"type":"GeometryCollection","geometries":[{"type":"Polygon","coordinates":[]}]}]}`))
	f.Add([]byte(`{"type":"FeatureCollection","crs":{"type":"name","properties":{"name":"urn:ogc:def:crs:EPSG::3067"}},"features":[]}`))
	f.Add([]byte(`{"type":"Polygon","coordinates":` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `}`))
	debug.SetMemoryLimit(1 << 30)
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(t.TempDir(), "stands.geojson")
		os.WriteFile(p, b, 0o644)
		defer watch(p, len(b))()
		l, err := Read(p, "")
		if err != nil {
			if m := err.Error(); strings.ContainsAny(m, "\r\n") || !strings.Contains(m, p) {
				t.Fatalf("the error is not one line naming the file: %.300q", m)
			}
			return
		}
		for _, ft := range l.Features {
			Validate(ft.Geom)
		}
	})
}
