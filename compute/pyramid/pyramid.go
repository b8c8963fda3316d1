// Package pyramid shows an image too large to load whole: it keeps the
// band files open and reads, for the part of the image on screen, about
// one sample per screen pixel, as GIS viewers (QGIS through GDAL) do.
//
// An Image is the bands of one grid, each a band of a GeoTIFF, with its
// resolution levels: level 0 is the full resolution, the others the
// internal overviews every file has at the same size (a COG's, or
// gdaladdo's). PlanView picks, for a viewport, the coarsest level that
// still has a sample per screen pixel and, when even that level is much
// finer than the screen (no overviews, or none coarse enough), a step:
// every Step-th pixel of the level is read, so a view is always about the
// screen's size whatever the image's. Read reads a plan's samples block by
// block (the files' tiles or strips, only those the view touches, each
// decoded once), reporting the rows filled so far, so a view without
// overviews fills in progressively, and stops between blocks when its
// context is cancelled. Compute runs an index on those samples on any
// backend (compute.RunJob), block by block as they arrive.
//
// The whole image is never held: ReadPixel reads one pixel at full
// resolution (identify), and Run streams the whole image through the block
// pipeline (statistics, Compare all) from handles of its own.
//
// OpenSources opens a product's bands instead of plain files (compute/scene
// describes them: an orthomosaic, Landsat or STAC GeoTIFFs, members of a
// tar read in place), with the product's radiometry and nodata and its
// mask (an alpha band, QA bits) made from stored samples pixel by pixel:
// views, pixels and the pipeline's blocks are masked as the product loaded
// whole is.
package pyramid

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"

	"canopy/compute"
	"canopy/compute/geotiff"
	"canopy/compute/index"
	"canopy/compute/par"
	"canopy/compute/pipeline"
	"canopy/compute/raster"
)

// Level is the size of one resolution level.
type Level struct{ Width, Height int }

// Image is bands of one grid opened for viewing at any size.
type Image struct {
	// Width and Height are the full resolution's size.
	Width, Height int
	// Bands describe the bands as raster.OpenStored does (role, stored
	// type, nodata, source; Plane holds the type and full size, no
	// samples).
	Bands []compute.BandInput
	// Geo is the grid's georeferencing (nil when the files have none).
	Geo *compute.GeoRef
	// Levels are the resolution levels, Levels[0] the full resolution,
	// then the overviews from the finest to the coarsest.
	Levels []Level

	roles, specs []string
	groups       []*group
	pointMu      sync.Mutex
	points       []*pointFile // handles for ReadPixel, opened on first use

	// An image of Sources: all is Bands then the bands read for the mask
	// alone; mask makes the mask from their samples (nil: none); done is
	// called after the files close.
	sources bool
	all     []compute.BandInput
	mask    func(bands, masks []compute.Plane, mask []uint8)
	done    func()
}

// group is the bands of one file: its levels (level 0 the file itself),
// one lock per level (a File's reads are not concurrent), the file's
// 1-based bands and where each goes in Image.Bands.
type group struct {
	path   string
	open   func() (*geotiff.File, error) // a handle of its own on the file
	levels []*geotiff.File
	mu     []sync.Mutex
	bands  []int
	slots  []int
}

// Open opens the bands specs name (specs[i], FILE or FILE:B, has role
// roles[i]) for viewing. Every file must be a GeoTIFF and every band on
// the first band's grid (raster.OpenStored's checks). Close the image when
// done.
func Open(roles, specs []string) (*Image, error) {
	st, err := raster.OpenStored(roles, specs)
	if err != nil {
		return nil, err
	}
	im := &Image{Width: st.Width, Height: st.Height, Geo: st.Geo, roles: roles, specs: specs}
	for _, b := range st.Bands {
		im.Bands = append(im.Bands, b.BandInput)
	}
	st.Close()
	ok := false
	defer func() {
		if !ok {
			im.Close()
		}
	}()
	byPath := map[string]*group{}
	for i, spec := range specs {
		path, band, err := raster.ParseSpec(spec)
		if err != nil {
			return nil, err
		}
		band = max(band, 1)
		g := byPath[path]
		if g == nil {
			f, err := geotiff.Open(path)
			if err != nil {
				return nil, fmt.Errorf("%s band: %w (a large image is read from GeoTIFF files)", roles[i], err)
			}
			g = &group{path: path, open: func() (*geotiff.File, error) { return geotiff.Open(path) }, levels: []*geotiff.File{f}}
			byPath[path] = g
			im.groups = append(im.groups, g)
		}
		g.bands = append(g.bands, band)
		g.slots = append(g.slots, i)
	}
	im.all = im.Bands
	if err := im.levels(); err != nil {
		return nil, err
	}
	ok = true
	return im, nil
}

