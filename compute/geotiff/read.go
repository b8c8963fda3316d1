package geotiff

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"
	"unsafe"

	"canopy/compute"
	"canopy/compute/par"
)

// ReadBand decodes band b (1-based, as GDAL numbers bands) into a float32
// plane with the file's georeferencing and nodata, Source "name:b".
func (f *File) ReadBand(b int) (*compute.Band, error) {
	bs, err := f.ReadBands(b)
	if err != nil {
		return nil, err
	}
	return bs[0], nil
}

// ReadBands decodes several bands (1-based) in one pass over the file, so
// that bands of a pixel-interleaved file are decompressed once. Strips or
// tiles are decoded on all cores, each straight into the float32 planes.
func (f *File) ReadBands(bands ...int) ([]*compute.Band, error) {
	return f.ReadBandsInto(nil, bands...)
}

// ReadBandsInto is ReadBands decoding into planes the caller provides: band
// bands[i] is decoded into dst[i] when that is not nil, and the returned
// band's Data is that slice. A given plane must hold exactly Width*Height
// pixels; every one of them is written (sparse strips or tiles with the
// nodata value, or 0), so its previous contents do not matter. Nil entries,
// and all bands when dst is empty, are allocated as ReadBands allocates
// them; otherwise dst has one entry per band. Planes may not overlap, except
// that one plane may be given for a band listed twice. On error the planes'
// contents are unspecified.
func (f *File) ReadBandsInto(dst [][]float32, bands ...int) ([]*compute.Band, error) {
	if len(bands) == 0 {
		return nil, fmt.Errorf("read %s: no band requested", f.name)
	}
	if f.r == nil {
		return nil, fmt.Errorf("read %s: file is closed", f.name)
	}
	for _, b := range bands {
		if b < 1 || b > f.spp {
			return nil, fmt.Errorf("read %s: band %d does not exist (the file has %d band%s)", f.name, b, f.spp, plural(f.spp))
		}
	}
	if len(dst) != 0 && len(dst) != len(bands) {
		return nil, fmt.Errorf("read %s: %d destination planes for %d bands", f.name, len(dst), len(bands))
	}
	for i, p := range dst {
		if p != nil && len(p) != f.width*f.height {
			return nil, fmt.Errorf("read %s: destination for band %d holds %d pixels, band is %dx%d", f.name, bands[i], len(p), f.width, f.height)
		}
	}
	if err := checkOverlap(dst, bands); err != nil {
		return nil, fmt.Errorf("read %s: %w", f.name, err)
	}
	out := make([]*compute.Band, len(bands))
	for i, b := range bands {
		var band *compute.Band
		if i < len(dst) && dst[i] != nil {
			band = &compute.Band{Width: f.width, Height: f.height, Data: dst[i]}
		} else {
			band = compute.NewBand(f.width, f.height)
		}
		band.Geo = f.geo
		band.NoData, band.HasNoData = f.nodata, f.hasNoData
		band.Source = fmt.Sprintf("%s:%d", f.name, b)
		out[i] = band
	}
	if err := f.decodeWhole(out, bands); err != nil {
		return nil, err
	}
	return out, nil
}

// decodeWhole fills the bands' float32 planes: the whole image as one
// window, so that chunks sharing the very same bytes anywhere in the image
// are decoded once, within the time budget of one read (TimeBudget).
func (f *File) decodeWhole(out []*compute.Band, bands []int) error {
	tl := f.targets(bands, func(i int) target {
		return f.floatTarget(f32Bytes(out[i].Data))
	})
	return f.decodeWindow(tl, 0, f.height, f.TimeBudget())
}

// chunkWord is "tile" or "strip".
func (f *File) chunkWord() string {
	if f.tiled {
		return "tile"
	}
	return "strip"
}

// chunkError puts a decoding error in a user's words, the detail after.
func (f *File) chunkError(ci, vh int, err error) error {
	what := f.chunkWord()
	switch {
	case errors.Is(err, errShort):
		return fmt.Errorf("the image data is damaged or incomplete (%s %d: %s data ends before the %s's %d bytes)", what, ci, compressionName(f.comp), what, f.rowBytes*vh)
	case errors.Is(err, errTime):
		return fmt.Errorf("decoding took longer than %v, the limit for an image this size; the file may be damaged or hostile (stopped in %s %d)", f.TimeBudget().Round(time.Second), what, ci)
	case errors.Is(err, errRead):
		return fmt.Errorf("%s %d: %w", what, ci, err)
	}
	return fmt.Errorf("the image data is damaged (%s %d: %s data is corrupt: %v)", what, ci, compressionName(f.comp), err)
}

// TimeBudget is how long decoding the image may take before ReadBands
// gives up: 10 s plus a second for every 16 MiB to decode. Honest files
// decode many times faster; the budget stops what the other limits did not
// foresee.
func (f *File) TimeBudget() time.Duration {
	return timeBase + time.Duration(f.work/uint64(minRate))*time.Second
}

// checkOverlap refuses destination planes that share memory, which would
// make the workers race and leave one band's pixels in another's plane. The
// same plane given for the same band twice is allowed: both receive the
// same pixels from the same worker.
func checkOverlap(dst [][]float32, bands []int) error {
	type span struct {
		lo, hi uintptr
		band   int
	}
	var spans []span
	for i, p := range dst {
		if len(p) == 0 {
			continue
		}
		lo := uintptr(unsafe.Pointer(unsafe.SliceData(p)))
		spans = append(spans, span{lo, lo + uintptr(len(p))*4, bands[i]})
	}
	if len(spans) < 2 {
		return nil
	}
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.lo, b.lo) })
	for i := 1; i < len(spans); i++ {
		a, b := spans[i-1], spans[i]
		if b.lo == a.lo && b.hi == a.hi && b.band == a.band {
			continue
		}
		if b.lo < a.hi {
			return fmt.Errorf("the destination planes of bands %d and %d overlap", a.band, b.band)
		}
	}
	return nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// Memory estimates the bytes ReadBands of that many bands takes: their
// float32 planes and the decoding workers' buffers.
func (f *File) Memory(bands int) int64 {
	cfg := f.workerConfig()
	workers := max(1, min(int64(par.DefaultThreads()), workBudget/cfg.memory))
	return int64(bands)*int64(f.width)*int64(f.height)*4 + workers*cfg.memory
}
