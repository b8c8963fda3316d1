// Package grid is the target grid of a warp: a coordinate reference
// system (an EPSG code or WKT), a north-up pixel size, and an extent
// aligned to that pixel size as gdalwarp's -tap aligns it (the corners
// are whole multiples of the resolution, so that grids made from
// different inputs line up pixel for pixel). It also finds the grid an
// estate needs when the user names none: the footprints of the inputs
// (or of the stands) in the target system, and the UTM zone that covers
// most of them.
package grid

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	proj "github.com/twpayne/go-proj/v11"

	"canopy/compute"
	"canopy/compute/geo"
)

// Grid is a north-up raster grid: pixel (c, r) covers map coordinates
// [X0 + c·ResX, X0 + (c+1)·ResX) × (Y0 − (r+1)·ResY, Y0 − r·ResY].
type Grid struct {
	// CRS is the system's definition as PROJ reads it ("EPSG:32633" or
	// WKT); EPSG its code, 0 when it has none.
	CRS  string
	EPSG int
	// X0, Y0 are the map coordinates of the top-left corner of the
	// top-left pixel.
	X0, Y0 float64
	// ResX and ResY are a pixel's width and height in map units (both
	// positive).
	ResX, ResY float64
	// Width and Height are the size in pixels.
	Width, Height int
}

// Affine is the grid's GDAL geotransform (x0, dx, 0, y0, 0, −dy).
func (g Grid) Affine() [6]float64 { return [6]float64{g.X0, g.ResX, 0, g.Y0, 0, -g.ResY} }

// Bounds returns the grid's extent: west, south, east, north.
func (g Grid) Bounds() [4]float64 {
	return [4]float64{g.X0, g.Y0 - float64(g.Height)*g.ResY, g.X0 + float64(g.Width)*g.ResX, g.Y0}
}

// String describes the grid in one line: "EPSG:32633, 10 m, 1200×900
// pixels from (500000, 5600000)".
func (g Grid) String() string {
	crs := g.CRS
	if g.EPSG != 0 {
		crs = fmt.Sprintf("EPSG:%d", g.EPSG)
	} else if len(crs) > 40 {
		crs = compute.Excerpt(crs, 40)
	}
	res := strconv.FormatFloat(g.ResX, 'g', -1, 64)
	if g.ResY != g.ResX {
		res += "×" + strconv.FormatFloat(g.ResY, 'g', -1, 64)
	}
	return fmt.Sprintf("%s, %s units a pixel, %d×%d pixels from (%s, %s)", crs, res, g.Width, g.Height,
		strconv.FormatFloat(g.X0, 'f', -1, 64), strconv.FormatFloat(g.Y0, 'f', -1, 64))
}

// Check reports a grid that places no pixel.
func (g Grid) Check() error {
	switch {
	case g.CRS == "":
		return errors.New("the grid has no CRS")
	case !(g.ResX > 0) || !(g.ResY > 0) || math.IsInf(g.ResX, 0) || math.IsInf(g.ResY, 0):
		return fmt.Errorf("the grid's pixel size %g×%g is not positive", g.ResX, g.ResY)
	case g.Width <= 0 || g.Height <= 0:
		return fmt.Errorf("the grid is empty (%d×%d pixels)", g.Width, g.Height)
	case !finite(g.X0, g.Y0):
		return errors.New("the grid's corner is not a number")
	}
	return nil
}

// MaxPixels bounds a grid's size (about four Sentinel-2 tiles a side).
const MaxPixels = 1 << 31

// GeoRef returns the GeoTIFF georeferencing of the grid (ModelPixelScale,
// ModelTiepoint, the EPSG code in the GeoKeys, PixelIsArea). A system
// without an EPSG code cannot be written to GeoTIFF keys by this
// project's writer and is an error.
func (g Grid) GeoRef() (*compute.GeoRef, error) {
	if g.EPSG <= 0 || g.EPSG >= 32767 {
		return nil, fmt.Errorf("the grid's CRS has no EPSG code, which a GeoTIFF written here needs (name the target system as EPSG:N)")
	}
	c, err := geo.Describe(g.CRS)
	if err != nil {
		return nil, err
	}
	model, key := uint16(1), uint16(3072) // projected
	if c.Geographic {
		model, key = 2, 2048
	}
	return &compute.GeoRef{
		PixelScale:      []float64{g.ResX, g.ResY, 0},
		Tiepoints:       []float64{0, 0, 0, g.X0, g.Y0, 0},
		GeoKeyDirectory: []uint16{1, 1, 0, 3, 1024, 0, 1, model, 1025, 0, 1, 1, key, 0, 1, uint16(g.EPSG)},
	}, nil
}

