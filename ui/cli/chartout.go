package cli

import (
	"fmt"

	"canopy/compute"
	"canopy/ui/render/chart"
)

// writeChart draws the sweep (time against pixels) when several sizes were
// timed, else the per-phase bars.
func writeChart(path string, results []compute.BenchResult, sweep bool) error {
	draw := chart.Timings
	if sweep {
		draw = chart.Sweep
	}
	img, err := draw(results, 1400, 900)
	if err != nil {
		return fmt.Errorf("chart %s: %w", path, err)
	}
	return chart.WritePNG(path, img)
}
