package scene

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path"
	"strconv"
	"strings"
	"time"

	"canopy/compute"
	"canopy/compute/geotiff"
)

// Landsat Collection 2 Level-2 surface reflectance: SR = DN * 2.75e-5 - 0.2
// (the MTL's REFLECTANCE_MULT_BAND_n and REFLECTANCE_ADD_BAND_n).
const (
	landsatScale  = 2.75e-5
	landsatOffset = -0.2
)

// landsatRoles are the SR band numbers of each role, by spacecraft.
var (
	landsatOLI = map[int]string{2: "blue", 3: "green", 4: "red", 5: "nir", 6: "swir1", 7: "swir2"}
	landsatTM  = map[int]string{1: "blue", 2: "green", 3: "red", 4: "nir", 5: "swir1", 7: "swir2"}
)

// QAPixelMasked are the QA_PIXEL bits masked by default on Landsat 8 and 9
// (OLI): 0 fill, 1 dilated cloud, 2 cirrus, 3 cloud, 4 cloud shadow.
var QAPixelMasked = []int{0, 1, 2, 3, 4}

var qaBuffered = qaBufferedOf(QAPixelMasked)

// mtl is a Landsat MTL: every value under its innermost group
// ("PRODUCT_CONTENTS.FILE_NAME_BAND_4"), and under its bare key the first
// value seen in document order outside the Level-1 groups. Every real
// Level-2 MTL repeats PROCESSING_LEVEL, LANDSAT_PRODUCT_ID and the file
// names of its Level-1 parent in LEVEL1_PROCESSING_RECORD; those must
// never stand for the Level-2 product's own.
type mtl struct {
	q map[string]string // GROUP.KEY
	u map[string]string // KEY, first seen outside LEVEL1_* groups
}

func (m *mtl) set(group, key, v string) {
	gk := group + "." + key
	if _, ok := m.q[gk]; !ok {
		m.q[gk] = v
	}
	if strings.HasPrefix(group, "LEVEL1_") {
		return
	}
	if _, ok := m.u[key]; !ok {
		m.u[key] = v
	}
}

// get is key from the first of groups that has it, else the key's first
// value outside the Level-1 groups ("" when none).
func (m *mtl) get(key string, groups ...string) string {
	for _, g := range groups {
		if v, ok := m.q[g+"."+key]; ok {
			return v
		}
	}
	return m.u[key]
}

// The MTL groups a Collection 2 Level-2 product's values are read from.
const (
	mtlContents   = "PRODUCT_CONTENTS"
	mtlImage      = "IMAGE_ATTRIBUTES"
	mtlProjection = "PROJECTION_ATTRIBUTES"
	mtlSR         = "LEVEL2_SURFACE_REFLECTANCE_PARAMETERS"
)

// parseMTL reads an MTL in any of its three forms (.txt ODL, .json, .xml),
// keeping each value's group; all three give the same values, read in
// document order (the JSON's too, so that which of two equal keys wins
// never depends on a map's order).
func parseMTL(b []byte, name, where string) (*mtl, error) {
	m := &mtl{q: map[string]string{}, u: map[string]string{}}
	switch strings.ToLower(path.Ext(name)) {
	case ".json":
		if err := walkJSON(b, m); err != nil {
			return nil, fmt.Errorf("%s: malformed JSON: %v", where, err)
		}
	case ".xml":
		x, err := parseXML(b, where)
		if err != nil {
			return nil, err
		}
		var walk func(n *node, group string)
		walk = func(n *node, group string) {
			for _, k := range n.kids {
				if len(k.kids) > 0 {
					walk(k, k.name)
				} else {
					m.set(group, k.name, k.text)
				}
			}
		}
		walk(x, x.name)
	default:
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		var groups []string
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			k, v, ok := strings.Cut(line, "=")
			if !ok {
				continue
			}
			k, v = strings.TrimSpace(k), strings.Trim(strings.TrimSpace(v), `"`)
			switch k {
			case "GROUP":
				if len(groups) >= 64 {
					return nil, fmt.Errorf("%s: groups nested more than 64 deep", where)
				}
				groups = append(groups, v)
			case "END_GROUP":
				if len(groups) > 0 {
					groups = groups[:len(groups)-1]
				}
			default:
				g := ""
				if len(groups) > 0 {
					g = groups[len(groups)-1]
				}
				m.set(g, k, v)
			}
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("%s: %v", where, err)
		}
	}
	if m.get("LANDSAT_PRODUCT_ID", mtlContents) == "" && m.get("SPACECRAFT_ID", mtlImage) == "" {
		return nil, fmt.Errorf("%s: not a Landsat MTL (no LANDSAT_PRODUCT_ID or SPACECRAFT_ID)", where)
	}
	return m, nil
}

