package vector

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/paulmach/orb"

	"canopy/compute/internal/infile"
)

// Layer is a table of stands: polygon features with attributes, in one CRS.
type Layer struct {
	// Name is the GeoPackage table name, or the file's base name for GeoJSON.
	Name string
	// Path is the file the layer was read from ("" for one built in code).
	Path string
	// CRS is "EPSG:<code>", a WKT definition, or "" when the file says
	// nothing about its coordinate system.
	CRS string
	// Fields are the attribute columns in file order (the FID and the
	// geometry are not fields).
	Fields []Field
	// Features are the stands in file order.
	Features []Feature
}

// Field is one attribute column.
type Field struct {
	// Name is the column name as stored.
	Name string
	// Type is the SQLite storage class of the column: "INTEGER", "REAL",
	// "TEXT" or "BLOB" (declared GeoPackage types such as MEDIUMINT, FLOAT,
	// DATE map to these).
	Type string
}

// Feature is one stand.
type Feature struct {
	// FID is the feature id: the GeoPackage primary key, or for GeoJSON the
	// feature's integer "id" when it has one and its 1-based position
	// otherwise.
	FID int64
	// Attrs maps field names to values: int64, float64, string, []byte, bool
	// or nil (SQL NULL, JSON null).
	Attrs map[string]any
	// Geom is an orb.Polygon or an orb.MultiPolygon; an empty geometry is an
	// empty orb.MultiPolygon.
	Geom orb.Geometry
}

