package layout

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"canopy/compute"
	"canopy/ui/render/colormap"
	"canopy/ui/render/composite"
)

// Map is what a layout shows: a w×h index plane, its georeferencing and
// the colours to draw it in.
type Map struct {
	// Plane holds Width×Height values, row by row; NaN is no data.
	Plane         []float32
	Width, Height int
	// Geo places the pixels; nil or invalid for a raster without
	// georeferencing (then there is no scale bar, arrow or grid).
	Geo *compute.GeoRef
	// LUT colours the map and makes the legend; nil is the default ramp
	// over [-1, 1].
	LUT *colormap.LUT
	// Composite, when set, is drawn instead of Plane through LUT (a
	// natural- or false-colour view of Width×Height pixels; Plane may then
	// be nil), and the legend gives its band combination and stretch.
	Composite *composite.Composite
}

// Options say how a layout looks.
type Options struct {
	// Width and Height are the picture's size in pixels; both 0 with no
	// Paper gives 1600×1200 (or 1200×1600 for a tall map).
	Width, Height int
	// Paper names a paper size (PaperSizes: "a4", "a3", "letter"…); when
	// set it replaces Width and Height, at DPI.
	Paper string
	// Orientation is "portrait", "landscape" or "" (the map's own: a map
	// wider than tall gets a landscape page). It turns a Paper, or swaps
	// Width and Height.
	Orientation string
	// DPI is the resolution: pixels per inch of paper. 0 is 150 on paper
	// and 96 for a size in pixels.
	DPI float64
	// Title heads the page; "" is the legend's heading (the index).
	Title string
	// Subtitle is a second line under the title ("" for none).
	Subtitle string
	// Date and Source go into the footer with the CRS ("" for none).
	Date, Source string
	// Grid draws a coordinate grid over the map.
	Grid bool
	// NoLegend, NoScaleBar and NoNorthArrow leave those out.
	NoLegend, NoScaleBar, NoNorthArrow bool
}

// Paper sizes in millimetres, portrait.
var papers = map[string][2]float64{
	"a5": {148, 210}, "a4": {210, 297}, "a3": {297, 420}, "a2": {420, 594}, "a1": {594, 841}, "a0": {841, 1189},
	"letter": {215.9, 279.4}, "legal": {215.9, 355.6}, "tabloid": {279.4, 431.8},
}

// PaperSizes lists the paper names Options.Paper takes.
func PaperSizes() []string {
	var ns []string
	for n := range papers {
		ns = append(ns, n)
	}
	sort.Strings(ns)
	return ns
}

// Limits on a layout's size.
const (
	MinPixels = 200   // shortest side
	MaxPixels = 16000 // longest side
	MinDPI    = 36
	MaxDPI    = 1200
)

// PageSize returns the size in pixels and the DPI of the layout of a
// mapWidth×mapHeight map (its aspect decides a page's orientation when
// the options do not), or what is wrong with the options.
func (o Options) PageSize(mapWidth, mapHeight int) (w, h int, dpi float64, err error) {
	return o.size(Map{Width: mapWidth, Height: mapHeight})
}

// size returns the picture's size in pixels and its DPI.
func (o Options) size(m Map) (w, h int, dpi float64, err error) {
	dpi = o.DPI
	wide := m.Width > m.Height
	switch strings.ToLower(o.Orientation) {
	case "":
	case "portrait":
		wide = false
	case "landscape":
		wide = true
	default:
		return 0, 0, 0, fmt.Errorf("layout: orientation %q is neither portrait nor landscape", o.Orientation)
	}
	if o.Paper != "" {
		p, ok := papers[strings.ToLower(o.Paper)]
		if !ok {
			return 0, 0, 0, fmt.Errorf("layout: unknown paper %q (known: %s)", o.Paper, strings.Join(PaperSizes(), ", "))
		}
		if dpi == 0 {
			dpi = 150
		}
		if !(dpi >= MinDPI && dpi <= MaxDPI) {
			return 0, 0, 0, fmt.Errorf("layout: %g DPI is outside %d–%d", dpi, MinDPI, MaxDPI)
		}
		if wide {
			p[0], p[1] = p[1], p[0]
		}
		w, h = int(math.Round(p[0]/25.4*dpi)), int(math.Round(p[1]/25.4*dpi))
	} else {
		if dpi == 0 {
			dpi = 96
		}
		if !(dpi >= MinDPI && dpi <= MaxDPI) {
			return 0, 0, 0, fmt.Errorf("layout: %g DPI is outside %d–%d", dpi, MinDPI, MaxDPI)
		}
		w, h = o.Width, o.Height
		switch {
		case w == 0 && h == 0:
			w, h = 1600, 1200
			if !wide {
				w, h = h, w
			}
		case w <= 0 || h <= 0:
			return 0, 0, 0, fmt.Errorf("layout: size %d×%d pixels: give both sides, or neither", w, h)
		case o.Orientation != "" && (w > h) != wide:
			w, h = h, w
		}
	}
	if min(w, h) < MinPixels || max(w, h) > MaxPixels {
		return 0, 0, 0, fmt.Errorf("layout: %d×%d pixels: each side must be %d–%d pixels", w, h, MinPixels, MaxPixels)
	}
	return w, h, dpi, nil
}

// check validates the map.
func (m Map) check() error {
	if c := m.Composite; c != nil {
		if w, h := c.Size(); w != m.Width || h != m.Height {
			return fmt.Errorf("layout: a %d×%d map given a %d×%d composite", m.Width, m.Height, w, h)
		}
		return nil
	}
	if m.Width <= 0 || m.Height <= 0 || len(m.Plane) != m.Width*m.Height {
		return fmt.Errorf("layout: a map of %d×%d pixels given %d values", m.Width, m.Height, len(m.Plane))
	}
	return nil
}

func (m Map) lut() *colormap.LUT {
	if m.LUT != nil {
		return m.LUT
	}
	l, _ := colormap.New("", -1, 1)
	return l
}
