package pyramid

import (
	"errors"
	"fmt"
	"io"

	"canopy/compute"
	"canopy/compute/geotiff"
	"canopy/compute/pipeline"
)

// Source is one band of a GeoTIFF for OpenSources: the band as the engine
// takes it (role, radiometry, nodata, source; Plane's type and size are
// checked against the file's), and where it is: band Band (1-based) of
// File, a name Sources.Open opens. Bands of one File share its readers.
type Source struct {
	compute.BandInput
	File string
	Band int
}

// Sources are the bands of a product (compute/scene: an orthomosaic, a
// Landsat or STAC product of GeoTIFFs) to view at any size: the index's
// bands, the bands read for the mask alone, and the mask made from their
// stored samples pixel by pixel, so that a view, a pixel and a block of
// the pipeline are masked as the product loaded whole is.
type Sources struct {
	Bands []Source
	// Masks are read for Mask alone (an alpha band, QA bits).
	Masks []Source
	// Mask sets mask[j] to 1 for the pixels j it masks, from bands[i]
	// (Bands[i]'s samples) and masks[i] (Masks[i]'s), planes of
	// len(mask) samples; nil when nothing is masked. It is called from
	// several goroutines at once.
	Mask func(bands, masks []compute.Plane, mask []uint8)
	// Open opens a File for reading in place (concurrent ReadAt): its
	// reader, size and name for messages. What it opens stays open until
	// Close.
	Open func(file string) (io.ReaderAt, int64, string, error)
	// Geo is the grid's georeferencing (nil when none).
	Geo *compute.GeoRef
	// FullResolution reads views from the full resolution alone
	// (decimated), never from the files' overviews: for a mask whose
	// resampled values mean nothing (QA bits, classes).
	FullResolution bool
	// Close, if not nil, is called when the image closes, after its files
	// (it closes what Open opened).
	Close func()
}

// OpenSources opens the bands s describes for viewing. Every band must be
// on the first band's grid, at the size and type its Source says. Close
// the image when done (which calls s.Close, also when OpenSources fails).
func OpenSources(s Sources) (*Image, error) {
	if len(s.Bands) == 0 {
		if s.Close != nil {
			s.Close()
		}
		return nil, errors.New("pyramid: no band to view")
	}
	b0 := s.Bands[0].Plane
	im := &Image{Width: b0.Width, Height: b0.Height, Geo: s.Geo, sources: true, mask: s.Mask, done: s.Close}
	ok := false
	defer func() {
		if !ok {
			im.Close()
		}
	}()
	byFile := map[string]*group{}
	all := s.Bands
	if s.Mask != nil {
		// The mask's bands are read only when there is a mask to make.
		all = append(append([]Source{}, s.Bands...), s.Masks...)
	}
	for i, src := range all {
		g := byFile[src.File]
		if g == nil {
			file := src.File
			open := func() (*geotiff.File, error) {
				r, n, name, err := s.Open(file)
				if err != nil {
					return nil, err
				}
				return geotiff.NewReader(r, n, name)
			}
			f, err := open()
			if err != nil {
				return nil, fmt.Errorf("%s band: %w (a large image is read from GeoTIFF files)", src.Role, err)
			}
			g = &group{path: file, open: open, levels: []*geotiff.File{f}}
			byFile[file] = g
			im.groups = append(im.groups, g)
		}
		f := g.levels[0]
		t, _ := f.DataType()
		if src.Band < 1 || src.Band > f.Bands() || f.Width() != im.Width || f.Height() != im.Height || t != src.Plane.Type {
			return nil, fmt.Errorf("%s: band %d is not the %s %dx%d band the product describes (the file has %d bands of %s, %dx%d)",
				f.Name(), src.Band, src.Plane.Type, im.Width, im.Height, f.Bands(), t, f.Width(), f.Height())
		}
		g.bands = append(g.bands, src.Band)
		g.slots = append(g.slots, i)
		in := src.BandInput
		in.Plane = compute.Plane{Type: t, Width: im.Width, Height: im.Height}
		im.all = append(im.all, in)
	}
	im.Bands = im.all[:len(s.Bands):len(s.Bands)]
	if err := im.levels(); err != nil {
		return nil, err
	}
	if s.FullResolution {
		im.Levels = im.Levels[:1]
		for _, g := range im.groups {
			g.levels, g.mu = g.levels[:1], g.mu[:1]
		}
	}
	ok = true
	return im, nil
}

// sourcesInput is the pipeline's input of an image of Sources, from
// handles of its own: its bands, then those of the mask, whose blocks'
// masks are made as they are decoded (pipeline.Input.MaskRows). The bands
// of one file are decoded in one pass.
func (im *Image) sourcesInput() (*pipeline.Input, func(), error) {
	in := &pipeline.Input{Width: im.Width, Height: im.Height, Bands: make([]pipeline.Band, len(im.all))}
	var files []*geotiff.File
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	for _, g := range im.groups {
		f, err := g.open()
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		files = append(files, f)
		r := &geotiff.BandRows{File: f, Bands: g.bands}
		for k, slot := range g.slots {
			in.Bands[slot] = pipeline.Band{BandInput: im.all[slot], Reader: r, Index: k}
		}
	}
	if im.mask != nil {
		in.MaskRows = func(y0, y1 int, bands []compute.BandInput, mask []uint8) error {
			im.maskRows(bands, 0, len(mask), mask)
			return nil
		}
	}
	return in, closeAll, nil
}
