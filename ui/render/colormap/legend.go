package colormap

import (
	"fmt"
	"image"
	"image/color"
	"math"
	"sync"

	"codeberg.org/go-fonts/liberation/liberationsansbold"
	"codeberg.org/go-fonts/liberation/liberationsansregular"
	"golang.org/x/image/font"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"

	"canopy/ui/render/numfmt"
)

// Legend geometry at scale 1, in pixels.
const (
	legPad      = 8  // margin around the legend
	legGap      = 6  // space between heading, bar and rows
	legBarW     = 18 // colour bar width
	legBarH     = 200
	legTick     = 5 // tick length
	legSwatchH  = 14
	legTextSize = 12 // label size in pixels
	legHeadSize = 14 // heading size in pixels
)

var fonts = sync.OnceValues(func() ([2]*opentype.Font, error) {
	var f [2]*opentype.Font
	var err error
	if f[0], err = opentype.Parse(liberationsansregular.TTF); err != nil {
		return f, fmt.Errorf("parse Liberation Sans: %w", err)
	}
	if f[1], err = opentype.Parse(liberationsansbold.TTF); err != nil {
		return f, fmt.Errorf("parse Liberation Sans Bold: %w", err)
	}
	return f, nil
})

// newFace returns Liberation Sans (bold if asked) at size pixels.
func newFace(size float64, bold bool) font.Face {
	f, err := fonts()
	if err != nil {
		// The fonts are embedded and known good; this cannot happen
		// short of a corrupt build.
		panic("colormap: " + err.Error())
	}
	i := 0
	if bold {
		i = 1
	}
	face, err := opentype.NewFace(f[i], &opentype.FaceOptions{Size: size, DPI: 72, Hinting: font.HintingFull})
	if err != nil {
		panic("colormap: " + err.Error())
	}
	return face
}

// canvas is a paletted picture in the LUT's palette with anti-aliased text
// drawn through an alpha mask.
type canvas struct {
	img  *image.Paletted
	text *image.Alpha
}

func newCanvas(pal color.Palette, w, h int) *canvas {
	c := &canvas{img: image.NewPaletted(image.Rect(0, 0, w, h), pal), text: image.NewAlpha(image.Rect(0, 0, w, h))}
	c.fill(c.img.Rect, indexWhite)
	return c
}

func (c *canvas) fill(r image.Rectangle, idx uint8) {
	r = r.Intersect(c.img.Rect)
	for y := r.Min.Y; y < r.Max.Y; y++ {
		row := c.img.Pix[c.img.PixOffset(r.Min.X, y):c.img.PixOffset(r.Max.X, y)]
		for i := range row {
			row[i] = idx
		}
	}
}

// outline draws a one-pixel (times t) black frame just inside r.
func (c *canvas) outline(r image.Rectangle, t int) {
	c.fill(image.Rect(r.Min.X, r.Min.Y, r.Max.X, r.Min.Y+t), indexBlack)
	c.fill(image.Rect(r.Min.X, r.Max.Y-t, r.Max.X, r.Max.Y), indexBlack)
	c.fill(image.Rect(r.Min.X, r.Min.Y, r.Min.X+t, r.Max.Y), indexBlack)
	c.fill(image.Rect(r.Max.X-t, r.Min.Y, r.Max.X, r.Max.Y), indexBlack)
}

// label draws s with its left end at x and its capitals centred on y.
func (c *canvas) label(face font.Face, s string, x, y int) {
	d := font.Drawer{Dst: c.text, Src: image.Opaque, Face: face}
	capH := face.Metrics().CapHeight
	d.Dot = fixed.Point26_6{X: fixed.I(x), Y: fixed.I(y) + capH/2}
	d.DrawString(s)
}

// flush turns the text mask into grey palette indices over the picture.
func (c *canvas) flush() {
	for i, a := range c.text.Pix {
		if a != 0 {
			c.img.Pix[i] = uint8(grayBase + (int(a)*(grayLevels-1)+127)/255)
		}
	}
	clear(c.text.Pix)
}

func textWidth(face font.Face, s string) int { return font.MeasureString(face, s).Ceil() }

// Ticks returns the values a continuous legend labels, with their
// labels: the round values (1, 2, 2.5 or 5 × 10^k apart, numfmt.Ticks) in
// the stretch, about five of them (−1, −0.5, 0, 0.5, 1 by default), with
// the ends of the stretch added when the nearest round value is more than
// a fifth of a step away. Labels are formatted by numfmt, as the charts
// and the statistics are.
func (l *LUT) Ticks() ([]float64, []string) {
	vs, step := numfmt.Ticks(l.lo, l.hi, 4)
	if step == 0 {
		return []float64{l.lo}, []string{numfmt.Value(l.lo)}
	}
	if len(vs) < 3 {
		vs, step = numfmt.Ticks(l.lo, l.hi, 6)
	}
	ls := make([]string, len(vs))
	for i, v := range vs {
		ls[i] = numfmt.Tick(v, step)
	}
	return vs, ls
}

