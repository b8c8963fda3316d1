package cli

import (
	"path/filepath"
	"strings"

	"canopy/compute"
	"canopy/compute/raster"
	"canopy/ui/render/colormap"
)

// parseSpec splits FILE[:BAND].
func parseSpec(spec string) (string, int, error) { return raster.ParseSpec(spec) }

// loadPair reads both bands (in parallel) and checks they fit together.
// When b keeps host memory of its own (compute.HostMemory: gl's pinned,
// mapped planes), the bands are decoded straight into it and out is the
// backend's output plane, so that nothing is copied on the host on the way
// to the GPU or back; if the backend cannot provide it (out of pinned
// memory), the bands go to ordinary memory and out is nil.
func loadPair(red, nir string, b compute.Backend) (rb, nb *compute.Band, out []float32, err error) {
	hm, ok := b.(compute.HostMemory)
	if !ok {
		rb, nb, err = raster.LoadPair(red, nir)
		return rb, nb, nil, err
	}
	rb, nb, err = raster.LoadPairInto(red, nir, func(w, h int) ([]float32, []float32, error) {
		r, n, o, err := hm.HostBuffers(w, h)
		if err != nil {
			return compute.NewOutput(w * h), compute.NewOutput(w * h), nil
		}
		out = o
		return r, n, nil
	})
	return rb, nb, out, err
}

func writeTIF(path string, b *compute.Band) error { return raster.WriteGeoTIFF(path, b) }

func checkPNGOptions(ramp, stretch string) error {
	if _, err := colormap.New(ramp, -1, 1); err != nil {
		return usageError{err.Error()}
	}
	ok := false
	for _, m := range colormap.StretchModes() {
		ok = ok || m == stretch
	}
	if !ok {
		return usagef("unknown --stretch %q (%s)", stretch, strings.Join(colormap.StretchModes(), ", "))
	}
	return nil
}

func writePNG(path string, ndvi *compute.Band, ramp, stretch string, legend bool, title string) error {
	s, err := colormap.StretchFor(stretch, ndvi.Data)
	if err != nil {
		return err
	}
	return colormap.WritePNG(path, ndvi.Data, ndvi.Width, ndvi.Height, colormap.PNGOptions{
		Ramp: ramp, Stretch: s, Legend: legend, Title: title, Geo: ndvi.Geo,
	})
}

func checkChartPath(path string) error {
	if !strings.EqualFold(filepath.Ext(path), ".png") {
		return usagef("--chart %s: the chart is written as PNG, name it .png", path)
	}
	return nil
}
