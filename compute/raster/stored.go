package raster

import (
	"fmt"
	"image/color"

	"canopy/compute"
	"canopy/compute/geotiff"
	"canopy/compute/pipeline"
)

// LoadStored reads the band a spec names as the engine's input for role:
// its samples at their stored type where the engine has it exactly
// (uint8, uint16, int16, uint32, int32 stay integers, so they travel to a
// GPU as integers; float32 stays float32; int8, 64-bit and float64 samples
// arrive as float32), with identity radiometry and the file's nodata. A
// GeoTIFF band is decoded straight at its stored type (no float32 copy);
// a PNG band is 8- or 16-bit. It also returns the band's georeferencing
// (nil when the file has none).
func LoadStored(role, spec string) (compute.BandInput, *compute.GeoRef, error) {
	h, err := openHeader(spec)
	if err != nil {
		return compute.BandInput{}, nil, err
	}
	defer h.close()
	if h.tif != nil {
		t, _ := h.tif.DataType()
		p := compute.NewPlane(t, h.w, h.h)
		if err := h.tif.ReadRowsInto(h.band, 0, h.h, p); err != nil {
			return compute.BandInput{}, nil, err
		}
		nd, has := h.tif.NoData()
		return storedInput(role, h.source(h.band), p, nd, has), h.tif.Geo(), nil
	}
	bs, err := h.read(nil, h.band)
	if err != nil {
		return compute.BandInput{}, nil, err
	}
	b := bs[0]
	t := compute.U8
	switch h.png.ColorModel {
	case color.Gray16Model, color.RGBA64Model, color.NRGBA64Model:
		t = compute.U16
	}
	src := b.Source
	if src == "" {
		src = spec
	}
	return storedInput(role, src, narrow(t, b.Width, b.Height, b.Data), b.NoData, b.HasNoData), b.Geo, nil
}

// storedInput is a band as the engine's input, identity radiometry; a
// nodata value the stored type cannot hold matches no sample and is
// dropped.
func storedInput(role, source string, p compute.Plane, nodata float64, has bool) compute.BandInput {
	in := compute.BandInput{Role: role, Plane: p, Radiometry: compute.Identity(), NoData: nodata, HasNoData: has, Source: source}
	if in.Plane.Type != compute.F32 && in.HasNoData && !representable(in.Plane.Type, in.NoData) {
		in.HasNoData = false
	}
	return in
}

// narrow stores float32 samples that came from integers of type t back as
// t (exactly: every uint8, uint16 and int16 is a float32).
func narrow(t compute.DataType, w, h int, data []float32) compute.Plane {
	switch t {
	case compute.U8:
		p := compute.NewPlane(t, w, h)
		s := p.U8()
		for i, v := range data {
			s[i] = uint8(v)
		}
		return p
	case compute.U16:
		p := compute.NewPlane(t, w, h)
		s := p.U16()
		for i, v := range data {
			s[i] = uint16(v)
		}
		return p
	case compute.I16:
		p := compute.NewPlane(t, w, h)
		s := p.I16()
		for i, v := range data {
			s[i] = int16(v)
		}
		return p
	}
	return compute.PlaneOf(w, h, data)
}

func representable(t compute.DataType, v float64) bool {
	lo, hi := 0.0, 0.0
	switch t {
	case compute.U8:
		hi = 255
	case compute.U16:
		hi = 65535
	case compute.I16:
		lo, hi = -32768, 32767
	case compute.U32:
		hi = 4294967295
	case compute.I32:
		lo, hi = -2147483648, 2147483647
	default:
		return true
	}
	return v == float64(int64(v)) && v >= lo && v <= hi
}

// CheckSameGrid returns an error naming both bands when two georeferenced
// bands do not share a grid.
func CheckSameGrid(a, b compute.BandInput, ga, gb *compute.GeoRef) error {
	if a.Plane.Width != b.Plane.Width || a.Plane.Height != b.Plane.Height {
		return compute.SizeMismatch(a.Role, a.Source, a.Plane.Width, a.Plane.Height, b.Role, b.Source, b.Plane.Width, b.Plane.Height)
	}
	if why := ga.Mismatch(gb); why != "" {
		return fmt.Errorf("the bands are not on one grid: %s %s and %s %s %s; the bands of one computation must share a grid", a.Role, a.Source, b.Role, b.Source, why)
	}
	return nil
}