// ParseCRS reads a system as a user names it: "EPSG:32633", "epsg:4326",
// a bare code ("32633"), WKT or a PROJ string. It returns the definition
// PROJ reads and the EPSG code (0 when PROJ finds none).
func ParseCRS(s string) (def string, epsg int, err error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", 0, errors.New("no CRS given")
	}
	if n, err := strconv.Atoi(s); err == nil {
		s = fmt.Sprintf("EPSG:%d", n)
	} else if len(s) > 5 && strings.EqualFold(s[:5], "epsg:") {
		s = "EPSG:" + strings.TrimSpace(s[5:])
	}
	c, err := geo.Describe(s)
	if err != nil {
		return "", 0, err
	}
	if !c.Projected && !c.Geographic {
		return "", 0, fmt.Errorf("%s is neither a projected nor a geographic system", c.Label())
	}
	return s, c.EPSG, nil
}

// ParseBBox reads "W,S,E,N" (four numbers, west < east, south < north).
func ParseBBox(s string) ([4]float64, error) {
	var b [4]float64
	parts := strings.Split(s, ",")
	if len(parts) != 4 {
		return b, fmt.Errorf("bounding box %q: want W,S,E,N (four numbers)", s)
	}
	for i, p := range parts {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || !finite(v) {
			return b, fmt.Errorf("bounding box %q: %q is not a number", s, strings.TrimSpace(p))
		}
		b[i] = v
	}
	if !(b[0] < b[2]) || !(b[1] < b[3]) {
		return b, fmt.Errorf("bounding box %q: west must be less than east and south less than north", s)
	}
	return b, nil
}

// Aligned returns the grid of system crs (a definition as ParseCRS
// returns it) with pixels resX × resY that covers bounds (W, S, E, N in
// the system's units) with its corners on whole multiples of the pixel
// size, as gdalwarp -tap -tr resX resY -te W S E N makes it: the west and
// south edges rounded down, the east and north edges up.
func Aligned(crs string, epsg int, resX, resY float64, bounds [4]float64) (Grid, error) {
	if !(resX > 0) || !(resY > 0) || math.IsInf(resX, 0) || math.IsInf(resY, 0) {
		return Grid{}, fmt.Errorf("resolution %g×%g: both must be positive numbers", resX, resY)
	}
	if !finite(bounds[:]...) || !(bounds[0] < bounds[2]) || !(bounds[1] < bounds[3]) {
		return Grid{}, fmt.Errorf("extent %v is empty", bounds)
	}
	minX := math.Floor(bounds[0]/resX) * resX
	maxX := math.Ceil(bounds[2]/resX) * resX
	minY := math.Floor(bounds[1]/resY) * resY
	maxY := math.Ceil(bounds[3]/resY) * resY
	return sized(crs, epsg, resX, resY, minX, minY, maxX, maxY)
}

// sized counts pixels as gdalwarp does: (max − min + res/2) / res,
// truncated.
func sized(crs string, epsg int, resX, resY, minX, minY, maxX, maxY float64) (Grid, error) {
	w := (maxX - minX + resX/2) / resX
	h := (maxY - minY + resY/2) / resY
	if !(w >= 1) || !(h >= 1) || w*h > MaxPixels {
		return Grid{}, fmt.Errorf("a grid of %.0f×%.0f pixels of %g×%g is empty or too large (at most %d pixels)", w, h, resX, resY, MaxPixels)
	}
	g := Grid{CRS: crs, EPSG: epsg, X0: minX, Y0: maxY, ResX: resX, ResY: resY, Width: int(w), Height: int(h)}
	return g, g.Check()
}

// Of returns the grid of a w×h raster georeferenced by g. A rotated
// raster has no north-up grid and is an error.
func Of(g *compute.GeoRef, w, h int) (Grid, error) {
	t, ok := g.Affine()
	if !ok {
		return Grid{}, errors.New("the raster is not georeferenced")
	}
	if t[2] != 0 || t[4] != 0 || !(t[1] > 0) || !(t[5] < 0) {
		return Grid{}, errors.New("the raster is rotated or flipped (not north-up)")
	}
	def, err := geo.Definition(g)
	if err != nil {
		return Grid{}, err
	}
	c, err := geo.Describe(def)
	if err != nil {
		return Grid{}, err
	}
	out := Grid{CRS: def, EPSG: c.EPSG, X0: t[0], Y0: t[3], ResX: t[1], ResY: -t[5], Width: w, Height: h}
	return out, out.Check()
}

