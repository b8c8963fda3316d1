package scene

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"image"
	"io"
	"math"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"

	"canopy/compute"
)

// ESA's EOPF Zarr format of Sentinel-2 L2A (operational from 2026): a
// Zarr hierarchy, v3 (EOPF CPM 3.0: zarr.json at its root, chunks
// "c/<row>/<col>" of the bytes codec then zstd) or v2 with consolidated
// metadata (.zmetadata at its root, Blosc chunks as numcodecs writes them,
// blosc.go); the product's STAC description in the root's attributes
// (stac_discovery), the bands under measurements/reflectance/r10m, r20m,
// r60m (b02 ... b12, b8a), each with its scale_factor and add_offset (and,
// in v2, proj:* attributes; in v3 the grid is the stac_discovery's
// proj:code and proj:bbox), and the scene classification under
// conditions/mask/l2a_classification/r20m/scl. A missing chunk file is
// all fill value, as Zarr says.

// eopfBands are the roles' arrays: the band's own resolution.
var eopfBands = map[string]string{
	"blue": "r10m/b02", "green": "r10m/b03", "red": "r10m/b04", "nir": "r10m/b08",
	"rededge1": "r20m/b05", "rededge2": "r20m/b06", "rededge3": "r20m/b07", "nir2": "r20m/b8a",
	"swir1": "r20m/b11", "swir2": "r20m/b12",
}

// maxChunk bounds the bytes one chunk may decode to.
const maxChunk = 256 << 20

// zarrArray is a 2-D Zarr v2 array as its .zarray says.
type zarrArray struct {
	path       string // in the container
	rows, cols int
	crows      int // chunk rows and columns
	ccols      int
	dtype      compute.DataType
	bigEndian  bool
	compressor string  // "" (none), "blosc", "zstd", "zlib", "gzip"
	fill       float64 // the fill value (hasFill), NaN allowed
	hasFill    bool
	sep        string
	v3         bool // chunk keys "c/<row>/<col>"
}

// zarrMeta is a .zarray.
type zarrMeta struct {
	Shape      []int           `json:"shape"`
	Chunks     []int           `json:"chunks"`
	DType      string          `json:"dtype"`
	Compressor json.RawMessage `json:"compressor"`
	Fill       json.RawMessage `json:"fill_value"`
	Order      string          `json:"order"`
	Filters    json.RawMessage `json:"filters"`
	Sep        string          `json:"dimension_separator"`
	Format     int             `json:"zarr_format"`
}

// zarrAttrs are the attributes an EOPF band carries.
type zarrAttrs struct {
	EPSG      *int      `json:"proj:epsg"`
	Transform []float64 `json:"proj:transform"`
	Scale     *float64  `json:"scale_factor"`
	Offset    *float64  `json:"add_offset"`
}

var (
	eopfTile     = regexp.MustCompile(`_T(\d{2}[A-Z]{3})_`)
	eopfBaseline = regexp.MustCompile(`_N(\d{2})(\d{2})_`)
	eopfDatatake = regexp.MustCompile(`_N(\d{2}\.\d{2})$`)
)

// eopfNode is what the reader needs of an array: its metadata and
// attributes (found false when the product has no such array).
type eopfNode func(p string) (a *zarrArray, at zarrAttrs, found bool, err error)

