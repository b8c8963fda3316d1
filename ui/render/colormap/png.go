package colormap

import (
	"bufio"
	"fmt"
	"image"
	"image/png"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"canopy/compute"
	"canopy/compute/outfile"
)

// PNGOptions controls WritePNG.
type PNGOptions struct {
	// Ramp names the colour ramp; "" is DefaultRamp.
	Ramp string
	// Stretch is the range of a continuous ramp; the zero value means Full.
	Stretch Stretch
	// Legend adds a legend strip to the right of the map (below it when
	// the map is more than twice as wide as it is tall).
	Legend bool
	// Title, when set, is written at the top of the strip (a strip is added
	// for it even without Legend).
	Title string
	// Geo, when valid, makes WritePNG write a world file next to a PNG
	// of the map alone (no Legend, no Title).
	Geo *compute.GeoRef
	// Heading heads the legend: the index shown ("" is "NDVI").
	Heading string
	// Classes, when set, draws the map in these classes (NewClasses)
	// instead of Ramp and Stretch.
	Classes ClassTable
}

// lut returns the LUT the options describe.
func (opt PNGOptions) lut() (*LUT, error) {
	var l *LUT
	var err error
	if opt.Classes != nil {
		l, err = NewClasses(opt.Classes)
	} else {
		st := opt.Stretch
		if st == (Stretch{}) {
			st = Full
		}
		l, err = New(opt.Ramp, st.Lo, st.Hi)
	}
	if err != nil {
		return nil, err
	}
	l.heading = opt.Heading
	return l, nil
}

// MapOnly reports whether the picture the options describe is the map
// alone, whose pixels a world file may place.
func (opt PNGOptions) MapOnly() bool { return !opt.Legend && opt.Title == "" }

// WorldFile returns the six lines of an ESRI world file for rasters placed
// by g (A, D, B, E, C, F: pixel size in x, the two rotation terms, pixel
// size in y (negative for north-up), and the map coordinates of the CENTRE
// of the top-left pixel), and false if g places no pixel.
func WorldFile(g *compute.GeoRef) (string, bool) {
	t, ok := g.Affine()
	if !ok {
		return "", false
	}
	x, y, _ := g.PixelToMap(0, 0)
	var b strings.Builder
	for _, v := range []float64{t[1], t[4], t[2], t[5], x, y} {
		b.WriteString(strconv.FormatFloat(v, 'f', -1, 64))
		b.WriteByte('\n')
	}
	return b.String(), true
}

// WorldFilePath returns the world file name for a PNG: the extension
// replaced by ".pgw" (map.png -> map.pgw).
func WorldFilePath(pngPath string) string {
	return strings.TrimSuffix(pngPath, filepath.Ext(pngPath)) + ".pgw"
}

// legendScale sizes the legend of a w×h map so that it stays readable next
// to it: 1 up to 600 pixels, growing with the map to 8 at 4800 and above.
func legendScale(w, h int) float64 {
	return math.Max(1, math.Min(8, float64(min(w, h))/600))
}

// Compose returns the map of the w×h NDVI plane as written by WritePNG:
// the full-resolution map at the top-left corner, and with opt.Legend or
// opt.Title a white strip holding them to its right (below a map more than
// twice as wide as tall). Areas that are neither map nor strip are
// transparent. It needs one byte per pixel.
func Compose(ndvi []float32, w, h int, opt PNGOptions) (*image.Paletted, error) {
	if w <= 0 || h <= 0 || len(ndvi) != w*h {
		return nil, fmt.Errorf("map of %dx%d pixels given %d values", w, h, len(ndvi))
	}
	l, err := opt.lut()
	if err != nil {
		return nil, err
	}
	if opt.MapOnly() {
		return l.Image(ndvi, w, h), nil
	}
	var strip *image.Paletted
	if opt.Legend {
		strip = l.legend(legendScale(w, h), opt.Title)
	} else {
		strip = l.titleOnly(legendScale(w, h), opt.Title)
	}
	sw, sh := strip.Rect.Dx(), strip.Rect.Dy()
	below := w > 2*h
	var W, H int
	var at image.Point
	if below {
		W, H, at = max(w, sw), h+sh, image.Pt(0, h)
	} else {
		W, H, at = w+sw, max(h, sh), image.Pt(w, 0)
	}
	img := image.NewPaletted(image.Rect(0, 0, W, H), l.Palette())
	l.fillIndices(img.Pix, img.Stride, ndvi, w, h)
	white := image.Rect(at.X, at.Y, W, H)
	for y := white.Min.Y; y < white.Max.Y; y++ {
		row := img.Pix[img.PixOffset(white.Min.X, y):img.PixOffset(white.Max.X, y)]
		for i := range row {
			row[i] = indexWhite
		}
	}
	drawInto(img, strip, at)
	return img, nil
}

// titleOnly draws just a title line on white.
func (l *LUT) titleOnly(scale float64, title string) *image.Paletted {
	s := math.Max(1, scale)
	face := newFace(16*s, true)
	defer face.Close()
	pad := int(math.Round(legPad * s))
	lh := face.Metrics().Height.Ceil()
	c := newCanvas(l.palette, pad+textWidth(face, title)+pad, pad+lh+pad)
	c.label(face, title, pad, pad+lh/2)
	c.flush()
	return c.img
}

// WritePNG writes the coloured map of the w×h NDVI plane to path as an
// 8-bit paletted PNG (see Compose), transparent where the value is NaN,
// and, when opt.Geo is valid and the picture is the map alone
// (opt.MapOnly), its world file (WorldFilePath) placing the map's pixels,
// with a .prj and a GDAL .aux.xml naming the CRS (WriteSidecars).
// A picture with a legend or title strip gets no world file: a GIS would
// place the strip on the ground as land beside the scene. Both files are written
// under temporary names and renamed into place, so a failure leaves any
// existing file untouched. Memory: one byte per pixel of the picture.
func WritePNG(path string, ndvi []float32, w, h int, opt PNGOptions) error {
	img, err := Compose(ndvi, w, h, opt)
	if err != nil {
		return fmt.Errorf("write map %s: %w", path, err)
	}
	level := png.DefaultCompression
	if w*h > 16<<20 {
		level = png.BestSpeed
	}
	enc := png.Encoder{CompressionLevel: level}
	if err := writeAtomic(path, func(f *bufio.Writer) error { return enc.Encode(f, img) }); err != nil {
		return fmt.Errorf("write map %s: %w", path, err)
	}
	if opt.MapOnly() {
		if _, err := WriteSidecars(path, opt.Geo); err != nil {
			return fmt.Errorf("write map %s: %w", path, err)
		}
	}
	return nil
}

// EncodePNG writes the picture WritePNG would write into w (no world
// file: the caller writes WorldFile(opt.Geo) beside it when the picture is
// the map alone).
func EncodePNG(w io.Writer, ndvi []float32, width, height int, opt PNGOptions) error {
	img, err := Compose(ndvi, width, height, opt)
	if err != nil {
		return err
	}
	level := png.DefaultCompression
	if width*height > 16<<20 {
		level = png.BestSpeed
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	enc := png.Encoder{CompressionLevel: level}
	if err := enc.Encode(bw, img); err != nil {
		return err
	}
	return bw.Flush()
}

// writeAtomic writes through fill to a temporary file in path's directory
// and renames it to path once complete.
func writeAtomic(path string, fill func(*bufio.Writer) error) error {
	return outfile.WriteFileBuffered(path, fill)
}
