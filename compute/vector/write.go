package vector

import (
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/paulmach/orb"

	"canopy/compute/outfile"
)

// Column is an extra column WriteGPKG adds to the stands: its name and its
// type, "INTEGER", "REAL" or "TEXT".
type Column struct {
	Name string
	Type string
}

// GeoPackage identification (GeoPackage 1.3: application_id "GPKG",
// user_version 10300).
const (
	gpkgApplicationID = 0x47504B47
	gpkgUserVersion   = 10300
)

// srs is one row of gpkg_spatial_ref_sys.
type srs struct {
	name, org  string
	id, code   int64
	definition string
}

// layerSRS returns the spatial reference row for a layer's CRS.
func layerSRS(crs string) (srs, error) {
	if strings.TrimSpace(crs) == "" {
		return srs{name: "Undefined Cartesian SRS", org: "NONE", id: -1, code: -1, definition: "undefined"}, nil
	}
	wkt, epsg, err := CRSInfo(crs)
	if err != nil {
		return srs{}, err
	}
	if wkt == "" {
		return srs{}, fmt.Errorf("CRS %s has no WKT form", shortCRS(crs))
	}
	name := crs
	if i := strings.Index(wkt, `"`); i >= 0 {
		if j := strings.Index(wkt[i+1:], `"`); j >= 0 {
			name = wkt[i+1 : i+1+j]
		}
	}
	if epsg > 0 {
		return srs{name: name, org: "EPSG", id: int64(epsg), code: int64(epsg), definition: wkt}, nil
	}
	return srs{name: name, org: "NONE", id: 100000, code: 100000, definition: wkt}, nil
}

// WriteGPKG writes the stands of layer, with their original attributes and
// the extra columns (rows[i] holds the values of feature i, one per
// column: int, int64, float32, float64, string, bool or nil; a NaN is
// written as NULL), as a GeoPackage 1.3 feature table named after the
// layer, in the layer's CRS. An extra column replaces an attribute of the
// same name (compared without regard to case). The file is written as an
// output of its own (compute/outfile): to a temporary file beside path,
// renamed into place only when complete, so an existing file is either
// replaced whole or left untouched; a symbolic link, FIFO, device or
// folder at path is refused; the temporary file is removed on failure and
// on SIGINT or SIGTERM. WriteGPKGTo writes into one output of a run's set.
func WriteGPKG(path string, layer *Layer, columns []Column, rows [][]any) error {
	set := outfile.NewSet(layer.Path)
	defer set.Abort()
	w, err := set.Create(path)
	if err != nil {
		return err
	}
	if err := WriteGPKGTo(w, layer, columns, rows); err != nil {
		return err
	}
	return set.Commit()
}

