package vector

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"time"

	"github.com/paulmach/orb"
	"github.com/paulmach/orb/encoding/wkb"

	"modernc.org/sqlite" // the "sqlite" database/sql driver, pure Go
	sqlite3 "modernc.org/sqlite/lib"

	"canopy/compute/internal/infile"
)

// sqliteURI returns the SQLite URI of a file path with the given query,
// escaping the characters that URIs reserve.
func sqliteURI(path, query string) string {
	r := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23")
	return "file:" + r.Replace(path) + "?" + query
}

// openGPKG opens a GeoPackage read-only.
func openGPKG(path string) (*sql.DB, error) {
	// SQLite opens the path itself: check first that it is a regular
	// file, so that a FIFO cannot block the open.
	if err := infile.Check(path); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	db, err := sql.Open("sqlite", sqliteURI(path, "mode=ro"))
	if err != nil {
		return nil, gpkgError(path, err)
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxIdleTime(0)
	// SQLite refuses any value longer than maxValue (SQLITE_TOOBIG): a
	// view can generate a blob of gigabytes from a file of a few kB.
	conn, err := db.Conn(context.Background())
	if err == nil {
		_, err = sqlite.Limit(conn, sqlite3.SQLITE_LIMIT_LENGTH, maxValue)
		conn.Close()
	}
	if err == nil {
		err = db.Ping()
	}
	if err != nil {
		db.Close()
		return nil, gpkgError(path, err)
	}
	return db, nil
}

// budget is the time reading a GeoPackage may take: 10 s and 1 s more
// per 16 MiB of file. A view can make SQLite compute without end (a
// recursive one never finishes); the context interrupts it.
func budget(path string) (context.Context, context.CancelFunc) {
	d := 10 * time.Second
	if st, err := os.Stat(path); err == nil {
		d += time.Duration(st.Size()>>24) * time.Second
	}
	return context.WithTimeout(context.Background(), d)
}

// Limits on what a GeoPackage may make the reader hold: one value (a
// geometry blob or an attribute) and all the features' values together.
// A stand of a million vertices is 16 MB of WKB.
const (
	maxValue      = 64 << 20
	maxLayerBytes = 384 << 20
	maxFeatures   = 2 << 20
)

func featureTables(ctx context.Context, db *sql.DB, path string) ([]string, error) {
	rows, err := db.QueryContext(ctx, `SELECT table_name FROM gpkg_contents WHERE lower(data_type) = 'features' ORDER BY table_name`)
	if err != nil {
		if damagedDB(err) || ctx.Err() != nil {
			return nil, gpkgError(path, err)
		}
		return nil, fmt.Errorf("%s: the file is not a GeoPackage or it is damaged (an SQLite database without a gpkg_contents table: %v)", path, err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, gpkgError(path, err)
		}
		names = append(names, n)
	}
	if err := rows.Err(); err != nil {
		return nil, gpkgError(path, err)
	}
	return names, nil
}

// quoteIdent quotes an SQL identifier.
func quoteIdent(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

func readGPKG(path, layer string) (*Layer, error) {
	db, err := openGPKG(path)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	ctx, cancel := budget(path)
	defer cancel()
	tables, err := featureTables(ctx, db, path)
	if err != nil {
		return nil, err
	}
	switch {
	case len(tables) == 0:
		return nil, fmt.Errorf("%s: the GeoPackage has no feature table", path)
	case layer == "" && len(tables) > 1:
		return nil, fmt.Errorf("%s: the GeoPackage has %d layers (%s); pick one as %s:LAYER", path, len(tables), strings.Join(tables, ", "), path)
	case layer == "":
		layer = tables[0]
	default:
		found := ""
		for _, t := range tables {
			if t == layer || (found == "" && strings.EqualFold(t, layer)) {
				found = t
			}
		}
		if found == "" {
			return nil, fmt.Errorf("%s: no layer %q (layers: %s)", path, layer, strings.Join(tables, ", "))
		}
		layer = found
	}
	src := path + ":" + layer
	var kind string
	if err := db.QueryRowContext(ctx, `SELECT type FROM sqlite_master WHERE name = ?`, layer).Scan(&kind); err == nil && kind != "table" {
		return nil, fmt.Errorf("%s: the layer is a %s, not a table; Canopy reads stands from tables (write it out as one: ogr2ogr -f GPKG stands.gpkg %s)", src, kind, path)
	}

	var geomCol string
	var srsID int64
	err = db.QueryRowContext(ctx, `SELECT column_name, srs_id FROM gpkg_geometry_columns WHERE table_name = ?`, layer).Scan(&geomCol, &srsID)
	if err != nil {
		return nil, fmt.Errorf("%s: no geometry column registered in gpkg_geometry_columns: %v", src, err)
	}
	crs, err := gpkgCRS(ctx, db, srsID)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", src, err)
	}

	// Columns: the integer primary key is the FID, the geometry column is
	// the geometry, the others are attributes.
	cols, err := db.QueryContext(ctx, `SELECT name, type, pk FROM pragma_table_info(?)`, layer)
	if err != nil {
		return nil, gpkgError(src, err)
	}
	var fidCol string
	var fields []Field
	for cols.Next() {
		var name, typ string
		var pk int
		if err := cols.Scan(&name, &typ, &pk); err != nil {
			cols.Close()
			return nil, gpkgError(src, err)
		}
		switch {
		case strings.EqualFold(name, geomCol):
		case pk == 1 && strings.EqualFold(strings.TrimSpace(typ), "INTEGER") && fidCol == "":
			fidCol = name
		default:
			fields = append(fields, Field{Name: name, Type: storageClass(typ)})
		}
	}
	cols.Close()
	if err := cols.Err(); err != nil {
		return nil, gpkgError(src, err)
	}
	fidExpr := "rowid"
	if fidCol != "" {
		fidExpr = quoteIdent(fidCol)
	}
	sel := []string{fidExpr, quoteIdent(geomCol)}
	for _, f := range fields {
		sel = append(sel, quoteIdent(f.Name))
	}
	rows, err := db.QueryContext(ctx, `SELECT `+strings.Join(sel, ", ")+` FROM `+quoteIdent(layer)+` ORDER BY `+fidExpr)
	if err != nil {
		return nil, gpkgError(src, err)
	}
	defer rows.Close()
	l := &Layer{Name: layer, Path: path, CRS: crs, Fields: fields}
	vals := make([]any, len(sel))
	ptrs := make([]any, len(sel))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var held int64
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, gpkgError(src, err)
		}
		for _, v := range vals {
			switch v := v.(type) {
			case []byte:
				held += int64(len(v))
			case string:
				held += int64(len(v))
			}
			held += 16
		}
		held += 256 // the feature and its attributes' map
		if len(l.Features) >= maxFeatures {
			return nil, fmt.Errorf("%s: more than the %d features Canopy reads from a GeoPackage layer; split it", src, maxFeatures)
		}
		if held > maxLayerBytes {
			return nil, fmt.Errorf("%s: the layer's features hold more than the %d MiB Canopy reads from a GeoPackage layer; split it, or simplify its geometries (ogr2ogr -simplify)", src, maxLayerBytes>>20)
		}
		fid, ok := vals[0].(int64)
		if !ok {
			return nil, fmt.Errorf("%s: feature id %v is not an integer", src, vals[0])
		}
		var blob []byte
		switch b := vals[1].(type) {
		case nil:
		case []byte:
			blob = b
		default:
			return nil, fmt.Errorf("%s: feature %d: the geometry is a %T, not a GeoPackage blob", src, fid, vals[1])
		}
		g, err := DecodeGPKGGeometry(blob)
		if err == nil {
			g, err = polygonal(g)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: feature %d: %v", src, fid, err)
		}
		attrs := make(map[string]any, len(fields))
		for i, f := range fields {
			v := vals[i+2]
			if b, ok := v.([]byte); ok {
				v = append([]byte(nil), b...)
			}
			attrs[f.Name] = v
		}
		l.Features = append(l.Features, Feature{FID: fid, Attrs: attrs, Geom: g})
	}
	if err := rows.Err(); err != nil {
		return nil, gpkgError(src, err)
	}
	return l, nil
}