// walkJSON reads an MTL.json into m in document order: objects are
// groups, strings and numbers are values (arrays are skipped).
func walkJSON(b []byte, m *mtl) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	t, err := d.Token()
	if err != nil {
		return err
	}
	if t != json.Delim('{') {
		return errors.New("not a JSON object")
	}
	var object func(group string, depth int) error
	object = func(group string, depth int) error {
		for d.More() {
			t, err := d.Token()
			if err != nil {
				return err
			}
			key, _ := t.(string)
			v, err := d.Token()
			if err != nil {
				return err
			}
			switch x := v.(type) {
			case string:
				m.set(group, key, x)
			case json.Number:
				m.set(group, key, x.String())
			case json.Delim:
				if depth >= 64 {
					return errors.New("nested more than 64 deep")
				}
				if x == '{' {
					if err := object(key, depth+1); err != nil {
						return err
					}
					continue
				}
				for n := 1; n > 0; { // skip an array
					t, err := d.Token()
					if err != nil {
						return err
					}
					switch t {
					case json.Delim('['), json.Delim('{'):
						n++
					case json.Delim(']'), json.Delim('}'):
						n--
					}
				}
			}
		}
		_, err := d.Token() // the closing brace
		return err
	}
	return object("", 0)
}

// readLandsat reads a Landsat Collection 2 Level-2 product from its MTL
// and checks each band's GeoTIFF header against it.
func (s *Scene) readLandsat() error {
	c := s.c
	var mtlName string
	// Any of the three forms gives the same values; the ODL text first,
	// as the one every product carries.
	for _, pat := range []string{"*_MTL.txt", "*_MTL.xml", "*_MTL.json"} {
		if f := find(c, pat); len(f) > 0 {
			mtlName = f[0]
			break
		}
	}
	b, err := readSmall(c, mtlName, maxXML)
	if err != nil {
		return err
	}
	where := c.where(mtlName)
	m, err := parseMTL(b, mtlName, where)
	if err != nil {
		return err
	}
	dir := path.Dir(mtlName)
	s.Kind = KindLandsatC2L2
	s.Product = m.get("LANDSAT_PRODUCT_ID", mtlContents)
	lvl := m.get("PROCESSING_LEVEL", mtlContents)
	switch {
	case strings.HasPrefix(lvl, "L2"):
	case lvl == "":
		return fmt.Errorf("%s: no PROCESSING_LEVEL in PRODUCT_CONTENTS: expected a Collection 2 Level-2 MTL (L2SP or L2SR)", where)
	default:
		return fmt.Errorf("%s: processing level %s: a Level-1 product; Canopy reads Level-2 surface reflectance (L2SP, L2SR)", where, lvl)
	}
	craft := m.get("SPACECRAFT_ID", mtlImage)
	num, err := strconv.Atoi(strings.TrimPrefix(strings.ToUpper(craft), "LANDSAT_"))
	if err != nil {
		return fmt.Errorf("%s: SPACECRAFT_ID %q is not a Landsat", where, craft)
	}
	s.Sensor = fmt.Sprintf("Landsat %d", num)
	var roles map[int]string
	bits := QAPixelMasked
	switch num {
	case 8, 9:
		roles = landsatOLI
	case 4, 5, 7:
		roles, bits = landsatTM, qaPixelTM
	default:
		return fmt.Errorf("%s: Landsat %d has no Collection 2 surface reflectance", where, num)
	}
	p, _ := strconv.Atoi(m.get("WRS_PATH", mtlImage))
	r, _ := strconv.Atoi(m.get("WRS_ROW", mtlImage))
	if p > 0 {
		s.PathRow = fmt.Sprintf("%03d%03d", p, r)
	}
	if d := m.get("DATE_ACQUIRED", mtlImage); d != "" {
		t := strings.TrimSuffix(m.get("SCENE_CENTER_TIME", mtlImage), "Z")
		if dt, err := time.Parse("2006-01-02T15:04:05.999999999", d+"T"+t); err == nil && t != "" {
			s.Date = dt
		} else if dt, err := time.Parse("2006-01-02", d); err == nil {
			s.Date = dt
		}
	}
	if v, err := strconv.ParseFloat(m.get("CLOUD_COVER", mtlImage), 64); err == nil && v >= 0 {
		s.CloudShare = v
	}
	zone, _ := strconv.Atoi(m.get("UTM_ZONE", mtlProjection))

	s.Bands = map[string]*Source{}
	missingFactors := false
	for n := 1; n <= 7; n++ {
		role := roles[n]
		if role == "" {
			continue
		}
		file := m.get("FILE_NAME_BAND_"+strconv.Itoa(n), mtlContents)
		if file == "" {
			base := path.Base(mtlName)
			file = base[:strings.LastIndex(base, "_MTL")] + fmt.Sprintf("_SR_B%d.TIF", n)
		}
		src := &Source{Role: role, Name: fmt.Sprintf("SR_B%d", n), File: path.Join(dir, file), Band: 1, Format: "tiff", QABit: n - 1}
		mult, err1 := strconv.ParseFloat(m.get("REFLECTANCE_MULT_BAND_"+strconv.Itoa(n), mtlSR), 64)
		add, err2 := strconv.ParseFloat(m.get("REFLECTANCE_ADD_BAND_"+strconv.Itoa(n), mtlSR), 64)
		if _, ok := m.q[mtlSR+".REFLECTANCE_MULT_BAND_"+strconv.Itoa(n)]; !ok || err1 != nil || err2 != nil || mult == 0 {
			mult, add, missingFactors = landsatScale, landsatOffset, true
		}
		src.Radiometry = compute.Radiometry{Scale: mult, Offset: add}
		src.NoData, src.HasNoData = 0, true
		if err := s.checkTIFF(src); err != nil {
			return err
		}
		s.Bands[role] = src
	}
	if missingFactors {
		s.Notes = append(s.Notes, "the MTL lacks REFLECTANCE_MULT/ADD in LEVEL2_SURFACE_REFLECTANCE_PARAMETERS for some bands: using Collection 2's 2.75e-5 and -0.2")
	}
	var grid *Source
	for _, role := range Roles {
		if b := s.Bands[role]; b != nil {
			if grid == nil {
				grid = b
			} else if b.Width != grid.Width || b.Height != grid.Height || !b.geo.SameGrid(grid.geo) {
				return fmt.Errorf("%s: %s and %s are not on the same grid", s.Path, b.File, grid.File)
			}
		}
	}
	if err := checkMTLGrid(m, grid, c.where(grid.File), where); err != nil {
		return err
	}
	s.Grid = Grid{Width: grid.Width, Height: grid.Height, Resolution: grid.Resolution, Geo: grid.geo}
	s.CRS.EPSG = epsgOf(grid.geo)
	if s.CRS.EPSG == 0 && zone > 0 {
		s.CRS.EPSG = 32600 + zone
	}
	if zone > 0 && s.CRS.EPSG != 32600+zone && s.CRS.EPSG != 32700+zone {
		s.Notes = append(s.Notes, fmt.Sprintf("the GeoTIFFs say EPSG:%d but the MTL says UTM zone %d", s.CRS.EPSG, zone))
	}
	s.CRS.Name = crsName(s.CRS.EPSG)

	s.Mask = Mask{Description: "no QA_PIXEL band: nothing masked"}
	if f := m.get("FILE_NAME_QUALITY_L1_PIXEL", mtlContents); f != "" {
		qa := &Source{Role: "qa_pixel", Name: "QA_PIXEL", File: path.Join(dir, f), Band: 1, Format: "tiff", Radiometry: compute.Identity(), QABit: -1}
		if err := s.checkTIFF(qa); err != nil {
			return err
		}
		if qa.Width != s.Grid.Width || qa.Height != s.Grid.Height {
			return fmt.Errorf("%s: QA_PIXEL is %dx%d, the bands %dx%d", c.where(qa.File), qa.Width, qa.Height, s.Grid.Width, s.Grid.Height)
		}
		s.Mask = Mask{Kind: "qa_pixel", Source: qa, Bits: bits, Buffered: qaBufferedOf(bits), Description: qaDescription(bits)}
	}
	if f := m.get("FILE_NAME_QUALITY_L1_RADIOMETRIC_SATURATION", mtlContents); f != "" {
		rs := &Source{Role: "qa_radsat", Name: "QA_RADSAT", File: path.Join(dir, f), Band: 1, Format: "tiff", Radiometry: compute.Identity(), QABit: -1}
		if err := s.checkTIFF(rs); err != nil {
			return err
		}
		if rs.Width != s.Grid.Width || rs.Height != s.Grid.Height {
			return fmt.Errorf("%s: QA_RADSAT is %dx%d, the bands %dx%d", c.where(rs.File), rs.Width, rs.Height, s.Grid.Width, s.Grid.Height)
		}
		s.Mask.Saturation = rs
		s.Mask.Description += "; QA_RADSAT saturation of the bands used"
	}
	return nil
}

