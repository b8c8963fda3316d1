package scene

import (
	"fmt"
	"image"
	"io"

	"canopy/compute"
)

// maskRule is how a product's mask is made for some bands, pixel by pixel
// from stored values alone: the bands' saturated values, the mask
// source's classes, bits or alpha, and the saturation band's bits of
// those bands. Load and the readers by views (Views.Mask) both apply it,
// so a pixel is masked the same way whether the image is loaded whole or
// read by blocks and views.
type maskRule struct {
	sat    []float64 // per band: its saturated value
	hasSat []bool

	kind       string
	source     *Source // the classes, bits or alpha (nil when none)
	cls, buf   [256]bool
	bits, bufb uint64
	grow       bool // buffered classes or bits go to grow

	saturation *Source // QA_RADSAT, nil when it masks none of the bands
	radsat     uint64
}

// maskRule is the scene's mask for the bands srcs; with grow, the
// buffered classes or bits go to a plane of their own (Load dilates it).
func (s *Scene) maskRule(srcs []*Source, grow bool) *maskRule {
	r := &maskRule{grow: grow}
	for _, src := range srcs {
		r.sat = append(r.sat, src.Saturated)
		r.hasSat = append(r.hasSat, src.HasSaturated)
	}
	m := s.Mask
	if m.Source != nil {
		r.kind, r.source = m.Kind, m.Source
		for _, c := range m.Classes {
			r.cls[c&255] = true
		}
		for _, c := range m.Buffered {
			r.buf[c&255] = true
		}
		for _, b := range m.Bits {
			r.bits |= 1 << b
		}
		for _, b := range m.Buffered {
			r.bufb |= 1 << b
		}
		if !grow {
			r.bufb = 0
		}
	}
	if m.Saturation != nil {
		for _, src := range srcs {
			if src.QABit >= 0 {
				r.radsat |= 1 << src.QABit
			}
		}
		if r.radsat != 0 {
			r.saturation = m.Saturation
		}
	}
	return r
}

// any reports whether the rule can mask a pixel.
func (r *maskRule) any() bool {
	for _, h := range r.hasSat {
		if h {
			return true
		}
	}
	return r.source != nil || r.saturation != nil
}

// apply sets mask[j] (and grow[j], when the rule grows) to 1 for every
// pixel j the rule masks: bands are the rule's bands' stored samples, src
// the mask source's and sat the saturation band's (planes of len(mask)
// pixels; unused ones may be empty).
func (r *maskRule) apply(bands []compute.Plane, src, sat compute.Plane, mask, grow []uint8) {
	n := len(mask)
	for i, p := range bands {
		if !r.hasSat[i] {
			continue
		}
		for j := range n {
			if p.At(j) == r.sat[i] {
				mask[j] = 1
			}
		}
	}
	if r.source != nil {
		switch r.kind {
		case "scl":
			for j := range n {
				v := src.At(j)
				if v < 0 || v > 255 {
					continue
				}
				c := int(v)
				if r.cls[c] {
					if r.grow && r.buf[c] {
						grow[j] = 1
					} else {
						mask[j] = 1
					}
				}
			}
		case "qa_pixel":
			for j := range n {
				v := uint64(src.At(j))
				if v&r.bits&^r.bufb != 0 {
					mask[j] = 1
				}
				if v&r.bits&r.bufb != 0 {
					grow[j] = 1
				}
			}
		case "alpha":
			for j := range n {
				if src.At(j) == 0 {
					mask[j] = 1
				}
			}
		}
	}
	if r.saturation != nil {
		for j := range n {
			if uint64(sat.At(j))&r.radsat != 0 {
				mask[j] = 1
			}
		}
	}
}

// ViewBand is a band as a reader by views reads it: what Load would give
// (role, stored type and the grid's size in Plane, no samples; radiometry,
// nodata, source), and where it is: band Band (1-based) of the GeoTIFF
// File, a name for Scene.OpenFile.
type ViewBand struct {
	compute.BandInput
	File string
	Band int
}

// Views describes the bands of some roles for a reader that does not load
// them whole (compute/pyramid: an image too large to load, read by views
// and blocks): the bands, the bands the product's mask reads, and the
// rule that masks a pixel from them, the same as Load's.
type Views struct {
	// Bands are the roles' bands, in the order asked for.
	Bands []ViewBand
	// Masks are the bands the mask reads (an alpha band, QA_PIXEL,
	// QA_RADSAT, SCL), nil when nothing can be masked.
	Masks []ViewBand
	rule  *maskRule
}

