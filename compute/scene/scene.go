package scene

import (
	"context"
	"encoding/json"
	"fmt"
	"image"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"canopy/compute"
	"canopy/compute/remote"
)

// The product kinds Open recognises.
const (
	KindSentinel2L2A = "sentinel2-l2a"
	KindLandsatC2L2  = "landsat-c2l2"
	KindSTAC         = "stac-item"
	KindOrthomosaic  = "orthomosaic"
)

// Roles are the band roles of the index language, in spectral order.
var Roles = []string{"blue", "green", "red", "rededge1", "rededge2", "rededge3", "nir", "nir2", "swir1", "swir2"}

// CRS is a coordinate reference system by EPSG code.
type CRS struct {
	EPSG int    `json:"epsg"`
	Name string `json:"name"`
}

// String is "EPSG:32632 (WGS 84 / UTM zone 32N)".
func (c CRS) String() string {
	if c.EPSG == 0 {
		if c.Name != "" {
			return c.Name
		}
		return "unknown"
	}
	if c.Name == "" {
		return fmt.Sprintf("EPSG:%d", c.EPSG)
	}
	return fmt.Sprintf("EPSG:%d (%s)", c.EPSG, c.Name)
}

// Grid is the pixel grid bands are loaded on: the finest band's.
type Grid struct {
	Width      int     `json:"width"`
	Height     int     `json:"height"`
	Resolution float64 `json:"resolution_m"`
	// Geo places the grid's pixels (nil when the product has none).
	Geo *compute.GeoRef `json:"-"`
}

// Source is one band as the product stores it.
type Source struct {
	Role string `json:"role"`
	// Name is the product's name for the band ("B04", "SR_B4", "band 3").
	Name string `json:"name"`
	// File is the file, or the member of the archive, holding the band.
	File string `json:"file"`
	// Band is the band's number inside File (1-based).
	Band int `json:"band"`
	// Format is "jp2" or "tiff".
	Format     string           `json:"format"`
	Resolution float64          `json:"resolution_m"`
	Width      int              `json:"width"`
	Height     int              `json:"height"`
	Type       compute.DataType `json:"-"`
	// Radiometry turns stored values into reflectance.
	Radiometry compute.Radiometry `json:"radiometry"`
	NoData     float64            `json:"nodata"`
	HasNoData  bool               `json:"has_nodata"`
	// Saturated is the stored value that means "saturated" (Sentinel-2's
	// 65535); such pixels are masked.
	Saturated    float64 `json:"saturated,omitempty"`
	HasSaturated bool    `json:"has_saturated,omitempty"`
	// QABit is this band's bit in a Landsat QA_RADSAT band (-1: none).
	QABit int `json:"-"`

	geo  *compute.GeoRef // the band's own grid
	epsg int
}

// Mask says how a product marks pixels not to use.
type Mask struct {
	// Kind is "scl" (Sentinel-2 scene classification), "qa_pixel"
	// (Landsat), "alpha" (an orthomosaic's alpha band) or "" (none).
	Kind string `json:"kind"`
	// Source is the band holding the classes, bits or alpha.
	Source *Source `json:"source,omitempty"`
	// Classes are the SCL classes masked.
	Classes []int `json:"classes,omitempty"`
	// Bits are the QA_PIXEL bits masked.
	Bits []int `json:"bits,omitempty"`
	// Buffered are the classes or bits a mask buffer grows (clouds and
	// their shadows, not nodata or saturation).
	Buffered []int `json:"buffered,omitempty"`
	// Saturation is Landsat's QA_RADSAT band (nil if none).
	Saturation *Source `json:"saturation,omitempty"`
	// Description says it in words.
	Description string `json:"description"`
}

// Scene is one product: what it is, where, when, and its bands by role.
type Scene struct {
	// Path is what Open was given.
	Path string `json:"path"`
	// Kind is one of the Kind constants.
	Kind string `json:"kind"`
	// Sensor is "Sentinel-2A", "Landsat 8", "orthomosaic", ...
	Sensor string `json:"sensor"`
	// Product is the product's identifier (its name).
	Product string `json:"product"`
	// Date is the acquisition time (zero when unknown).
	Date time.Time `json:"date"`
	// Tile is the Sentinel-2 MGRS tile ("32TQM"); PathRow Landsat's WRS-2
	// path and row ("044034").
	Tile    string `json:"tile,omitempty"`
	PathRow string `json:"path_row,omitempty"`
	// Baseline is Sentinel-2's processing baseline ("05.09").
	Baseline string `json:"processing_baseline,omitempty"`
	CRS      CRS    `json:"crs"`
	Grid     Grid   `json:"grid"`
	// Bands are the band sources by role.
	Bands map[string]*Source `json:"-"`
	Mask  Mask               `json:"mask"`
	// CloudShare is the product's own cloud cover in percent (NaN if the
	// product does not say).
	CloudShare float64 `json:"-"`
	// Notes are things a user should know (an assumed offset, ...).
	Notes []string `json:"notes,omitempty"`

	c     container
	ortho *Source // an orthomosaic's file: the template of its bands (Band: the band count)
	// zarr are an EOPF product's arrays by path, zarrFiles its files
	// (a chunk not among them is all fill value).
	zarr      map[string]*zarrArray
	zarrFiles map[string]bool
}