// storageClass maps a declared column type to its SQLite storage class by
// SQLite's affinity rules (GeoPackage's BOOLEAN, TINYINT, ... are INTEGER;
// FLOAT, DOUBLE are REAL; DATE, DATETIME are TEXT).
func storageClass(decl string) string {
	d := strings.ToUpper(decl)
	switch {
	case strings.Contains(d, "INT"), d == "BOOLEAN":
		return "INTEGER"
	case strings.Contains(d, "CHAR"), strings.Contains(d, "CLOB"), strings.Contains(d, "TEXT"), strings.HasPrefix(d, "DATE"):
		return "TEXT"
	case strings.Contains(d, "BLOB"), d == "":
		return "BLOB"
	}
	return "REAL"
}

// gpkgCRS returns the CRS of a srs_id: "EPSG:<code>" when the organisation
// is EPSG, the WKT definition otherwise, "" for the undefined systems.
func gpkgCRS(ctx context.Context, db *sql.DB, srsID int64) (string, error) {
	if srsID == 0 || srsID == -1 {
		return "", nil
	}
	var org sql.NullString
	var code sql.NullInt64
	var def sql.NullString
	err := db.QueryRowContext(ctx, `SELECT organization, organization_coordsys_id, definition FROM gpkg_spatial_ref_sys WHERE srs_id = ?`, srsID).Scan(&org, &code, &def)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("srs_id %d is not in gpkg_spatial_ref_sys", srsID)
	}
	if err != nil {
		return "", err
	}
	if strings.EqualFold(org.String, "EPSG") && code.Valid && code.Int64 > 0 {
		return fmt.Sprintf("EPSG:%d", code.Int64), nil
	}
	d := strings.TrimSpace(def.String)
	if d == "" || strings.EqualFold(d, "undefined") {
		return "", nil
	}
	return d, nil
}

