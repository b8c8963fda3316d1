package layout

import (
	"bufio"
	"bytes"
	"fmt"
	"image"
	"image/png"
	"io"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/vgsvg"

	"canopy/compute/outfile"
	"canopy/ui/render/colormap"
)

// Formats are the files Write and Encode make.
const (
	PNG = "png"
	PDF = "pdf"
	SVG = "svg"
)

// FormatOf returns the format a path's extension names, or an error.
func FormatOf(path string) (string, error) {
	switch ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(path), ".")); ext {
	case PNG, PDF, SVG:
		return ext, nil
	default:
		return "", fmt.Errorf("layout %s: name it .png, .pdf or .svg", path)
	}
}

// Render draws the layout as a picture (the PNG's pixels).
func Render(m Map, opt Options) (*image.RGBA, Geometry, error) {
	p, err := newPlan(m, opt)
	if err != nil {
		return nil, Geometry{}, err
	}
	_, s := newPNGSurface(p)
	p.draw(s)
	return s.img, p.geometry(), nil
}

// Encode writes the layout to w as format (PNG, PDF or SVG).
func Encode(w io.Writer, format string, m Map, opt Options) (Geometry, error) {
	p, err := newPlan(m, opt)
	if err != nil {
		return Geometry{}, err
	}
	switch format {
	case PNG:
		_, s := newPNGSurface(p)
		p.draw(s)
		level := png.DefaultCompression
		if p.w*p.h > 16<<20 {
			level = png.BestSpeed
		}
		err = (&png.Encoder{CompressionLevel: level}).Encode(w, s.img)
	case PDF:
		s := newPDFSurface(p)
		p.draw(s)
		if s.doc.Err() {
			return Geometry{}, fmt.Errorf("layout PDF: %w", s.doc.Error())
		}
		err = s.doc.Output(w)
	case SVG:
		c := vgsvg.NewWith(vgsvg.UseWH(vg.Length(float64(p.w)/p.px), vg.Length(float64(p.h)/p.px)))
		s := &vgSurface{c: c, h: float64(p.h), px: p.px}
		p.draw(s)
		var buf bytes.Buffer
		if _, err = c.WriteTo(&buf); err == nil {
			// vgsvg labels its embedded PNG as JPEG; say what it is.
			_, err = w.Write(bytes.ReplaceAll(buf.Bytes(), []byte("data:image/jpg;base64,"), []byte("data:image/png;base64,")))
		}
	default:
		return Geometry{}, fmt.Errorf("layout: unknown format %q (png, pdf, svg)", format)
	}
	if err != nil {
		return Geometry{}, fmt.Errorf("layout %s: %w", format, err)
	}
	return p.geometry(), nil
}

// Write writes the layout to path in the format its extension names
// (.png, .pdf, .svg), through a temporary file renamed into place.
func Write(path string, m Map, opt Options) (Geometry, error) {
	format, err := FormatOf(path)
	if err != nil {
		return Geometry{}, err
	}
	var g Geometry
	err = outfile.WriteFileBuffered(path, func(w *bufio.Writer) error {
		var err error
		g, err = Encode(w, format, m, opt)
		return err
	})
	if err != nil {
		return Geometry{}, fmt.Errorf("write layout %s: %w", path, err)
	}
	return g, nil
}

// WriteMapPNG writes the map alone at full resolution (one PNG pixel per
// raster pixel, transparent where the value is NaN) and, when m.Geo
// places its pixels, the files that place it in a GIS: the world file
// (.pgw, equal to the geotransform with the centre of the top-left
// pixel), and, when PROJ knows the CRS, a .prj (ESRI WKT) and a GDAL
// .aux.xml (which GDAL and QGIS read for the CRS). It returns the paths
// written.
func WriteMapPNG(path string, m Map) ([]string, error) {
	if err := m.check(); err != nil {
		return nil, fmt.Errorf("write map %s: %w", path, err)
	}
	var img image.Image
	if m.Composite != nil {
		img = m.Composite.Image()
	} else {
		img = m.lut().Image(m.Plane, m.Width, m.Height)
	}
	level := png.DefaultCompression
	if m.Width*m.Height > 16<<20 {
		level = png.BestSpeed
	}
	err := outfile.WriteFileBuffered(path, func(w *bufio.Writer) error {
		return (&png.Encoder{CompressionLevel: level}).Encode(w, img)
	})
	if err != nil {
		return nil, fmt.Errorf("write map %s: %w", path, err)
	}
	side, err := colormap.WriteSidecars(path, m.Geo)
	return append([]string{path}, side...), err
}