// Close releases the product's open files.
func (s *Scene) Close() error {
	if s.c == nil {
		return nil
	}
	return s.c.close()
}

// Open reads a product's metadata: a Sentinel-2 L2A .SAFE folder or .zip, a
// Landsat Collection 2 Level-2 folder or .tar, a STAC item .json (its
// assets local files or URLs), or a multi-band GeoTIFF orthomosaic; a STAC
// item or a GeoTIFF may be a URL (http, https, s3://), read by byte ranges
// (remote.go). No pixel is read; Load reads bands. Close the Scene when done.
func Open(p string) (*Scene, error) {
	return OpenContext(context.Background(), p)
}

// OpenContext is Open whose remote files' requests ctx bounds, later
// reads included: cancelling ctx stops them.
func OpenContext(ctx context.Context, p string) (*Scene, error) {
	if remote.IsURL(p) {
		return openRemote(ctx, p)
	}
	st, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", p, unwrapPath(err))
	}
	lower := strings.ToLower(p)
	var c container
	switch {
	case st.IsDir():
		d, err := openDir(p)
		if err != nil {
			return nil, err
		}
		c = d
	case strings.HasSuffix(lower, ".zip"):
		z, err := openZip(p)
		if err != nil {
			return nil, err
		}
		c = z
	case strings.HasSuffix(lower, ".tar") || strings.HasSuffix(lower, ".tar.gz") || strings.HasSuffix(lower, ".tgz"):
		t, err := openTar(p)
		if err != nil {
			return nil, err
		}
		c = t
	case strings.HasSuffix(lower, ".json"):
		s, err := openSTAC(ctx, p)
		if err != nil {
			return nil, err
		}
		if err := s.finish(); err != nil {
			s.Close()
			return nil, err
		}
		return s, nil
	case strings.HasSuffix(lower, ".tif") || strings.HasSuffix(lower, ".tiff"):
		return openOrtho(ctx, p)
	case strings.EqualFold(filepath.Base(p), "MTD_MSIL2A.xml"):
		return OpenContext(ctx, filepath.Dir(p))
	default:
		return nil, fmt.Errorf("%s: not a product Canopy knows (a Sentinel-2 L2A .SAFE folder or .zip, an EOPF .zarr folder or .zip, a Landsat Collection 2 Level-2 folder or .tar, a STAC item .json, or a GeoTIFF)", p)
	}
	s := &Scene{Path: p, c: c, CloudShare: math.NaN()}
	switch {
	case len(find(c, "MTD_MSIL2A.xml")) > 0:
		err = s.readSentinel2()
	case len(find(c, "MTD_MSIL1C.xml")) > 0:
		err = fmt.Errorf("%s: a Sentinel-2 Level-1C product (top-of-atmosphere); Canopy reads Level-2A (surface reflectance)", p)
	case len(find(c, "*_MTL.txt")) > 0 || len(find(c, "*_MTL.json")) > 0 || len(find(c, "*_MTL.xml")) > 0:
		err = s.readLandsat()
	case len(find(c, ".zmetadata")) > 0 || len(find(c, "zarr.json")) > 0:
		// An EOPF Zarr product: v2's consolidated .zmetadata, else v3's
		// zarr.json; the root's (the shortest name).
		s.Bands = map[string]*Source{}
		metas := find(c, ".zmetadata")
		if len(metas) == 0 {
			metas = find(c, "zarr.json")
		}
		sort.Slice(metas, func(i, j int) bool { return len(metas[i]) < len(metas[j]) })
		err = s.readEOPF(metas[0])
	case len(find(c, "*.SAFE")) > 0 || strings.HasSuffix(strings.TrimSuffix(lower, ".zip"), ".safe") || len(find(c, "MTD_TL.xml")) > 0:
		err = fmt.Errorf("%s: a Sentinel-2 product without MTD_MSIL2A.xml", p)
	default:
		err = fmt.Errorf("%s: no product metadata found (no MTD_MSIL2A.xml, no Landsat *_MTL file, no EOPF .zmetadata or zarr.json)", p)
	}
	if err == nil {
		err = s.finish()
	}
	if err != nil {
		c.close()
		return nil, err
	}
	return s, nil
}

