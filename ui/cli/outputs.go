package cli

import (
	"path/filepath"
	"strings"

	"canopy/compute"
	"canopy/ui/render/colormap"
)

func checkPNGOptions(ramp, stretch string) error {
	if _, err := colormap.New(ramp, -1, 1); err != nil {
		return compute.UsageError{Msg: err.Error()}
	}
	ok := false
	for _, m := range colormap.StretchModes() {
		ok = ok || m == stretch
	}
	if !ok {
		return compute.Usagef("unknown --stretch %q (%s)", stretch, strings.Join(colormap.StretchModes(), ", "))
	}
	return nil
}

func checkChartPath(path string) error {
	if !strings.EqualFold(filepath.Ext(path), ".png") {
		return compute.Usagef("--chart %s: the chart is written as PNG, name it .png", path)
	}
	return nil
}
