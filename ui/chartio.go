package ui

import (
	"bufio"
	"fmt"
	"image"
	"math"
	"strings"

	"canopy/compute"
	"canopy/compute/outfile"
	"canopy/ui/render/chart"
)

// crossoverText says, for each GPU backend of a sweep, from which size it
// beats the fastest CPU backend: kernel alone, and with transfers.
func crossoverText(rs []compute.BenchResult) string {
	var gpus []string
	seen := map[string]bool{}
	for _, r := range rs {
		if l := chart.Label(r.Backend, r.Mode); r.GPU && !seen[l] {
			seen[l] = true
			gpus = append(gpus, l)
		}
	}
	if len(gpus) == 0 {
		return "No GPU backend ran: the sweep compares the CPU backends only."
	}
	side := func(px int) string {
		n := int(math.Round(math.Sqrt(float64(px))))
		return fmt.Sprintf("%d×%d", n, n)
	}
	var lines []string
	for _, g := range gpus {
		k, kok := chart.Crossover(rs, g, false)
		t, tok := chart.Crossover(rs, g, true)
		line := g + ": the kernel alone beats the CPU "
		if kok {
			line += "from about " + side(k)
		} else {
			line += "at no size measured"
		}
		line += "; with the transfers, "
		if tok {
			line += "from about " + side(t) + "."
		} else {
			line += "at no size measured."
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

// indexCrossoverText says, for each GPU backend of an indices sweep, from
// how many indices per upload it beats the fastest CPU backend with its
// transfers.
func indexCrossoverText(rs []compute.BenchResult) string {
	var gpus []string
	for _, r := range rs {
		if l := chart.Label(r.Backend, r.Mode); r.GPU && !contains(gpus, l) {
			gpus = append(gpus, l)
		}
	}
	if len(gpus) == 0 {
		return "No GPU backend ran: the sweep compares the CPU backends only."
	}
	var lines []string
	for _, g := range gpus {
		n, ok := chart.IndexCrossover(rs, g, true)
		if ok {
			lines = append(lines, fmt.Sprintf("%s with its transfers beats the CPU from about %.1f indices per upload.", g, n))
		} else {
			lines = append(lines, g+" with its transfers beats the CPU at no count measured.")
		}
	}
	return strings.Join(lines, "\n")
}

// writeChartPNG draws a chart for export, at a size that reads well in a
// report, and writes it.
func writeChartPNG(path string, rs []compute.BenchResult, which chartKind) error {
	var img image.Image
	var err error
	switch which {
	case chartSweep:
		img, err = chart.Sweep(rs, 1600, 1000)
	case chartIndices:
		img, err = chart.IndexSweep(rs, 1600, 1000)
	default:
		img, err = chart.Timings(rs, 1600, max(500, 160+90*len(rs)))
	}
	if err != nil {
		return err
	}
	return chart.WritePNG(path, img)
}

// writeCSV writes the runs' timings as CSV through a temporary file renamed into
// place.
func writeCSV(path string, runs []chart.Run) error {
	err := outfile.WriteFileBuffered(path, func(w *bufio.Writer) error { return chart.WriteRunsCSV(w, runs) })
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
