package cli

import (
	"path/filepath"
	"strings"

	"canopy/compute"
	"canopy/compute/raster"
	"canopy/ui/render/colormap"
)

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

// writePNG colours an index plane; the full stretch spans [lo, hi], the
// index's expected range.
func writePNG(path string, ndvi *compute.Band, ramp, stretch string, legend bool, title string, lo, hi float64) error {
	s := colormap.Stretch{Lo: lo, Hi: hi}
	if stretch != "full" {
		var err error
		if s, err = colormap.StretchFor(stretch, ndvi.Data); err != nil {
			return err
		}
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