func finite(vs ...float64) bool {
	for _, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

// Footprint returns the bounds (W, S, E, N) in system crs of the ground g
// covers: its edges are walked at max(20, min(width, height)/50) steps a
// side, as gdalwarp walks a source's edges to suggest an output extent,
// and every point PROJ can place is taken. No placed point is an error.
func Footprint(g Grid, crs string) ([4]float64, error) {
	if err := g.Check(); err != nil {
		return [4]float64{}, err
	}
	if same, err := geo.Same(g.CRS, crs); err == nil && same {
		return g.Bounds(), nil
	}
	pj, err := transformation(g.CRS, crs)
	if err != nil {
		return [4]float64{}, err
	}
	steps := max(20, int(float64(min(g.Width, g.Height))/50+0.5))
	t := g.Affine()
	b := [4]float64{math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)}
	n := 0
	add := func(c, r float64) {
		x, y := t[0]+c*t[1], t[3]+r*t[5]
		out, err := pj.Forward(proj.NewCoord(x, y, 0, 0))
		if err != nil || !finite(out[0], out[1]) {
			return
		}
		b[0], b[1] = math.Min(b[0], out[0]), math.Min(b[1], out[1])
		b[2], b[3] = math.Max(b[2], out[0]), math.Max(b[3], out[1])
		n++
	}
	W, H := float64(g.Width), float64(g.Height)
	for i := 0; i <= steps; i++ {
		f := float64(i) / float64(steps)
		add(f*W, 0)
		add(f*W, H)
		add(0, f*H)
		add(W, f*H)
	}
	if n == 0 {
		return b, fmt.Errorf("no corner of the raster (%s) has a place in the target system", g)
	}
	return b, nil
}

// transformation returns PROJ's transformation from system src to dst,
// in GIS order (easting or longitude first) on both sides.
func transformation(src, dst string) (*proj.PJ, error) {
	pj, err := proj.NewCRSToCRS(src, dst, nil)
	if err != nil {
		return nil, fmt.Errorf("no transformation from %s to %s: %v", short(src), short(dst), err)
	}
	norm, err := pj.NormalizeForVisualization()
	if err != nil {
		return nil, fmt.Errorf("no transformation from %s to %s: %v", short(src), short(dst), err)
	}
	return norm, nil
}

func short(def string) string { return compute.Excerpt(def, 40) }

// Union returns the smallest bounds holding all of bs.
func Union(bs ...[4]float64) [4]float64 {
	u := [4]float64{math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)}
	for _, b := range bs {
		u[0], u[1] = math.Min(u[0], b[0]), math.Min(u[1], b[1])
		u[2], u[3] = math.Max(u[2], b[2]), math.Max(u[3], b[3])
	}
	return u
}

// UTMZone returns the EPSG code of the WGS 84 UTM zone (326zz north,
// 327zz south) that covers the largest part of the given areas (each W,
// S, E, N in degrees of longitude and latitude; ties go to the western
// zone): the share of each area in each 6° zone, weighted by the area's
// extent in latitude and the cosine of its mid-latitude. The hemisphere
// is that of the areas' weighted mid-latitude.
func UTMZone(areas ...[4]float64) (int, error) {
	var weight [61]float64
	var latSum, wSum float64
	for _, a := range areas {
		if !finite(a[:]...) || a[0] > a[2] || a[1] > a[3] || a[1] < -90 || a[3] > 90 {
			return 0, fmt.Errorf("area %v is not a longitude and latitude box", a)
		}
		midLat := (a[1] + a[3]) / 2
		h := math.Max(a[3]-a[1], 1e-9) * math.Cos(midLat*math.Pi/180)
		w0, w1 := a[0], a[2]
		if w1-w0 < 1e-9 {
			w1 = w0 + 1e-9
		}
		for z := 1; z <= 60; z++ {
			zw := -180 + float64(z-1)*6
			ov := math.Min(w1, zw+6) - math.Max(w0, zw)
			if ov > 0 {
				weight[z] += ov * h
			}
		}
		latSum += midLat * (w1 - w0) * h
		wSum += (w1 - w0) * h
	}
	best := 0
	for z := 1; z <= 60; z++ {
		if weight[z] > 0 && (best == 0 || weight[z] > weight[best]) {
			best = z
		}
	}
	if best == 0 {
		return 0, errors.New("no area to choose a UTM zone for")
	}
	if wSum > 0 && latSum/wSum < 0 {
		return 32700 + best, nil
	}
	return 32600 + best, nil
}

// LonLat returns the bounds of g in longitude and latitude (EPSG:4326).
func LonLat(g Grid) ([4]float64, error) { return Footprint(g, "EPSG:4326") }