// levels finds the overview levels every file has at the same size and
// type (im.groups opened at level 0).
func (im *Image) levels() error {
	var err error
	ovs := make([][]*geotiff.File, len(im.groups))
	for k, g := range im.groups {
		if ovs[k], err = g.levels[0].Overviews(); err != nil {
			return err
		}
	}
	im.Levels = []Level{{im.Width, im.Height}}
	for l := 0; ; l++ {
		if l >= len(ovs[0]) {
			break
		}
		lv := Level{ovs[0][l].Width(), ovs[0][l].Height()}
		prev := im.Levels[len(im.Levels)-1]
		same := lv.Width < prev.Width && lv.Height < prev.Height && lv.Width > 0 && lv.Height > 0
		for k := range ovs {
			if !same || l >= len(ovs[k]) {
				same = false
				break
			}
			t, _ := ovs[k][l].DataType()
			t0, _ := im.groups[k].levels[0].DataType()
			same = ovs[k][l].Width() == lv.Width && ovs[k][l].Height() == lv.Height && t == t0
		}
		if !same {
			break
		}
		im.Levels = append(im.Levels, lv)
		for k, g := range im.groups {
			g.levels = append(g.levels, ovs[k][l])
		}
	}
	for _, g := range im.groups {
		g.mu = make([]sync.Mutex, len(g.levels))
	}
	return nil
}

// HasMask reports whether the image has a mask (an alpha band, QA bits):
// its views' Mask is not nil.
func (im *Image) HasMask() bool { return im.mask != nil }

// Close closes the files.
func (im *Image) Close() {
	for _, g := range im.groups {
		if len(g.levels) > 0 {
			g.levels[0].Close() // the overviews share its file
		}
	}
	im.groups = nil
	im.pointMu.Lock()
	for _, p := range im.points {
		p.f.Close()
	}
	im.points = nil
	im.pointMu.Unlock()
	if im.done != nil {
		im.done()
		im.done = nil
	}
}

// Plan is which samples a view reads: level Level's pixels (X0 + i*Step,
// Y0 + j*Step) for i < Width, j < Height. Sample (i, j) stands for the
// full-resolution pixels from (X0 + i*Step)*ScaleX, (Y0 + j*Step)*ScaleY,
// Step*ScaleX by Step*ScaleY of them.
type Plan struct {
	Level          int
	X0, Y0, Step   int
	Width, Height  int
	ScaleX, ScaleY float64
}

// Empty reports whether the plan reads nothing (a view off the image).
func (p Plan) Empty() bool { return p.Width <= 0 || p.Height <= 0 }

// Origin is the full-resolution point at the top-left corner of sample
// (0, 0), and Cell the full-resolution pixels one sample spans.
func (p Plan) Origin() (x, y float64) { return float64(p.X0) * p.ScaleX, float64(p.Y0) * p.ScaleY }

// Cell is the size in full-resolution pixels of one sample.
func (p Plan) Cell() (w, h float64) { return float64(p.Step) * p.ScaleX, float64(p.Step) * p.ScaleY }

// FullResolution reports whether the plan reads every full-resolution
// pixel of its region.
func (p Plan) FullResolution() bool { return p.Level == 0 && p.Step == 1 }

// PlanView plans the view of the full-resolution region [x0, x1) ×
// [y0, y1) (clipped to the image) shown at width × height screen pixels:
// the coarsest level with at least one pixel per screen pixel, then the
// largest step that keeps a sample per screen pixel. The sample grid is
// aligned to multiples of the step, so a panned view reads the same
// samples where it overlaps the last.
func (im *Image) PlanView(x0, y0, x1, y1 float64, width, height int) Plan {
	return im.PlanViewUpTo(len(im.Levels)-1, x0, y0, x1, y1, width, height)
}

