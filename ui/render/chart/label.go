package chart

import "canopy/compute"

// Label names a backend run as "name" or "name:mode", the one spelling of
// it in the charts, their CSV, the command line's tables and the window.
func Label(backend, mode string) string {
	if mode == "" {
		return backend
	}
	return backend + ":" + mode
}

// label is r's Label.
func label(r compute.BenchResult) string { return Label(r.Backend, r.Mode) }

// pixelsOf is r's image size in pixels.
func pixelsOf(r compute.BenchResult) int { return r.Width * r.Height }

// bytesPerPixel is the memory traffic of one NDVI pixel over float32
// bands, two reads and one write: the ceiling lines' bytes.
const bytesPerPixel = 12
