package scene

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"canopy/compute"
	"canopy/compute/remote"
)

// filesContainer holds a STAC item's or an orthomosaic's files by path.
type filesContainer struct {
	files  []string
	cache  fileCache
	remote remoteFiles // files named by URL
}

func (f *filesContainer) names() []string { return f.files }

func (f *filesContainer) open(name string) (io.ReaderAt, int64, error) {
	if remote.IsURL(name) {
		return f.remote.open(name)
	}
	h, n, err := f.cache.open(name)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %v", name, err)
	}
	return h, n, nil
}

func (f *filesContainer) where(name string) string { return name }

func (f *filesContainer) close() error { f.remote.close(); return f.cache.close() }

type stacItem struct {
	Type       string               `json:"type"`
	ID         string               `json:"id"`
	Properties map[string]any       `json:"properties"`
	Assets     map[string]stacAsset `json:"assets"`
}

type stacAsset struct {
	Href        string   `json:"href"`
	Type        string   `json:"type"`
	Roles       []string `json:"roles"`
	GSD         float64  `json:"gsd"`
	EOBands     []eoBand `json:"eo:bands"`
	RasterBands []struct {
		NoData     any      `json:"nodata"`
		Scale      *float64 `json:"scale"`
		Offset     *float64 `json:"offset"`
		DataType   string   `json:"data_type"`
		Resolution float64  `json:"spatial_resolution"`
	} `json:"raster:bands"`
	Transform []float64 `json:"proj:transform"`
	Shape     []int     `json:"proj:shape"`
	EPSG      *int      `json:"proj:epsg"`
	Code      string    `json:"proj:code"`
}

// eoBand is an eo:bands entry: an object, or (USGS's Collection 2 items of
// STAC 1.0.0-beta.2) the index of an entry of the item's own eo:bands.
type eoBand struct {
	Name       string `json:"name"`
	CommonName string `json:"common_name"`
	index      int    // -1: an object
}

func (e *eoBand) UnmarshalJSON(b []byte) error {
	var i int
	if json.Unmarshal(b, &i) == nil {
		*e = eoBand{index: i}
		return nil
	}
	type plain eoBand
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*e = eoBand(p)
	e.index = -1
	return nil
}

// resolveEOBands replaces eo:bands indexes by the item's entries.
func resolveEOBands(it *stacItem) {
	list, _ := it.Properties["eo:bands"].([]any)
	for k, a := range it.Assets {
		for i, e := range a.EOBands {
			if e.index < 0 {
				continue
			}
			if e.index < len(list) {
				m, _ := list[e.index].(map[string]any)
				name, _ := m["name"].(string)
				cn, _ := m["common_name"].(string)
				a.EOBands[i] = eoBand{Name: name, CommonName: cn, index: -1}
			} else {
				a.EOBands[i] = eoBand{index: -1}
			}
		}
		it.Assets[k] = a
	}
}

// stacCommon maps eo:bands common names to roles (rededge and nir08 are
// settled by band name and by the item's other assets).
var stacCommon = map[string]string{
	"blue": "blue", "green": "green", "red": "red", "nir": "nir", "nir08": "nir2",
	"swir16": "swir1", "swir22": "swir2",
}

// openSTAC reads a STAC item, local or at a URL, whose assets are local
// files or URLs.
func openSTAC(ctx context.Context, p string) (*Scene, error) {
	ic := &filesContainer{remote: remoteFiles{ctx: ctx}}
	b, err := readSmall(ic, p, maxXML)
	ic.close() // the item is read whole: its file is not kept open
	if err != nil {
		return nil, err
	}
	return openSTACJSON(ctx, p, b)
}