// readEOPF reads an EOPF Zarr product whose root metadata is meta: Zarr
// v2's consolidated .zmetadata, or Zarr v3's zarr.json (its
// consolidated_metadata when it has one, else each node's zarr.json).
func (s *Scene) readEOPF(meta string) error {
	b, err := readSmall(s.c, meta, maxXML)
	if err != nil {
		return err
	}
	var rootAttrs json.RawMessage
	var node eopfNode
	if path.Base(meta) == "zarr.json" {
		rootAttrs, node, err = s.eopfV3(meta, b)
	} else {
		rootAttrs, node, err = s.eopfV2(meta, b)
	}
	if err != nil {
		return err
	}
	var top struct {
		STAC struct {
			ID         string         `json:"id"`
			Properties map[string]any `json:"properties"`
		} `json:"stac_discovery"`
		Other map[string]any `json:"other_metadata"`
	}
	if err := json.Unmarshal(rootAttrs, &top); err != nil || top.STAC.ID == "" {
		return fmt.Errorf("%s: no stac_discovery in the root's attributes: not an EOPF product", s.c.where(meta))
	}
	prop := func(k string) string {
		switch v := top.STAC.Properties[k].(type) {
		case string:
			return v
		case float64:
			return strconv.FormatFloat(v, 'f', -1, 64)
		}
		return ""
	}
	id := strings.TrimSuffix(top.STAC.ID, ".SAFE")
	// The product's grid where its arrays carry none (Zarr v3): the
	// stac_discovery's proj:code (or proj:epsg) and proj:bbox.
	epsg := 0
	if v, err := strconv.Atoi(prop("proj:epsg")); err == nil {
		epsg = v
	} else if m := epsgCode.FindStringSubmatch(prop("proj:code")); m != nil {
		epsg, _ = strconv.Atoi(m[1])
	}
	var bbox []float64
	if l, ok := top.STAC.Properties["proj:bbox"].([]any); ok && len(l) == 4 {
		for _, v := range l {
			f, _ := v.(float64)
			bbox = append(bbox, f)
		}
	}
	switch t := prop("product:type"); {
	case t == "S02MSIL1C" || strings.Contains(id, "MSIL1C"):
		return fmt.Errorf("%s: a Sentinel-2 Level-1C product (top-of-atmosphere); Canopy reads Level-2A (surface reflectance)", s.Path)
	case t != "S02MSIL2A" && !strings.Contains(id, "MSIL2A"):
		return fmt.Errorf("%s: an EOPF product of type %q; Canopy reads Sentinel-2 Level-2A (S02MSIL2A)", s.Path, t)
	}
	s.Kind, s.Product = KindSentinel2L2A, id
	s.Sensor = platformName(prop("platform"))
	for _, k := range []string{"start_datetime", "datetime"} {
		if t, err := time.Parse(time.RFC3339Nano, prop(k)); err == nil {
			s.Date = t
			break
		}
	}
	if v, err := strconv.ParseFloat(prop("eo:cloud_cover"), 64); err == nil {
		s.CloudShare = v
	}
	utm, _ := top.Other["UTM_zone_identification"].(string)
	if utm == "" {
		utm, _ = top.Other["utm_zone_identification"].(string) // CPM 3's lower-case keys
	}
	for _, x := range []string{id, utm} {
		if m := eopfTile.FindStringSubmatch(x); m != nil && s.Tile == "" {
			s.Tile = m[1]
		}
	}
	s.Baseline = prop("eopf:baseline")
	if m := eopfBaseline.FindStringSubmatch(id); s.Baseline == "" && m != nil {
		s.Baseline = m[1] + "." + m[2]
	}
	if m := eopfDatatake.FindStringSubmatch(prop("eopf:datatake_id")); s.Baseline == "" && m != nil {
		s.Baseline = m[1] // ESA's new names carry no baseline: the datatake's
	}
	baseline, _ := strconv.ParseFloat(s.Baseline, 64)

	files := map[string]bool{}
	for _, n := range s.c.names() {
		files[n] = true
	}
	s.zarr = map[string]*zarrArray{}
	s.zarrFiles = files
	array := func(p string) (*Source, error) {
		a, at, found, err := node(p)
		if err != nil || !found {
			return nil, err
		}
		if at.EPSG == nil && epsg != 0 && len(at.Transform) == 0 && len(bbox) == 4 {
			// No grid on the array: the product's extent over its shape.
			res := (bbox[2] - bbox[0]) / float64(a.cols)
			if math.Abs((bbox[3]-bbox[1])/float64(a.rows)-res) > 1e-6*res {
				return nil, fmt.Errorf("%s: %s: proj:bbox %v does not make square pixels of its %dx%d", s.Path, p, bbox, a.cols, a.rows)
			}
			at.EPSG, at.Transform = &epsg, []float64{res, 0, bbox[0], 0, -res, bbox[3]}
		}
		if at.EPSG == nil || len(at.Transform) < 6 || at.Transform[0] <= 0 || at.Transform[4] != -at.Transform[0] || at.Transform[1] != 0 || at.Transform[3] != 0 {
			return nil, fmt.Errorf("%s: %s has no north-up proj:epsg and proj:transform", s.Path, p)
		}
		s.zarr[a.path] = a
		src := &Source{Name: strings.ToUpper(path.Base(p)), File: a.path, Band: 1, Format: "zarr", Resolution: at.Transform[0],
			Width: a.cols, Height: a.rows, Type: a.dtype, Radiometry: compute.Identity(), QABit: -1,
			geo: northUp(*at.EPSG, at.Transform[2], at.Transform[5], at.Transform[0]), epsg: *at.EPSG}
		if a.hasFill {
			src.NoData, src.HasNoData = a.fill, true
		}
		if at.Scale != nil || at.Offset != nil {
			r := compute.Radiometry{Scale: 1}
			if at.Scale != nil {
				r.Scale = *at.Scale
			}
			if at.Offset != nil {
				r.Offset = *at.Offset
			}
			src.Radiometry = addForm(r)
		}
		return src, nil
	}
	for role, p := range eopfBands {
		src, err := array("measurements/reflectance/" + p)
		if err != nil {
			return err
		}
		if src == nil {
			continue
		}
		src.Role = role
		if src.Radiometry.IsIdentity() && src.Type != compute.F32 {
			// No scale_factor: the product's own rule.
			src.Radiometry = compute.Radiometry{Scale: 1e-4}
			if baseline >= 4 {
				src.Radiometry.Add = -1000
			}
			s.note(fmt.Sprintf("the bands carry no scale_factor: using the product's rule for baseline %s", s.Baseline))
		}
		src.Saturated, src.HasSaturated = 65535, true
		if !src.HasNoData {
			src.NoData, src.HasNoData = 0, true
		}
		s.Bands[role] = src
	}
	if len(s.Bands) == 0 {
		return fmt.Errorf("%s: no band under measurements/reflectance (b02 ... b12)", s.Path)
	}
	var finest *Source
	for _, r := range Roles {
		if b := s.Bands[r]; b != nil && (finest == nil || b.Resolution < finest.Resolution) {
			finest = b
		}
	}
	for _, b := range s.Bands {
		if b.epsg != finest.epsg {
			return fmt.Errorf("%s: band %s is in EPSG:%d, band %s in EPSG:%d", s.Path, b.Name, b.epsg, finest.Name, finest.epsg)
		}
	}
	s.CRS = CRS{EPSG: finest.epsg, Name: crsName(finest.epsg)}
	s.Grid = Grid{Width: finest.Width, Height: finest.Height, Resolution: finest.Resolution, Geo: finest.geo}
	scl, err := array("conditions/mask/l2a_classification/r20m/scl")
	if err != nil {
		return err
	}
	if scl != nil {
		scl.Role, scl.Name, scl.HasNoData = "scl", "SCL", false
		s.Mask = Mask{Kind: "scl", Source: scl, Classes: SCLMasked, Buffered: sclBuffered,
			Description: "SCL classes 0 no data, 1 saturated or defective, 3 cloud shadow, 8-9 cloud medium and high probability, 10 thin cirrus; DN 65535 (saturated)"}
	} else {
		s.Mask = Mask{Description: "no SCL array: only saturated pixels (DN 65535)"}
		s.note("the product has no SCL array: clouds are not masked")
	}
	return nil
}