// finish checks what every reader must have filled in.
func (s *Scene) finish() error {
	if len(s.Bands) == 0 {
		return fmt.Errorf("%s: no band with a known role", s.Path)
	}
	return nil
}

// RoleNames returns the roles the scene has, in spectral order (roles not
// in Roles come last, sorted).
func (s *Scene) RoleNames() []string {
	var out []string
	for _, r := range Roles {
		if s.Bands[r] != nil {
			out = append(out, r)
		}
	}
	var extra []string
	for r := range s.Bands {
		if !contains(Roles, r) {
			extra = append(extra, r)
		}
	}
	sort.Strings(extra)
	return append(out, extra...)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// bandJSON is a band as `canopy scene --json` prints it.
type bandJSON struct {
	Role       string   `json:"role"`
	Name       string   `json:"name"`
	File       string   `json:"file"`
	Band       int      `json:"band"`
	Resolution float64  `json:"resolution_m"`
	Type       string   `json:"type"`
	Add        float64  `json:"add"`
	Scale      float64  `json:"scale"`
	Offset     float64  `json:"offset"`
	NoData     *float64 `json:"nodata"`
	Saturated  *float64 `json:"saturated,omitempty"`
}

// MarshalJSON writes the scene for `canopy scene --json`: sensor, date,
// tile, CRS, grid, bands (role, resolution, type, add, scale, offset,
// nodata), mask, cloud share (null when unknown) and values (reflectance
// or digital numbers).
func (s *Scene) MarshalJSON() ([]byte, error) {
	type plain Scene
	var bands []bandJSON
	for _, r := range s.RoleNames() {
		b := s.Bands[r]
		j := bandJSON{Role: r, Name: b.Name, File: b.File, Band: b.Band, Resolution: b.Resolution, Type: b.Type.String(),
			Add: b.Radiometry.Add, Scale: b.Radiometry.Scale, Offset: b.Radiometry.Offset}
		if b.HasNoData {
			v := b.NoData
			j.NoData = &v
		}
		if b.HasSaturated {
			v := b.Saturated
			j.Saturated = &v
		}
		bands = append(bands, j)
	}
	var cloud *float64
	if !math.IsNaN(s.CloudShare) {
		v := s.CloudShare
		cloud = &v
	}
	var date *string
	if !s.Date.IsZero() {
		d := s.Date.UTC().Format(time.RFC3339)
		date = &d
	}
	return json.Marshal(struct {
		*plain
		Date       *string    `json:"date"`
		Bands      []bandJSON `json:"bands"`
		CloudShare *float64   `json:"cloud_share"`
		Values     string     `json:"values"`
	}{(*plain)(s), date, bands, cloud, s.Values()})
}

// Describe is the scene in a few lines for `canopy scene PATH`.
func (s *Scene) Describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s  %s\n", s.Sensor, s.Product)
	if !s.Date.IsZero() {
		fmt.Fprintf(&b, "date         %s\n", s.Date.UTC().Format("2006-01-02 15:04:05 UTC"))
	}
	if s.Tile != "" {
		fmt.Fprintf(&b, "tile         %s\n", s.Tile)
	}
	if s.PathRow != "" {
		fmt.Fprintf(&b, "path/row     %s\n", s.PathRow)
	}
	if s.Baseline != "" {
		fmt.Fprintf(&b, "baseline     %s\n", s.Baseline)
	}
	fmt.Fprintf(&b, "crs          %s\n", s.CRS)
	fmt.Fprintf(&b, "grid         %d x %d at %g m\n", s.Grid.Width, s.Grid.Height, s.Grid.Resolution)
	if math.IsNaN(s.CloudShare) {
		fmt.Fprintf(&b, "cloud share  unknown\n")
	} else {
		fmt.Fprintf(&b, "cloud share  %.1f%%\n", s.CloudShare)
	}
	fmt.Fprintf(&b, "mask         %s\n", s.Mask.Description)
	fmt.Fprintf(&b, "values       %s\n", s.Values())
	what := "reflectance"
	if s.Values() == ValuesDN {
		what = "value"
	}
	fmt.Fprintf(&b, "bands        role      name     res    type     %s = (DN + add) * scale + offset\n", what)
	for _, r := range s.RoleNames() {
		x := s.Bands[r]
		nd := ""
		if x.HasNoData {
			nd = fmt.Sprintf(", nodata %g", x.NoData)
		}
		fmt.Fprintf(&b, "             %-9s %-8s %3gm   %-8s add %g, scale %g, offset %g%s\n", r, x.Name, x.Resolution, x.Type, x.Radiometry.Add, x.Radiometry.Scale, x.Radiometry.Offset, nd)
	}
	for _, n := range s.Notes {
		fmt.Fprintf(&b, "note         %s\n", n)
	}
	return b.String()
}