// PlanViewUpTo is PlanView using levels 0 to maxLevel alone (0: the full
// resolution only, as if the files had no overviews).
func (im *Image) PlanViewUpTo(maxLevel int, x0, y0, x1, y1 float64, width, height int) Plan {
	x0, y0 = math.Max(0, x0), math.Max(0, y0)
	x1, y1 = math.Min(float64(im.Width), x1), math.Min(float64(im.Height), y1)
	if !(x1 > x0) || !(y1 > y0) || width <= 0 || height <= 0 {
		return Plan{ScaleX: 1, ScaleY: 1, Step: 1}
	}
	// Full-resolution pixels per screen pixel: the finer of the two axes.
	need := math.Min((x1-x0)/float64(width), (y1-y0)/float64(height))
	level := 0
	for l := 1; l < len(im.Levels) && l <= maxLevel; l++ {
		if im.scale(l) <= need*(1+1e-9) {
			level = l
		}
	}
	lv := im.Levels[level]
	sx, sy := float64(im.Width)/float64(lv.Width), float64(im.Height)/float64(lv.Height)
	step := max(1, int(math.Floor(need/im.scale(level)+1e-9)))
	lx0 := int(math.Floor(x0/sx)) / step * step
	ly0 := int(math.Floor(y0/sy)) / step * step
	lx1 := min(lv.Width, int(math.Ceil(x1/sx)))
	ly1 := min(lv.Height, int(math.Ceil(y1/sy)))
	return Plan{Level: level, X0: lx0, Y0: ly0, Step: step,
		Width: (lx1 - lx0 + step - 1) / step, Height: (ly1 - ly0 + step - 1) / step, ScaleX: sx, ScaleY: sy}
}

// scale is level l's full-resolution pixels per level pixel (the larger
// of the two axes, overviews round their sizes up).
func (im *Image) scale(l int) float64 {
	lv := im.Levels[l]
	return math.Max(float64(im.Width)/float64(lv.Width), float64(im.Height)/float64(lv.Height))
}

// maxBlockBytes is about the most a block read decodes per band at once
// (a variable for the tests).
var maxBlockBytes = 8 << 20

// Read reads plan p's samples of every band at its stored type (Bands'
// types, nodata and radiometry, planes of p.Width × p.Height). The level's
// strips or tiles are read by blocks of rows (only the rows of tiles that
// hold samples, only the columns of the view, each decoded once); after
// each block, rows(j0, j1) is called with the sample rows now filled, on
// Read's goroutine. A cancelled ctx stops it between blocks with
// ctx.Err().
func (im *Image) Read(ctx context.Context, p Plan, rows func(j0, j1 int)) ([]compute.BandInput, error) {
	if err := im.check(p); err != nil {
		return nil, err
	}
	out := im.newBands(p)
	if err := im.readInto(ctx, p, out, nil, rows); err != nil {
		return nil, err
	}
	return out[:len(im.Bands)], nil
}

// ReadMasked is Read with the image's mask of the samples (1: masked),
// nil when the image has none: what a view of the bands alone (a colour
// composite) needs to know which samples the mask removes.
func (im *Image) ReadMasked(ctx context.Context, p Plan, rows func(j0, j1 int)) ([]compute.BandInput, []uint8, error) {
	if err := im.check(p); err != nil {
		return nil, nil, err
	}
	out := im.newBands(p)
	var mask []uint8
	if im.mask != nil {
		mask = make([]uint8, p.Width*p.Height)
	}
	if err := im.readInto(ctx, p, out, mask, rows); err != nil {
		return nil, nil, err
	}
	return out[:len(im.Bands)], mask, nil
}

// check refuses a plan that reads nothing or lies outside its level.
func (im *Image) check(p Plan) error {
	if p.Level < 0 || p.Level >= len(im.Levels) || p.Step < 1 || p.Empty() {
		return errors.New("pyramid: empty or invalid view")
	}
	lv := im.Levels[p.Level]
	if p.X0 < 0 || p.Y0 < 0 || p.X0+(p.Width-1)*p.Step >= lv.Width || p.Y0+(p.Height-1)*p.Step >= lv.Height {
		return fmt.Errorf("pyramid: view outside level %d (%dx%d)", p.Level, lv.Width, lv.Height)
	}
	return nil
}

