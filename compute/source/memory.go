package source

import (
	"maps"
	"slices"

	"canopy/compute"
	"canopy/compute/geotiff"
	"canopy/compute/pyramid"
	"canopy/compute/raster"
	"canopy/compute/scene"
)

// Where a source's pixels are held is decided here, for every face:
//
//   - blocks: Open's input reads band files block by block at their
//     stored type as the pipeline asks (the terminal's runs);
//   - whole: Whole reads every band into memory (the window's map, its
//     probes and its statistics, an image that fits);
//   - views: an image too large to load (Large) is read by views at about
//     screen resolution from its overviews, and by blocks for whole runs
//     (OpenViews, compute/pyramid).

// Whole reads every band of src whole at its stored type, with the mask:
// bands a source holds in memory already (a product, a generated scene)
// are handed over as they are; band files are read in one pass per file.
func Whole(src Source) ([]compute.BandInput, []uint8, error) {
	if o, ok := src.(*opened); ok && o.whole != nil {
		return o.whole, o.in.Mask, nil
	}
	in := src.Input()
	out := make([]compute.BandInput, len(in.Bands))
	done := make([]bool, len(in.Bands))
	for i, b := range in.Bands {
		if done[i] {
			continue
		}
		// Every band of this band's reader, read together.
		var idx []int
		for k := i; k < len(in.Bands); k++ {
			if in.Bands[k].Reader == b.Reader {
				idx = append(idx, k)
			}
		}
		dst := make([]compute.Plane, len(idx))
		for _, k := range idx {
			band := in.Bands[k]
			out[k] = band.BandInput
			out[k].Plane = compute.NewPlane(band.Plane.Type, in.Width, in.Height)
			dst[band.Index] = out[k].Plane
			done[k] = true
		}
		if err := b.Reader.ReadRows(0, in.Height, dst); err != nil {
			return nil, nil, err
		}
	}
	mask := in.Mask
	if mask == nil && in.MaskRows != nil {
		mask = make([]uint8, in.Width*in.Height)
		if err := in.MaskRows(0, in.Height, out, mask); err != nil {
			return nil, nil, err
		}
	}
	return out, mask, nil
}

// Large reports whether the bands of roles that spec gives are too large
// to load whole, by the face's rule tooLarge (the bytes loading would
// take: the bands as stored, the mask and one float32 index). Only bands
// of GeoTIFF files, and products whose bands and mask are GeoTIFFs on the
// grid (scene.Views), can be read by views; any other source loads whole,
// and says what is wrong if it cannot.
func Large(spec Spec, roles []string, tooLarge func(bytes int64) bool) bool {
	if len(roles) == 0 {
		return false
	}
	if spec.Product != "" {
		return largeProduct(spec, roles, tooLarge)
	}
	if len(spec.Files) == 0 {
		return false
	}
	var w, h int
	per := int64(4) // the index, float32
	for _, r := range roles {
		sp, ok := spec.Files[r]
		if !ok {
			return false
		}
		path, _, err := raster.ParseSpec(sp)
		if err != nil {
			return false
		}
		f, err := geotiff.Open(path)
		if err != nil {
			return false
		}
		t, _ := f.DataType()
		w, h = f.Width(), f.Height()
		f.Close()
		per += int64(t.Size())
	}
	return tooLarge(int64(w) * int64(h) * per)
}

// productViews opens the product spec names (its metadata, and the bands
// given roles) and describes the bands of roles and its mask for reading
// by views (scene.Views: it fails where the product is not read by
// views). Close the scene when done.
func productViews(spec Spec, roles []string) (*scene.Scene, *scene.Views, error) {
	sc, err := scene.Open(spec.Product)
	if err != nil {
		return nil, nil, err
	}
	for _, r := range slices.Sorted(maps.Keys(spec.Assign)) {
		if err := sc.AssignBand(r, spec.Assign[r]); err != nil {
			sc.Close()
			return nil, nil, err
		}
	}
	mask := spec.Mask
	if mask == "" {
		mask = "auto"
	}
	v, err := sc.Views(roles, scene.LoadOptions{Mask: mask, MaskBuffer: spec.MaskBuffer})
	if err != nil {
		sc.Close()
		return nil, nil, err
	}
	return sc, v, nil
}

// largeProduct is Large of a product: what loading it takes is its bands
// and the bands its mask reads as stored, the mask and the float32 index.
// Products whose bands or mask are not GeoTIFFs on the grid load whole:
// Sentinel-2's SAFE (JPEG 2000, SCL at 20 m) tiles are at most 10980² and
// take about 1 GB; so does a mask buffer, which reaches across pixels.
func largeProduct(spec Spec, roles []string, tooLarge func(int64) bool) bool {
	sc, v, err := productViews(spec, roles)
	if err != nil {
		return false
	}
	sc.Close()
	per := int64(4)
	for _, b := range append(slices.Clone(v.Bands), v.Masks...) {
		per += int64(b.Plane.Type.Size())
	}
	if v.HasMask() {
		per++
	}
	return tooLarge(int64(sc.Grid.Width) * int64(sc.Grid.Height) * per)
}

// OpenViews opens the bands of roles that spec gives for reading by views
// (compute/pyramid): band files by their overviews and tiles; a product's
// bands with its radiometry, nodata and mask as scene.Load applies them,
// its files read in place (a tar's members too). Close the image when
// done.
func OpenViews(spec Spec, roles []string) (*pyramid.Image, error) {
	if spec.Product == "" {
		var specs []string
		for _, r := range roles {
			specs = append(specs, spec.Files[r])
		}
		return pyramid.Open(roles, specs)
	}
	sc, v, err := productViews(spec, roles)
	if err != nil {
		return nil, err
	}
	conv := func(bs []scene.ViewBand) []pyramid.Source {
		var out []pyramid.Source
		for _, b := range bs {
			out = append(out, pyramid.Source{BandInput: b.BandInput, File: b.File, Band: b.Band})
		}
		return out
	}
	// A mask of QA bits or classes is made from full-resolution samples
	// only; an alpha band's also from overviews.
	s := pyramid.Sources{Bands: conv(v.Bands), Masks: conv(v.Masks), Open: sc.OpenFile, Geo: sc.Grid.Geo, Close: func() { sc.Close() },
		FullResolution: !v.MaskFromOverviews()}
	if v.HasMask() {
		s.Mask = v.Mask
	}
	return pyramid.OpenSources(s)
}