// OpenItem opens a STAC item given as its JSON (a saved search's item,
// stac.Item.Raw), as Open opens an item file: href is the item's own URL
// (stac.Item.Href), which relative asset links resolve against and
// messages name; "" when it has none, and then every asset link must be
// absolute. ctx bounds the requests of the scene's remote files, later
// reads included (cancelling it stops them). Close the Scene when done.
func OpenItem(ctx context.Context, raw []byte, href string) (*Scene, error) {
	p := href
	if p == "" {
		var it stacItem
		if err := json.Unmarshal(raw, &it); err != nil {
			return nil, fmt.Errorf("a STAC item: malformed JSON: %v", err)
		}
		p = "STAC item " + it.ID
		for k, a := range it.Assets {
			if !remote.IsURL(a.Href) && !filepath.IsAbs(a.Href) && !strings.HasPrefix(a.Href, "file://") {
				return nil, fmt.Errorf("%s: asset %s's link %q is relative and the item has no link of its own to resolve it against", p, k, a.Href)
			}
		}
	}
	s, err := openSTACJSON(ctx, p, raw)
	if err != nil {
		return nil, err
	}
	if err := s.finish(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// openSTACJSON reads the STAC item b, found at p.
func openSTACJSON(ctx context.Context, p string, b []byte) (*Scene, error) {
	fc := &filesContainer{remote: remoteFiles{ctx: ctx}}
	s := &Scene{Path: p, Kind: KindSTAC, c: fc, CloudShare: math.NaN(), Bands: map[string]*Source{}}
	fail := func(err error) (*Scene, error) { fc.close(); return nil, err }
	var it stacItem
	if err := json.Unmarshal(b, &it); err != nil {
		return nil, fmt.Errorf("%s: malformed JSON: %v", p, err)
	}
	if it.Type != "Feature" || len(it.Assets) == 0 {
		return nil, fmt.Errorf("%s: not a STAC item (a GeoJSON Feature with assets)", p)
	}
	s.Product = it.ID
	prop := func(k string) string {
		switch v := it.Properties[k].(type) {
		case string:
			return v
		case float64:
			return strconv.FormatFloat(v, 'f', -1, 64)
		}
		return ""
	}
	resolveEOBands(&it)
	platform := prop("platform")
	if platform == "" {
		platform = prop("eo:platform") // USGS's items of STAC 1.0.0-beta.2: "LANDSAT_8"
	}
	s.Sensor = platformName(platform)
	if t, err := time.Parse(time.RFC3339Nano, prop("datetime")); err == nil {
		s.Date = t
	}
	if v, err := strconv.ParseFloat(prop("eo:cloud_cover"), 64); err == nil {
		s.CloudShare = v
	}
	s.Tile = prop("s2:mgrs_tile")
	if s.Tile == "" && prop("mgrs:utm_zone") != "" {
		s.Tile = fmt.Sprintf("%02s%s%s", prop("mgrs:utm_zone"), prop("mgrs:latitude_band"), prop("mgrs:grid_square"))
	}
	if wp, wr := prop("landsat:wrs_path"), prop("landsat:wrs_row"); wp != "" {
		pp, _ := strconv.Atoi(wp)
		rr, _ := strconv.Atoi(wr)
		s.PathRow = fmt.Sprintf("%03d%03d", pp, rr)
	}
	s.Baseline = prop("s2:processing_baseline")
	epsg := 0
	if v, err := strconv.Atoi(prop("proj:epsg")); err == nil {
		epsg = v
	} else if m := epsgCode.FindStringSubmatch(prop("proj:code")); m != nil {
		epsg, _ = strconv.Atoi(m[1])
	}
	hasNIR := false
	for k, a := range it.Assets {
		if k == "nir" || (len(a.EOBands) > 0 && a.EOBands[0].CommonName == "nir") {
			hasNIR = true
		}
	}
	dir := filepath.Dir(p)
	if remote.IsURL(p) {
		dir = p // hrefs resolve against the item's URL
	}
	var finest *Source
	keys := make([]string, 0, len(it.Assets))
	for k := range it.Assets {
		keys = append(keys, k)
	}
	// Plain keys before their "-jp2" twins, so GeoTIFFs win.
	sortKeys(keys)
	for _, k := range keys {
		a := it.Assets[k]
		role := ""
		switch {
		case contains(Roles, strings.TrimSuffix(k, "-jp2")):
			role = strings.TrimSuffix(k, "-jp2")
		case qaKey(k) != "":
			// Earth Search writes "scl", Planetary Computer "SCL", USGS
			// "QA_PIXEL.TIF".
			role = qaKey(k)
		case len(a.EOBands) == 1:
			cn, name := a.EOBands[0].CommonName, a.EOBands[0].Name
			role = stacCommon[cn]
			if cn == "nir08" && !hasNIR {
				role = "nir"
			}
			if r := s2Roles[normBand(name)]; cn == "rededge" && r != "" {
				role = r
			}
			if role == "" && cn == "" && isS2Item(it) {
				// Earth Search's first items name B05-B07 and B8A without a
				// common name.
				role = s2Roles[normBand(name)]
			}
		}
		if role == "" || s.Bands[role] != nil || (role == "scl" && s.Mask.Source != nil) {
			continue
		}
		src, err := stacSource(fc, dir, k, a, role, epsg)
		if err != nil {
			return fail(fmt.Errorf("%s: %v", p, err))
		}
		if role != "scl" && role != "qa_pixel" && role != "qa_radsat" {
			src.Radiometry = s.stacRadiometry(it, a, src.Radiometry)
			if strings.HasPrefix(strings.ToLower(platform), "landsat") && src.Radiometry.IsIdentity() && (len(a.RasterBands) == 0 || a.RasterBands[0].Scale == nil) &&
				(strings.Contains(it.ID, "_L2SP_") || strings.Contains(it.ID, "_L2SR_")) {
				// USGS's own items give no scale: the product's rule.
				src.Radiometry = compute.Radiometry{Scale: landsatScale, Offset: landsatOffset}
				s.note("the item gives no raster:bands scale: using Collection 2 Level-2's own, DN * 2.75e-5 - 0.2")
				if !src.HasNoData {
					src.NoData, src.HasNoData = 0, true
				}
			}
			if isS2Item(it) {
				// The product's Special_Values: DN 0 no data, 65535
				// saturated, whatever the item says.
				src.Saturated, src.HasSaturated = 65535, true
				if !src.HasNoData {
					src.NoData, src.HasNoData = 0, true
				}
			}
		}
		if epsg == 0 && src.epsg != 0 {
			epsg = src.epsg
		}
		switch role {
		case "scl":
			s.Mask = Mask{Kind: "scl", Source: src, Classes: SCLMasked, Buffered: sclBuffered, Description: "SCL classes 0 no data, 1 saturated or defective, 3 cloud shadow, 8-9 cloud medium and high probability, 10 thin cirrus"}
			continue
		case "qa_pixel":
			s.Mask.Kind, s.Mask.Source, s.Mask.Bits, s.Mask.Buffered = "qa_pixel", src, QAPixelMasked, qaBuffered
			s.Mask.Description = qaDescription(QAPixelMasked) + s.Mask.Description
			continue
		case "qa_radsat":
			s.Mask.Saturation = src
			s.Mask.Description += "; QA_RADSAT saturation of the bands used"
			continue
		}
		s.Bands[role] = src
		if finest == nil || src.Resolution < finest.Resolution {
			finest = src
		}
	}
	if finest == nil {
		return fail(fmt.Errorf("%s: no asset with a band role (eo:bands common_name blue, green, red, nir, ...)", p))
	}
	if s.Mask.Kind == "" {
		s.Mask.Description = "no scl or qa_pixel asset: nothing masked"
	}
	if plat := strings.ToLower(platform); strings.HasPrefix(plat, "landsat") {
		roles := landsatTM
		if strings.HasSuffix(plat, "8") || strings.HasSuffix(plat, "9") {
			roles = landsatOLI
		} else if s.Mask.Kind == "qa_pixel" {
			s.Mask.Bits, s.Mask.Buffered = qaPixelTM, qaBufferedOf(qaPixelTM)
			s.Mask.Description = strings.Replace(s.Mask.Description, qaDescription(QAPixelMasked), qaDescription(qaPixelTM), 1)
		}
		for n, role := range roles {
			if b := s.Bands[role]; b != nil {
				b.QABit = n - 1
			}
		}
	}
	s.CRS = CRS{EPSG: epsg, Name: crsName(epsg)}
	s.Grid = Grid{Width: finest.Width, Height: finest.Height, Resolution: finest.Resolution, Geo: finest.geo}
	return s, nil
}

// sortKeys orders asset keys alphabetically with each "-jp2" key after its
// plain twin.
func sortKeys(k []string) {
	sort.Slice(k, func(i, j int) bool { return keyLess(k[i], k[j]) })
}

func keyLess(a, b string) bool {
	ja, jb := strings.HasSuffix(a, "-jp2"), strings.HasSuffix(b, "-jp2")
	if ja != jb {
		return jb
	}
	return a < b
}

// stacSource makes a band source of an asset, reading its file's header.
func stacSource(fc *filesContainer, dir, key string, a stacAsset, role string, epsg int) (*Source, error) {
	href := a.Href
	if u, ok, err := assetHref(dir, href); err != nil {
		return nil, fmt.Errorf("asset %s: %v", key, err)
	} else if ok {
		href = u // read over the network (remote.go)
	} else {
		if strings.HasPrefix(href, "file://") {
			href = strings.TrimPrefix(href, "file://")
		} else if i := strings.Index(href, "://"); i > 0 {
			return nil, fmt.Errorf("asset %s is at %s, a kind of URL Canopy does not read (http, https, s3 and local files it does)", key, href)
		}
		if !filepath.IsAbs(href) {
			href = filepath.Join(dir, filepath.FromSlash(href))
		}
	}
	name := key
	if len(a.EOBands) == 1 && a.EOBands[0].Name != "" {
		name = a.EOBands[0].Name
	}
	src := &Source{Role: role, Name: name, File: href, Band: 1, Radiometry: compute.Identity(), QABit: -1}
	lower := strings.ToLower(href)
	switch {
	case strings.HasSuffix(lower, ".jp2") || strings.HasSuffix(lower, ".j2k") || strings.Contains(a.Type, "jp2"):
		src.Format = "jp2"
	default:
		src.Format = "tiff"
	}
	if len(a.RasterBands) > 0 {
		rb := a.RasterBands[0]
		if rb.Scale != nil {
			src.Radiometry.Scale = *rb.Scale
		}
		if rb.Offset != nil {
			src.Radiometry.Offset = *rb.Offset
		}
		switch v := rb.NoData.(type) {
		case float64:
			src.NoData, src.HasNoData = v, true
		case string:
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				src.NoData, src.HasNoData = f, true
			}
		}
		src.Resolution = rb.Resolution
	}
	if src.Resolution == 0 {
		src.Resolution = a.GSD
	}
	if a.EPSG != nil {
		src.epsg = *a.EPSG
	} else if m := epsgCode.FindStringSubmatch(a.Code); m != nil {
		src.epsg, _ = strconv.Atoi(m[1])
	}
	if src.epsg == 0 {
		src.epsg = epsg
	}
	if len(a.Transform) >= 6 && a.Transform[1] == 0 && a.Transform[3] == 0 && a.Transform[0] > 0 && a.Transform[4] == -a.Transform[0] && src.epsg != 0 {
		src.geo = northUp(src.epsg, a.Transform[2], a.Transform[5], a.Transform[0])
		if src.Resolution == 0 {
			src.Resolution = a.Transform[0]
		}
	}
	s := &Scene{c: fc, Path: "asset " + key} // Path: how its errors begin
	fc.files = append(fc.files, href)
	switch src.Format {
	case "jp2":
		if len(a.Shape) == 2 {
			src.Width, src.Height = a.Shape[1], a.Shape[0]
		}
		if src.geo == nil || src.Width == 0 {
			return nil, fmt.Errorf("asset %s is JPEG 2000 without proj:transform and proj:shape: its grid is unknown", key)
		}
		if err := s.checkJP2(src); err != nil {
			return nil, err
		}
	default:
		geo := src.geo
		if err := s.checkTIFF(src); err != nil {
			return nil, err
		}
		if geo != nil && src.geo.Valid() && !geo.SameGrid(src.geo) {
			return nil, fmt.Errorf("asset %s: proj:transform does not match the GeoTIFF's own georeferencing", key)
		}
		if src.epsg == 0 {
			src.epsg = epsgOf(src.geo)
		}
	}
	if src.Resolution == 0 {
		return nil, fmt.Errorf("asset %s: no resolution (raster:bands spatial_resolution, gsd or a transform)", key)
	}
	return src, nil
}

// platformName writes STAC platform names as people do: "sentinel-2a" ->
// "Sentinel-2A", "landsat-8" -> "Landsat 8".
func platformName(p string) string {
	l := strings.ToLower(p)
	switch {
	case strings.HasPrefix(l, "sentinel-2") && len(l) == 11:
		return "Sentinel-2" + strings.ToUpper(l[10:])
	case strings.HasPrefix(l, "landsat-") || strings.HasPrefix(l, "landsat_"):
		return "Landsat " + l[8:]
	case p == "":
		return "unknown"
	}
	return p
}

// stacRadiometry settles a reflectance asset's radiometry. The rule: an
// asset's raster:bands scale and offset describe the asset's own file
// (an archive may re-encode the product's digital numbers), so they win
// over the product's rule; but a Sentinel-2 L2A item's own properties
// win over them where they say the pixels are otherwise, because
// archives have written raster:bands from one template for every item
// (element84/earth-search issues 66 and 71):
//   - earthsearch:boa_offset_applied true: Earth Search applied the
//     offset to the pixels; no offset is applied again;
//   - s2:processing_baseline before 04.00 with a negative offset: ESA's
//     products before 04.00 have none, so the offset is a template's;
//   - no raster:bands scale (Planetary Computer): the product's rule,
//     1/10000 and, from baseline 04.00, an offset of -1000 DN;
//   - earthsearch:boa_offset_applied false: raster:bands' offset is
//     applied, with a note that some such items are wrong (issue 71),
//     which no metadata tells.
//
// Each departure from raster:bands is said in Scene.Notes. The result is
// written (DN + Add) * Scale when the offset is a whole number of DN, as
// for the products themselves, so that a reflectance of exactly 0 stays 0
// and 0/0 stays NaN.
func (s *Scene) stacRadiometry(it stacItem, a stacAsset, r compute.Radiometry) compute.Radiometry {
	if isS2Item(it) {
		base, _ := it.Properties["s2:processing_baseline"].(string)
		baseline, _ := strconv.ParseFloat(base, 64)
		hasScale := len(a.RasterBands) > 0 && a.RasterBands[0].Scale != nil
		applied, _ := it.Properties["earthsearch:boa_offset_applied"].(bool)
		switch {
		case applied:
			if r.Offset != 0 || r.Add != 0 {
				s.note(fmt.Sprintf("raster:bands gives an offset of %g but earthsearch:boa_offset_applied says the offset is already in the pixels: none applied", r.Offset))
			}
			if !hasScale {
				r.Scale = 1e-4
			}
			r.Add, r.Offset = 0, 0
		case !hasScale:
			r = compute.Radiometry{Scale: 1e-4}
			switch {
			case baseline >= 4:
				r.Add = -1000
				s.note(fmt.Sprintf("the item gives no raster:bands scale: using the product's own rule for baseline %s, (DN - 1000) / 10000", base))
			case baseline > 0:
				s.note(fmt.Sprintf("the item gives no raster:bands scale: using the product's own rule for baseline %s, DN / 10000", base))
			default:
				s.note("the item gives no raster:bands scale and no s2:processing_baseline: using DN / 10000 without offset")
			}
		case baseline > 0 && baseline < 4 && r.Offset < 0:
			s.note(fmt.Sprintf("raster:bands gives an offset of %g but baseline %s products have none: none applied", r.Offset, base))
			r.Offset = 0
		case r.Offset < 0 && hasFlag(it, "earthsearch:boa_offset_applied"):
			s.note(fmt.Sprintf("earthsearch:boa_offset_applied is false: raster:bands' offset %g is applied; Earth Search has items whose pixels have it already (element84/earth-search issue 71): if reflectance reads 0.1 low, give --scale ROLE=%g", r.Offset, r.Scale))
		}
	}
	return addForm(r)
}

// hasFlag reports whether the item's properties hold key as a boolean.
func hasFlag(it stacItem, key string) bool {
	_, ok := it.Properties[key].(bool)
	return ok
}

// addForm writes scale * DN + offset as (DN + add) * scale when the offset
// is a whole number of DN, so that DN = -add gives exactly 0.
func addForm(r compute.Radiometry) compute.Radiometry {
	if r.Scale == 0 || r.Offset == 0 || r.Add != 0 {
		return r
	}
	a := r.Offset / r.Scale
	ra := math.Round(a)
	if ra != 0 && math.Abs(a-ra) <= 1e-9*math.Max(1, math.Abs(a)) {
		return compute.Radiometry{Add: ra, Scale: r.Scale}
	}
	return r
}

// note adds a note once.
func (s *Scene) note(n string) {
	for _, x := range s.Notes {
		if x == n {
			return
		}
	}
	s.Notes = append(s.Notes, n)
}

// qaKey is the mask role of an asset key ("scl", "qa_pixel", "qa_radsat"),
// whatever its case and a ".TIF" ending; "" for other keys.
func qaKey(k string) string {
	switch l := strings.TrimSuffix(strings.ToLower(k), ".tif"); l {
	case "scl", "qa_pixel", "qa_radsat":
		return l
	}
	return ""
}

// isS2Item reports whether a STAC item is a Sentinel-2 one (platform
// "sentinel-2a", "Sentinel-2B", ..., or s2:* properties).
func isS2Item(it stacItem) bool {
	plat, _ := it.Properties["platform"].(string)
	if plat == "" {
		plat, _ = it.Properties["eo:platform"].(string)
	}
	_, hasBase := it.Properties["s2:processing_baseline"].(string)
	return strings.HasPrefix(strings.ToLower(plat), "sentinel-2") || hasBase
}
