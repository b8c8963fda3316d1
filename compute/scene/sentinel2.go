package scene

import (
	"fmt"
	"math"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"

	"canopy/compute"
	"canopy/native/openjp2"
)

// s2Roles maps Sentinel-2 bands to roles.
var s2Roles = map[string]string{
	"B02": "blue", "B03": "green", "B04": "red", "B05": "rededge1", "B06": "rededge2",
	"B07": "rededge3", "B08": "nir", "B8A": "nir2", "B11": "swir1", "B12": "swir2",
}

// s2BandIDs are the band_id numbers of MTD_MSIL2A.xml when its
// Spectral_Information list does not say.
var s2BandIDs = []string{"B01", "B02", "B03", "B04", "B05", "B06", "B07", "B08", "B8A", "B09", "B10", "B11", "B12"}

// SCLMasked are the scene classification classes masked by default: 0 no
// data, 1 saturated or defective, 3 cloud shadows, 8 cloud medium
// probability, 9 cloud high probability, 10 thin cirrus.
var SCLMasked = []int{0, 1, 3, 8, 9, 10}

// sclBuffered are the SCL classes a mask buffer grows.
var sclBuffered = []int{3, 8, 9, 10}

var (
	s2Name    = regexp.MustCompile(`(S2[A-D])_MSIL2A_(\d{8}T\d{6})_N(\d{2})(\d{2})_R\d{3}_T(\d{2}[A-Z]{3})_`)
	s2File    = regexp.MustCompile(`_(B\d[\dA]|SCL)_(\d{2})m$`)
	s2TileID  = regexp.MustCompile(`_T(\d{2}[A-Z]{3})_`)
	epsgCode  = regexp.MustCompile(`(?i)EPSG:?\s*(\d+)`)
	s2Baselin = regexp.MustCompile(`^\d{2}\.\d{2}$`)
)

