package scene

import (
	"fmt"
	"image"
	"math"
	"unsafe"

	"canopy/compute"
	"canopy/compute/geotiff"
	"canopy/native/openjp2"
)

// LoadOptions choose how Load reads bands and masks.
type LoadOptions struct {
	// Mask is "auto" (the product's own mask; also when empty) or "none".
	Mask string
	// MaskBuffer grows the cloud and shadow part of the mask by that many
	// grid pixels in every direction (a square of side 2·MaskBuffer+1);
	// nodata, fill and saturation are not grown.
	MaskBuffer int
	// Window is the region to load on the grid (Scene.Grid pixels); empty
	// means the whole grid.
	Window image.Rectangle
}

// Load reads the bands of the roles asked for, at their stored type, on the
// scene's grid (the finest band's), and the product's mask combined into
// one plane (1 = masked; nil when opt.Mask is "none").
//
// Coarser bands (Sentinel-2's 20 m bands and SCL on the 10 m grid) are
// resampled by nearest neighbour: each 20 m pixel becomes 2×2 grid pixels
// holding its stored value unchanged. For classes and masks this is the
// only right choice; for reflectance bands it is Canopy's choice too,
// because it keeps every value a real measurement (no invented
// reflectance between a cloud and a field), keeps nodata and saturated
// values exact so they are still recognised, keeps integer bands integer,
// and gives an index of two 20 m bands exactly the 20 m index repeated.
// Bilinear resampling, which sen2cor's users sometimes expect, would blur
// edges and mix nodata into valid pixels. Grids must nest: every band's
// pixel size a whole multiple of the grid's and the same top-left corner.
func (s *Scene) Load(roles []string, opt LoadOptions) ([]compute.BandInput, []uint8, error) {
	switch opt.Mask {
	case "", "auto", "none":
	default:
		return nil, nil, fmt.Errorf("mask %q: use auto or none", opt.Mask)
	}
	if opt.MaskBuffer < 0 || opt.MaskBuffer > 1000 {
		return nil, nil, fmt.Errorf("mask buffer %d pixels: use 0 to 1000", opt.MaskBuffer)
	}
	full := image.Rect(0, 0, s.Grid.Width, s.Grid.Height)
	win := opt.Window
	if win.Empty() {
		win = full
	}
	if !win.In(full) {
		return nil, nil, fmt.Errorf("%s: window %v is outside the %dx%d grid", s.Path, opt.Window, s.Grid.Width, s.Grid.Height)
	}
	if len(roles) == 0 {
		return nil, nil, fmt.Errorf("%s: no band role asked for", s.Path)
	}
	var srcs []*Source
	for _, r := range roles {
		b := s.Bands[r]
		if b == nil {
			return nil, nil, s.noBand(r)
		}
		srcs = append(srcs, b)
	}
	rd := &reader{s: s, tiff: map[tiffKey]compute.Plane{}}
	// Read each GeoTIFF once for all the bands needed from it.
	need := append([]*Source{}, srcs...)
	if opt.Mask != "none" {
		if s.Mask.Source != nil {
			need = append(need, s.Mask.Source)
		}
		if s.Mask.Saturation != nil {
			need = append(need, s.Mask.Saturation)
		}
	}
	if err := rd.prefetch(need, win); err != nil {
		return nil, nil, err
	}
	out := make([]compute.BandInput, len(roles))
	for i, src := range srcs {
		p, err := rd.onGrid(src, win)
		if err != nil {
			return nil, nil, err
		}
		out[i] = compute.BandInput{Role: roles[i], Plane: p, Radiometry: src.Radiometry, NoData: src.NoData, HasNoData: src.HasNoData,
			Source: s.c.where(src.File) + fmt.Sprintf(":%d", src.Band)}
	}
	if opt.Mask == "none" {
		return out, nil, nil
	}
	n := win.Dx() * win.Dy()
	mask := make([]uint8, n)
	var grow []uint8
	if opt.MaskBuffer > 0 {
		grow = make([]uint8, n)
	}
	rule := s.maskRule(srcs, grow != nil)
	planes := make([]compute.Plane, len(out))
	for i := range out {
		planes[i] = out[i].Plane
	}
	var src, sat compute.Plane
	if rule.source != nil {
		p, err := rd.onGrid(rule.source, win)
		if err != nil {
			return nil, nil, err
		}
		src = p
	}
	if rule.saturation != nil {
		p, err := rd.onGrid(rule.saturation, win)
		if err != nil {
			return nil, nil, err
		}
		sat = p
	}
	rule.apply(planes, src, sat, mask, grow)
	if grow != nil {
		dilate(grow, win.Dx(), win.Dy(), opt.MaskBuffer)
		for j, g := range grow {
			mask[j] |= g
		}
	}
	return out, mask, nil
}

// Value is the float64 reference of band b's pixel i: NaN where the stored
// value is the band's nodata (or NaN), else the radiometry applied.
func Value(b compute.BandInput, i int) float64 {
	v := b.Plane.At(i)
	if math.IsNaN(v) || (b.HasNoData && v == b.NoData) {
		return math.NaN()
	}
	return b.Radiometry.Apply64(v)
}

