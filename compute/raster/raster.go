package raster

import (
	"bufio"
	"bytes"
	"encoding/binary"
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
	"unsafe"

	"canopy/compute"
	"canopy/compute/geotiff"
	"canopy/compute/internal/infile"
	"canopy/compute/outfile"
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

// sniff reads the first bytes of f.
func sniff(f *os.File) (kind, error) {
	var h [8]byte
	n, err := f.ReadAt(h[:], 0)
	if err != nil && err != io.EOF {
		return kindUnknown, err
	}
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

// opened is a file opened for reading, its kind known.
type opened struct {
	path string
	f    *os.File
	size int64
	kind kind
}

// open opens path (a regular file only: a FIFO, device or directory is an
// error at once) and sniffs what it is. The file is opened once; every
// later read goes through the same handle.
func open(path string) (*opened, error) {
	f, st, err := infile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	k, err := sniff(f)
	if err != nil {
		f.Close()
		return nil, openError(path, err)
	}
	if k == kindUnknown {
		f.Close()
		return nil, notRaster(path)
	}
	return &opened{path: path, f: f, size: st.Size(), kind: k}, nil
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
	o, err := open(path)
	if err != nil {
		return 0, err
	}
	defer o.f.Close()
	if o.kind == kindPNG {
		if _, err := pngHeader(o); err != nil {
			return 0, err
		}
		return 1, nil
	}
	f, err := geotiff.NewReader(o.f, o.size, path)
	if err != nil {
		return 0, err
	}
	return f.Bands(), nil
}

func notRaster(path string) error {
	return fmt.Errorf("read %s: not a GeoTIFF or PNG file", path)
}

// Load reads the band a spec names. A multi-band file needs its band given
// ("FILE:B"); a single-band file may omit it.
func Load(spec string) (*compute.Band, error) {
	h, err := openHeader(spec)
	if err != nil {
		return nil, err
	}
	defer h.close()
	bs, err := h.read(nil, h.band)
	if err != nil {
		return nil, err
	}
	return bs[0], nil
}

// header is the file of a band spec, opened and its header read: the size
// is known, nothing is decoded yet.
type header struct {
	path string
	band int           // 1-based
	file *os.File      // the open file
	tif  *geotiff.File // nil for a PNG
	png  pngInfo
	w, h int
}

// openHeader resolves spec, reads its file's header and checks that the
// band exists. Close the header when done.
func openHeader(spec string) (*header, error) {
	path, band, err := resolve(spec)
	if err != nil {
		return nil, err
	}
	o, err := open(path)
	if err != nil {
		return nil, err
	}
	h := &header{path: path, band: band, file: o.f}
	switch o.kind {
	case kindTIFF:
		f, err := geotiff.NewReader(o.f, o.size, path)
		if err != nil {
			o.f.Close()
			return nil, err
		}
		if band == 0 {
			if f.Bands() != 1 {
				o.f.Close()
				return nil, fmt.Errorf("read %s: the file has %d bands; pick one as %s:B (B from 1 to %d)", path, f.Bands(), path, f.Bands())
			}
			h.band = 1
		}
		h.tif, h.w, h.h = f, f.Width(), f.Height()
	default:
		h.band = max(band, 1)
		if h.png, err = pngHeader(o); err != nil {
			o.f.Close()
			return nil, err
		}
		h.w, h.h = h.png.Width, h.png.Height
	}
	if err := h.check(h.band); err != nil {
		h.close()
		return nil, err
	}
	return h, nil
}

// check reports a band (1-based; 0 stands for 1) the file does not have,
// as geotiff.File.ReadBands would, but before anything is allocated.
func (h *header) check(band int) error {
	if h.tif == nil {
		if band > 1 {
			return fmt.Errorf("read %s: a PNG has 1 band, not %d", h.path, band)
		}
		return nil
	}
	if n := h.tif.Bands(); band < 1 || band > n {
		s := "s"
		if n == 1 {
			s = ""
		}
		return fmt.Errorf("read %s: band %d does not exist (the file has %d band%s)", h.path, band, n, s)
	}
	return nil
}

// source names band b of the file as the decoded band's Source will.
func (h *header) source(b int) string { return fmt.Sprintf("%s:%d", h.path, b) }

func (h *header) close() {
	if h != nil && h.file != nil {
		h.file.Close()
		h.file = nil
	}
}

// memory is what decoding bands (band numbers) of the file takes.
func (h *header) memory(bands int) int64 {
	if h.tif != nil {
		return h.tif.Memory(bands)
	}
	return h.png.memory()
}

// read decodes bands of the file in one pass, band i into planes[i] when
// that is given and not nil (see geotiff.File.ReadBandsInto). A PNG's one
// band is decoded once; a band listed again shares it, or is copied into
// its own plane.
func (h *header) read(planes [][]float32, bands ...int) ([]*compute.Band, error) {
	if h.tif != nil {
		return h.tif.ReadBandsInto(planes, bands...)
	}
	plane := func(i int) []float32 {
		if i < len(planes) {
			return planes[i]
		}
		return nil
	}
	b, err := decodePNG(h.path, h.file, h.w, h.h, plane(0))
	if err != nil {
		return nil, err
	}
	out := []*compute.Band{b}
	for i := 1; i < len(bands); i++ {
		p := plane(i)
		if p == nil || unsafe.SliceData(p) == unsafe.SliceData(b.Data) {
			out = append(out, b)
			continue
		}
		if len(p) != len(b.Data) {
			return nil, fmt.Errorf("read %s: destination holds %d pixels, band is %dx%d", h.path, len(p), h.w, h.h)
		}
		c := *b
		c.Data = p
		copy(c.Data, b.Data)
		out = append(out, &c)
	}
	return out, nil
}

// PNGMemory is the most memory decoding one PNG band may take (the
// decoded image and its float32 plane): PNG is for small bands, large
// rasters come as tiled GeoTIFFs.
const PNGMemory = 1 << 30

// pngInfo is what a PNG's chunks say before anything is decoded.
type pngInfo struct {
	image.Config
	bytesPerPixel int
	idat          int64 // bytes of compressed image data
}

// memory is what decoding takes: the image as image/png holds it and the
// float32 plane.
func (p pngInfo) memory() int64 {
	return int64(p.Width) * int64(p.Height) * int64(p.bytesPerPixel+4)
}

// pngHeader reads a PNG's header and checks it is a grayscale image whose
// size its compressed data could hold and whose decoding fits in
// PNGMemory, before anything is decoded.
func pngHeader(o *opened) (pngInfo, error) {
	var p pngInfo
	cfg, err := png.DecodeConfig(io.NewSectionReader(o.f, 0, o.size))
	if err != nil {
		return p, fmt.Errorf("read %s: %w", o.path, err)
	}
	p.Config = cfg
	switch cfg.ColorModel {
	case color.GrayModel:
		p.bytesPerPixel = 1
	case color.Gray16Model:
		p.bytesPerPixel = 2
	default:
		return p, fmt.Errorf("read %s: only 8- or 16-bit grayscale PNGs load as a band; this one is in colour", o.path)
	}
	// Sum the IDAT chunks: other chunks (text, padding) hold no pixels.
	br := bufio.NewReaderSize(io.NewSectionReader(o.f, 8, o.size-8), 64<<10)
	var hdr [8]byte
	for {
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			break // the decoder reports a truncated file
		}
		n := int64(binary.BigEndian.Uint32(hdr[:4]))
		typ := string(hdr[4:])
		if typ == "IDAT" {
			p.idat += n
		}
		if typ == "IEND" {
			break
		}
		if _, err := br.Discard(int(min(n+4, o.size))); err != nil {
			break
		}
	}
	p.idat = min(p.idat, o.size) // a chunk may claim more bytes than the file has
	raw := int64(cfg.Width)*int64(cfg.Height)*int64(p.bytesPerPixel) + int64(cfg.Height)
	// DEFLATE expands at most 1032:1; refuse sizes the data cannot hold.
	if raw > p.idat*1100+(1<<20) {
		return p, fmt.Errorf("read %s: the PNG claims %dx%d pixels but holds only %d bytes of image data, too little for that (damaged, or a decompression bomb)", o.path, cfg.Width, cfg.Height, p.idat)
	}
	if m := p.memory(); m > PNGMemory {
		return p, fmt.Errorf("read %s: the PNG is %dx%d pixels; decoding it would take %s of memory, more than the %s a PNG band may use (convert it to a tiled GeoTIFF: gdal_translate -co TILED=YES -co COMPRESS=DEFLATE in.png out.tif)", o.path, cfg.Width, cfg.Height, Bytes(m), Bytes(PNGMemory))
	}
	return p, nil
}

// decodePNG decodes the 8- or 16-bit grayscale PNG in f whose header said
// w×h as a band without georeferencing, into plane when it is not nil (it
// must hold w*h pixels, all of which are written).
func decodePNG(path string, f *os.File, w, h int, plane []float32) (*compute.Band, error) {
	if plane != nil && len(plane) != w*h {
		return nil, fmt.Errorf("read %s: destination holds %d pixels, band is %dx%d", path, len(plane), w, h)
	}
	st, err := f.Stat()
	if err != nil {
		return nil, openError(path, err)
	}
	img, err := png.Decode(bufio.NewReaderSize(io.NewSectionReader(f, 0, st.Size()), 256<<10))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if r := img.Bounds(); r.Dx() != w || r.Dy() != h {
		return nil, fmt.Errorf("read %s: the image is %dx%d, its header said %dx%d (file changed while read?)", path, r.Dx(), r.Dy(), w, h)
	}
	var b *compute.Band
	if plane != nil {
		b = &compute.Band{Width: w, Height: h, Data: plane}
	} else {
		b = compute.NewBand(w, h)
	}
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
	return LoadPairInto(redSpec, nirSpec, nil)
}

// PlaneAlloc provides the planes LoadPairInto decodes the red and NIR bands
// into, each w*h float32 pixels, row-major. It is called once, after both
// files' headers are read and their sizes checked equal, before any pixel
// is decoded. A nil plane is allocated as LoadPair allocates it. The
// planes' previous contents do not matter: every pixel is written. The
// planes must not overlap (unless both specs name the same band of the
// same file).
type PlaneAlloc func(w, h int) (red, nir []float32, err error)

// LoadPairInto is LoadPair decoding into planes from alloc (nil: planes are
// allocated as LoadPair does), so that a caller can have the bands land
// straight in memory of its own, such as a GPU backend's mapped upload
// buffers. The returned bands' Data are alloc's planes. Errors found in
// the headers (a missing file or band, different sizes) are reported
// before alloc is called; once it has been, the planes are the caller's
// to release whether or not LoadPairInto succeeds.
func LoadPairInto(redSpec, nirSpec string, alloc PlaneAlloc) (red, nir *compute.Band, err error) {
	rp, rb, err := resolve(redSpec)
	if err != nil {
		return nil, nil, fmt.Errorf("red band: %w", err)
	}
	np, nb, err := resolve(nirSpec)
	if err != nil {
		return nil, nil, fmt.Errorf("nir band: %w", err)
	}
	same := rp == np && rb != 0 && nb != 0

	// Headers first: sizes are known and checked before anything is
	// allocated or decoded.
	var rh, nh *header
	if same {
		if rh, err = openHeader(redSpec); err != nil {
			return nil, nil, err
		}
		if err := rh.check(nb); err != nil {
			rh.close()
			return nil, nil, err
		}
		nh = rh
	} else {
		err = both(func() (err error) {
			rh, err = openHeader(redSpec)
			return err
		}, func() (err error) {
			nh, err = openHeader(nirSpec)
			return err
		})
		if err != nil {
			rh.close()
			nh.close()
			return nil, nil, err
		}
		defer nh.close()
	}
	defer rh.close()
	if rh.w != nh.w || rh.h != nh.h {
		// The words compute.CheckPair uses once the bands are decoded.
		return nil, nil, compute.SizeMismatch("red", rh.source(rh.band), rh.w, rh.h, "nir", nh.source(nh.band), nh.w, nh.h)
	}

	var rplane, nplane []float32
	if alloc != nil {
		w, h := rh.w, rh.h
		if rplane, nplane, err = alloc(w, h); err != nil {
			return nil, nil, fmt.Errorf("allocating %dx%d planes: %w", w, h, err)
		}
		for _, p := range []struct {
			name  string
			plane []float32
		}{{"red", rplane}, {"nir", nplane}} {
			if p.plane != nil && len(p.plane) != w*h {
				return nil, nil, fmt.Errorf("allocating %dx%d planes: the %s plane holds %d pixels, want %d", w, h, p.name, len(p.plane), w*h)
			}
		}
		if overlap(rplane, nplane) && !(same && rb == nb && unsafe.SliceData(rplane) == unsafe.SliceData(nplane)) {
			return nil, nil, fmt.Errorf("allocating %dx%d planes: the red and nir planes overlap", w, h)
		}
	}

	if same {
		bs, err := rh.read([][]float32{rplane, nplane}, rb, nb)
		if err != nil {
			return nil, nil, err
		}
		red, nir = bs[0], bs[1]
	} else {
		err = both(func() error {
			bs, err := rh.read([][]float32{rplane}, rh.band)
			if err == nil {
				red = bs[0]
			}
			return err
		}, func() error {
			bs, err := nh.read([][]float32{nplane}, nh.band)
			if err == nil {
				nir = bs[0]
			}
			return err
		})
		if err != nil {
			return nil, nil, err
		}
	}
	if err := compute.CheckPair(red, nir); err != nil {
		return nil, nil, err
	}
	return red, nir, nil
}

// both runs the red and the nir step in parallel and reports the errors of
// either or both.
func both(redStep, nirStep func() error) error {
	var rerr, nerr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		rerr = redStep()
	}()
	nerr = nirStep()
	wg.Wait()
	switch {
	case rerr != nil && nerr != nil:
		return fmt.Errorf("%v; %v", rerr, nerr)
	case rerr != nil:
		return rerr
	}
	return nerr
}