// readSentinel2 reads a Sentinel-2 L2A product from MTD_MSIL2A.xml and the
// granule's MTD_TL.xml, and checks each band file's JPEG 2000 header.
func (s *Scene) readSentinel2() error {
	c := s.c
	mtds := find(c, "MTD_MSIL2A.xml")
	if len(mtds) > 1 {
		return fmt.Errorf("%s: %d MTD_MSIL2A.xml files: one product at a time", s.Path, len(mtds))
	}
	mtd := mtds[0]
	root := path.Dir(mtd)
	if root == "." {
		root = ""
	}
	b, err := readSmall(c, mtd, maxXML)
	if err != nil {
		return err
	}
	x, err := parseXML(b, c.where(mtd))
	if err != nil {
		return err
	}
	if !strings.Contains(x.name, "Level-2A") || x.first("Product_Info") == nil {
		return fmt.Errorf("%s: not a Level-2A product metadata file (root element %s)", c.where(mtd), x.name)
	}
	s.Kind = KindSentinel2L2A
	s.Product = strings.TrimSuffix(x.value("PRODUCT_URI"), ".SAFE")
	if s.Product == "" {
		s.Product = strings.TrimSuffix(path.Base(root), ".SAFE")
	}
	s.Sensor = x.value("SPACECRAFT_NAME")
	m := s2Name.FindStringSubmatch(s.Product + "_")
	if s.Sensor == "" && m != nil {
		s.Sensor = "Sentinel-2" + m[1][2:]
	}
	if m != nil {
		s.Tile = m[5]
	}
	s.Baseline = x.value("PROCESSING_BASELINE")
	if !s2Baselin.MatchString(s.Baseline) {
		if m == nil {
			return fmt.Errorf("%s: no PROCESSING_BASELINE and no baseline in the product name", c.where(mtd))
		}
		s.Baseline = m[3] + "." + m[4]
		s.Notes = append(s.Notes, "processing baseline "+s.Baseline+" taken from the product name")
	}
	baseline, _ := strconv.ParseFloat(s.Baseline, 64)
	if t := x.value("PRODUCT_START_TIME"); t != "" {
		s.Date, _ = time.Parse(time.RFC3339Nano, t)
	}
	if v, err := strconv.ParseFloat(x.value("Cloud_Coverage_Assessment"), 64); err == nil {
		s.CloudShare = v
	} else if v, err := strconv.ParseFloat(x.value("CLOUDY_PIXEL_PERCENTAGE"), 64); err == nil {
		s.CloudShare = v
	}

	// Radiometry: (DN + BOA_ADD_OFFSET) / BOA_QUANTIFICATION_VALUE.
	var quant float64
	for _, n := range x.first("QUANTIFICATION_VALUES_LIST").kids {
		if strings.HasSuffix(n.name, "BOA_QUANTIFICATION_VALUE") {
			quant, err = strconv.ParseFloat(n.text, 64)
			if err != nil || !(quant > 0) {
				return fmt.Errorf("%s: BOA_QUANTIFICATION_VALUE %q is not a positive number", c.where(mtd), n.text)
			}
		}
	}
	if quant == 0 {
		return fmt.Errorf("%s: no BOA_QUANTIFICATION_VALUE: not a valid Level-2A metadata file", c.where(mtd))
	}
	ids := map[string]string{}
	for _, n := range x.all("Spectral_Information") {
		if n.attr["bandId"] != "" && n.attr["physicalBand"] != "" {
			ids[n.attr["bandId"]] = n.attr["physicalBand"]
		}
	}
	if len(ids) == 0 {
		for i, n := range s2BandIDs {
			ids[strconv.Itoa(i)] = n
		}
	}
	offsets := map[string]float64{}
	for _, n := range x.all("BOA_ADD_OFFSET") {
		v, err := strconv.ParseFloat(n.text, 64)
		name := ids[n.attr["band_id"]]
		if err != nil || name == "" {
			return fmt.Errorf("%s: BOA_ADD_OFFSET band_id %q value %q is not understood", c.where(mtd), n.attr["band_id"], n.text)
		}
		offsets[normBand(name)] = v
	}
	if len(offsets) == 0 && baseline >= 6 {
		return fmt.Errorf("%s: processing baseline %s is newer than those Canopy knows (up to 05.xx) and the file gives no BOA_ADD_OFFSET: expected BOA_ADD_OFFSET_VALUES_LIST, the reflectance cannot be known without it", c.where(mtd), s.Baseline)
	}
	assumeOffset := len(offsets) == 0 && baseline >= 4
	if assumeOffset {
		s.Notes = append(s.Notes, fmt.Sprintf("MTD_MSIL2A.xml gives no BOA_ADD_OFFSET although the baseline is %s (04.00 or later): using -1000, as ESA documents for these baselines", s.Baseline))
	}
	nodata, sat := 0.0, 65535.0
	for _, n := range x.all("Special_Values") {
		v, err := strconv.ParseFloat(n.value("SPECIAL_VALUE_INDEX"), 64)
		if err != nil {
			continue
		}
		switch n.value("SPECIAL_VALUE_TEXT") {
		case "NODATA":
			nodata = v
		case "SATURATED":
			sat = v
		}
	}

	// Geocoding from the granule's MTD_TL.xml.
	tls := find(c, "MTD_TL.xml")
	if len(tls) == 0 {
		return fmt.Errorf("%s: no GRANULE/*/MTD_TL.xml (the tile's geocoding)", s.Path)
	}
	if len(tls) > 1 {
		return fmt.Errorf("%s: %d granules: Canopy reads single-tile products", s.Path, len(tls))
	}
	b, err = readSmall(c, tls[0], maxXML)
	if err != nil {
		return err
	}
	tl, err := parseXML(b, c.where(tls[0]))
	if err != nil {
		return err
	}
	gc := tl.first("Tile_Geocoding")
	if gc == nil {
		return fmt.Errorf("%s: no Tile_Geocoding", c.where(tls[0]))
	}
	if mm := epsgCode.FindStringSubmatch(gc.value("HORIZONTAL_CS_CODE")); mm != nil {
		s.CRS.EPSG, _ = strconv.Atoi(mm[1])
	} else {
		return fmt.Errorf("%s: HORIZONTAL_CS_CODE %q is not an EPSG code", c.where(tls[0]), gc.value("HORIZONTAL_CS_CODE"))
	}
	s.CRS.Name = crsName(s.CRS.EPSG)
	if s.CRS.Name == "" {
		s.CRS.Name = gc.value("HORIZONTAL_CS_NAME")
	}
	if t, err := time.Parse(time.RFC3339Nano, tl.value("SENSING_TIME")); err == nil {
		s.Date = t
	}
	if s.Tile == "" {
		if mm := s2TileID.FindStringSubmatch(tl.value("TILE_ID") + "_"); mm != nil {
			s.Tile = mm[1]
		}
	}
	type geo struct {
		x0, y0, dx, dy float64
		w, h           int
	}
	geos := map[int]*geo{}
	for _, n := range gc.all("Size") {
		r, _ := strconv.Atoi(n.attr["resolution"])
		g := geos[r]
		if g == nil {
			g = &geo{}
			geos[r] = g
		}
		g.w, _ = strconv.Atoi(n.value("NCOLS"))
		g.h, _ = strconv.Atoi(n.value("NROWS"))
	}
	for _, n := range gc.all("Geoposition") {
		r, _ := strconv.Atoi(n.attr["resolution"])
		g := geos[r]
		if g == nil {
			continue
		}
		var errs [4]error
		g.x0, errs[0] = strconv.ParseFloat(n.value("ULX"), 64)
		g.y0, errs[1] = strconv.ParseFloat(n.value("ULY"), 64)
		g.dx, errs[2] = strconv.ParseFloat(n.value("XDIM"), 64)
		g.dy, errs[3] = strconv.ParseFloat(n.value("YDIM"), 64)
		for _, e := range errs {
			if e != nil {
				return fmt.Errorf("%s: Geoposition at %d m: %v", c.where(tls[0]), r, e)
			}
		}
		if g.dx != float64(r) || g.dy != -float64(r) {
			return fmt.Errorf("%s: Geoposition at %d m has pixel size %g x %g", c.where(tls[0]), r, g.dx, g.dy)
		}
	}

	// Band files: IMAGE_FILE entries (without extension) or, failing
	// that, the IMG_DATA folders; the finest resolution of each band. The
	// file is the entry with the extension of the granule's imageFormat
	// (JPEG2000: .jp2; GeoTIFF: .tif, as some archives deliver since
	// 2022), or with the other one when only that one is there.
	found := map[string]string{} // lower-case name -> name
	for _, n := range c.names() {
		found[strings.ToLower(n)] = n
	}
	exts := []string{".jp2", ".tif", ".TIF", ".tiff"}
	if f := x.first("Granule"); f != nil && strings.Contains(strings.ToLower(f.attr["imageFormat"]), "tif") {
		exts = []string{".tif", ".TIF", ".tiff", ".jp2"}
	}
	type entry struct {
		base, name string
		res        int
	}
	var entries []entry
	for _, n := range x.all("IMAGE_FILE") {
		entries = append(entries, entry{base: path.Join(root, n.text)})
	}
	if len(entries) == 0 {
		for _, f := range append(find(c, "*_*m.jp2"), find(c, "*_*m.tif")...) {
			entries = append(entries, entry{base: strings.TrimSuffix(f, path.Ext(f))})
		}
	}
	// The finest listed resolution of each band and of SCL.
	finestOf := map[string]entry{}
	for _, e := range entries {
		mm := s2File.FindStringSubmatch(e.base)
		if mm == nil {
			continue
		}
		e.name = mm[1]
		role := s2Roles[e.name]
		if e.name == "SCL" {
			role = "scl"
		}
		if role == "" {
			continue
		}
		e.res, _ = strconv.Atoi(mm[2])
		if old, ok := finestOf[role]; !ok || e.res < old.res {
			finestOf[role] = e
		}
	}
	s.Bands = map[string]*Source{}
	var scl *Source
	for _, role := range append(append([]string{}, Roles...), "scl") {
		e, ok := finestOf[role]
		if !ok {
			continue
		}
		f := ""
		for _, ext := range exts {
			if n, ok := found[strings.ToLower(e.base+ext)]; ok {
				f = n
				break
			}
		}
		if f == "" {
			return fmt.Errorf("%s: band %s is listed in MTD_MSIL2A.xml but %s is missing", s.Path, e.name, c.where(e.base+exts[0]))
		}
		r := e.res
		g := geos[r]
		if g == nil || g.dx == 0 {
			return fmt.Errorf("%s: no Size and Geoposition at %d m for %s", c.where(tls[0]), r, e.name)
		}
		src := &Source{Role: role, Name: e.name, File: f, Band: 1, Format: "jp2", Resolution: float64(r),
			Width: g.w, Height: g.h, QABit: -1, geo: northUp(s.CRS.EPSG, g.x0, g.y0, float64(r))}
		if strings.EqualFold(path.Ext(f), ".jp2") {
			if err := s.checkJP2(src); err != nil {
				return err
			}
		} else if err := s.checkS2TIFF(src, c.where(tls[0])); err != nil {
			return err
		}
		if role == "scl" {
			src.Radiometry = compute.Identity()
			scl = src
			continue
		}
		add := offsets[e.name]
		if _, ok := offsets[e.name]; !ok && assumeOffset {
			add = -1000
		} else if !ok && len(offsets) > 0 {
			return fmt.Errorf("%s: BOA_ADD_OFFSET lists no offset for %s", c.where(mtd), e.name)
		}
		src.Radiometry = compute.Radiometry{Add: add, Scale: 1 / quant}
		src.NoData, src.HasNoData = nodata, true
		src.Saturated, src.HasSaturated = sat, true
		s.Bands[role] = src
	}
	if len(s.Bands) == 0 {
		return fmt.Errorf("%s: no reflectance band file found (expected GRANULE/*/IMG_DATA/R10m/*_B04_10m.jp2 and the like)", s.Path)
	}
	finest := math.Inf(1)
	for _, b := range s.Bands {
		finest = math.Min(finest, b.Resolution)
	}
	g := geos[int(finest)]
	s.Grid = Grid{Width: g.w, Height: g.h, Resolution: finest, Geo: northUp(s.CRS.EPSG, g.x0, g.y0, finest)}
	if scl != nil {
		s.Mask = Mask{Kind: "scl", Source: scl, Classes: SCLMasked, Buffered: sclBuffered,
			Description: fmt.Sprintf("SCL classes 0 no data, 1 saturated or defective, 3 cloud shadow, 8-9 cloud medium and high probability, 10 thin cirrus; DN %g (saturated)", sat)}
	} else {
		s.Mask = Mask{Description: fmt.Sprintf("no SCL band: only saturated pixels (DN %g)", sat)}
		s.Notes = append(s.Notes, "the product has no SCL band: clouds are not masked")
	}
	return nil
}