// StoredInput is bands opened for the block pipeline: the pipeline's
// input, the grid's georeferencing (nil when the files have none), and
// the files to close.
type StoredInput struct {
	*pipeline.Input
	Geo     *compute.GeoRef
	closers []func()
}

// Close closes the files.
func (s *StoredInput) Close() {
	for _, c := range s.closers {
		c()
	}
	s.closers = nil
}

// OpenStored opens the bands specs name (specs[i] has role roles[i]) for
// the block pipeline, as LoadStored reads them: GeoTIFF bands are read by
// rows at their stored type when the pipeline asks (bands of one file
// share one reader, which decodes them in one pass per block); a PNG band
// is decoded whole. Every band must be on the first band's grid
// (CheckSameGrid). Close the input when done.
func OpenStored(roles, specs []string) (*StoredInput, error) {
	if len(roles) == 0 || len(roles) != len(specs) {
		return nil, fmt.Errorf("%d roles for %d bands", len(roles), len(specs))
	}
	s := &StoredInput{Input: &pipeline.Input{}}
	ok := false
	defer func() {
		if !ok {
			s.Close()
		}
	}()
	files := map[string]*geotiff.BandRows{}
	var geos []*compute.GeoRef
	for i, spec := range specs {
		var b pipeline.Band
		var geo *compute.GeoRef
		path, _, _ := resolve(spec)
		if tr, open := files[path]; open {
			h, err := openHeaderOf(spec, tr.File)
			if err != nil {
				return nil, err
			}
			b, geo = tiffBand(roles[i], h.source(h.band), tr, h.band)
		} else {
			h, err := openHeader(spec)
			if err != nil {
				return nil, err
			}
			if h.tif != nil {
				s.closers = append(s.closers, h.close)
				tr := &geotiff.BandRows{File: h.tif}
				files[h.path] = tr
				b, geo = tiffBand(roles[i], h.source(h.band), tr, h.band)
			} else {
				in, g, err := LoadStored(roles[i], spec)
				h.close()
				if err != nil {
					return nil, err
				}
				mem, _ := pipeline.Memory([]compute.BandInput{in}, nil)
				b, geo = mem.Bands[0], g
			}
		}
		if i > 0 {
			if err := CheckSameGrid(s.Bands[0].BandInput, b.BandInput, geos[0], geo); err != nil {
				return nil, err
			}
		} else {
			s.Width, s.Height = b.Plane.Width, b.Plane.Height
		}
		s.Bands = append(s.Bands, b)
		geos = append(geos, geo)
	}
	s.Geo = geos[0]
	ok = true
	return s, nil
}

// openHeaderOf checks a spec's band against a file already open.
func openHeaderOf(spec string, f *geotiff.File) (*header, error) {
	path, band, err := resolve(spec)
	if err != nil {
		return nil, err
	}
	h := &header{path: path, band: band, tif: f, w: f.Width(), h: f.Height()}
	if band == 0 {
		if f.Bands() != 1 {
			return nil, fmt.Errorf("read %s: the file has %d bands; pick one as %s:B (B from 1 to %d)", path, f.Bands(), path, f.Bands())
		}
		h.band = 1
	}
	if err := h.check(h.band); err != nil {
		return nil, err
	}
	return h, nil
}

// tiffBand adds band b of the file tr reads to it and describes it as
// LoadStored would (the plane's type and size, no samples).
func tiffBand(role, source string, tr *geotiff.BandRows, b int) (pipeline.Band, *compute.GeoRef) {
	f := tr.File
	t, _ := f.DataType()
	idx := len(tr.Bands)
	tr.Bands = append(tr.Bands, b)
	nd, has := f.NoData()
	in := storedInput(role, source, compute.Plane{Type: t, Width: f.Width(), Height: f.Height()}, nd, has)
	return pipeline.Band{BandInput: in, Reader: tr, Index: idx}, f.Geo()
}