// reader reads band sources, the bands of one GeoTIFF in one pass.
type reader struct {
	s    *Scene
	tiff map[tiffKey]compute.Plane
}

// tiffKey is a band's window (columns [x0, x1), rows [y0, y1)) of a
// GeoTIFF, at the stored type.
type tiffKey struct {
	file           string
	band           int
	x0, y0, x1, y1 int
}

// prefetch decodes, in one pass per file and window, every GeoTIFF band
// needed for the grid window win, at the stored type: only the tiles (or
// strips) the window touches.
func (r *reader) prefetch(srcs []*Source, win image.Rectangle) error {
	type group struct {
		file  string
		sw    image.Rectangle
		bands []int
	}
	var groups []*group
	for _, src := range srcs {
		if src.Format != "tiff" {
			continue
		}
		_, sw, err := r.s.sourceWindow(src, win)
		if err != nil {
			return err
		}
		var g *group
		for _, x := range groups {
			if x.file == src.File && x.sw == sw {
				g = x
			}
		}
		if g == nil {
			g = &group{file: src.File, sw: sw}
			groups = append(groups, g)
		}
		if !containsInt(g.bands, src.Band) {
			g.bands = append(g.bands, src.Band)
		}
	}
	for _, g := range groups {
		ra, n, err := r.s.c.open(g.file)
		if err != nil {
			return err
		}
		f, err := geotiff.NewReader(ra, n, r.s.c.where(g.file))
		if err != nil {
			return err
		}
		if w := r.s.tiffWidth(g.file); (w >= 0 && f.Width() != w) || f.Width() < g.sw.Max.X || f.Height() < g.sw.Max.Y {
			return fmt.Errorf("%s: changed since the scene was opened (%dx%d pixels)", r.s.c.where(g.file), f.Width(), f.Height())
		}
		t, _ := f.DataType()
		planes := make([]compute.Plane, len(g.bands))
		for i := range planes {
			planes[i] = compute.NewPlane(t, g.sw.Dx(), g.sw.Dy())
		}
		if g.sw.Min.X == 0 && g.sw.Max.X == f.Width() {
			err = f.ReadRowsBandsInto(g.sw.Min.Y, g.sw.Max.Y, g.bands, planes)
		} else {
			err = f.ReadWindowBandsInto(g.sw.Min.X, g.sw.Min.Y, g.sw.Max.X, g.sw.Max.Y, g.bands, planes)
		}
		if err != nil {
			return err
		}
		for i, b := range g.bands {
			r.tiff[tiffKey{g.file, b, g.sw.Min.X, g.sw.Min.Y, g.sw.Max.X, g.sw.Max.Y}] = planes[i]
		}
	}
	return nil
}

// tiffWidth is the width the scene's bands from file had when it was
// opened (-1 when no band of the scene comes from file).
func (s *Scene) tiffWidth(file string) int {
	for _, b := range s.Bands {
		if b.File == file {
			return b.Width
		}
	}
	for _, b := range []*Source{s.Mask.Source, s.Mask.Saturation, s.ortho} {
		if b != nil && b.File == file {
			return b.Width
		}
	}
	return -1
}

func containsInt(l []int, v int) bool {
	for _, x := range l {
		if x == v {
			return true
		}
	}
	return false
}

// sourceWindow is the window of src's own pixels that covers the grid
// window win, and the grid pixels per source pixel.
func (s *Scene) sourceWindow(src *Source, win image.Rectangle) (int, image.Rectangle, error) {
	k := 1.0
	if src.Resolution != s.Grid.Resolution {
		// Equal resolutions nest one to one, 0 m ones too (a TIFF
		// without georeferencing: every band on the pixel grid).
		k = src.Resolution / s.Grid.Resolution
	}
	ki := int(math.Round(k))
	if ki < 1 || math.Abs(k-float64(ki)) > 1e-6 {
		return 0, image.Rectangle{}, fmt.Errorf("%s: band %s at %g m does not nest in the %g m grid", s.Path, src.Name, src.Resolution, s.Grid.Resolution)
	}
	if a, ok := src.geo.Affine(); ok {
		g, ok2 := s.Grid.Geo.Affine()
		if ok2 && (math.Abs(a[0]-g[0]) > 1e-6*s.Grid.Resolution || math.Abs(a[3]-g[3]) > 1e-6*s.Grid.Resolution) {
			return 0, image.Rectangle{}, fmt.Errorf("%s: band %s's grid does not start at the grid's top-left corner (%.3f, %.3f vs %.3f, %.3f)", s.Path, src.Name, a[0], a[3], g[0], g[3])
		}
	}
	sw := image.Rect(win.Min.X/ki, win.Min.Y/ki, (win.Max.X+ki-1)/ki, (win.Max.Y+ki-1)/ki)
	if sw.Max.X > src.Width || sw.Max.Y > src.Height {
		return 0, image.Rectangle{}, fmt.Errorf("%s: band %s is %dx%d at %g m, too small for the %dx%d grid", s.Path, src.Name, src.Width, src.Height, src.Resolution, s.Grid.Width, s.Grid.Height)
	}
	return ki, sw, nil
}