// checkMTLGrid checks a band's GeoTIFF against the grid the MTL declares
// in PROJECTION_ATTRIBUTES (where it does): REFLECTIVE_SAMPLES x
// REFLECTIVE_LINES pixels of GRID_CELL_SIZE_REFLECTIVE metres, the
// upper-left pixel's centre at CORNER_UL_PROJECTION_X/Y_PRODUCT.
func checkMTLGrid(m *mtl, b *Source, file, where string) error {
	w, errW := strconv.Atoi(m.get("REFLECTIVE_SAMPLES", mtlProjection))
	h, errH := strconv.Atoi(m.get("REFLECTIVE_LINES", mtlProjection))
	if errW == nil && errH == nil && (w != b.Width || h != b.Height) {
		return fmt.Errorf("%s: %s is %dx%d pixels but %s declares %dx%d (REFLECTIVE_SAMPLES x REFLECTIVE_LINES)", file, b.Name, b.Width, b.Height, where, w, h)
	}
	res, errR := strconv.ParseFloat(m.get("GRID_CELL_SIZE_REFLECTIVE", mtlProjection), 64)
	if errR == nil && math.Abs(res-b.Resolution) > 1e-6*res {
		return fmt.Errorf("%s: %s has %g m pixels but %s declares %g m (GRID_CELL_SIZE_REFLECTIVE)", file, b.Name, b.Resolution, where, res)
	}
	x, errX := strconv.ParseFloat(m.get("CORNER_UL_PROJECTION_X_PRODUCT", mtlProjection), 64)
	y, errY := strconv.ParseFloat(m.get("CORNER_UL_PROJECTION_Y_PRODUCT", mtlProjection), 64)
	a, ok := b.geo.Affine()
	if errX == nil && errY == nil && ok {
		cx, cy := a[0]+a[1]/2, a[3]+a[5]/2
		if math.Abs(cx-x) > 1e-3 || math.Abs(cy-y) > 1e-3 {
			return fmt.Errorf("%s: %s's upper-left pixel centre is at (%.3f, %.3f) but %s declares (%.3f, %.3f) (CORNER_UL_PROJECTION_X/Y_PRODUCT)", file, b.Name, cx, cy, where, x, y)
		}
	}
	return nil
}