// normBand writes band names as MTD_MSIL2A.xml's file names do: B1 -> B01.
func normBand(n string) string {
	if len(n) == 2 && n[0] == 'B' {
		return "B0" + n[1:]
	}
	return n
}

// checkS2TIFF reads a GeoTIFF band file's header (products whose
// MTD_MSIL2A.xml declares imageFormat GeoTIFF) and checks its size and
// georeferencing against MTD_TL.xml's; it sets the stored type.
func (s *Scene) checkS2TIFF(src *Source, tl string) error {
	want := *src
	src.Format = "tiff"
	src.geo = nil
	if err := s.checkTIFF(src); err != nil {
		return err
	}
	if src.Width != want.Width || src.Height != want.Height {
		return fmt.Errorf("%s: %s is %dx%d but %s says %dx%d at %g m", s.c.where(src.File), src.Name, src.Width, src.Height, tl, want.Width, want.Height, want.Resolution)
	}
	if a, ok := src.geo.Affine(); ok {
		w, _ := want.geo.Affine()
		if math.Abs(a[0]-w[0]) > 1e-6 || math.Abs(a[3]-w[3]) > 1e-6 || math.Abs(a[1]-w[1]) > 1e-9 || math.Abs(a[5]-w[5]) > 1e-9 {
			return fmt.Errorf("%s: %s's georeferencing (corner %.3f, %.3f, pixel %g m) is not %s's (corner %.3f, %.3f, pixel %g m)", s.c.where(src.File), src.Name, a[0], a[3], a[1], tl, w[0], w[3], w[1])
		}
	}
	if e := epsgOf(src.geo); e != 0 && e != s.CRS.EPSG {
		return fmt.Errorf("%s: %s is in EPSG:%d but %s says EPSG:%d", s.c.where(src.File), src.Name, e, tl, s.CRS.EPSG)
	}
	src.geo = want.geo
	if src.Type != compute.U16 && src.Type != compute.U8 {
		return fmt.Errorf("%s: %s is %s, expected unsigned 8 or 16-bit integers", s.c.where(src.File), src.Name, src.Type)
	}
	return nil
}

// checkJP2 reads a band file's JPEG 2000 header and checks it against the
// metadata; it sets the stored type.
func (s *Scene) checkJP2(src *Source) error {
	r, n, err := s.c.open(src.File)
	if err != nil {
		return err
	}
	d, err := openjp2.Open(r, n, s.c.where(src.File))
	if err != nil {
		return err
	}
	in := d.Info()
	if in.Width != src.Width || in.Height != src.Height {
		return fmt.Errorf("%s: %s is %dx%d but MTD_TL.xml says %dx%d at %g m", s.c.where(src.File), src.Name, in.Width, in.Height, src.Width, src.Height, src.Resolution)
	}
	if in.Components != 1 {
		return fmt.Errorf("%s: %s has %d components, expected 1", s.c.where(src.File), src.Name, in.Components)
	}
	src.Type = jp2Type(in)
	return nil
}