// eopfV2 reads Zarr v2 consolidated metadata: the root's attributes, and
// the arrays from it.
func (s *Scene) eopfV2(meta string, b []byte) (json.RawMessage, eopfNode, error) {
	var z struct {
		Format   int                        `json:"zarr_consolidated_format"`
		Metadata map[string]json.RawMessage `json:"metadata"`
	}
	if err := json.Unmarshal(b, &z); err != nil {
		return nil, nil, fmt.Errorf("%s: malformed JSON: %v", s.c.where(meta), err)
	}
	if z.Format != 1 || z.Metadata == nil {
		return nil, nil, fmt.Errorf("%s: not Zarr v2 consolidated metadata (zarr_consolidated_format 1)", s.c.where(meta))
	}
	root := strings.TrimSuffix(meta, ".zmetadata")
	return z.Metadata[".zattrs"], func(p string) (*zarrArray, zarrAttrs, bool, error) {
		var at zarrAttrs
		raw, ok := z.Metadata[p+"/.zarray"]
		if !ok {
			return nil, at, false, nil
		}
		a, err := parseZarray(root+p, raw)
		if err != nil {
			return nil, at, true, fmt.Errorf("%s: %s/.zarray: %v", s.Path, p, err)
		}
		if err := json.Unmarshal(z.Metadata[p+"/.zattrs"], &at); err != nil {
			return nil, at, true, fmt.Errorf("%s: %s/.zattrs: %v", s.Path, p, err)
		}
		return a, at, true, nil
	}, nil
}