// overlap reports whether two planes share memory.
func overlap(a, b []float32) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	alo, blo := uintptr(unsafe.Pointer(unsafe.SliceData(a))), uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return alo < blo+uintptr(len(b))*4 && blo < alo+uintptr(len(a))*4
}

// WriteGeoTIFF writes b as a single-band float32 GeoTIFF (tiled, DEFLATE
// with the floating-point predictor, BigTIFF past 4 GiB) carrying b.Geo's
// georeferencing and GDAL_NODATA (the band's nodata, or nan), through an
// outfile.Set of its own: a temporary file in the same directory renamed
// into place, so a failure never destroys an existing file at path; a
// symbolic link, device, FIFO or directory at path is refused; a replaced
// file keeps its mode. A run with several outputs or with inputs to
// protect makes its own outfile.Set and calls EncodeGeoTIFF.
func WriteGeoTIFF(path string, b *compute.Band) error {
	s := outfile.NewSet()
	defer s.Abort()
	w, err := s.Create(path)
	if err != nil {
		return err
	}
	if err := EncodeGeoTIFF(w, b); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return s.Commit()
}

// EncodeGeoTIFF encodes b as WriteGeoTIFF does into w, an output of an
// outfile.Set (or any io.WriterAt).
func EncodeGeoTIFF(w io.WriterAt, b *compute.Band) error {
	return geotiff.WriteBandTo(w, b, geotiff.WriteOptions{})
}
