package scene

import (
	"bufio"
	"bytes"
	"encoding/json"
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

// QAPixelMasked are the QA_PIXEL bits masked by default: 0 fill, 1 dilated
// cloud, 2 cirrus, 3 cloud, 4 cloud shadow.
var QAPixelMasked = []int{0, 1, 2, 3, 4}

var qaBuffered = []int{1, 2, 3, 4}

// mtl is a Landsat MTL flattened to "GROUP.KEY" and "KEY" (first seen).
type mtl map[string]string

func (m mtl) set(group, key, v string) {
	if group != "" {
		m[group+"."+key] = v
	}
	if _, ok := m[key]; !ok {
		m[key] = v
	}
}

// parseMTL reads an MTL in any of its three forms (.txt ODL, .json, .xml).
func parseMTL(b []byte, name, where string) (mtl, error) {
	m := mtl{}
	switch strings.ToLower(path.Ext(name)) {
	case ".json":
		var root map[string]any
		if err := json.Unmarshal(b, &root); err != nil {
			return nil, fmt.Errorf("%s: malformed JSON: %v", where, err)
		}
		var walk func(group string, v map[string]any, depth int)
		walk = func(group string, v map[string]any, depth int) {
			for k, x := range v {
				switch t := x.(type) {
				case map[string]any:
					if depth < 8 {
						walk(k, t, depth+1)
					}
				case string:
					m.set(group, k, t)
				case float64:
					m.set(group, k, strconv.FormatFloat(t, 'g', -1, 64))
				}
			}
		}
		walk("", root, 0)
	case ".xml":
		x, err := parseXML(b, where)
		if err != nil {
			return nil, err
		}
		for _, g := range x.kids {
			for _, k := range g.kids {
				m.set(g.name, k.name, k.text)
			}
		}
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
	if m["LANDSAT_PRODUCT_ID"] == "" && m["SPACECRAFT_ID"] == "" {
		return nil, fmt.Errorf("%s: not a Landsat MTL (no LANDSAT_PRODUCT_ID or SPACECRAFT_ID)", where)
	}
	return m, nil
}

// readLandsat reads a Landsat Collection 2 Level-2 product from its MTL
// and checks each band's GeoTIFF header.
func (s *Scene) readLandsat() error {
	c := s.c
	var mtlName string
	for _, pat := range []string{"*_MTL.json", "*_MTL.xml", "*_MTL.txt"} {
		if f := find(c, pat); len(f) > 0 {
			mtlName = f[0]
			break
		}
	}
	b, err := readSmall(c, mtlName, maxXML)
	if err != nil {
		return err
	}
	m, err := parseMTL(b, mtlName, c.where(mtlName))
	if err != nil {
		return err
	}
	dir := path.Dir(mtlName)
	s.Kind = KindLandsatC2L2
	s.Product = m["LANDSAT_PRODUCT_ID"]
	if lvl := m["PROCESSING_LEVEL"]; lvl != "" && !strings.HasPrefix(lvl, "L2") {
		return fmt.Errorf("%s: processing level %s: Canopy reads Level-2 surface reflectance (L2SP, L2SR)", c.where(mtlName), lvl)
	}
	craft := m["SPACECRAFT_ID"]
	num, err := strconv.Atoi(strings.TrimPrefix(strings.ToUpper(craft), "LANDSAT_"))
	if err != nil {
		return fmt.Errorf("%s: SPACECRAFT_ID %q is not a Landsat", c.where(mtlName), craft)
	}
	s.Sensor = fmt.Sprintf("Landsat %d", num)
	var roles map[int]string
	switch num {
	case 8, 9:
		roles = landsatOLI
	case 4, 5, 7:
		roles = landsatTM
	default:
		return fmt.Errorf("%s: Landsat %d has no Collection 2 surface reflectance", c.where(mtlName), num)
	}
	p, _ := strconv.Atoi(m["WRS_PATH"])
	r, _ := strconv.Atoi(m["WRS_ROW"])
	if p > 0 {
		s.PathRow = fmt.Sprintf("%03d%03d", p, r)
	}
	if d := m["DATE_ACQUIRED"]; d != "" {
		t := strings.TrimSuffix(m["SCENE_CENTER_TIME"], "Z")
		if dt, err := time.Parse("2006-01-02T15:04:05.999999999", d+"T"+t); err == nil && t != "" {
			s.Date = dt
		} else if dt, err := time.Parse("2006-01-02", d); err == nil {
			s.Date = dt
		}
	}
	if v, err := strconv.ParseFloat(m["CLOUD_COVER"], 64); err == nil && v >= 0 {
		s.CloudShare = v
	}
	zone, _ := strconv.Atoi(m["UTM_ZONE"])

	s.Bands = map[string]*Source{}
	const grp = "LEVEL2_SURFACE_REFLECTANCE_PARAMETERS."
	missingFactors := false
	for n := 1; n <= 7; n++ {
		role := roles[n]
		if role == "" {
			continue
		}
		file := m["PRODUCT_CONTENTS.FILE_NAME_BAND_"+strconv.Itoa(n)]
		if file == "" {
			base := path.Base(mtlName)
			file = base[:strings.LastIndex(base, "_MTL")] + fmt.Sprintf("_SR_B%d.TIF", n)
		}
		src := &Source{Role: role, Name: fmt.Sprintf("SR_B%d", n), File: path.Join(dir, file), Band: 1, Format: "tiff", QABit: n - 1}
		mult, err1 := strconv.ParseFloat(m[grp+"REFLECTANCE_MULT_BAND_"+strconv.Itoa(n)], 64)
		add, err2 := strconv.ParseFloat(m[grp+"REFLECTANCE_ADD_BAND_"+strconv.Itoa(n)], 64)
		if err1 != nil || err2 != nil || mult == 0 {
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
		s.Notes = append(s.Notes, "the MTL lacks REFLECTANCE_MULT/ADD for some bands: using Collection 2's 2.75e-5 and -0.2")
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
	if f := m["FILE_NAME_QUALITY_L1_PIXEL"]; f != "" {
		qa := &Source{Role: "qa_pixel", Name: "QA_PIXEL", File: path.Join(dir, f), Band: 1, Format: "tiff", Radiometry: compute.Identity(), QABit: -1}
		if err := s.checkTIFF(qa); err != nil {
			return err
		}
		if qa.Width != s.Grid.Width || qa.Height != s.Grid.Height {
			return fmt.Errorf("%s: QA_PIXEL is %dx%d, the bands %dx%d", s.Path, qa.Width, qa.Height, s.Grid.Width, s.Grid.Height)
		}
		s.Mask = Mask{Kind: "qa_pixel", Source: qa, Bits: QAPixelMasked, Buffered: qaBuffered,
			Description: "QA_PIXEL bits 0 fill, 1 dilated cloud, 2 cirrus, 3 cloud, 4 cloud shadow"}
	}
	if f := m["FILE_NAME_QUALITY_L1_RADIOMETRIC_SATURATION"]; f != "" {
		rs := &Source{Role: "qa_radsat", Name: "QA_RADSAT", File: path.Join(dir, f), Band: 1, Format: "tiff", Radiometry: compute.Identity(), QABit: -1}
		if err := s.checkTIFF(rs); err != nil {
			return err
		}
		s.Mask.Saturation = rs
		s.Mask.Description += "; QA_RADSAT saturation of the bands used"
	}
	return nil
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