// zarr3Node is a Zarr v3 node's metadata (zarr.json).
type zarr3Node struct {
	Format     int             `json:"zarr_format"`
	NodeType   string          `json:"node_type"`
	Attributes json.RawMessage `json:"attributes"`
	Shape      []int           `json:"shape"`
	DataType   json.RawMessage `json:"data_type"`
	ChunkGrid  struct {
		Name   string `json:"name"`
		Config struct {
			Shape []int `json:"chunk_shape"`
		} `json:"configuration"`
	} `json:"chunk_grid"`
	KeyEncoding struct {
		Name   string `json:"name"`
		Config struct {
			Sep string `json:"separator"`
		} `json:"configuration"`
	} `json:"chunk_key_encoding"`
	Codecs []struct {
		Name   string `json:"name"`
		Config struct {
			Endian string `json:"endian"`
		} `json:"configuration"`
	} `json:"codecs"`
	Fill         json.RawMessage `json:"fill_value"`
	Consolidated *struct {
		Metadata map[string]json.RawMessage `json:"metadata"`
	} `json:"consolidated_metadata"`
}

// eopfV3 reads a Zarr v3 root zarr.json: its attributes, and the arrays
// from its consolidated_metadata, else from each array's zarr.json.
func (s *Scene) eopfV3(meta string, b []byte) (json.RawMessage, eopfNode, error) {
	var r zarr3Node
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, nil, fmt.Errorf("%s: malformed JSON: %v", s.c.where(meta), err)
	}
	if r.Format != 3 || r.NodeType != "group" {
		return nil, nil, fmt.Errorf("%s: not a Zarr v3 group (zarr_format 3, node_type group)", s.c.where(meta))
	}
	root := strings.TrimSuffix(meta, "zarr.json")
	return r.Attributes, func(p string) (*zarrArray, zarrAttrs, bool, error) {
		var at zarrAttrs
		raw, ok := json.RawMessage(nil), false
		if r.Consolidated != nil {
			raw, ok = r.Consolidated.Metadata[p]
		}
		if !ok {
			name := root + p + "/zarr.json"
			if !s.zarrFiles[name] {
				return nil, at, false, nil
			}
			b, err := readSmall(s.c, name, maxXML)
			if err != nil {
				return nil, at, true, err
			}
			raw = b
		}
		a, err := parseZarr3(root+p, raw)
		if err != nil {
			return nil, at, true, fmt.Errorf("%s: %s/zarr.json: %v", s.Path, p, err)
		}
		var n zarr3Node
		json.Unmarshal(raw, &n)
		if len(n.Attributes) > 0 {
			if err := json.Unmarshal(n.Attributes, &at); err != nil {
				return nil, at, true, fmt.Errorf("%s: %s/zarr.json attributes: %v", s.Path, p, err)
			}
		}
		return a, at, true, nil
	}, nil
}

