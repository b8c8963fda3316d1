package scene

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"canopy/compute"
	"canopy/compute/geotiff"
	"canopy/compute/index"
)

// TIFF tags the orthomosaic reader needs beyond what package geotiff
// exposes.
const (
	tagPhotometric  = 262
	tagDateTime     = 306
	tagExtraSamples = 338
	tagGDALMetadata = 42112
)

// tiffTags reads a few tags of a TIFF's first image directory: SHORT
// arrays and ASCII strings, bounded.
func tiffTags(r io.ReaderAt, size int64, want ...uint16) (map[uint16][]uint16, map[uint16]string, error) {
	var h [16]byte
	if _, err := r.ReadAt(h[:8], 0); err != nil {
		return nil, nil, fmt.Errorf("not a TIFF: %v", err)
	}
	var o binary.ByteOrder
	switch string(h[:2]) {
	case "II":
		o = binary.LittleEndian
	case "MM":
		o = binary.BigEndian
	default:
		return nil, nil, fmt.Errorf("not a TIFF")
	}
	big := o.Uint16(h[2:]) == 43
	var ifd uint64
	if big {
		if _, err := r.ReadAt(h[:16], 0); err != nil {
			return nil, nil, err
		}
		ifd = o.Uint64(h[8:])
	} else {
		ifd = uint64(o.Uint32(h[4:]))
	}
	cntSize, entSize := 2, 12
	if big {
		cntSize, entSize = 8, 20
	}
	if ifd+uint64(cntSize) > uint64(size) {
		return nil, nil, fmt.Errorf("IFD offset past the end")
	}
	var cb [8]byte
	if _, err := r.ReadAt(cb[:cntSize], int64(ifd)); err != nil {
		return nil, nil, err
	}
	n := uint64(o.Uint16(cb[:]))
	if big {
		n = o.Uint64(cb[:])
	}
	if n > 65535 || ifd+uint64(cntSize)+n*uint64(entSize) > uint64(size) {
		return nil, nil, fmt.Errorf("IFD runs past the end")
	}
	ents := make([]byte, n*uint64(entSize))
	if _, err := r.ReadAt(ents, int64(ifd)+int64(cntSize)); err != nil {
		return nil, nil, err
	}
	shorts, texts := map[uint16][]uint16{}, map[uint16]string{}
	for i := uint64(0); i < n; i++ {
		e := ents[i*uint64(entSize):]
		tag, typ := o.Uint16(e), o.Uint16(e[2:])
		if !containsTag(want, tag) {
			continue
		}
		var count uint64
		var val []byte
		if big {
			count, val = o.Uint64(e[4:]), e[12:20]
		} else {
			count, val = uint64(o.Uint32(e[4:])), e[8:12]
		}
		esize := map[uint16]uint64{2: 1, 3: 2, 7: 1}[typ]
		if esize == 0 || count > 1<<20 {
			continue
		}
		data := make([]byte, count*esize)
		if count*esize <= uint64(len(val)) {
			copy(data, val)
		} else {
			off := uint64(o.Uint32(val))
			if big {
				off = o.Uint64(val)
			}
			if off+uint64(len(data)) > uint64(size) {
				return nil, nil, fmt.Errorf("tag %d runs past the end", tag)
			}
			if _, err := r.ReadAt(data, int64(off)); err != nil {
				return nil, nil, err
			}
		}
		if typ == 3 {
			v := make([]uint16, count)
			for j := range v {
				v[j] = o.Uint16(data[2*j:])
			}
			shorts[tag] = v
		} else {
			texts[tag] = strings.TrimRight(string(data), "\x00")
		}
	}
	return shorts, texts, nil
}

func containsTag(l []uint16, t uint16) bool {
	for _, x := range l {
		if x == t {
			return true
		}
	}
	return false
}

// descRoles maps band descriptions (lower case, spaces and dashes
// removed) to roles.
var descRoles = map[string]string{
	"blue": "blue", "b": "blue", "green": "green", "g": "green", "red": "red", "r": "red",
	"rededge": "rededge1", "re": "rededge1", "rededge1": "rededge1", "rededge2": "rededge2", "rededge3": "rededge3",
	"nir": "nir", "nearinfrared": "nir", "nir1": "nir", "nir2": "nir2", "narrownir": "nir2",
	"swir1": "swir1", "swir2": "swir2", "alpha": "alpha", "mask": "alpha",
}