// newBands are the bands, then those read for the mask, with planes of
// p's size.
func (im *Image) newBands(p Plan) []compute.BandInput {
	out := make([]compute.BandInput, len(im.all))
	for i, b := range im.all {
		b.Plane = compute.NewPlane(b.Plane.Type, p.Width, p.Height)
		out[i] = b
	}
	return out
}

// readInto is Read into out (newBands(p)), p checked, and when mask is
// not nil (p.Width × p.Height, zeroed) the mask of the rows read.
func (im *Image) readInto(ctx context.Context, p Plan, out []compute.BandInput, mask []uint8, rows func(j0, j1 int)) error {
	lv := im.Levels[p.Level]
	lx1 := p.X0 + (p.Width-1)*p.Step + 1
	cols := lx1 - p.X0
	// The block: whole strips or tiles, as many as fit maxBlockBytes.
	unit := 1
	size := 0
	for _, g := range im.groups {
		unit = max(unit, g.levels[p.Level].BlockRows())
	}
	for _, b := range im.all {
		size = max(size, b.Plane.Type.Size())
	}
	perBlock := max(1, maxBlockBytes/max(1, cols*size*unit))
	scratch := make([][]compute.Plane, len(im.groups))
	for j := 0; j < p.Height; {
		if err := ctx.Err(); err != nil {
			return err
		}
		// Rows [by0, by1) of the level: from the unit of sample row j,
		// perBlock units, clipped; the sample rows in it are [j, jn).
		r := p.Y0 + j*p.Step
		by0 := r / unit * unit
		by1 := min(lv.Height, by0+perBlock*unit)
		jn := j
		for jn < p.Height && p.Y0+jn*p.Step < by1 {
			jn++
		}
		// Only down to the last sample row's unit.
		by1 = min(lv.Height, ((p.Y0+(jn-1)*p.Step)/unit+1)*unit)
		errs := make([]error, len(im.groups))
		// Each file on its own goroutine: a file's read waits on its
		// disk or its server and decodes on all cores itself.
		par.Each(len(im.groups), func(k int) {
			g := im.groups[k]
			f := g.levels[p.Level]
			t, _ := f.DataType()
			if len(scratch[k]) == 0 || scratch[k][0].Height < by1-by0 || scratch[k][0].Width != cols {
				scratch[k] = make([]compute.Plane, len(g.bands))
				for i := range scratch[k] {
					scratch[k][i] = compute.NewPlane(t, cols, min(lv.Height, perBlock*unit))
				}
			}
			dst := make([]compute.Plane, len(g.bands))
			for i, s := range scratch[k] {
				dst[i] = compute.Plane{Type: t, Width: cols, Height: by1 - by0, Data: s.Data[:cols*(by1-by0)*t.Size()]}
			}
			g.mu[p.Level].Lock()
			err := f.ReadWindowBandsInto(p.X0, by0, lx1, by1, g.bands, dst)
			g.mu[p.Level].Unlock()
			if err != nil {
				errs[k] = err
				return
			}
			for i, slot := range g.slots {
				subsample(out[slot].Plane, dst[i], p, j, jn, by0)
			}
		})
		if err := errors.Join(errs...); err != nil {
			return err
		}
		if mask != nil {
			im.maskRows(out, j*p.Width, jn*p.Width, mask[j*p.Width:jn*p.Width])
		}
		if rows != nil {
			rows(j, jn)
		}
		j = jn
	}
	return nil
}

// maskRows makes mask, samples [i0, i1) of the planes of bands (im.all's
// order), with im.mask.
func (im *Image) maskRows(bands []compute.BandInput, i0, i1 int, mask []uint8) {
	var planes, masks []compute.Plane
	for k, b := range bands {
		sz := b.Plane.Type.Size()
		q := compute.Plane{Type: b.Plane.Type, Width: i1 - i0, Height: 1, Data: b.Plane.Data[i0*sz : i1*sz]}
		if k < len(im.Bands) {
			planes = append(planes, q)
		} else {
			masks = append(masks, q)
		}
	}
	im.mask(planes, masks, mask)
}

