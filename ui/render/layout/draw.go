package layout

import (
	"image"
	"image/color"
	"math"

	"canopy/ui/render/composite"
)

// surface is what a layout draws on, in pixels from the top-left corner.
type surface interface {
	// fill paints a rectangle.
	fill(r rectF, c color.Color)
	// poly fills a polygon.
	poly(pts []pt, c color.Color)
	// stroke draws a polyline of width w pixels.
	stroke(pts []pt, w float64, c color.Color)
	// text draws s with its baseline at y, starting at x (align 0),
	// centred on x (0.5) or ending at x (1).
	text(s string, x, y float64, st textStyle, align float64, c color.Color)
	// raster draws img (opaque, r's size) pixel for pixel into r.
	raster(r image.Rectangle, img *image.NRGBA)
}

var (
	ink      = color.NRGBA{0x1a, 0x1a, 0x1a, 0xff}
	black    = color.NRGBA{0, 0, 0, 0xff}
	white    = color.NRGBA{0xff, 0xff, 0xff, 0xff}
	gridInk  = color.NRGBA{0x30, 0x30, 0x30, 0xa0}
	greyText = color.NRGBA{0x44, 0x44, 0x44, 0xff}
)

// mapRaster draws the map at the frame's size over white, opaque.
func (p *plan) mapRaster() *image.NRGBA {
	fw, fh := p.frame.Dx(), p.frame.Dy()
	img := image.NewNRGBA(image.Rect(0, 0, fw, fh))
	if c := p.m.Composite; c != nil {
		c.RenderView(img, 0, 0, p.zoom)
	} else {
		p.lut.RenderView(img, p.m.Plane, p.m.Width, p.m.Height, 0, 0, p.zoom)
	}
	for i := 0; i < len(img.Pix); i += 4 {
		if a := uint32(img.Pix[i+3]); a != 0xff {
			for c := range 3 {
				img.Pix[i+c] = uint8((uint32(img.Pix[i+c])*a + 0xff*(0xff-a) + 127) / 0xff)
			}
			img.Pix[i+3] = 0xff
		}
	}
	return img
}

// frameRect draws a frame of thickness t pixels just outside r.
func frameRect(s surface, r rectF, t float64, c color.Color) {
	s.fill(rectF{r.x0 - t, r.y0 - t, r.x1 + t, r.y0}, c)
	s.fill(rectF{r.x0 - t, r.y1, r.x1 + t, r.y1 + t}, c)
	s.fill(rectF{r.x0 - t, r.y0, r.x0, r.y1}, c)
	s.fill(rectF{r.x1, r.y0, r.x1 + t, r.y1}, c)
}

func rf(r image.Rectangle) rectF {
	return rectF{float64(r.Min.X), float64(r.Min.Y), float64(r.Max.X), float64(r.Max.Y)}
}

// line is the width of thin lines: one point, at least one pixel.
func (p *plan) line() float64 { return math.Max(1, math.Round(p.pts(0.8*p.k))) }

func (p *plan) draw(s surface) {
	for i, l := range p.titleLines {
		s.text(l, p.groupLeft, p.titleYs[i], p.titleSt, 0, ink)
	}
	for i, l := range p.subLines {
		s.text(l, p.groupLeft, p.subYs[i], p.subSt, 0, greyText)
	}
	s.raster(p.frame, p.mapRaster())
	if p.grid != nil {
		p.drawGrid(s)
	}
	frameRect(s, rf(p.frame), p.line(), black)
	if p.legend != nil {
		p.drawLegend(s)
	}
	if p.arrow != nil {
		p.drawArrow(s)
	}
	if p.bar != nil {
		p.drawBar(s)
	}
	x := p.groupLeft
	for i, l := range p.footer {
		s.text(l, x, p.footerY+float64(i)*p.footerLineH, p.footerSt, 0, greyText)
	}
}