// WriteGPKGTo writes the GeoPackage of WriteGPKG into w, an output of a
// run's outfile.Set, so that it is put in place together with the run's
// other outputs (all or none). SQLite writes the temporary file by name
// (w.TempPath) and is closed before WriteGPKGTo returns; messages name the
// output's final path.
func WriteGPKGTo(w *outfile.Writer, layer *Layer, columns []Column, rows [][]any) (err error) {
	path := w.Path()
	if len(rows) != len(layer.Features) {
		return fmt.Errorf("write %s: %d rows of values for %d stands", path, len(rows), len(layer.Features))
	}
	for i, r := range rows {
		if len(r) != len(columns) {
			return fmt.Errorf("write %s: row %d has %d values for %d columns", path, i, len(r), len(columns))
		}
	}
	for _, c := range columns {
		switch c.Type {
		case "INTEGER", "REAL", "TEXT":
		default:
			return fmt.Errorf("write %s: column %q has type %q; want INTEGER, REAL or TEXT", path, c.Name, c.Type)
		}
		if c.Name == "" {
			return fmt.Errorf("write %s: a column has no name", path)
		}
	}
	ref, err := layerSRS(layer.CRS)
	if err != nil {
		return fmt.Errorf("write %s: %v", path, err)
	}
	table := layer.Name
	if strings.TrimSpace(table) == "" || strings.HasPrefix(strings.ToLower(table), "gpkg_") || strings.HasPrefix(strings.ToLower(table), "rtree_") || strings.HasPrefix(strings.ToLower(table), "sqlite_") {
		table = "stands"
	}

	// Output columns: the attributes not replaced by an extra column, then
	// the extra columns. "fid" and "geom" are taken.
	taken := map[string]bool{"fid": true, "geom": true}
	type outCol struct {
		name, typ string
		attr      string // source attribute, or "" for an extra column
		extra     int
	}
	var out []outCol
	extra := map[string]bool{}
	for _, c := range columns {
		if extra[strings.ToLower(c.Name)] {
			return fmt.Errorf("write %s: column %q given twice", path, c.Name)
		}
		extra[strings.ToLower(c.Name)] = true
	}
	unique := func(n string) string {
		base, k := n, 1
		for taken[strings.ToLower(n)] {
			n = fmt.Sprintf("%s_%d", base, k)
			k++
		}
		taken[strings.ToLower(n)] = true
		return n
	}
	for _, c := range columns {
		if taken[strings.ToLower(c.Name)] {
			return fmt.Errorf("write %s: column name %q is reserved", path, c.Name)
		}
	}
	for name := range extra {
		taken[name] = true
	}
	for _, f := range layer.Fields {
		if extra[strings.ToLower(f.Name)] {
			continue
		}
		typ := f.Type
		if typ == "" {
			typ = "TEXT"
		}
		out = append(out, outCol{name: unique(f.Name), typ: typ, attr: f.Name})
	}
	for i, c := range columns {
		out = append(out, outCol{name: c.Name, typ: c.Type, extra: i})
	}

	// Geometry type: POLYGON when every stand is one, MULTIPOLYGON otherwise
	// (polygons then promoted).
	geomType := "POLYGON"
	for _, f := range layer.Features {
		if _, ok := f.Geom.(orb.Polygon); !ok {
			geomType = "MULTIPOLYGON"
		}
	}
	if len(layer.Features) == 0 {
		geomType = "MULTIPOLYGON"
	}

	tmpName := w.TempPath()
	db, err := sql.Open("sqlite", sqliteURI(tmpName, "mode=rw"))
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	closed := false
	defer func() {
		if !closed {
			db.Close()
		}
	}()
	exec := func(q string, args ...any) error {
		if _, e := db.Exec(q, args...); e != nil {
			return fmt.Errorf("write %s: %v", path, e)
		}
		return nil
	}
	// The journal in memory before anything is written: no file but the
	// output's own is ever made beside it.
	for _, q := range []string{
		"PRAGMA journal_mode = MEMORY",
		"PRAGMA temp_store = MEMORY",
		fmt.Sprintf("PRAGMA application_id = %d", gpkgApplicationID),
		fmt.Sprintf("PRAGMA user_version = %d", gpkgUserVersion),
	} {
		if err := exec(q); err != nil {
			return err
		}
	}
	tx, err := db.Begin()
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer tx.Rollback()
	txExec := func(q string, args ...any) error {
		if _, e := tx.Exec(q, args...); e != nil {
			return fmt.Errorf("write %s: %v", path, e)
		}
		return nil
	}
	schema := []string{
		`CREATE TABLE gpkg_spatial_ref_sys (srs_name TEXT NOT NULL, srs_id INTEGER NOT NULL PRIMARY KEY, organization TEXT NOT NULL, organization_coordsys_id INTEGER NOT NULL, definition TEXT NOT NULL, description TEXT)`,
		`CREATE TABLE gpkg_contents (table_name TEXT NOT NULL PRIMARY KEY, data_type TEXT NOT NULL, identifier TEXT UNIQUE, description TEXT DEFAULT '', last_change DATETIME NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')), min_x DOUBLE, min_y DOUBLE, max_x DOUBLE, max_y DOUBLE, srs_id INTEGER, CONSTRAINT fk_gc_r_srs_id FOREIGN KEY (srs_id) REFERENCES gpkg_spatial_ref_sys(srs_id))`,
		`CREATE TABLE gpkg_geometry_columns (table_name TEXT NOT NULL, column_name TEXT NOT NULL, geometry_type_name TEXT NOT NULL, srs_id INTEGER NOT NULL, z TINYINT NOT NULL, m TINYINT NOT NULL, CONSTRAINT pk_geom_cols PRIMARY KEY (table_name, column_name), CONSTRAINT uk_gc_table_name UNIQUE (table_name), CONSTRAINT fk_gc_tn FOREIGN KEY (table_name) REFERENCES gpkg_contents(table_name), CONSTRAINT fk_gc_srs FOREIGN KEY (srs_id) REFERENCES gpkg_spatial_ref_sys (srs_id))`,
	}
	for _, q := range schema {
		if err := txExec(q); err != nil {
			return err
		}
	}
	refs := []srs{
		{name: "Undefined Cartesian SRS", org: "NONE", id: -1, code: -1, definition: "undefined"},
		{name: "Undefined geographic SRS", org: "NONE", id: 0, code: 0, definition: "undefined"},
		{name: "WGS 84 geodetic", org: "EPSG", id: 4326, code: 4326, definition: wgs84WKT},
	}
	if ref.id != -1 && ref.id != 4326 {
		refs = append(refs, ref)
	}
	for _, r := range refs {
		if err := txExec(`INSERT INTO gpkg_spatial_ref_sys (srs_name, srs_id, organization, organization_coordsys_id, definition, description) VALUES (?, ?, ?, ?, ?, ?)`,
			r.name, r.id, r.org, r.code, r.definition, nil); err != nil {
			return err
		}
	}
	var minx, miny, maxx, maxy any
	for _, f := range layer.Features {
		if !isEmpty(f.Geom) {
			b := layer.Bound()
			minx, miny, maxx, maxy = b.Min[0], b.Min[1], b.Max[0], b.Max[1]
			break
		}
	}
	if err := txExec(`INSERT INTO gpkg_contents (table_name, data_type, identifier, description, min_x, min_y, max_x, max_y, srs_id) VALUES (?, 'features', ?, ?, ?, ?, ?, ?, ?)`,
		table, table, "stands with zonal statistics", minx, miny, maxx, maxy, ref.id); err != nil {
		return err
	}
	if err := txExec(`INSERT INTO gpkg_geometry_columns (table_name, column_name, geometry_type_name, srs_id, z, m) VALUES (?, 'geom', ?, ?, 0, 0)`,
		table, geomType, ref.id); err != nil {
		return err
	}
	defs := []string{`"fid" INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL`, `"geom" ` + geomType}
	names := []string{`"fid"`, `"geom"`}
	marks := []string{"?", "?"}
	for _, c := range out {
		defs = append(defs, quoteIdent(c.name)+" "+c.typ)
		names = append(names, quoteIdent(c.name))
		marks = append(marks, "?")
	}
	if err := txExec(`CREATE TABLE ` + quoteIdent(table) + ` (` + strings.Join(defs, ", ") + `)`); err != nil {
		return err
	}
	ins, err := tx.Prepare(`INSERT INTO ` + quoteIdent(table) + ` (` + strings.Join(names, ", ") + `) VALUES (` + strings.Join(marks, ", ") + `)`)
	if err != nil {
		return fmt.Errorf("write %s: %v", path, err)
	}
	defer ins.Close()
	args := make([]any, len(names))
	for i, f := range layer.Features {
		g := f.Geom
		if geomType == "MULTIPOLYGON" {
			g = asMultiPolygon(g)
		}
		blob, err := EncodeGPKGGeometry(g, int32(ref.id))
		if err != nil {
			return fmt.Errorf("write %s: feature %d: %v", path, f.FID, err)
		}
		args[0], args[1] = f.FID, blob
		for j, c := range out {
			var v any
			if c.attr != "" {
				v = f.Attrs[c.attr]
			} else {
				v = rows[i][c.extra]
			}
			v, err = sqlValue(v)
			if err != nil {
				return fmt.Errorf("write %s: feature %d, column %s: %v", path, f.FID, c.name, err)
			}
			args[2+j] = v
		}
		if _, err := ins.Exec(args...); err != nil {
			return fmt.Errorf("write %s: feature %d: %v", path, f.FID, err)
		}
	}
	if err := ins.Close(); err != nil {
		return fmt.Errorf("write %s: %v", path, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("write %s: %v", path, err)
	}
	closed = true
	if err := db.Close(); err != nil {
		return fmt.Errorf("write %s: %v", path, err)
	}
	return nil
}

// sqlValue converts a value for a GeoPackage column.
func sqlValue(v any) (any, error) {
	switch v := v.(type) {
	case nil, int64, string, []byte:
		return v, nil
	case int:
		return int64(v), nil
	case int32:
		return int64(v), nil
	case bool:
		if v {
			return int64(1), nil
		}
		return int64(0), nil
	case float32:
		return sqlValue(float64(v))
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, nil
		}
		return v, nil
	}
	return nil, errors.New("unsupported value type " + fmt.Sprintf("%T", v))
}

// wgs84WKT is the definition GeoPackage requires for srs_id 4326.
const wgs84WKT = `GEOGCS["WGS 84",DATUM["WGS_1984",SPHEROID["WGS 84",6378137,298.257223563,AUTHORITY["EPSG","7030"]],AUTHORITY["EPSG","6326"]],PRIMEM["Greenwich",0,AUTHORITY["EPSG","8901"]],UNIT["degree",0.0174532925199433,AUTHORITY["EPSG","9122"]],AXIS["Latitude",NORTH],AXIS["Longitude",EAST],AUTHORITY["EPSG","4326"]]`