// subsample copies sample rows [j0, j1) of plan p from src, the level's
// rows from by0 and columns from p.X0, into dst: every Step-th pixel.
func subsample(dst, src compute.Plane, p Plan, j0, j1, by0 int) {
	size := dst.Type.Size()
	for j := j0; j < j1; j++ {
		r := p.Y0 + j*p.Step - by0
		s := src.Data[r*src.Width*size:][:src.Width*size]
		d := dst.Data[j*dst.Width*size:][:dst.Width*size]
		if p.Step == 1 {
			copy(d, s)
			continue
		}
		switch size {
		case 1:
			for i := range dst.Width {
				d[i] = s[i*p.Step]
			}
		case 2:
			for i := range dst.Width {
				o := 2 * i * p.Step
				d[2*i], d[2*i+1] = s[o], s[o+1]
			}
		default:
			for i := range dst.Width {
				copy(d[size*i:size*i+size], s[size*i*p.Step:])
			}
		}
	}
}

// ReadPixel reads pixel (col, row) of every band at full resolution (1×1
// planes, as Bands), from handles of its own so that it never waits for a
// view being read. It decodes the tile (or strip) that holds the pixel and
// keeps it, so that the pixels around it (a pointer moving over the map)
// are read from memory.
func (im *Image) ReadPixel(col, row int) ([]compute.BandInput, error) {
	bands, _, err := im.Pixel(col, row)
	return bands, err
}

// Pixel is ReadPixel that also says whether the image's mask masks the
// pixel (always false for an image without one).
func (im *Image) Pixel(col, row int) ([]compute.BandInput, bool, error) {
	if col < 0 || row < 0 || col >= im.Width || row >= im.Height {
		return nil, false, fmt.Errorf("pixel (%d, %d) is outside the %dx%d image", col, row, im.Width, im.Height)
	}
	im.pointMu.Lock()
	defer im.pointMu.Unlock()
	if im.points == nil {
		for _, g := range im.groups {
			f, err := g.open()
			if err != nil {
				for _, p := range im.points {
					p.f.Close()
				}
				im.points = nil
				return nil, false, err
			}
			im.points = append(im.points, &pointFile{f: f})
		}
	}
	out := make([]compute.BandInput, len(im.all))
	for k, g := range im.groups {
		pf := im.points[k]
		if !pf.ok || col < pf.x0 || col >= pf.x0+pf.w || row < pf.y0 || row >= pf.y0+pf.h {
			f := pf.f
			t, _ := f.DataType()
			bw, bh := f.BlockSize()
			x0, y0 := col/bw*bw, row/bh*bh
			w, h := min(bw, im.Width-x0), min(bh, im.Height-y0)
			pf.ok = false
			if len(pf.planes) != len(g.bands) || pf.planes[0].Width != w || pf.planes[0].Height != h {
				pf.planes = make([]compute.Plane, len(g.bands))
				for i := range pf.planes {
					pf.planes[i] = compute.NewPlane(t, w, h)
				}
			}
			if err := f.ReadWindowBandsInto(x0, y0, x0+w, y0+h, g.bands, pf.planes); err != nil {
				return nil, false, err
			}
			pf.x0, pf.y0, pf.w, pf.h, pf.ok = x0, y0, w, h, true
		}
		i := (row-pf.y0)*pf.w + col - pf.x0
		for n, slot := range g.slots {
			b := im.all[slot]
			src := pf.planes[n]
			sz := src.Type.Size()
			b.Plane = compute.Plane{Type: src.Type, Width: 1, Height: 1, Data: append([]byte(nil), src.Data[i*sz:(i+1)*sz]...)}
			out[slot] = b
		}
	}
	masked := false
	if im.mask != nil {
		var m [1]uint8
		im.maskRows(out, 0, 1, m[:])
		masked = m[0] != 0
	}
	return out[:len(im.Bands)], masked, nil
}

// pointFile is a file's handle for ReadPixel and the tile it read last:
// columns [x0, x0+w), rows [y0, y0+h), one plane per band of the group.
type pointFile struct {
	f            *geotiff.File
	ok           bool
	x0, y0, w, h int
	planes       []compute.Plane
}

