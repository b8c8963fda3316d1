package source

import (
	"context"
	"fmt"
	"slices"

	"canopy/compute/grid"
	"canopy/compute/pipeline"
	"canopy/compute/scene"
	"canopy/compute/warp"
)

// mosaic is products of one date fused onto one grid.
type mosaic struct {
	grid    Grid
	in      *pipeline.Input
	radio   Radiometry
	masked  int
	product *scene.Scene
	files   []string
}

func (m *mosaic) Grid() Grid             { return m.grid }
func (m *mosaic) Input() *pipeline.Input { return m.in }
func (m *mosaic) Radiometry() Radiometry { return m.radio }
func (m *mosaic) Masked() int            { return m.masked }
func (m *mosaic) Product() *scene.Scene  { return m.product }
func (m *mosaic) Files() []string        { return m.files }
func (m *mosaic) Close() error           { return nil }

// openMosaic opens spec.Product and every spec.More product of the same
// date, each with its own mask, and fuses them onto one grid: opt.Regrid
// when given, else the UTM zone that covers most of them at their finest
// pixel, -tap aligned. Each pixel comes from the first product, in the
// order given, valid there: tiles of one date are one acquisition, so a
// pixel masked in one (a cloud, the tile's edge) is filled from the next
// rather than a whole scene being preferred for its cloud share. The
// products must give each band the same radiometry (a Sentinel-2 tile of
// another processing baseline has another offset): digital numbers are
// fused as stored.
func openMosaic(ctx context.Context, spec Spec, opt Options) (Source, error) {
	paths := append([]string{spec.Product}, spec.More...)
	one := opt
	one.Regrid = nil
	var srcs []Source
	defer func() {
		for _, s := range srcs {
			s.Close()
		}
	}()
	var grids []grid.Grid
	for _, p := range paths {
		sp := spec
		sp.Product, sp.More = p, nil
		s, err := Open(ctx, sp, one)
		if err != nil {
			return nil, err
		}
		srcs = append(srcs, s)
		g := s.Grid()
		if !g.Geo.Valid() {
			return nil, fmt.Errorf("%s is not georeferenced: it cannot be mosaicked", p)
		}
		gg, err := grid.Of(g.Geo, g.Width, g.Height)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", p, err)
		}
		grids = append(grids, gg)
	}
	first := srcs[0]
	for i, s := range srcs[1:] {
		if s.Radiometry() != first.Radiometry() || len(s.Input().Bands) != len(first.Input().Bands) {
			return nil, fmt.Errorf("%s and %s hold different values (reflectance or digital numbers, or other bands): mosaic products of one kind", paths[0], paths[i+1])
		}
		for b, band := range s.Input().Bands {
			fb := first.Input().Bands[b]
			if band.Role != fb.Role || band.Radiometry != fb.Radiometry || band.Plane.Type != fb.Plane.Type {
				return nil, fmt.Errorf("the %s band of %s is stored as %s with scale %g and offset %g, of %s as %s with scale %g and offset %g: mosaic products whose values mean the same",
					band.Role, paths[i+1], band.Plane.Type, band.Radiometry.Scale, band.Radiometry.Add+band.Radiometry.Offset, paths[0], fb.Plane.Type, fb.Radiometry.Scale, fb.Radiometry.Add+fb.Radiometry.Offset)
			}
		}
	}
	rg := Regrid{Grid: grid.Spec{UTM: true}, Resampling: warp.Bilinear}
	if opt.Regrid != nil {
		rg = *opt.Regrid
	}
	target, err := rg.Grid.Resolve(grids, LikeGrid)
	if err != nil {
		return nil, err
	}
	geoRef, err := target.GeoRef()
	if err != nil {
		return nil, err
	}
	pin, masked, err := warpOnto(target, rg, srcs, grids, paths)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, s := range srcs {
		files = append(files, s.Files()...)
	}
	return &mosaic{grid: Grid{Width: target.Width, Height: target.Height, Geo: geoRef}, in: pin, radio: first.Radiometry(),
		masked: masked, product: first.Product(), files: slices.Compact(files)}, nil
}
