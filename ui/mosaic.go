package ui

import (
	"fmt"
	"path/filepath"

	"canopy/compute"
	"canopy/compute/geo"
	"canopy/compute/scene"
)

// openProducts opens products of one date (adjacent tiles, in other UTM
// zones too) as one source: the first product's, with the others
// mosaicked onto one grid as it loads (source.Spec.More: the UTM zone
// covering most of them, their finest pixel, bilinear, each pixel from
// the first product valid there). Each product's metadata is checked on
// the way, so a path that is no product fails here, naming it.
func openProducts(paths []string, mask string, buffer int) (bandSource, error) {
	s, err := openProduct(paths[0], mask, buffer)
	if err != nil || len(paths) == 1 {
		return s, err
	}
	for _, p := range paths[1:] {
		sc, err := scene.Open(p)
		if err != nil {
			return bandSource{}, err
		}
		sc.Close()
		s.moreFiles = append(s.moreFiles, sc.Files()...)
	}
	s.more = append([]string(nil), paths[1:]...)
	return s, nil
}

// mosaicNote says, for a mosaic, how many products it fuses and on which
// grid (its system and pixel) with which resampling: "" for one product.
func (s bandSource) mosaicNote(g *compute.GeoRef) string {
	if len(s.more) == 0 {
		return ""
	}
	grid := "one grid"
	if c, err := geo.Of(g); err == nil {
		grid = c.Label()
		if t, ok := g.Affine(); ok {
			grid += fmt.Sprintf(", %g %s pixels", t[1], c.Unit)
		}
	}
	return fmt.Sprintf(" · mosaic of %d products (+ %s) on %s, bilinear", len(s.more)+1, filepath.Base(s.more[0]), grid)
}

// openMosaic opens products dropped together as one mosaic and computes
// the index from it.
func (w *window) openMosaic(paths []string) {
	mask, buffer, err := w.source.maskChoice()
	if err != nil {
		w.setStatus(err.Error(), false)
		return
	}
	if !w.idxOK {
		w.setStatus("The formula does not parse: "+w.index.Error.Text, false)
		return
	}
	ramp, stretch := w.colour.selected()
	open := func() (bandSource, error) { return openProducts(paths, mask, buffer) }
	w.bridge.start(fmt.Sprintf("Opening %d products as one mosaic", len(paths)), w.sourceJob(open, w.set, w.idx, w.runOrAuto(), ramp, stretch))
}