// parseZarr3 reads a 2-D Zarr v3 array's metadata: a regular chunk grid,
// the bytes codec then at most one of zstd, gzip or blosc.
func parseZarr3(p string, raw []byte) (*zarrArray, error) {
	var n zarr3Node
	if err := json.Unmarshal(raw, &n); err != nil {
		return nil, err
	}
	a := &zarrArray{path: p, v3: true, sep: "/"}
	switch {
	case n.Format != 3 || n.NodeType != "array":
		return nil, fmt.Errorf("not a Zarr v3 array")
	case len(n.Shape) != 2 || n.ChunkGrid.Name != "regular" || len(n.ChunkGrid.Config.Shape) != 2:
		return nil, fmt.Errorf("shape %v, chunk grid %q %v: not a 2-D array of regular chunks", n.Shape, n.ChunkGrid.Name, n.ChunkGrid.Config.Shape)
	}
	a.rows, a.cols, a.crows, a.ccols = n.Shape[0], n.Shape[1], n.ChunkGrid.Config.Shape[0], n.ChunkGrid.Config.Shape[1]
	if a.rows <= 0 || a.cols <= 0 || a.crows <= 0 || a.ccols <= 0 || a.rows > 1<<20 || a.cols > 1<<20 {
		return nil, fmt.Errorf("shape %v, chunks %v", n.Shape, n.ChunkGrid.Config.Shape)
	}
	switch n.KeyEncoding.Name {
	case "default":
	case "v2":
		a.v3, a.sep = false, "." // keys as Zarr v2 writes them
	default:
		return nil, fmt.Errorf("chunk_key_encoding %q", n.KeyEncoding.Name)
	}
	if sep := n.KeyEncoding.Config.Sep; sep != "" {
		if sep != "/" && sep != "." {
			return nil, fmt.Errorf("chunk key separator %q", sep)
		}
		a.sep = sep
	}
	var dt string
	if err := json.Unmarshal(n.DataType, &dt); err != nil {
		return nil, fmt.Errorf("data_type %s: Canopy reads uint8, uint16, int16, uint32, int32 and float32", n.DataType)
	}
	t, ok := map[string]compute.DataType{"uint8": compute.U8, "uint16": compute.U16, "int16": compute.I16, "uint32": compute.U32, "int32": compute.I32, "float32": compute.F32}[dt]
	if !ok {
		return nil, fmt.Errorf("data_type %q: Canopy reads uint8, uint16, int16, uint32, int32 and float32", dt)
	}
	a.dtype = t
	if a.crows*a.ccols*t.Size() > maxChunk {
		return nil, fmt.Errorf("chunks of %dx%d are larger than %d MiB", a.ccols, a.crows, maxChunk>>20)
	}
	if len(n.Codecs) == 0 || n.Codecs[0].Name != "bytes" || len(n.Codecs) > 2 {
		var names []string
		for _, c := range n.Codecs {
			names = append(names, c.Name)
		}
		return nil, fmt.Errorf("codecs %v: Canopy reads bytes, then at most one of zstd, gzip, blosc (no sharding)", names)
	}
	a.bigEndian = n.Codecs[0].Config.Endian == "big"
	if len(n.Codecs) == 2 {
		switch c := n.Codecs[1].Name; c {
		case "zstd", "gzip", "blosc":
			a.compressor = c
		default:
			return nil, fmt.Errorf("codec %q: Canopy reads zstd, gzip and blosc", c)
		}
	}
	if err := a.setFill(n.Fill); err != nil {
		return nil, err
	}
	return a, nil
}