// Views describes the bands of roles for reading by views, with the mask
// opt asks for (opt.Window is ignored: the whole grid). It fails, saying
// why, where such a reader cannot give what Load gives: a band or mask
// that is not a GeoTIFF (Sentinel-2's JPEG 2000: those tiles are at most
// 10980² and load whole), a band coarser than the grid (nearest-neighbour
// resampling is Load's alone), a mask buffer that grows clouds (it reaches
// across pixels), or a member of a zip (inflated whole).
func (s *Scene) Views(roles []string, opt LoadOptions) (*Views, error) {
	switch opt.Mask {
	case "", "auto", "none":
	default:
		return nil, fmt.Errorf("mask %q: use auto or none", opt.Mask)
	}
	if _, ok := s.c.(*zipContainer); ok {
		return nil, fmt.Errorf("%s: a zip archive's members are not read by views", s.Path)
	}
	if len(roles) == 0 {
		return nil, fmt.Errorf("%s: no band role asked for", s.Path)
	}
	full := image.Rect(0, 0, s.Grid.Width, s.Grid.Height)
	view := func(src *Source, role string) (ViewBand, error) {
		if src.Format != "tiff" {
			return ViewBand{}, fmt.Errorf("%s: band %s is not a GeoTIFF (%s), it is not read by views", s.Path, src.Name, src.Format)
		}
		k, _, err := s.sourceWindow(src, full)
		if err != nil {
			return ViewBand{}, err
		}
		if k != 1 || src.Width != s.Grid.Width || src.Height != s.Grid.Height {
			return ViewBand{}, fmt.Errorf("%s: band %s at %g m is not on the %g m grid, it is not read by views", s.Path, src.Name, src.Resolution, s.Grid.Resolution)
		}
		in := compute.BandInput{Role: role, Plane: compute.Plane{Type: src.Type, Width: s.Grid.Width, Height: s.Grid.Height},
			Radiometry: src.Radiometry, NoData: src.NoData, HasNoData: src.HasNoData, Source: s.c.where(src.File) + fmt.Sprintf(":%d", src.Band)}
		return ViewBand{BandInput: in, File: src.File, Band: src.Band}, nil
	}
	v := &Views{}
	var srcs []*Source
	for _, r := range roles {
		src := s.Bands[r]
		if src == nil {
			return nil, s.noBand(r)
		}
		b, err := view(src, r)
		if err != nil {
			return nil, err
		}
		v.Bands = append(v.Bands, b)
		srcs = append(srcs, src)
	}
	if opt.Mask == "none" {
		return v, nil
	}
	v.rule = s.maskRule(srcs, false)
	if opt.MaskBuffer > 0 && len(s.Mask.Buffered) > 0 && v.rule.source != nil {
		return nil, fmt.Errorf("%s: a mask buffer is not applied by views", s.Path)
	}
	if !v.rule.any() {
		v.rule = nil
		return v, nil
	}
	for _, m := range []*Source{v.rule.source, v.rule.saturation} {
		if m == nil {
			continue
		}
		b, err := view(m, "mask:"+m.Name)
		if err != nil {
			return nil, err
		}
		v.Masks = append(v.Masks, b)
	}
	return v, nil
}

// HasMask reports whether Mask can mask a pixel.
func (v *Views) HasMask() bool { return v.rule != nil }

// MaskFromOverviews reports whether the mask may be made from the files'
// overviews as well as from the full resolution: only when it is an alpha
// band alone (an overview's alpha is 0 where the pixels it stands for are
// transparent, whether it was averaged or picked). QA bits, classes and
// saturated values mean nothing once resampled: such a mask is made from
// full-resolution samples only. True when there is no mask.
func (v *Views) MaskFromOverviews() bool {
	if v.rule == nil {
		return true
	}
	for _, h := range v.rule.hasSat {
		if h {
			return false
		}
	}
	return v.rule.saturation == nil && (v.rule.source == nil || v.rule.kind == "alpha")
}

// Mask sets mask[j] to 1 for every pixel j that Load masks, from the
// stored samples at j of Bands (bands[i], of len(mask) pixels each) and of
// Masks (masks[i]); it leaves the other bytes as they are.
func (v *Views) Mask(bands, masks []compute.Plane, mask []uint8) {
	if v.rule == nil {
		return
	}
	var src, sat compute.Plane
	k := 0
	if v.rule.source != nil {
		src, k = masks[k], k+1
	}
	if v.rule.saturation != nil {
		sat = masks[k]
	}
	v.rule.apply(bands, src, sat, mask, nil)
}

// OpenFile opens a file of the scene (a ViewBand's File) for reading in
// place: its reader (safe for concurrent reads), size, and its name for
// messages. It stays open until the scene is closed.
func (s *Scene) OpenFile(file string) (io.ReaderAt, int64, string, error) {
	r, n, err := s.c.open(file)
	if err != nil {
		return nil, 0, "", err
	}
	return r, n, s.c.where(file), nil
}