// qaPixelTM are the QA_PIXEL bits masked for Landsat 4-7 (TM, ETM+):
// bit 2 (cirrus) is OLI's only and unused on these sensors.
var qaPixelTM = []int{0, 1, 3, 4}

// qaBufferedOf is the cloud and shadow part of the masked bits (all but
// bit 0, fill).
func qaBufferedOf(bits []int) []int {
	var out []int
	for _, b := range bits {
		if b != 0 {
			out = append(out, b)
		}
	}
	return out
}

// qaDescription says which QA_PIXEL bits mask.
func qaDescription(bits []int) string {
	names := map[int]string{0: "0 fill", 1: "1 dilated cloud", 2: "2 cirrus", 3: "3 cloud", 4: "4 cloud shadow"}
	var parts []string
	for _, b := range bits {
		parts = append(parts, names[b])
	}
	return "QA_PIXEL bits " + strings.Join(parts, ", ")
}

// checkTIFF reads a band file's GeoTIFF header: size, type, grid.
func (s *Scene) checkTIFF(src *Source) error {
	r, n, err := s.c.open(src.File)
	if err != nil {
		return fmt.Errorf("%s: band %s: %v", s.Path, src.Name, err)
	}
	f, err := geotiff.NewReader(r, n, s.c.where(src.File))
	if err != nil {
		return err
	}
	if src.Band < 1 || src.Band > f.Bands() {
		return fmt.Errorf("%s: band %d does not exist (the file has %d)", s.c.where(src.File), src.Band, f.Bands())
	}
	t, _ := f.DataType()
	src.Type, src.Width, src.Height, src.geo = t, f.Width(), f.Height(), f.Geo()
	if a, ok := src.geo.Affine(); ok && src.Resolution == 0 {
		src.Resolution = math.Abs(a[1])
	}
	if nd, ok := f.NoData(); ok && !src.HasNoData {
		src.NoData, src.HasNoData = nd, true
	}
	return nil
}
