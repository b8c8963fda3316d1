package raster

import (
	"fmt"
	"image/color"

	"canopy/compute"
	"canopy/compute/geotiff"
)

// LoadStored reads the band a spec names as the engine's input for role:
// its samples at their stored type where the engine has it exactly
// (uint8, uint16 and int16 stay integers, so they travel to a GPU as
// integers; float32 stays float32; other types arrive as float32), with
// identity radiometry and the file's nodata. It also returns the band's
// georeferencing (nil when the file has none).
func LoadStored(role, spec string) (compute.BandInput, *compute.GeoRef, error) {
	h, err := openHeader(spec)
	if err != nil {
		return compute.BandInput{}, nil, err
	}
	defer h.close()
	bs, err := h.read(nil, h.band)
	if err != nil {
		return compute.BandInput{}, nil, err
	}
	b := bs[0]
	t := compute.F32
	if h.tif != nil {
		switch h.tif.Type() {
		case geotiff.Uint8:
			t = compute.U8
		case geotiff.Uint16:
			t = compute.U16
		case geotiff.Int16:
			t = compute.I16
		}
	} else {
		switch h.png.ColorModel {
		case color.Gray16Model, color.RGBA64Model, color.NRGBA64Model:
			t = compute.U16
		default:
			t = compute.U8
		}
	}
	in := compute.BandInput{Role: role, Radiometry: compute.Identity(), NoData: b.NoData, HasNoData: b.HasNoData, Source: b.Source}
	in.Plane = narrow(t, b.Width, b.Height, b.Data)
	if in.Plane.Type != compute.F32 && in.HasNoData && !representable(in.Plane.Type, in.NoData) {
		// A nodata value the stored type cannot hold matches no sample.
		in.HasNoData = false
	}
	if b.Source == "" {
		in.Source = spec
	}
	return in, b.Geo, nil
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
