package vector

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"

	"github.com/paulmach/orb"
	"github.com/paulmach/orb/geojson"

	"canopy/compute/internal/infile"
)

// maxGeoJSON bounds the size of a GeoJSON file read whole into memory.
const maxGeoJSON = 1 << 30

func readGeoJSON(path string) (*Layer, error) {
	data, err := infile.ReadFile(path, maxGeoJSON)
	var big *infile.TooLarge
	if errors.As(err, &big) {
		return nil, fmt.Errorf("%s: %s is more than the %s of GeoJSON Canopy reads; convert it once to a GeoPackage, which has no such limit: ogr2ogr -f GPKG stands.gpkg %s", path, infile.Bytes(big.Size), infile.Bytes(big.Limit), path)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var head struct {
		Type string          `json:"type"`
		CRS  json.RawMessage `json:"crs"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("%s: the file is not GeoJSON or it is damaged (not valid JSON: %v)", path, err)
	}
	var feats []*geojson.Feature
	switch head.Type {
	case "FeatureCollection":
		fc, err := geojson.UnmarshalFeatureCollection(data)
		if err != nil {
			return nil, fmt.Errorf("%s: the file is not GeoJSON or it is damaged (%v)", path, err)
		}
		feats = fc.Features
	case "Feature":
		f, err := geojson.UnmarshalFeature(data)
		if err != nil {
			return nil, fmt.Errorf("%s: the file is not GeoJSON or it is damaged (%v)", path, err)
		}
		feats = []*geojson.Feature{f}
	case "Polygon", "MultiPolygon", "GeometryCollection", "Point", "MultiPoint", "LineString", "MultiLineString":
		g, err := geojson.UnmarshalGeometry(data)
		if err != nil {
			return nil, fmt.Errorf("%s: the file is not GeoJSON or it is damaged (%v)", path, err)
		}
		feats = []*geojson.Feature{geojson.NewFeature(g.Geometry())}
	case "":
		return nil, fmt.Errorf("%s: the file is JSON but not GeoJSON (it has no \"type\")", path)
	default:
		return nil, fmt.Errorf("%s: GeoJSON type %q is not a feature collection, a feature or a geometry", path, head.Type)
	}
	crs, err := geojsonCRS(head.CRS)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	l := &Layer{Name: layerName(path), Path: path, CRS: crs}

	// Feature ids: the integer "id" members when every feature has a
	// distinct one, positions otherwise.
	fids := make([]int64, len(feats))
	seen := make(map[int64]bool, len(feats))
	useIDs := true
	for i, f := range feats {
		v, ok := f.ID.(float64)
		if !ok || v != math.Trunc(v) || math.Abs(v) > 1<<53 || seen[int64(v)] {
			useIDs = false
			break
		}
		fids[i] = int64(v)
		seen[fids[i]] = true
	}
	// Fields: the union of the properties, in name order, typed by their
	// values (integral numbers INTEGER, other numbers REAL, the rest TEXT).
	types := map[string]string{}
	stringIDs := false
	for _, f := range feats {
		if _, ok := f.ID.(string); ok {
			stringIDs = true
		}
		for k, v := range f.Properties {
			types[k] = mergeType(types[k], v)
		}
	}
	if _, taken := types["id"]; stringIDs && !taken {
		types["id"] = "TEXT"
	} else {
		stringIDs = false
	}
	names := make([]string, 0, len(types))
	for k := range types {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, n := range names {
		t := types[n]
		if t == "" {
			t = "TEXT"
		}
		l.Fields = append(l.Fields, Field{Name: n, Type: t})
	}
	for i, f := range feats {
		fid := int64(i + 1)
		if useIDs {
			fid = fids[i]
		}
		g, err := polygonal(f.Geometry)
		if err != nil {
			return nil, fmt.Errorf("%s: feature %d: %v", path, fid, err)
		}
		attrs := make(map[string]any, len(l.Fields))
		for _, fd := range l.Fields {
			attrs[fd.Name] = convertJSON(f.Properties[fd.Name], fd.Type)
		}
		if stringIDs {
			if s, ok := f.ID.(string); ok {
				attrs["id"] = s
			}
		}
		l.Features = append(l.Features, Feature{FID: fid, Attrs: attrs, Geom: g})
	}
	return l, nil
}

// mergeType widens a column type to hold v too.
func mergeType(t string, v any) string {
	var vt string
	switch v := v.(type) {
	case nil:
		return t
	case float64:
		vt = "REAL"
		if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
			vt = "INTEGER"
		}
	case bool:
		vt = "INTEGER"
	default:
		vt = "TEXT"
	}
	switch {
	case t == "" || t == vt:
		return vt
	case (t == "INTEGER" && vt == "REAL") || (t == "REAL" && vt == "INTEGER"):
		return "REAL"
	}
	return "TEXT"
}

// convertJSON converts a decoded JSON value to the column type.
func convertJSON(v any, typ string) any {
	switch v := v.(type) {
	case nil:
		return nil
	case float64:
		switch typ {
		case "INTEGER":
			return int64(v)
		case "REAL":
			return v
		}
		return FormatValue(v)
	case bool:
		if typ == "INTEGER" {
			if v {
				return int64(1)
			}
			return int64(0)
		}
		return FormatValue(v)
	case string:
		return v
	}
	b, _ := json.Marshal(v)
	return string(b)
}

var (
	urnEPSG  = regexp.MustCompile(`(?i)^urn:ogc:def:crs:EPSG:[0-9.]*:([0-9]+)$`)
	nameEPSG = regexp.MustCompile(`(?i)^EPSG:+([0-9]+)$`)
	urlEPSG  = regexp.MustCompile(`(?i)^https?://www\.opengis\.net/def/crs/EPSG/[0-9.]+/([0-9]+)$`)
)

// geojsonCRS reads a legacy (2008 GeoJSON) "crs" member; none means
// EPSG:4326 as RFC 7946 says.
func geojsonCRS(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "EPSG:4326", nil
	}
	var c struct {
		Type       string `json:"type"`
		Properties struct {
			Name string `json:"name"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return "", fmt.Errorf("bad \"crs\" member: %v", err)
	}
	if !strings.EqualFold(c.Type, "name") {
		return "", fmt.Errorf("\"crs\" of type %q is not supported (only named CRSs such as urn:ogc:def:crs:EPSG::3067)", c.Type)
	}
	n := strings.TrimSpace(c.Properties.Name)
	switch strings.ToUpper(n) {
	case "URN:OGC:DEF:CRS:OGC:1.3:CRS84", "URN:OGC:DEF:CRS:OGC::CRS84", "CRS84", "OGC:CRS84":
		return "EPSG:4326", nil
	}
	for _, re := range []*regexp.Regexp{urnEPSG, nameEPSG, urlEPSG} {
		if m := re.FindStringSubmatch(n); m != nil {
			return "EPSG:" + strings.TrimLeft(m[1], "0"), nil
		}
	}
	return "", fmt.Errorf("\"crs\" name %q is not an EPSG code this reader knows", n)
}

// asMultiPolygon returns g as a multipolygon.
func asMultiPolygon(g orb.Geometry) orb.MultiPolygon {
	switch g := g.(type) {
	case orb.Polygon:
		return orb.MultiPolygon{g}
	case orb.MultiPolygon:
		return g
	}
	return orb.MultiPolygon{}
}
