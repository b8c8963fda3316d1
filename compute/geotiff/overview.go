package geotiff

import "fmt"

// maxOverviewIFDs is how many IFDs after the first Overviews looks at:
// COGs and gdaladdo write one per level and mask, a few dozen at most.
const maxOverviewIFDs = 64

// Overviews returns the file's reduced-resolution images (the internal
// overviews COGs and gdaladdo write), in file order, which is largest
// first in a COG; transparency masks and other images are left out. Each
// is a File of its own, validated as the first image is (the same
// limits), reading through the same open file: use it while f is open;
// its Close frees its decoders and leaves f's file open. An overview has no georeferencing of its own (Geo is
// nil: it covers the full resolution's extent with larger pixels) and
// takes the full resolution's nodata when it has none. At most the 64
// IFDs after the first are looked at.
func (f *File) Overviews() ([]*File, error) {
	var out []*File
	for k, off := range f.later {
		entries, _, err := f.readIFD(off, true)
		if err != nil {
			return nil, fmt.Errorf("read %s: image %d: %w", f.name, k+2, capped{err})
		}
		var sub uint64
		t := tags{f: f, m: map[uint16]entry{}}
		for _, e := range entries {
			if _, dup := t.m[e.tag]; !dup {
				t.m[e.tag] = e
			}
		}
		if sub, err = t.one(tagNewSubfileType, 0); err != nil {
			return nil, fmt.Errorf("read %s: image %d: %w", f.name, k+2, capped{err})
		}
		if sub&1 == 0 || sub&4 != 0 {
			continue // not a reduced-resolution image, or a mask
		}
		o := &File{name: fmt.Sprintf("%s (overview %d)", f.name, len(out)+1), r: f.r, size: f.size, order: f.order, be: f.be, big: f.big, ifds: 1}
		if err := o.image(entries); err != nil {
			return nil, fmt.Errorf("read %s: %w", o.name, capped{err})
		}
		if o.width > f.width || o.height > f.height {
			return nil, fmt.Errorf("read %s: the overview is %dx%d, larger than the image, %dx%d", o.name, o.width, o.height, f.width, f.height)
		}
		o.geo = nil
		if !o.hasNoData {
			o.nodata, o.hasNoData = f.nodata, f.hasNoData
		}
		out = append(out, o)
	}
	return out, nil
}
