package raster

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"

	"canopy/compute"
	"canopy/compute/geotiff"
)

// ParseSpec splits a band spec "FILE[:B]" into the file path and the band
// number (1-based; 0 when the spec names no band). Only a trailing ":digits"
// is a band, so "C:\data\red.tif" and "scenes:2024/red.tif" are plain paths.
func ParseSpec(spec string) (path string, band int, err error) {
	if spec == "" {
		return "", 0, errors.New("empty band spec: want FILE or FILE:BAND")
	}
	i := strings.LastIndexByte(spec, ':')
	if i < 0 || i == len(spec)-1 {
		return spec, 0, nil
	}
	digits := spec[i+1:]
	for _, c := range digits {
		if c < '0' || c > '9' {
			return spec, 0, nil
		}
	}
	if i == 0 {
		return "", 0, fmt.Errorf("band spec %q names no file", spec)
	}
	b, err := strconv.Atoi(digits)
	if err != nil || b > 65535 {
		return "", 0, fmt.Errorf("band spec %q: band %s is out of range (1 to 65535)", spec, digits)
	}
	if b == 0 {
		return "", 0, fmt.Errorf("band spec %q: bands are numbered from 1", spec)
	}
	return spec[:i], b, nil
}

// resolve parses spec, preferring a file literally named spec (one with a
// ":digits" suffix in its name) when the stripped path does not exist.
func resolve(spec string) (string, int, error) {
	path, band, err := ParseSpec(spec)
	if band != 0 {
		if _, e1 := os.Stat(path); e1 != nil {
			if st, e2 := os.Stat(spec); e2 == nil && !st.IsDir() {
				return spec, 0, nil
			}
		}
	}
	return path, band, err
}

// kind is what a file's first bytes say it is.
type kind int

const (
	kindUnknown kind = iota
	kindTIFF
	kindPNG
)

func sniff(path string) (kind, error) {
	f, err := os.Open(path)
	if err != nil {
		return kindUnknown, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return kindUnknown, errors.New("is a directory")
	}
	var h [8]byte
	n, _ := io.ReadFull(f, h[:])
	b := h[:n]
	switch {
	case bytes.HasPrefix(b, []byte("II*\x00")), bytes.HasPrefix(b, []byte("MM\x00*")),
		bytes.HasPrefix(b, []byte("II+\x00")), bytes.HasPrefix(b, []byte("MM\x00+")):
		return kindTIFF, nil
	case bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")):
		return kindPNG, nil
	}
	return kindUnknown, nil
}

// openError turns an os error into "read FILE: reason".
func openError(path string, err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("read %s: %w", path, err)
}

// Count returns the number of bands in the file at path (1 for PNG).
func Count(path string) (int, error) {
	k, err := sniff(path)
	if err != nil {
		return 0, openError(path, err)
	}
	switch k {
	case kindTIFF:
		f, err := geotiff.Open(path)
		if err != nil {
			return 0, err
		}
		defer f.Close()
		return f.Bands(), nil
	case kindPNG:
		if _, err := pngConfig(path); err != nil {
			return 0, err
		}
		return 1, nil
	}
	return 0, notRaster(path)
}

func notRaster(path string) error {
	return fmt.Errorf("read %s: not a GeoTIFF or PNG file", path)
}

// Load reads the band a spec names. A multi-band file needs its band given
// ("FILE:B"); a single-band file may omit it.
func Load(spec string) (*compute.Band, error) {
	bs, err := load(spec, 0)
	if err != nil {
		return nil, err
	}
	return bs[0], nil
}

// load reads the band of spec and, when extra > 0, also band extra of the
// same file in the same pass.
func load(spec string, extra int) ([]*compute.Band, error) {
	path, band, err := resolve(spec)
	if err != nil {
		return nil, err
	}
	k, err := sniff(path)
	if err != nil {
		return nil, openError(path, err)
	}
	switch k {
	case kindTIFF:
		f, err := geotiff.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if band == 0 {
			if f.Bands() != 1 {
				return nil, fmt.Errorf("read %s: the file has %d bands; pick one as %s:B (B from 1 to %d)", path, f.Bands(), path, f.Bands())
			}
			band = 1
		}
		want := []int{band}
		if extra > 0 {
			want = append(want, extra)
		}
		return f.ReadBands(want...)
	case kindPNG:
		if band > 1 || extra > 1 {
			return nil, fmt.Errorf("read %s: a PNG has 1 band, not %d", path, max(band, extra))
		}
		b, err := loadPNG(path)
		if err != nil {
			return nil, err
		}
		if extra > 0 {
			return []*compute.Band{b, b}, nil
		}
		return []*compute.Band{b}, nil
	}
	return nil, notRaster(path)
}

