package ui

import (
	"image"

	"canopy/compute"
	"canopy/compute/raster"
)

// Placeholders until compute/stats and compute/chart land.

func crossoverText([]compute.BenchResult) string { return "" }

func timingChart(rs []compute.BenchResult, w, h int) (image.Image, error) { return nil, nil }
func sweepChart(rs []compute.BenchResult, w, h int) (image.Image, error)  { return nil, nil }

func loadPair(red, nir string) (*compute.Band, *compute.Band, error) {
	return raster.LoadPair(red, nir)
}

func writeChartPNG(path string, rs []compute.BenchResult, sweep bool) error { return nil }
func writeCSV(path string, rs []compute.BenchResult) error                  { return nil }
