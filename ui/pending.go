package ui

import (
	"image"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"

	"canopy/compute"
	"canopy/compute/colormap"
	"canopy/compute/raster"
)

// Placeholders until compute/stats and compute/chart land.

type sceneStats struct{}

func summarize(s *scene) *sceneStats { return nil }

type statsPanel struct {
	content fyne.CanvasObject
}

func newStatsPanel(w *Window) *statsPanel {
	return &statsPanel{content: widget.NewLabel("Statistics")}
}

func (p *statsPanel) show(*sceneStats)           {}
func (p *statsPanel) recolour(*colormap.LUT)     {}
func crossoverText([]compute.BenchResult) string { return "" }

func timingChart(rs []compute.BenchResult, w, h int) (image.Image, error) { return nil, nil }
func sweepChart(rs []compute.BenchResult, w, h int) (image.Image, error)  { return nil, nil }

func loadPair(red, nir string) (*compute.Band, *compute.Band, error) {
	return raster.LoadPair(red, nir)
}

func writeChartPNG(path string, rs []compute.BenchResult, sweep bool) error { return nil }
func writeCSV(path string, rs []compute.BenchResult) error                  { return nil }
