package chart

import (
	"fmt"
	"image"
	"image/color"
	"regexp"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"canopy/compute"
	"canopy/ui/render/numfmt"
)

// dpi is the resolution charts are drawn at: 96, a desktop screen's.
const dpi = vgimg.DefaultDPI

// Minimum chart size in pixels: below it the text cannot fit.
const (
	MinWidth  = 560
	MinHeight = 300
)

// Phase colours, shared by every chart and meant for the GUI's own legends.
var (
	ColorUpload   = color.NRGBA{0x4e, 0x79, 0xa7, 0xff}
	ColorKernel   = color.NRGBA{0xf2, 0x8e, 0x2b, 0xff}
	ColorDownload = color.NRGBA{0x59, 0xa1, 0x4f, 0xff}
	ColorSetup    = color.NRGBA{0xba, 0xb0, 0xac, 0xff}
)

var backendColors = map[string]color.NRGBA{
	compute.NameGo:         {0x7f, 0x7f, 0x7f, 0xff},
	compute.NameGoParallel: {0x1f, 0x77, 0xb4, 0xff},
	compute.NameC:          {0xff, 0x7f, 0x0e, 0xff},
	compute.NameGL:         {0x94, 0x67, 0xbd, 0xff},
	compute.NameCUDA:       {0x2c, 0xa0, 0x2c, 0xff},
}

var spareColors = []color.NRGBA{
	{0xd6, 0x27, 0x28, 0xff}, {0x8c, 0x56, 0x4b, 0xff}, {0xe3, 0x77, 0xc2, 0xff}, {0x17, 0xbe, 0xcf, 0xff}, {0xbc, 0xbd, 0x22, 0xff},
}

// BackendColor returns the colour charts use for a backend (name or
// name:mode); modes of one backend share its colour.
func BackendColor(label string) color.NRGBA {
	name, _, _ := strings.Cut(label, ":")
	if c, ok := backendColors[name]; ok {
		return c
	}
	h := 0
	for _, r := range name {
		h = h*31 + int(r)
	}
	return spareColors[(h%len(spareColors)+len(spareColors))%len(spareColors)]
}

var (
	parens    = regexp.MustCompile(`\([^)]*\)`)
	threadsRe = regexp.MustCompile(`\((\d+) threads?`)
	clockRe   = regexp.MustCompile(`@.*$`)
	spaces    = regexp.MustCompile(`\s+`)
)

// ShortDevice shortens a device description for a chart label:
// "Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz (8 threads, linux/amd64)"
// becomes "Intel Xeon Gold 6338, 8 threads"; "NVIDIA H200" stays.
func ShortDevice(device string) string {
	threads := ""
	if m := threadsRe.FindStringSubmatch(device); m != nil {
		threads = ", " + m[1] + " thread"
		if m[1] != "1" {
			threads += "s"
		}
	}
	s := strings.NewReplacer("(R)", "", "(r)", "", "(TM)", "", "(tm)", "", "®", "", "™", "").Replace(device)
	s = parens.ReplaceAllString(s, "")
	s = clockRe.ReplaceAllString(s, "")
	for _, w := range []string{" CPU", " Processor", " Corporation"} {
		s = strings.ReplaceAll(s, w, "")
	}
	s = strings.TrimSpace(spaces.ReplaceAllString(s, " "))
	return s + threads
}

// FormatMS formats milliseconds with three significant digits or so, as
// the charts label them (the GUI's tables use it too).
func FormatMS(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f ms", v)
	case v >= 10:
		return fmt.Sprintf("%.1f ms", v)
	case v >= 1:
		return fmt.Sprintf("%.2f ms", v)
	case v >= 0.01:
		return fmt.Sprintf("%.3f ms", v)
	}
	return fmt.Sprintf("%.2g ms", v)
}

// fmtPixels formats a pixel count: 950, 65.5k, 4.19M, 121M
// (numfmt.Short).
func fmtPixels(p float64) string { return numfmt.Short(p) }

// render draws with f on a w×h pixel image.
func render(w, h int, f func(dc draw.Canvas) error) (image.Image, error) {
	return renderMin(w, h, MinWidth, MinHeight, f)
}

// renderMin is render for a chart with its own minimum size.
func renderMin(w, h, minW, minH int, f func(dc draw.Canvas) error) (image.Image, error) {
	if w < minW || h < minH {
		return nil, fmt.Errorf("chart size %dx%d: at least %dx%d pixels are needed", w, h, minW, minH)
	}
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	c := vgimg.NewWith(vgimg.UseImage(img))
	if err := f(draw.New(c)); err != nil {
		return nil, err
	}
	return c.Image(), nil
}

// pixelsToPoints converts a pixel size to vg lengths at the chart DPI.
func pixelsToPoints(px int) vg.Length { return vg.Length(px) * vg.Inch / dpi }

// sans switches every text of p to Liberation Sans, without touching
// gonum/plot's package defaults (which other code may rely on).
func sans(p *plot.Plot) {
	for _, s := range []*text.Style{&p.Title.TextStyle, &p.X.Label.TextStyle, &p.Y.Label.TextStyle,
		&p.X.Tick.Label, &p.Y.Tick.Label, &p.Legend.TextStyle} {
		s.Font.Typeface, s.Font.Variant = "Liberation", "Sans"
	}
	p.Title.TextStyle.Font.Size = vg.Points(12)
	p.X.Tick.Label.Font.Size = vg.Points(9)
	p.Y.Tick.Label.Font.Size = vg.Points(9)
	p.X.Label.TextStyle.Font.Size = vg.Points(10)
	p.Y.Label.TextStyle.Font.Size = vg.Points(10)
	p.Legend.TextStyle.Font.Size = vg.Points(9)
}

// linearTicks labels about n round values (1, 2, 2.5 or 5 × 10^k apart)
// between min and max, formatted with the decimals the step needs
// (numfmt.Ticks and numfmt.Tick, as legends and statistics are).
type linearTicks struct{ n int }

// Ticks implements plot.Ticker.
func (t linearTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		return []plot.Tick{{Value: lo, Label: numfmt.Value(lo)}}
	}
	vs, step := numfmt.Ticks(lo, hi, max(1, t.n))
	ticks := make([]plot.Tick, len(vs))
	for i, v := range vs {
		ticks[i] = plot.Tick{Value: v, Label: numfmt.Tick(v, step)}
	}
	return ticks
}