// ParseStands splits a "FILE[:LAYER]" argument into the file and the layer
// name ("" when none is given). A spec that names an existing file as a
// whole is that file, so paths with colons in them keep working.
func ParseStands(spec string) (path, layer string, err error) {
	if spec == "" {
		return "", "", errors.New("empty stands argument: want FILE or FILE:LAYER")
	}
	if st, err := os.Stat(spec); err == nil && !st.IsDir() {
		return spec, "", nil
	}
	i := strings.LastIndexByte(spec, ':')
	if i < 0 || strings.ContainsAny(spec[i+1:], `/\`) || (i == 1 && len(spec) > 2 && (spec[2] == '\\' || spec[2] == '/')) {
		return spec, "", nil
	}
	if i == 0 {
		return "", "", fmt.Errorf("stands argument %q names no file", spec)
	}
	if i == len(spec)-1 {
		return "", "", fmt.Errorf("stands argument %q: empty layer name after ':'", spec)
	}
	return spec[:i], spec[i+1:], nil
}

// Read reads the stands of a GeoPackage (.gpkg; layer picks the table, and
// may be "" when the file holds one feature table) or a GeoJSON file
// (.geojson, .json). Every feature must be a polygon or a multipolygon.
func Read(path, layer string) (*Layer, error) {
	st, err := os.Stat(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if st.IsDir() {
		return nil, fmt.Errorf("%s: this is a folder, not a file; choose a GeoPackage or GeoJSON file", path)
	}
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".shp", ".shx", ".dbf":
		base := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
		return nil, fmt.Errorf("%s: shapefiles are not read directly; convert it once with: ogr2ogr -f GPKG %s.gpkg %s.shp", path, base, base)
	case ".zip":
		return nil, fmt.Errorf("%s: zipped files are not read; unzip it, or convert it with ogr2ogr -f GPKG stands.gpkg /vsizip/%s", path, path)
	}
	head := make([]byte, 16)
	f, _, err := infile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	n, _ := f.Read(head)
	f.Close()
	head = head[:n]
	switch {
	case string(head) == "SQLite format 3\x00":
		return readGPKG(path, layer)
	case looksJSON(head):
		if layer != "" && layer != layerName(path) {
			return nil, fmt.Errorf("%s: a GeoJSON file has one layer (%s); drop :%s", path, layerName(path), layer)
		}
		return readGeoJSON(path)
	}
	return nil, fmt.Errorf("%s: the file is not a GeoPackage or GeoJSON file, or it is damaged (convert other formats with ogr2ogr -f GPKG stands.gpkg FILE)", path)
}

func looksJSON(b []byte) bool {
	s := strings.TrimLeft(string(b), " \t\r\n\ufeff")
	return strings.HasPrefix(s, "{")
}

func layerName(path string) string {
	return strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
}

// polygonal returns g as an orb.Polygon or orb.MultiPolygon, or an error
// naming what it is. A collection of polygons becomes a multipolygon; nil
// becomes an empty multipolygon.
func polygonal(g orb.Geometry) (orb.Geometry, error) {
	switch g := g.(type) {
	case nil:
		return orb.MultiPolygon{}, nil
	case orb.Polygon, orb.MultiPolygon:
		return g, nil
	case orb.Collection:
		var mp orb.MultiPolygon
		for _, m := range g {
			p, err := polygonal(m)
			if err != nil {
				return nil, err
			}
			switch p := p.(type) {
			case orb.Polygon:
				mp = append(mp, p)
			case orb.MultiPolygon:
				mp = append(mp, p...)
			}
		}
		return mp, nil
	}
	return nil, fmt.Errorf("is a %s; stands must be polygons", g.GeoJSONType())
}

// Clone returns a deep copy of l (geometries and attribute maps copied), so
// that one copy can be reprojected while the other keeps the original.
func (l *Layer) Clone() *Layer {
	c := *l
	c.Fields = append([]Field(nil), l.Fields...)
	c.Features = make([]Feature, len(l.Features))
	for i, f := range l.Features {
		a := make(map[string]any, len(f.Attrs))
		for k, v := range f.Attrs {
			a[k] = v
		}
		c.Features[i] = Feature{FID: f.FID, Attrs: a, Geom: orb.Clone(f.Geom)}
	}
	return &c
}

// Bound returns the bounding box of every feature of l (an empty bound at
// the origin when l has no geometry).
func (l *Layer) Bound() orb.Bound {
	var b orb.Bound
	first := true
	for _, f := range l.Features {
		if f.Geom == nil || isEmpty(f.Geom) {
			continue
		}
		fb := f.Geom.Bound()
		if first {
			b, first = fb, false
		} else {
			b = b.Union(fb)
		}
	}
	return b
}

func isEmpty(g orb.Geometry) bool {
	switch g := g.(type) {
	case orb.Polygon:
		return len(g) == 0 || len(g[0]) == 0
	case orb.MultiPolygon:
		for _, p := range g {
			if len(p) > 0 && len(p[0]) > 0 {
				return false
			}
		}
		return true
	}
	return g == nil
}

// Field returns the field named name (compared without regard to case, as
// SQLite does) and whether it exists.
func (l *Layer) Field(name string) (Field, bool) {
	for _, f := range l.Fields {
		if strings.EqualFold(f.Name, name) {
			return f, true
		}
	}
	return Field{}, false
}

// IDs returns one identifier per feature: the value of the attribute field
// (integers as decimals, text as is), or the FID when field is "". A field
// that does not exist is an error listing the fields; a feature whose value
// is missing gets its FID in brackets ("[17]").
func (l *Layer) IDs(field string) ([]string, error) {
	ids := make([]string, len(l.Features))
	if field == "" {
		for i, f := range l.Features {
			ids[i] = strconv.FormatInt(f.FID, 10)
		}
		return ids, nil
	}
	fd, ok := l.Field(field)
	if !ok {
		names := make([]string, len(l.Fields))
		for i, f := range l.Fields {
			names[i] = f.Name
		}
		sort.Strings(names)
		list := strings.Join(names, ", ")
		if list == "" {
			list = "none"
		}
		return nil, fmt.Errorf("stands %s: no field %q (fields: %s)", l.source(), field, list)
	}
	for i, f := range l.Features {
		ids[i] = FormatValue(f.Attrs[fd.Name])
		if ids[i] == "" {
			ids[i] = "[" + strconv.FormatInt(f.FID, 10) + "]"
		}
	}
	return ids, nil
}

// FormatValue formats an attribute value for a table: integers and
// integral floats as decimals, other floats in the shortest form that reads
// back the same, text as is, nil as "".
func FormatValue(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case int64:
		return strconv.FormatInt(v, 10)
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
			return strconv.FormatInt(int64(v), 10)
		}
		return strconv.FormatFloat(v, 'g', -1, 64)
	case string:
		return v
	case []byte:
		return string(v)
	case bool:
		return strconv.FormatBool(v)
	}
	return fmt.Sprint(v)
}

func (l *Layer) source() string {
	if l.Path == "" {
		return l.Name
	}
	if l.Name == "" || l.Name == layerName(l.Path) {
		return l.Path
	}
	return l.Path + ":" + l.Name
}
