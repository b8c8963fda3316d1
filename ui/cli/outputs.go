package cli

import (
	"path/filepath"
	"strings"

	"canopy/compute/request"
	"canopy/ui/render/colormap"
)

func checkPNGOptions(ramp, stretch string) error {
	if _, err := colormap.New(ramp, -1, 1); err != nil {
		return request.Error{Msg: err.Error()}
	}
	ok := false
	for _, m := range colormap.StretchModes() {
		ok = ok || m == stretch
	}
	if !ok {
		return request.Errorf("unknown --stretch %q (%s)", stretch, strings.Join(colormap.StretchModes(), ", "))
	}
	return nil
}

func checkChartPath(path string) error {
	if !strings.EqualFold(filepath.Ext(path), ".png") {
		return request.Errorf("--chart %s: the chart is written as PNG, name it .png", path)
	}
	return nil
}