// DecodeGPKGGeometry decodes a GeoPackage geometry blob: the "GP" header
// (version, flags, srs_id, optional envelope) and the WKB geometry after it.
// Z and M coordinates are dropped. A nil blob or an empty geometry decodes
// to nil.
func DecodeGPKGGeometry(b []byte) (orb.Geometry, error) {
	if len(b) == 0 {
		return nil, nil
	}
	if len(b) < 8 || b[0] != 'G' || b[1] != 'P' {
		return nil, errors.New("the geometry is not a GeoPackage geometry blob (no GP header)")
	}
	if b[2] != 0 {
		return nil, fmt.Errorf("GeoPackage geometry blob version %d is not supported", b[2])
	}
	flags := b[3]
	if flags&0x20 != 0 {
		return nil, errors.New("extended GeoPackage geometry (an extension's own type) is not supported")
	}
	var envSize int
	switch (flags >> 1) & 7 {
	case 0:
	case 1:
		envSize = 32
	case 2, 3:
		envSize = 48
	case 4:
		envSize = 64
	default:
		return nil, fmt.Errorf("GeoPackage geometry blob has an invalid envelope code %d", (flags>>1)&7)
	}
	if len(b) < 8+envSize {
		return nil, errors.New("GeoPackage geometry blob is truncated")
	}
	if flags&0x10 != 0 {
		return nil, nil
	}
	body := b[8+envSize:]
	flat, err := flattenWKB(body)
	if err != nil {
		return nil, err
	}
	g, err := wkb.Unmarshal(flat)
	if err != nil {
		return nil, fmt.Errorf("bad WKB geometry: %v", err)
	}
	return g, nil
}

// EncodeGPKGGeometry encodes g as a GeoPackage geometry blob with an XY
// envelope (little-endian header, little-endian WKB).
func EncodeGPKGGeometry(g orb.Geometry, srsID int32) ([]byte, error) {
	if g == nil || isEmpty(g) {
		h := []byte{'G', 'P', 0, 0x01 | 0x10, 0, 0, 0, 0}
		binary.LittleEndian.PutUint32(h[4:], uint32(srsID))
		w, err := wkb.Marshal(orb.MultiPolygon{}, binary.LittleEndian)
		if err != nil {
			return nil, err
		}
		return append(h, w...), nil
	}
	w, err := wkb.Marshal(g, binary.LittleEndian)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 8+32, 8+32+len(w))
	out[0], out[1], out[2], out[3] = 'G', 'P', 0, 0x01|0x02
	binary.LittleEndian.PutUint32(out[4:], uint32(srsID))
	bd := g.Bound()
	for i, v := range []float64{bd.Min[0], bd.Max[0], bd.Min[1], bd.Max[1]} {
		binary.LittleEndian.PutUint64(out[8+8*i:], math.Float64bits(v))
	}
	return append(out, w...), nil
}

// wkbReader walks a WKB geometry.
type wkbReader struct {
	b   []byte
	off int
	out []byte
}

var errWKBShort = errors.New("bad WKB geometry: truncated")

func (r *wkbReader) u32(bo binary.ByteOrder) (uint32, error) {
	if r.off+4 > len(r.b) {
		return 0, errWKBShort
	}
	v := bo.Uint32(r.b[r.off:])
	r.off += 4
	return v, nil
}