// setFill reads a fill value: a number, "NaN", or null (none).
func (a *zarrArray) setFill(f json.RawMessage) error {
	switch string(bytes.TrimSpace(f)) {
	case "", "null":
	case `"NaN"`:
		a.fill, a.hasFill = math.NaN(), true
	default:
		v, err := strconv.ParseFloat(string(f), 64)
		if err != nil {
			return fmt.Errorf("fill_value %s", f)
		}
		a.fill, a.hasFill = v, true
	}
	return nil
}

// key is the name of chunk (cy, cx) in the container.
func (a *zarrArray) key(cy, cx int) string {
	k := strconv.Itoa(cy) + a.sep + strconv.Itoa(cx)
	if a.v3 {
		k = "c" + a.sep + k // Zarr v3's default chunk key encoding
	}
	return a.path + "/" + k
}

// parseZarray reads a 2-D array's .zarray.
func parseZarray(p string, raw []byte) (*zarrArray, error) {
	var m zarrMeta
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	a := &zarrArray{path: p, sep: m.Sep}
	switch {
	case m.Format != 2:
		return nil, fmt.Errorf("zarr_format %d, not 2", m.Format)
	case len(m.Shape) != 2 || len(m.Chunks) != 2:
		return nil, fmt.Errorf("shape %v, chunks %v: not a 2-D array", m.Shape, m.Chunks)
	case m.Order != "C":
		return nil, fmt.Errorf("order %q: Canopy reads row-major (C) arrays", m.Order)
	case len(m.Filters) > 0 && string(m.Filters) != "null":
		return nil, fmt.Errorf("filters %s: Canopy reads arrays without filters", m.Filters)
	}
	a.rows, a.cols, a.crows, a.ccols = m.Shape[0], m.Shape[1], m.Chunks[0], m.Chunks[1]
	if a.rows <= 0 || a.cols <= 0 || a.crows <= 0 || a.ccols <= 0 || a.rows > 1<<20 || a.cols > 1<<20 {
		return nil, fmt.Errorf("shape %v, chunks %v", m.Shape, m.Chunks)
	}
	if a.sep == "" {
		a.sep = "."
	}
	if a.sep != "." && a.sep != "/" {
		return nil, fmt.Errorf("dimension_separator %q", a.sep)
	}
	if len(m.DType) != 3 {
		return nil, fmt.Errorf("dtype %q", m.DType)
	}
	a.bigEndian = m.DType[0] == '>'
	t, ok := map[string]compute.DataType{"u1": compute.U8, "u2": compute.U16, "i2": compute.I16, "u4": compute.U32, "i4": compute.I32, "f4": compute.F32}[m.DType[1:]]
	if !ok {
		return nil, fmt.Errorf("dtype %q: Canopy reads u1, u2, i2, u4, i4 and f4", m.DType)
	}
	a.dtype = t
	if a.crows*a.ccols*t.Size() > maxChunk {
		return nil, fmt.Errorf("chunks of %dx%d are larger than %d MiB", a.ccols, a.crows, maxChunk>>20)
	}
	if len(m.Compressor) > 0 && string(m.Compressor) != "null" {
		var c struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(m.Compressor, &c); err != nil {
			return nil, fmt.Errorf("compressor: %v", err)
		}
		switch c.ID {
		case "blosc", "zstd", "zlib", "gzip":
			a.compressor = c.ID
		default:
			return nil, fmt.Errorf("compressor %q: Canopy reads blosc, zstd, zlib and gzip", c.ID)
		}
	}
	if err := a.setFill(m.Fill); err != nil {
		return nil, err
	}
	return a, nil
}