func (p *plan) drawLegend(s surface) {
	l := p.legend
	x := l.box.x0
	s.text(l.head, x, l.headY, l.headSt, 0, ink)
	t := p.line()
	capH := p.ascent(l.textSt)
	if l.lines != nil {
		// A composite: a swatch of the channel's colour and its band and
		// range on each row, then the stretch.
		for i, line := range l.lines {
			ry := l.rowsTop + float64(i)*l.rowH
			base := ry + l.rowH/2 + capH/2
			if i < 3 {
				sw := rectF{x + t, ry + math.Round((l.rowH-l.swH)/2), x + t + l.swW, ry + math.Round((l.rowH-l.swH)/2) + l.swH}
				s.fill(sw, composite.ChannelColors[i])
				frameRect(s, sw, t, ink)
				s.text(line, sw.x1+t+l.labelGap, base, l.textSt, 0, ink)
			} else {
				s.text(line, x, base, l.textSt, 0, ink)
			}
		}
	} else if l.classes != nil {
		for i := range l.classes {
			c := l.classes[len(l.classes)-1-i]
			ry := l.rowsTop + float64(i)*l.rowH
			sw := rectF{x + t, ry + math.Round((l.rowH-l.swH)/2), x + t + l.swW, ry + math.Round((l.rowH-l.swH)/2) + l.swH}
			s.fill(sw, c.Color)
			frameRect(s, sw, t, ink)
			base := ry + l.rowH/2 + capH/2
			s.text(c.Name, sw.x1+t+l.labelGap, base, l.textSt, 0, ink)
			s.text(l.classes.Bounds(len(l.classes)-1-i), sw.x1+t+l.labelGap+l.nameW+l.labelGap*2, base, l.textSt, 0, ink)
		}
	} else {
		bar := rectF{x + t, l.barTop, x + t + l.barW, l.barTop + l.barH}
		r := p.lut.Range()
		n := int(bar.y1 - bar.y0)
		for i := 0; i < n; i++ {
			v := r.Lo + (float64(n-i)-0.5)/float64(n)*(r.Hi-r.Lo)
			s.fill(rectF{bar.x0, bar.y0 + float64(i), bar.x1, bar.y0 + float64(i) + 1}, p.lut.Color(float32(v)))
		}
		frameRect(s, bar, t, ink)
		for i, v := range l.ticks {
			ty := math.Round(bar.y1 - (v-r.Lo)/(r.Hi-r.Lo)*(bar.y1-bar.y0))
			ty = math.Max(bar.y0, math.Min(ty, bar.y1-t))
			s.fill(rectF{bar.x1 + t, ty - t/2, bar.x1 + t + l.tickLen, ty + t/2}, ink)
			s.text(l.tickLabels[i], bar.x1+t+l.tickLen+l.labelGap/2, ty+capH/2, l.textSt, 0, ink)
		}
	}
	nd := rectF{x + t, l.noDataY + math.Round((l.rowH-l.swH)/2), x + t + l.swW, l.noDataY + math.Round((l.rowH-l.swH)/2) + l.swH}
	s.fill(nd, white)
	frameRect(s, nd, t, ink)
	s.text("no data", nd.x1+t+l.labelGap, l.noDataY+l.rowH/2+capH/2, l.textSt, 0, ink)
}

func (p *plan) drawArrow(s surface) {
	a := p.arrow
	cx, cy := (a.box.x0+a.box.x1)/2, (a.box.y0+a.box.y1)/2
	labelH := p.lineH(a.st)
	r := (a.size - labelH) / 2 // arrow half-length
	acy := cy + labelH/2
	sin, cos := math.Sin(a.angle), math.Cos(a.angle)
	// rot turns (dx, dy) (dy < 0 is up) clockwise by the angle.
	rot := func(dx, dy float64) pt {
		return pt{cx + dx*cos - dy*sin, acy + dx*sin + dy*cos}
	}
	tip, tail := rot(0, -r), rot(0, r*0.55)
	left, right := rot(-r*0.45, r*0.8), rot(r*0.45, r*0.8)
	s.poly([]pt{tip, left, tail}, ink)
	s.poly([]pt{tip, tail, right}, white)
	s.stroke([]pt{tip, right, tail, left, tip}, p.line(), ink)
	lab := rot(0, -r-labelH*0.35)
	s.text("N", lab.x, lab.y+p.ascent(a.st)/2, a.st, 0.5, ink)
}

func (p *plan) drawBar(s surface) {
	b := p.bar
	r := rf(b.bar)
	n := b.segments
	for i := range n {
		x0 := r.x0 + math.Round(float64(i)*(r.x1-r.x0)/float64(n))
		x1 := r.x0 + math.Round(float64(i+1)*(r.x1-r.x0)/float64(n))
		c := black
		if i%2 == 1 {
			c = white
		}
		s.fill(rectF{x0, r.y0, x1, r.y1}, c)
	}
	t := p.line()
	// The outline lies on the bar's first and last pixels, so that the
	// bar is exactly its length.
	s.fill(rectF{r.x0, r.y0, r.x1, r.y0 + t}, black)
	s.fill(rectF{r.x0, r.y1 - t, r.x1, r.y1}, black)
	s.fill(rectF{r.x0, r.y0, r.x0 + t, r.y1}, black)
	s.fill(rectF{r.x1 - t, r.y0, r.x1, r.y1}, black)
	base := r.y1 + p.pts(2*p.k) + p.ascent(b.st)
	s.text("0", r.x0, base, b.st, 0.5, ink)
	s.text(b.label, r.x1, base, b.st, 0.5, ink)
	if b.note != "" {
		s.text(b.note, r.x1+p.width(b.label, b.st)/2+p.pts(6*p.k), base, b.st, 0, greyText)
	}
}

func (p *plan) drawGrid(s surface) {
	g := p.grid
	t, _ := p.m.Geo.Affine()
	f := rf(p.frame)
	w := math.Max(1, math.Round(p.pts(0.5*p.k)))
	capH := p.ascent(g.st)
	for i, v := range g.xs {
		x := math.Round(f.x0 + (v-t[0])/t[1]*p.zoom)
		s.fill(rectF{x - w/2, f.y0, x + w/2, f.y1}, gridInk)
		if g.xLabel[i] != "" {
			s.text(g.xLabel[i], x, f.y0-p.pts(2)-p.line(), g.st, 0.5, ink)
		}
	}
	for i, v := range g.ys {
		y := math.Round(f.y0 + (v-t[3])/t[5]*p.zoom)
		s.fill(rectF{f.x0, y - w/2, f.x1, y + w/2}, gridInk)
		if g.yLabel[i] != "" {
			s.text(g.yLabel[i], f.x0-p.pts(3*p.k)-p.line(), y+capH/2, g.st, 1, ink)
		}
	}
}