// flattenWKB returns WKB b with Z and M ordinates removed (ISO types
// 1000-3999 and EWKB flag bits), rewritten little-endian; a 2D geometry
// without an EWKB SRID is returned as it is.
func flattenWKB(b []byte) ([]byte, error) {
	if len(b) < 5 {
		return nil, errWKBShort
	}
	var bo binary.ByteOrder = binary.LittleEndian
	if b[0] == 0 {
		bo = binary.BigEndian
	}
	if t := bo.Uint32(b[1:]); t >= 1 && t <= 3 {
		return b, nil // no nesting: orb reads it as it is
	}
	r := &wkbReader{b: b, out: make([]byte, 0, len(b))}
	if err := r.geom(0); err != nil {
		return nil, err
	}
	return r.out, nil
}

func (r *wkbReader) geom(depth int) error {
	if depth > 32 {
		return errors.New("bad WKB geometry: nested too deeply")
	}
	if r.off >= len(r.b) {
		return errWKBShort
	}
	var bo binary.ByteOrder
	switch r.b[r.off] {
	case 0:
		bo = binary.BigEndian
	case 1:
		bo = binary.LittleEndian
	default:
		return errors.New("bad WKB geometry: bad byte order mark")
	}
	r.off++
	t, err := r.u32(bo)
	if err != nil {
		return err
	}
	dims := 2
	if t&0x80000000 != 0 {
		dims++
	}
	if t&0x40000000 != 0 {
		dims++
	}
	if t&0x20000000 != 0 { // EWKB SRID
		if _, err := r.u32(bo); err != nil {
			return err
		}
	}
	t &= 0x0FFFFFFF
	switch t / 1000 {
	case 1, 2:
		dims++
	case 3:
		dims += 2
	}
	base := t % 1000
	r.out = append(r.out, 1)
	r.out = binary.LittleEndian.AppendUint32(r.out, base)
	points := func(n uint32) error {
		need := int(n) * dims * 8
		if n > uint32(len(r.b)) || r.off+need > len(r.b) {
			return errWKBShort
		}
		for i := uint32(0); i < n; i++ {
			for d := 0; d < 2; d++ {
				r.out = binary.LittleEndian.AppendUint64(r.out, bo.Uint64(r.b[r.off+8*d:]))
			}
			r.off += dims * 8
		}
		return nil
	}
	count := func() (uint32, error) {
		n, err := r.u32(bo)
		if err == nil {
			r.out = binary.LittleEndian.AppendUint32(r.out, n)
		}
		return n, err
	}
	switch base {
	case 1: // point
		return points(1)
	case 2: // line string
		n, err := count()
		if err != nil {
			return err
		}
		return points(n)
	case 3: // polygon
		n, err := count()
		if err != nil {
			return err
		}
		if n > uint32(len(r.b)) {
			return errWKBShort
		}
		for i := uint32(0); i < n; i++ {
			m, err := count()
			if err != nil {
				return err
			}
			if err := points(m); err != nil {
				return err
			}
		}
		return nil
	case 4, 5, 6, 7: // multi*, collection
		n, err := count()
		if err != nil {
			return err
		}
		if n > uint32(len(r.b)) {
			return errWKBShort
		}
		for i := uint32(0); i < n; i++ {
			if err := r.geom(depth + 1); err != nil {
				return err
			}
		}
		return nil
	}
	return unsupportedWKB(base)
}

func unsupportedWKB(t uint32) error {
	switch t {
	case 8, 9, 10, 11, 12:
		return errors.New("curved geometries are not supported; linearise them with ogr2ogr -nlt MULTIPOLYGON")
	}
	return fmt.Errorf("WKB geometry type %d is not supported", t)
}

// damagedDB reports whether err is SQLite's for a file that is not a
// database or is damaged (SQLITE_NOTADB, SQLITE_CORRUPT).
func damagedDB(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff { // the primary result code
	case sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT:
		return true
	}
	return false
}

// gpkgError is an error reading a GeoPackage: in a user's words where
// SQLite found the file no database or damaged, else as it is.
func gpkgError(path string, err error) error {
	if errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "interrupted") {
		return fmt.Errorf("%s: reading it took longer than Canopy allows for a file of its size (10 s and 1 s per 16 MiB): a view that does not end, or a damaged file; write the stands out as a table (ogr2ogr -f GPKG)", path)
	}
	var se *sqlite.Error
	if errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_TOOBIG {
		return fmt.Errorf("%s: a value (a geometry or an attribute) is longer than the %d MiB Canopy reads; simplify the stands (ogr2ogr -simplify)", path, maxValue>>20)
	}
	if damagedDB(err) {
		return fmt.Errorf("%s: the file is not a GeoPackage or it is damaged (%v)", path, err)
	}
	return fmt.Errorf("%s: %w", path, err)
}