// What a scene's band values are (Scene.Values).
const (
	ValuesReflectance = "reflectance"
	ValuesDN          = "digital numbers"
)

// Values says whether the scene's bands give reflectance (the product
// states how to get it: a scale, an offset, or values stored as floats)
// or digital numbers (integers with no known scale, as a plain GeoTIFF or
// an orthomosaic without SCALE/OFFSET).
func (s *Scene) Values() string {
	for _, b := range s.Bands {
		if !b.Radiometry.IsIdentity() || b.Type == compute.F32 {
			return ValuesReflectance
		}
	}
	return ValuesDN
}

// crsName names the EPSG codes products use.
func crsName(epsg int) string {
	switch {
	case epsg > 32600 && epsg <= 32660:
		return fmt.Sprintf("WGS 84 / UTM zone %dN", epsg-32600)
	case epsg > 32700 && epsg <= 32760:
		return fmt.Sprintf("WGS 84 / UTM zone %dS", epsg-32700)
	case epsg == 4326:
		return "WGS 84"
	case epsg == 3857:
		return "WGS 84 / Pseudo-Mercator"
	case epsg == 3031:
		return "WGS 84 / Antarctic Polar Stereographic"
	case epsg == 3413:
		return "WGS 84 / NSIDC Sea Ice Polar Stereographic North"
	}
	return ""
}

// northUp is the GeoRef of a north-up grid with its top-left corner at
// (x0, y0) and square pixels of res map units, in EPSG epsg.
func northUp(epsg int, x0, y0, res float64) *compute.GeoRef {
	model, key := uint16(1), uint16(3072) // projected
	if epsg == 4326 || (epsg >= 4000 && epsg < 5000) {
		model, key = 2, 2048 // geographic
	}
	return &compute.GeoRef{
		PixelScale:      []float64{res, res, 0},
		Tiepoints:       []float64{0, 0, 0, x0, y0, 0},
		GeoKeyDirectory: []uint16{1, 1, 0, 3, 1024, 0, 1, model, 1025, 0, 1, 1, key, 0, 1, uint16(epsg)},
	}
}

// epsgOf reads the EPSG code from a GeoRef's key directory (0 if none).
func epsgOf(g *compute.GeoRef) int {
	if g == nil {
		return 0
	}
	k := g.GeoKeyDirectory
	for i := 4; i+3 < len(k); i += 4 {
		if (k[i] == 3072 || k[i] == 2048) && k[i+1] == 0 && k[i+3] > 0 && k[i+3] < 32767 {
			return int(k[i+3])
		}
	}
	return 0
}

// WindowGeo is the georeferencing of a window of the grid (as Load's
// LoadOptions.Window), for writing a result of that window; the whole
// grid's when win is empty, nil when the grid has none.
func (g Grid) WindowGeo(win image.Rectangle) *compute.GeoRef {
	if g.Geo == nil || win.Empty() || win.Min == (image.Point{}) {
		return g.Geo
	}
	a, ok := g.Geo.Affine()
	if !ok {
		return g.Geo
	}
	x0 := a[0] + float64(win.Min.X)*a[1] + float64(win.Min.Y)*a[2]
	y0 := a[3] + float64(win.Min.X)*a[4] + float64(win.Min.Y)*a[5]
	out := *g.Geo
	if len(out.Transformation) >= 16 {
		out.Transformation = append([]float64(nil), out.Transformation...)
		out.Transformation[3], out.Transformation[7] = x0, y0
		return &out
	}
	out.Tiepoints = []float64{0, 0, 0, x0, y0, 0}
	return &out
}

// noBand is the error for a role the scene has no band of, naming those
// it has.
func (s *Scene) noBand(role string) error {
	have := strings.Join(s.RoleNames(), ", ")
	if have == "" {
		have = "none"
	}
	return fmt.Errorf("%s: the scene has no %s band (it has %s)", s.Path, role, have)
}
