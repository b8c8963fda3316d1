package cli

import (
	"fmt"
	"slices"
	"strings"

	"canopy/compute"
	"canopy/ui/render/chart"
)

// benchTarget is one backend in one mode ("" for its only way) to time.
type benchTarget struct {
	name, mode string
}

// benchModes lists every way to time b: its compute.Moder modes; nil for
// a backend without modes (one run in its only way). The window times
// the same ways (ui's benchPlan).
func benchModes(b compute.Backend) []string {
	if m, ok := b.(compute.Moder); ok {
		return m.Modes()
	}
	return nil
}

// benchPlan resolves bench's --backends: "all" (or "") is every
// registered backend in every mode of benchModes (an unavailable backend
// once, to report why); otherwise a comma list of "name" (every mode) or
// "name:mode". An unknown backend or mode is an error.
func benchPlan(list string) ([]benchTarget, error) {
	var ts []benchTarget
	every := func(b compute.Backend) {
		ms := benchModes(b)
		if len(ms) == 0 || !b.Info().Available {
			ts = append(ts, benchTarget{b.Name(), ""})
			return
		}
		for _, m := range ms {
			ts = append(ts, benchTarget{b.Name(), m})
		}
	}
	var names []string
	if list == "all" || list == "" {
		names = compute.Names()
	} else {
		names = strings.Split(list, ",")
	}
	for _, s := range names {
		name, mode, _ := strings.Cut(strings.TrimSpace(s), ":")
		b, err := compute.New(name)
		if err != nil {
			return nil, err
		}
		switch {
		case mode == "":
			every(b)
		case !slices.Contains(benchModes(b), mode):
			b.Close()
			return nil, fmt.Errorf("backend %s has no mode %q", name, mode)
		default:
			ts = append(ts, benchTarget{name, mode})
		}
		b.Close()
	}
	return ts, nil
}

// benchLine formats a bench result as the one human line `canopy bench`
// prints for it.
func benchLine(r compute.BenchResult) string {
	l := chart.Label(r.Backend, r.Mode)
	if r.Error != "" && !r.Verified {
		return fmt.Sprintf("%-12s %6dx%-6d error: %s", l, r.Width, r.Height, r.Error)
	}
	line := fmt.Sprintf("%-12s %6dx%-6d setup %8.2f ms  up %8.3f  kernel %8.3f [%.3f-%.3f]  down %8.3f  total %8.3f ms  kernel %6.1f GB/s = %3.0f%% of %s %.1f GB/s  max err %.2g",
		l, r.Width, r.Height, r.SetupMS, r.UploadMS, r.KernelMS, r.Kernel.Min, r.Kernel.Max, r.DownloadMS, r.TotalMS, r.KernelGBps, r.KernelPct, r.CeilingKind, r.CeilingGBps, r.MaxAbsErr)
	if r.H2DGBps > 0 && r.D2HGBps > 0 && r.UploadGBps > 0 && r.DownloadGBps > 0 {
		line += fmt.Sprintf("  up %.1f GB/s = %.0f%% of %.1f, down %.1f GB/s = %.0f%% of %.1f",
			r.UploadGBps, 100*r.UploadGBps/r.H2DGBps, r.H2DGBps, r.DownloadGBps, 100*r.DownloadGBps/r.D2HGBps, r.D2HGBps)
	}
	return line
}
