package raster

import (
	"fmt"
	"image/color"

	"canopy/compute"
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
		return fmt.Errorf("band size mismatch: %s %s is %dx%d, %s %s is %dx%d", a.Role, a.Source, a.Plane.Width, a.Plane.Height, b.Role, b.Source, b.Plane.Width, b.Plane.Height)
	}
	if why := ga.Mismatch(gb); why != "" {
		return fmt.Errorf("band grid mismatch: %s %s and %s %s %s", a.Role, a.Source, b.Role, b.Source, why)
	}
	return nil
}