// openOrtho reads a multi-band GeoTIFF (a drone orthomosaic): roles from
// the band descriptions GDAL writes (GDAL_METADATA DESCRIPTION items), or
// from the colour interpretation (RGB photometric, an alpha extra sample);
// an alpha band becomes the mask; SCALE and OFFSET items the radiometry.
func openOrtho(ctx context.Context, p string) (*Scene, error) {
	fc := &filesContainer{files: []string{p}, remote: remoteFiles{ctx: ctx}}
	s := &Scene{Path: p, Kind: KindOrthomosaic, Sensor: "orthomosaic", Product: strings.TrimSuffix(filepath.Base(p), filepath.Ext(p)),
		c: fc, CloudShare: math.NaN(), Bands: map[string]*Source{}}
	r, n, err := fc.open(p)
	if err != nil {
		return nil, err
	}
	f, err := geotiff.NewReader(r, n, p)
	if err != nil {
		fc.close()
		return nil, err
	}
	shorts, texts, err := tiffTags(r, n, tagPhotometric, tagExtraSamples, tagGDALMetadata, tagDateTime)
	if err != nil {
		fc.close()
		return nil, fmt.Errorf("%s: %v", p, err)
	}
	t, _ := f.DataType()
	nb := f.Bands()
	roles := make([]string, nb+1)
	rad := make([]compute.Radiometry, nb+1)
	for i := range rad {
		rad[i] = compute.Identity()
	}
	if md := texts[tagGDALMetadata]; md != "" {
		x, err := parseXML([]byte(md), p+" GDAL_METADATA")
		if err == nil {
			for _, it := range x.all("Item") {
				if _, band := it.attr["sample"]; !band && strings.EqualFold(it.attr["name"], "ACQUISITIONDATE") {
					s.Date = orthoDate(it.text)
				}
				b, err := strconv.Atoi(it.attr["sample"])
				if err != nil || b < 0 || b >= nb {
					continue
				}
				switch strings.ToUpper(it.attr["name"]) {
				case "DESCRIPTION":
					k := strings.NewReplacer(" ", "", "-", "", "_", "").Replace(strings.ToLower(it.text))
					roles[b+1] = descRoles[k]
				case "SCALE":
					if v, err := strconv.ParseFloat(it.text, 64); err == nil && v != 0 {
						rad[b+1].Scale = v
					}
				case "OFFSET":
					if v, err := strconv.ParseFloat(it.text, 64); err == nil {
						rad[b+1].Offset = v
					}
				}
			}
		}
	}
	if s.Date.IsZero() {
		s.Date = orthoDate(texts[tagDateTime])
	}
	described := false
	for _, r := range roles {
		described = described || (r != "" && r != "alpha")
	}
	extra := shorts[tagExtraSamples]
	if ph := shorts[tagPhotometric]; !described && len(ph) == 1 && ph[0] == 2 && nb >= 3 {
		roles[1], roles[2], roles[3] = "red", "green", "blue"
	}
	for i, e := range extra {
		b := nb - len(extra) + 1 + i
		if (e == 1 || e == 2) && b >= 1 && roles[b] == "" {
			roles[b] = "alpha"
		}
	}
	nd, hasND := f.NoData()
	a, _ := f.Geo().Affine()
	res := math.Abs(a[1])
	for b := 1; b <= nb; b++ {
		role := roles[b]
		src := &Source{Role: role, Name: fmt.Sprintf("band %d", b), File: p, Band: b, Format: "tiff", Resolution: res,
			Width: f.Width(), Height: f.Height(), Type: t, Radiometry: rad[b], NoData: nd, HasNoData: hasND, QABit: -1, geo: f.Geo()}
		switch {
		case role == "alpha" && s.Mask.Source == nil:
			src.HasNoData = false
			s.Mask = Mask{Kind: "alpha", Source: src, Description: fmt.Sprintf("alpha band %d: 0 is masked", b)}
		case role != "" && role != "alpha" && s.Bands[role] == nil:
			s.Bands[role] = src
		}
	}
	if s.Mask.Kind == "" {
		s.Mask.Description = "no alpha band: nothing masked"
	}
	s.Grid = Grid{Width: f.Width(), Height: f.Height(), Resolution: res, Geo: f.Geo()}
	s.CRS.EPSG = epsgOf(f.Geo())
	s.CRS.Name = crsName(s.CRS.EPSG)
	s.ortho = &Source{File: p, Format: "tiff", Resolution: res, Width: f.Width(), Height: f.Height(), Type: t, NoData: nd, HasNoData: hasND, QABit: -1, geo: f.Geo(), Band: nb}
	if len(s.Bands) == 0 {
		s.Notes = append(s.Notes, fmt.Sprintf("no band has a known role (no band descriptions blue, green, red, nir, ... and no RGB colour interpretation): give them (e.g. --bands red=3,nir=4; the file has %d bands)", nb))
	}
	return s, nil
}

// AssignBand gives band b (1-based) of an orthomosaic the role, as the
// command line's --bands red=3,nir=4 does; role "alpha" makes it the mask.
func (s *Scene) AssignBand(role string, b int) error {
	if s.Kind != KindOrthomosaic {
		return fmt.Errorf("%s: band roles come from the product's metadata; --bands applies to GeoTIFFs", s.Path)
	}
	if role != "alpha" && !contains(Roles, role) {
		return fmt.Errorf("unknown role %q%s (%s, alpha)", role, index.DidYouMean(role, append(Roles[:len(Roles):len(Roles)], "alpha")), strings.Join(Roles, ", "))
	}
	if b < 1 || b > s.ortho.Band {
		return fmt.Errorf("%s: band %d does not exist (the file has %d)", s.Path, b, s.ortho.Band)
	}
	src := *s.ortho
	src.Role, src.Name, src.Band, src.Radiometry = role, fmt.Sprintf("band %d", b), b, compute.Identity()
	if role == "alpha" {
		src.HasNoData = false
		s.Mask = Mask{Kind: "alpha", Source: &src, Description: fmt.Sprintf("alpha band %d: 0 is masked", b)}
		return nil
	}
	s.Bands[role] = &src
	return nil
}

// orthoDate reads a GeoTIFF's date: GDAL's ACQUISITIONDATE metadata item
// or the TIFF DateTime tag ("2024:06:15 10:30:00"), read as UTC; zero
// when it is none of the forms.
func orthoDate(v string) time.Time {
	v = strings.TrimSpace(v)
	for _, layout := range []string{time.RFC3339, "2006:01:02 15:04:05", "2006-01-02 15:04:05", "2006-01-02T15:04:05", "2006-01-02", "2006/01/02", "20060102"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}