// View is a plan's samples and the indices computed on them.
type View struct {
	Plan
	// Bands are the samples read (Read's planes).
	Bands []compute.BandInput
	// Mask is the image's mask of the samples (1: masked), nil when the
	// image has none.
	Mask []uint8
	// Out holds one Width × Height plane per index; rows not yet
	// computed are NaN.
	Out [][]float32
	// Timings are the backend's phases summed over the blocks.
	Timings compute.Timings
}

// Compute reads plan p (Read) and computes the indices on each block of
// sample rows as it arrives, on be in mode (compute.RunJob): the same
// result as computing them on the whole view at once. After each block,
// rows(v, j0, j1) is called with the view and the sample rows now
// computed (on Compute's goroutine; v's planes are written only by
// Compute, and rows below j1 no more).
func (im *Image) Compute(ctx context.Context, p Plan, be compute.Backend, mode string, names []string, exprs []*index.Expr, rows func(v *View, j0, j1 int)) (*View, error) {
	if be == nil {
		return nil, errors.New("pyramid: no backend")
	}
	if err := im.check(p); err != nil {
		return nil, err
	}
	all := im.newBands(p)
	v := &View{Plan: p, Out: make([][]float32, len(exprs)), Bands: all[:len(im.Bands)]}
	if im.mask != nil {
		v.Mask = make([]uint8, p.Width*p.Height)
	}
	for i := range v.Out {
		v.Out[i] = compute.NewOutput(max(0, p.Width*p.Height))
		for k := range v.Out[i] {
			v.Out[i][k] = float32(math.NaN())
		}
	}
	var runErr error
	err := im.readInto(ctx, p, all, v.Mask, func(j0, j1 int) {
		if runErr != nil {
			return
		}
		blk := make([]compute.BandInput, len(v.Bands))
		for i, b := range v.Bands {
			sz := b.Plane.Type.Size()
			b.Plane = compute.Plane{Type: b.Plane.Type, Width: p.Width, Height: j1 - j0, Data: b.Plane.Data[j0*p.Width*sz : j1*p.Width*sz]}
			blk[i] = b
		}
		var mask []uint8
		if v.Mask != nil {
			mask = v.Mask[j0*p.Width : j1*p.Width]
		}
		j, err := compute.PlanJob(blk, mask, names, exprs)
		if err != nil {
			runErr = err
			return
		}
		j.Mode = mode
		j.Out = make([][]float32, len(exprs))
		for i := range j.Out {
			j.Out[i] = v.Out[i][j0*p.Width : j1*p.Width]
		}
		t, err := compute.RunJob(be, j)
		if err != nil {
			runErr = err
			return
		}
		v.Timings.Add(t)
		if rows != nil {
			rows(v, j0, j1)
		}
	})
	if err != nil {
		return nil, err
	}
	if runErr != nil {
		return nil, runErr
	}
	return v, nil
}

// Input opens an image of files (Open) for the block pipeline
// (raster.OpenStored): handles
// of its own, so that a run never shares a file's reader with a view or
// with another run. Close it when done.
func (im *Image) Input() (*raster.StoredInput, error) {
	if im.sources {
		return nil, errors.New("pyramid: an image of a product's bands runs through Run")
	}
	return raster.OpenStored(im.roles, im.specs)
}

// Run runs the indices over the whole image through the block pipeline
// (pipeline.Run with opt) from a fresh Input, handing every block to the
// sinks in order; a cancelled ctx stops it at the next block with
// ctx.Err(). Memory is the pipeline's blocks in flight whatever the image
// size.
func (im *Image) Run(ctx context.Context, opt pipeline.Options, sinks ...pipeline.Sink) (*pipeline.Result, error) {
	var in *pipeline.Input
	if im.sources {
		si, closeAll, err := im.sourcesInput()
		if err != nil {
			return nil, err
		}
		defer closeAll()
		in = si
	} else {
		st, err := im.Input()
		if err != nil {
			return nil, err
		}
		defer st.Close()
		in = st.Input
	}
	return pipeline.Run(ctx, in, opt, sinks...)
}