// readZarr reads the window sw of an array band at its stored type: the
// chunks it touches, a missing one as the fill value.
func (s *Scene) readZarr(src *Source, sw image.Rectangle) (compute.Plane, error) {
	a := s.zarr[src.File]
	if a == nil || a.cols != src.Width || a.rows != src.Height {
		return compute.Plane{}, fmt.Errorf("%s: array %s not as opened", s.Path, src.File)
	}
	size := a.dtype.Size()
	p := compute.NewPlane(a.dtype, sw.Dx(), sw.Dy())
	if f := a.fill; a.hasFill && f != 0 && (a.dtype == compute.F32 || !math.IsNaN(f)) {
		v := encodeSample(a.dtype, f)
		for i := 0; i < len(p.Data); i += size {
			copy(p.Data[i:], v)
		}
	}
	for cy := sw.Min.Y / a.crows; cy*a.crows < sw.Max.Y; cy++ {
		for cx := sw.Min.X / a.ccols; cx*a.ccols < sw.Max.X; cx++ {
			name := a.key(cy, cx)
			if !s.zarrFiles[name] {
				continue
			}
			data, err := s.zarrChunk(a, name)
			if err != nil {
				return compute.Plane{}, err
			}
			x0, x1 := max(sw.Min.X, cx*a.ccols), min(sw.Max.X, (cx+1)*a.ccols)
			for y := max(sw.Min.Y, cy*a.crows); y < min(sw.Max.Y, (cy+1)*a.crows); y++ {
				from := ((y-cy*a.crows)*a.ccols + x0 - cx*a.ccols) * size
				to := ((y-sw.Min.Y)*sw.Dx() + x0 - sw.Min.X) * size
				copy(p.Data[to:to+(x1-x0)*size], data[from:])
			}
		}
	}
	return p, nil
}

// zarrChunk reads and decodes one chunk whole, bounded by the chunk's
// size.
func (s *Scene) zarrChunk(a *zarrArray, name string) ([]byte, error) {
	want := a.crows * a.ccols * a.dtype.Size()
	ra, n, err := s.c.open(name)
	if err != nil {
		return nil, err
	}
	if n > int64(want)+1<<20 {
		return nil, fmt.Errorf("%s: %d bytes, more than a chunk of %d bytes can take", s.c.where(name), n, want)
	}
	b := make([]byte, n)
	if _, err := ra.ReadAt(b, 0); err != nil && err != io.EOF {
		return nil, fmt.Errorf("%s: %v", s.c.where(name), err)
	}
	var out []byte
	switch a.compressor {
	case "":
		out = b
	case "blosc":
		out, err = unblosc(b, want)
	case "zstd":
		out, err = zstdDec.DecodeAll(b, make([]byte, 0, want))
	case "zlib", "gzip":
		var r io.ReadCloser
		if a.compressor == "zlib" {
			r, err = zlib.NewReader(bytes.NewReader(b))
		} else {
			r, err = gzip.NewReader(bytes.NewReader(b))
		}
		if err == nil {
			out, err = io.ReadAll(io.LimitReader(r, int64(want)+1))
			r.Close()
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %v", s.c.where(name), err)
	}
	if len(out) != want {
		return nil, fmt.Errorf("%s: decodes to %d bytes, a %dx%d chunk of %s has %d", s.c.where(name), len(out), a.ccols, a.crows, a.dtype, want)
	}
	if a.bigEndian && a.dtype.Size() > 1 {
		sz := a.dtype.Size()
		for i := 0; i+sz <= len(out); i += sz {
			for j := range sz / 2 {
				out[i+j], out[i+sz-1-j] = out[i+sz-1-j], out[i+j]
			}
		}
	}
	return out, nil
}

// encodeSample is v stored as type t (little-endian).
func encodeSample(t compute.DataType, v float64) []byte {
	b := make([]byte, t.Size())
	switch t {
	case compute.U8:
		b[0] = uint8(v)
	case compute.U16:
		binary.LittleEndian.PutUint16(b, uint16(v))
	case compute.I16:
		binary.LittleEndian.PutUint16(b, uint16(int16(v)))
	case compute.U32:
		binary.LittleEndian.PutUint32(b, uint32(v))
	case compute.I32:
		binary.LittleEndian.PutUint32(b, uint32(int32(v)))
	case compute.F32:
		binary.LittleEndian.PutUint32(b, math.Float32bits(float32(v)))
	}
	return b
}
