package colormap

import (
	"fmt"
	"image/color"
	"math"
	"strconv"
	"strings"
)

// Ramp names, as used by the CLI (--ramp) and the GUI.
const (
	RampRdYlGn  = "rdylgn"
	RampViridis = "viridis"
	RampClasses = "classes"
	// RampChange is the diverging ramp of change maps.
	RampChange = "change"
	// DefaultRamp is the ramp used when none is named.
	DefaultRamp = RampRdYlGn
)

// ramp is a continuous colour ramp given by evenly spaced stops, linearly
// interpolated in sRGB, or the discrete class ramp.
type ramp struct {
	name     string
	desc     string
	stops    []color.NRGBA
	discrete bool
}

func hex(s string) color.NRGBA {
	v, err := strconv.ParseUint(strings.TrimPrefix(s, "#"), 16, 32)
	if err != nil {
		panic("colormap: bad colour literal " + s)
	}
	return color.NRGBA{uint8(v >> 16), uint8(v >> 8), uint8(v), 0xff}
}

func hexes(ss ...string) []color.NRGBA {
	c := make([]color.NRGBA, len(ss))
	for i, s := range ss {
		c[i] = hex(s)
	}
	return c
}

var ramps = []*ramp{
	{
		name: RampRdYlGn,
		desc: "diverging red-yellow-green (ColorBrewer RdYlGn)",
		// ColorBrewer RdYlGn, 11 classes, red (low) to green (high).
		stops: hexes("#a50026", "#d73027", "#f46d43", "#fdae61", "#fee08b", "#ffffbf",
			"#d9ef8b", "#a6d96a", "#66bd63", "#1a9850", "#006837"),
	},
	{
		name: RampViridis,
		desc: "perceptually uniform dark blue to yellow (viridis)",
		// matplotlib viridis sampled at 0, 0.1, ..., 1.
		stops: hexes("#440154", "#482475", "#414487", "#355f8d", "#2a788e", "#21918c",
			"#22a884", "#44bf70", "#7ad151", "#bddf26", "#fde725"),
	},
	{
		name: RampChange,
		desc: "diverging blue-white-red for change maps: gain blue, loss red (ColorBrewer RdBu, reversed)",
		// ColorBrewer RdBu, 11 classes, reversed: blue (gain, negative
		// before − after) to red (loss, positive).
		stops: hexes("#053061", "#2166ac", "#4393c3", "#92c5de", "#d1e5f0", "#f7f7f7",
			"#fddbc7", "#f4a582", "#d6604d", "#b2182b", "#67001f"),
	},
	{
		name:     RampClasses,
		desc:     "classes: NDVI by default (no vegetation, bare, sparse, moderate, dense), or any class table",
		discrete: true,
	},
}

// Ramps lists the ramp names, the default first.
func Ramps() []string {
	names := make([]string, len(ramps))
	for i, r := range ramps {
		names[i] = r.name
	}
	return names
}

// Describe returns a one-line description of the named ramp for menus and
// help text, or "" if the ramp is unknown.
func Describe(name string) string {
	if r, err := rampByName(name); err == nil {
		return r.desc
	}
	return ""
}

func rampByName(name string) (*ramp, error) {
	if name == "" {
		name = DefaultRamp
	}
	for _, r := range ramps {
		if r.name == strings.ToLower(name) {
			return r, nil
		}
	}
	return nil, fmt.Errorf("unknown colour ramp %q (known: %s)", name, strings.Join(Ramps(), ", "))
}

// at returns the continuous ramp's colour at t in [0, 1].
func (r *ramp) at(t float64) color.NRGBA {
	t = math.Max(0, math.Min(1, t))
	f := t * float64(len(r.stops)-1)
	i := int(f)
	if i >= len(r.stops)-1 {
		return r.stops[len(r.stops)-1]
	}
	u := f - float64(i)
	a, b := r.stops[i], r.stops[i+1]
	mix := func(x, y uint8) uint8 { return uint8(math.Round(float64(x) + u*(float64(y)-float64(x)))) }
	return color.NRGBA{mix(a.R, b.R), mix(a.G, b.G), mix(a.B, b.B), 0xff}
}