// pngConfig reads a PNG's header and checks it is a grayscale image whose
// size its data could plausibly hold.
func pngConfig(path string) (image.Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return image.Config{}, openError(path, err)
	}
	defer f.Close()
	cfg, err := png.DecodeConfig(f)
	if err != nil {
		return cfg, fmt.Errorf("read %s: %w", path, err)
	}
	if cfg.ColorModel != color.GrayModel && cfg.ColorModel != color.Gray16Model {
		return cfg, fmt.Errorf("read %s: only 8- or 16-bit grayscale PNGs load as a band; this one is in colour", path)
	}
	st, err := f.Stat()
	if err != nil {
		return cfg, openError(path, err)
	}
	// DEFLATE expands at most 1032:1; refuse sizes the file cannot hold.
	if int64(cfg.Width)*int64(cfg.Height)*2 > st.Size()*1100+(1<<20) {
		return cfg, fmt.Errorf("read %s: PNG claims %dx%d pixels in only %d bytes", path, cfg.Width, cfg.Height, st.Size())
	}
	return cfg, nil
}

// loadPNG reads an 8- or 16-bit grayscale PNG as a band without
// georeferencing.
func loadPNG(path string) (*compute.Band, error) {
	if _, err := pngConfig(path); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, openError(path, err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	r := img.Bounds()
	b := compute.NewBand(r.Dx(), r.Dy())
	b.Source = path + ":1"
	switch g := img.(type) {
	case *image.Gray:
		for y := 0; y < b.Height; y++ {
			row := g.Pix[y*g.Stride:][:b.Width]
			dst := b.Data[y*b.Width:][:b.Width]
			for x, v := range row {
				dst[x] = float32(v)
			}
		}
	case *image.Gray16:
		for y := 0; y < b.Height; y++ {
			row := g.Pix[y*g.Stride:][:2*b.Width]
			dst := b.Data[y*b.Width:][:b.Width]
			for x := range dst {
				dst[x] = float32(uint16(row[2*x])<<8 | uint16(row[2*x+1]))
			}
		}
	default:
		return nil, fmt.Errorf("read %s: only 8- or 16-bit grayscale PNGs load as a band", path)
	}
	return b, nil
}

// LoadPair loads the red and near-infrared bands (in parallel, or in one
// pass when both are bands of the same file) and checks that they can be
// combined: the same size and, when both are georeferenced, the same grid.
// Errors name both files.
func LoadPair(redSpec, nirSpec string) (red, nir *compute.Band, err error) {
	rp, rb, err := resolve(redSpec)
	if err != nil {
		return nil, nil, fmt.Errorf("red band: %w", err)
	}
	np, nb, err := resolve(nirSpec)
	if err != nil {
		return nil, nil, fmt.Errorf("nir band: %w", err)
	}
	if rp == np && rb != 0 && nb != 0 {
		bs, err := load(redSpec, nb)
		if err != nil {
			return nil, nil, err
		}
		red, nir = bs[0], bs[1]
	} else {
		var rerr, nerr error
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			red, rerr = Load(redSpec)
		}()
		nir, nerr = Load(nirSpec)
		wg.Wait()
		switch {
		case rerr != nil && nerr != nil:
			return nil, nil, fmt.Errorf("%v; %v", rerr, nerr)
		case rerr != nil:
			return nil, nil, rerr
		case nerr != nil:
			return nil, nil, nerr
		}
	}
	if _, err := compute.PairInput(red, nir); err != nil {
		return nil, nil, err
	}
	return red, nir, nil
}

// WriteGeoTIFF writes b as a single-band float32 GeoTIFF (tiled, DEFLATE
// with the floating-point predictor, BigTIFF past 4 GiB) carrying b.Geo's
// georeferencing and GDAL_NODATA (the band's nodata, or nan). It writes a
// temporary file in the same directory and renames it, so a failure never
// destroys an existing file at path.
func WriteGeoTIFF(path string, b *compute.Band) error {
	return geotiff.Write(path, b, geotiff.WriteOptions{})
}