// onGrid reads src for the grid window win, resampling by nearest
// neighbour when src is coarser than the grid.
func (r *reader) onGrid(src *Source, win image.Rectangle) (compute.Plane, error) {
	ki, sw, err := r.s.sourceWindow(src, win)
	if err != nil {
		return compute.Plane{}, err
	}
	p, err := r.read(src, sw)
	if err != nil {
		return compute.Plane{}, err
	}
	if ki == 1 {
		return p, nil
	}
	return upsample(p, sw, win, ki), nil
}

// read reads the window sw of src (its own pixels) at its stored type.
func (r *reader) read(src *Source, sw image.Rectangle) (compute.Plane, error) {
	s := r.s
	switch src.Format {
	case "jp2":
		ra, n, err := s.c.open(src.File)
		if err != nil {
			return compute.Plane{}, err
		}
		d, err := openjp2.Open(ra, n, s.c.where(src.File))
		if err != nil {
			return compute.Plane{}, err
		}
		if in := d.Info(); in.Width != src.Width || in.Height != src.Height || jp2Type(in) != src.Type {
			return compute.Plane{}, fmt.Errorf("%s: changed since the scene was opened", s.c.where(src.File))
		}
		if sw == image.Rect(0, 0, src.Width, src.Height) {
			sw = image.Rectangle{}
		}
		return jp2Decode(d, openjp2.Options{Window: sw})
	case "zarr":
		return s.readZarr(src, sw)
	case "tiff":
		p, ok := r.tiff[tiffKey{src.File, src.Band, sw.Min.X, sw.Min.Y, sw.Max.X, sw.Max.Y}]
		if !ok || p.Type != src.Type || p.Width != sw.Dx() {
			return compute.Plane{}, fmt.Errorf("%s: band %d was not read as opened", s.c.where(src.File), src.Band)
		}
		return p, nil
	}
	return compute.Plane{}, fmt.Errorf("%s: unknown format %q", s.c.where(src.File), src.Format)
}

// upsample resamples p (covering the source window sw) by nearest
// neighbour onto the grid window win, k grid pixels per source pixel.
func upsample(p compute.Plane, sw, win image.Rectangle, k int) compute.Plane {
	w, h := win.Dx(), win.Dy()
	out := compute.NewPlane(p.Type, w, h)
	size := p.Type.Size()
	xs := make([]int, w)
	for x := range xs {
		xs[x] = (win.Min.X+x)/k - sw.Min.X
	}
	prev := -1
	for y := range h {
		sy := (win.Min.Y+y)/k - sw.Min.Y
		dst := out.Data[y*w*size : (y+1)*w*size]
		if sy == prev {
			copy(dst, out.Data[(y-1)*w*size:y*w*size])
			continue
		}
		prev = sy
		src := p.Data[sy*p.Width*size : (sy+1)*p.Width*size]
		switch size {
		case 1:
			for x, sx := range xs {
				dst[x] = src[sx]
			}
		case 2:
			d, s := asU16(dst), asU16(src)
			for x, sx := range xs {
				d[x] = s[sx]
			}
		default:
			d, s := asU32(dst), asU32(src)
			for x, sx := range xs {
				d[x] = s[sx]
			}
		}
	}
	return out
}

func asU16(b []byte) []uint16 { return unsafe.Slice((*uint16)(unsafe.Pointer(&b[0])), len(b)/2) }
func asU32(b []byte) []uint32 { return unsafe.Slice((*uint32)(unsafe.Pointer(&b[0])), len(b)/4) }

// dilate grows the 1s of m (w×h) by r pixels in every direction (a square
// of side 2r+1), with two running-count passes: O(w·h) whatever r.
func dilate(m []uint8, w, h, r int) {
	tmp := make([]uint8, len(m))
	for y := range h {
		row, out := m[y*w:(y+1)*w], tmp[y*w:(y+1)*w]
		cnt := 0
		for x := 0; x < min(r, w); x++ {
			cnt += int(row[x])
		}
		for x := range w {
			if x+r < w {
				cnt += int(row[x+r])
			}
			if x-r-1 >= 0 {
				cnt -= int(row[x-r-1])
			}
			if cnt > 0 {
				out[x] = 1
			} else {
				out[x] = 0
			}
		}
	}
	cnt := make([]int, w)
	for y := 0; y < min(r, h); y++ {
		for x := range w {
			cnt[x] += int(tmp[y*w+x])
		}
	}
	for y := range h {
		if y+r < h {
			for x := range w {
				cnt[x] += int(tmp[(y+r)*w+x])
			}
		}
		if y-r-1 >= 0 {
			for x := range w {
				cnt[x] -= int(tmp[(y-r-1)*w+x])
			}
		}
		for x := range w {
			if cnt[x] > 0 {
				m[y*w+x] = 1
			} else {
				m[y*w+x] = 0
			}
		}
	}
}
