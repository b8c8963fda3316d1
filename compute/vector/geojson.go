package vector

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/paulmach/orb"

	"canopy/compute/internal/infile"
)

// maxGeoJSON bounds the size of a GeoJSON file read whole into memory:
// reading one takes about twice its size (a GeoPackage of the same stands
// is read row by row).
const maxGeoJSON = 256 << 20

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
	var feats []*gjFeature
	switch head.Type {
	case "FeatureCollection":
		var fc struct {
			Features []*gjFeature `json:"features"`
		}
		if err := json.Unmarshal(data, &fc); err != nil {
			return nil, fmt.Errorf("%s: the file is not GeoJSON or it is damaged (%v)", path, err)
		}
		feats = fc.Features
	case "Feature":
		var f gjFeature
		if err := json.Unmarshal(data, &f); err != nil {
			return nil, fmt.Errorf("%s: the file is not GeoJSON or it is damaged (%v)", path, err)
		}
		feats = []*gjFeature{&f}
	case "Polygon", "MultiPolygon", "GeometryCollection", "Point", "MultiPoint", "LineString", "MultiLineString":
		feats = []*gjFeature{{Raw: data}}
	case "":
		return nil, fmt.Errorf("%s: the file is JSON but not GeoJSON (it has no \"type\")", path)
	default:
		return nil, fmt.Errorf("%s: GeoJSON type %q is not a feature collection, a feature or a geometry", path, head.Type)
	}
	data = nil
	for i, f := range feats {
		if f == nil {
			return nil, fmt.Errorf("%s: feature %d is null", path, i+1)
		}
		g, err := decodeGeometry(f.Raw, 0)
		if err != nil {
			return nil, fmt.Errorf("%s: feature %d: the geometry is not GeoJSON or it is damaged (%v)", path, i+1, err)
		}
		f.Geometry, f.Raw = g, nil
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

// gjFeature is a GeoJSON feature as read: its geometry is decoded by
// decodeGeometry from the raw JSON (orb's decoder unmarshals each level
// of a feature collection again, which made large collections slow:
// docs/BENCHMARKS.md, "Numbers behind code comments").
type gjFeature struct {
	ID         any             `json:"id"`
	Properties map[string]any  `json:"properties"`
	Raw        json.RawMessage `json:"geometry"`
	Geometry   orb.Geometry    `json:"-"`
}

// maxNesting is the deepest GeometryCollection read.
const maxNesting = 32

// decodeGeometry decodes a GeoJSON geometry object: polygons and
// multipolygons with their coordinates, collections of them, and the
// other types as empty geometries of their kind (polygonal names them).
func decodeGeometry(raw json.RawMessage, depth int) (orb.Geometry, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if depth > maxNesting {
		return nil, fmt.Errorf("geometry collections nested more than %d deep", maxNesting)
	}
	var h struct {
		Type        string            `json:"type"`
		Coordinates json.RawMessage   `json:"coordinates"`
		Geometries  []json.RawMessage `json:"geometries"`
	}
	if err := json.Unmarshal(raw, &h); err != nil {
		return nil, err
	}
	if len(h.Coordinates) == 0 || string(h.Coordinates) == "null" {
		h.Coordinates = json.RawMessage("[]")
	}
	switch h.Type {
	case "Polygon":
		c := &coords{b: h.Coordinates}
		p, err := c.polygon()
		if err == nil {
			err = c.end()
		}
		return p, err
	case "MultiPolygon":
		c := &coords{b: h.Coordinates}
		var mp orb.MultiPolygon
		err := c.list(func() error {
			p, err := c.polygon()
			mp = append(mp, p)
			return err
		})
		if err == nil {
			err = c.end()
		}
		return mp, err
	case "GeometryCollection":
		col := orb.Collection{}
		for _, g := range h.Geometries {
			x, err := decodeGeometry(g, depth+1)
			if err != nil {
				return nil, err
			}
			if x != nil {
				col = append(col, x)
			}
		}
		return col, nil
	case "Point":
		return orb.Point{}, nil
	case "MultiPoint":
		return orb.MultiPoint{}, nil
	case "LineString":
		return orb.LineString{}, nil
	case "MultiLineString":
		return orb.MultiLineString{}, nil
	}
	return nil, fmt.Errorf("geometry type %q is not a GeoJSON geometry", h.Type)
}

// coords parses GeoJSON coordinate arrays (already valid JSON).
type coords struct {
	b []byte
	i int
}

func (c *coords) skip() {
	for c.i < len(c.b) && (c.b[c.i] == ' ' || c.b[c.i] == '\t' || c.b[c.i] == '\n' || c.b[c.i] == '\r') {
		c.i++
	}
}

func (c *coords) errorf(what string) error {
	return fmt.Errorf("bad coordinates at byte %d: %s", c.i, what)
}

// list parses "[item, item, ...]", calling item for each.
func (c *coords) list(item func() error) error {
	c.skip()
	if c.i >= len(c.b) || c.b[c.i] != '[' {
		return c.errorf("an array expected")
	}
	c.i++
	c.skip()
	if c.i < len(c.b) && c.b[c.i] == ']' {
		c.i++
		return nil
	}
	for {
		if err := item(); err != nil {
			return err
		}
		c.skip()
		if c.i >= len(c.b) {
			return c.errorf("the array does not end")
		}
		switch c.b[c.i] {
		case ',':
			c.i++
		case ']':
			c.i++
			return nil
		default:
			return c.errorf("',' or ']' expected")
		}
	}
}

func (c *coords) number() (float64, error) {
	c.skip()
	j := c.i
	for j < len(c.b) && strings.IndexByte("+-0123456789.eE", c.b[j]) >= 0 {
		j++
	}
	v, err := strconv.ParseFloat(string(c.b[c.i:j]), 64)
	if err != nil {
		return 0, c.errorf("a number expected")
	}
	c.i = j
	return v, nil
}

// point parses [x, y, ...] (z and m are dropped).
func (c *coords) point() (orb.Point, error) {
	var p orb.Point
	n := 0
	err := c.list(func() error {
		v, err := c.number()
		if n < 2 {
			p[n] = v
		}
		n++
		return err
	})
	if err == nil && n < 2 {
		err = c.errorf("a position needs two numbers")
	}
	return p, err
}

func (c *coords) polygon() (orb.Polygon, error) {
	var p orb.Polygon
	err := c.list(func() error {
		var r orb.Ring
		err := c.list(func() error {
			pt, err := c.point()
			r = append(r, pt)
			return err
		})
		p = append(p, r)
		return err
	})
	return p, err
}

// end checks that nothing but spaces follows what was parsed.
func (c *coords) end() error {
	c.skip()
	if c.i != len(c.b) {
		return c.errorf("more after the coordinates")
	}
	return nil
}