// Legend draws the LUT's legend at scale (1 for a screen at normal
// density, larger for big exports; values below 1 count as 1): under the
// heading "NDVI" (or WithHeading's), a vertical colour bar with ticks and labels at Ticks for
// continuous ramps (high values at the top), or a swatch per class with
// its name and bounds for the classes ramp (dense at the top), and a
// transparent "no data" swatch. The picture uses the LUT's Palette on a
// white background.
func (l *LUT) Legend(scale float64) *image.Paletted {
	return l.legend(scale, "")
}

// legend draws the legend with an optional title line above the heading.
func (l *LUT) legend(scale float64, title string) *image.Paletted {
	s := math.Max(1, scale)
	px := func(v int) int { return int(math.Round(float64(v) * s)) }
	text, head := newFace(legTextSize*s, false), newFace(legHeadSize*s, true)
	defer text.Close()
	defer head.Close()
	var titleFace font.Face
	if title != "" {
		titleFace = newFace(16*s, true)
		defer titleFace.Close()
	}
	pad, gap, line := px(legPad), px(legGap), max(1, px(1))
	lineH := text.Metrics().Height.Ceil()
	headH := head.Metrics().Height.Ceil()

	// Measure: the column of labels decides the width.
	type row struct {
		idx          uint8 // swatch colour (continuous: unused)
		name, bounds string
	}
	var rows []row
	var ticks []float64
	var tickLabels []string
	labelW := 0
	nameW := 0
	if l.ramp.discrete {
		for i := len(l.classes) - 1; i >= 0; i-- {
			c := l.classes[i]
			rows = append(rows, row{uint8(i + 1), c.Name, l.classes.Bounds(i)})
			nameW = max(nameW, textWidth(text, c.Name))
		}
		for _, r := range rows {
			labelW = max(labelW, nameW+px(10)+textWidth(text, r.bounds))
		}
	} else {
		ticks, tickLabels = l.Ticks()
		for _, t := range tickLabels {
			labelW = max(labelW, textWidth(text, t))
		}
		labelW += px(legTick) + px(4)
	}
	const noData = "no data"
	labelW = max(labelW, textWidth(text, noData))
	barW, swH := px(legBarW), px(legSwatchH)
	width := pad + barW + px(6) + labelW + pad
	width = max(width, pad+textWidth(head, l.headingText())+pad)
	titleH := 0
	if titleFace != nil {
		width = max(width, pad+textWidth(titleFace, title)+pad)
		titleH = titleFace.Metrics().Height.Ceil() + gap
	}
	rowH := max(swH, lineH) + px(4)
	bodyH := px(legBarH)
	if l.ramp.discrete {
		bodyH = len(rows) * rowH
	}
	height := pad + titleH + headH + gap + bodyH + gap + rowH + pad

	c := newCanvas(l.palette, width, height)
	y := pad
	if titleFace != nil {
		c.label(titleFace, title, pad, y+titleFace.Metrics().Height.Ceil()/2)
		y += titleH
	}
	c.label(head, l.headingText(), pad, y+headH/2)
	y += headH + gap
	x := pad
	if l.ramp.discrete {
		for _, r := range rows {
			sw := image.Rect(x, y+(rowH-swH)/2, x+barW, y+(rowH-swH)/2+swH)
			c.fill(sw, r.idx)
			c.outline(sw, line)
			c.label(text, r.name, x+barW+px(6), y+rowH/2)
			c.label(text, r.bounds, x+barW+px(6)+nameW+px(10), y+rowH/2)
			y += rowH
		}
	} else {
		bar := image.Rect(x, y, x+barW, y+bodyH)
		for by := bar.Min.Y; by < bar.Max.Y; by++ {
			t := (float64(bar.Max.Y-by) - 0.5) / float64(bodyH)
			c.fill(image.Rect(bar.Min.X, by, bar.Max.X, by+1), l.Index(float32(l.lo+t*(l.hi-l.lo))))
		}
		c.outline(bar, line)
		for i, v := range ticks {
			ty := bar.Max.Y - 1 - int(math.Round((v-l.lo)/(l.hi-l.lo)*float64(bodyH-1)))
			ty = max(bar.Min.Y, min(ty, bar.Max.Y-line))
			c.fill(image.Rect(bar.Max.X, ty, bar.Max.X+px(legTick), ty+line), indexBlack)
			c.label(text, tickLabels[i], bar.Max.X+px(legTick)+px(4), ty)
		}
		y += bodyH
	}
	y += gap
	nd := image.Rect(x, y+(rowH-swH)/2, x+barW, y+(rowH-swH)/2+swH)
	c.fill(nd, IndexNaN)
	c.outline(nd, line)
	c.label(text, noData, x+barW+px(6), y+rowH/2)
	c.flush()
	return c.img
}

// drawInto copies the paletted picture src (same palette) into dst at p.
func drawInto(dst, src *image.Paletted, p image.Point) {
	r := src.Rect.Add(p).Intersect(dst.Rect)
	for y := r.Min.Y; y < r.Max.Y; y++ {
		copy(dst.Pix[dst.PixOffset(r.Min.X, y):dst.PixOffset(r.Max.X, y)], src.Pix[src.PixOffset(r.Min.X-p.X, y-p.Y):])
	}
}
