package source

import (
	"fmt"

	"canopy/compute"
	"canopy/compute/geotiff"
	"canopy/compute/grid"
	"canopy/compute/pipeline"
	"canopy/compute/request"
	"canopy/compute/warp"
)

// Regrid asks Open to warp the source's bands onto another grid (--grid):
// the grid as the user named it, the resampling of the bands, and the
// warp backend (go, go-parallel, c, gl, cuda; "" is c).
type Regrid struct {
	Grid       grid.Spec
	Resampling warp.Resampling
	Backend    string
}

// LikeGrid reads the grid of the GeoTIFF at path (for grid.ParseSpec and
// grid.Spec.Resolve).
func LikeGrid(path string) (grid.Grid, error) {
	f, err := geotiff.Open(path)
	if err != nil {
		return grid.Grid{}, err
	}
	defer f.Close()
	g, err := grid.Of(f.Geo(), f.Width(), f.Height())
	if err != nil {
		return grid.Grid{}, fmt.Errorf("%s: %v", path, err)
	}
	return g, nil
}

// regridded is a source whose bands were warped onto another grid: the
// bands whole at their stored type, the mask where no source pixel was
// valid (the source's own mask and nodata included: a masked pixel never
// reaches a neighbour).
type regridded struct {
	Source
	grid Grid
	in   *pipeline.Input
}

func (r *regridded) Grid() Grid             { return r.grid }
func (r *regridded) Input() *pipeline.Input { return r.in }

// regrid warps every band of src onto the grid rg names.
func regrid(src Source, rg Regrid) (Source, error) {
	sg := src.Grid()
	if !sg.Geo.Valid() {
		return nil, fmt.Errorf("the bands are not georeferenced: they cannot be warped onto another grid")
	}
	from, err := grid.Of(sg.Geo, sg.Width, sg.Height)
	if err != nil {
		return nil, err
	}
	target, err := rg.Grid.Resolve([]grid.Grid{from}, LikeGrid)
	if err != nil {
		return nil, err
	}
	geoRef, err := target.GeoRef()
	if err != nil {
		return nil, err
	}
	pin, _, err := warpOnto(target, rg, []Source{src}, []grid.Grid{from}, nil)
	if err != nil {
		return nil, err
	}
	return &regridded{Source: src, grid: Grid{Width: target.Width, Height: target.Height, Geo: geoRef}, in: pin}, nil
}

// warpOnto warps the bands of srcs, laid out as grids, onto target with
// rg's resampling and backend (regrid's one source, a mosaic's several:
// each pixel from the first source valid there). It returns the first
// source's bands with the warped planes and the mask of the pixels where
// some band has no valid source pixel, and how many those are. names
// name the sources in messages (nil: each band's own source).
func warpOnto(target grid.Grid, rg Regrid, srcs []Source, grids []grid.Grid, names []string) (*pipeline.Input, int, error) {
	name := rg.Backend
	if name == "" {
		name = "c"
	}
	be, err := warp.Get(name)
	if err != nil {
		return nil, 0, request.Error{Msg: err.Error()}
	}
	var inputs [][]*warp.Source
	for i, s := range srcs {
		in := s.Input()
		mask, err := wholeMask(in)
		if err != nil {
			return nil, 0, err
		}
		planes, err := wholeBands(in)
		if err != nil {
			return nil, 0, err
		}
		sg := warp.SourceGrid{Width: in.Width, Height: in.Height, Affine: grids[i].Affine(), CRS: grids[i].CRS}
		var bands []*warp.Source
		for b, band := range in.Bands {
			n := band.Source
			if names != nil {
				n = names[i]
			}
			bands = append(bands, &warp.Source{Plane: planes[b], Grid: sg, NoData: band.NoData, HasNoData: band.HasNoData, Mask: mask, Name: n})
		}
		inputs = append(inputs, bands)
	}
	targets, _, err := warp.Mosaic(target, inputs, rg.Resampling, warp.MaxError, be)
	if err != nil {
		return nil, 0, err
	}
	var out []compute.BandInput
	for b, band := range srcs[0].Input().Bands {
		bi := band.BandInput
		bi.Plane = targets[b].Plane
		out = append(out, bi)
	}
	m := make([]uint8, target.Width*target.Height)
	masked := 0
	for j := range m {
		for _, t := range targets {
			if t.Filled[j] == 0 {
				m[j] = 1
				masked++
				break
			}
		}
	}
	pin, err := pipeline.Memory(out, m)
	if err != nil {
		return nil, 0, err
	}
	return pin, masked, nil
}

// wholeMask returns the input's mask for the whole image (nil when it has
// none).
func wholeMask(in *pipeline.Input) ([]uint8, error) {
	if in.Mask != nil || in.MaskRows == nil {
		return in.Mask, nil
	}
	planes, err := wholeBands(in)
	if err != nil {
		return nil, err
	}
	bands := make([]compute.BandInput, len(in.Bands))
	for i, b := range in.Bands {
		bands[i] = b.BandInput
		bands[i].Plane = planes[i]
	}
	m := make([]uint8, in.Width*in.Height)
	if err := in.MaskRows(0, in.Height, bands, m); err != nil {
		return nil, err
	}
	return m, nil
}

// wholeBands reads every band of the input whole at its stored type.
func wholeBands(in *pipeline.Input) ([]compute.Plane, error) {
	out := make([]compute.Plane, len(in.Bands))
	type group struct {
		n     int
		bands []int
	}
	groups := map[pipeline.Reader]*group{}
	var order []pipeline.Reader
	for i, b := range in.Bands {
		g := groups[b.Reader]
		if g == nil {
			g = &group{}
			groups[b.Reader] = g
			order = append(order, b.Reader)
		}
		g.n = max(g.n, b.Index+1)
		g.bands = append(g.bands, i)
	}
	for _, r := range order {
		g := groups[r]
		dst := make([]compute.Plane, g.n)
		for _, i := range g.bands {
			b := in.Bands[i]
			dst[b.Index] = compute.NewPlane(b.Plane.Type, in.Width, in.Height)
		}
		for k := range dst {
			if dst[k].Data == nil {
				dst[k] = compute.NewPlane(in.Bands[g.bands[0]].Plane.Type, in.Width, in.Height)
			}
		}
		if err := r.ReadRows(0, in.Height, dst); err != nil {
			return nil, err
		}
		for _, i := range g.bands {
			out[i] = dst[in.Bands[i].Index]
		}
	}
	return out, nil
}
