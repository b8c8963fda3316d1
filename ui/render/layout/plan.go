package layout

import (
	"fmt"
	"image"
	"math"
	"strings"

	xfont "golang.org/x/image/font"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/font/liberation"
	"gonum.org/v1/plot/vg"

	"canopy/compute/geo"
	"canopy/ui/render/colormap"
	"canopy/ui/render/numfmt"
)

// Geometry says where a layout put things, in pixels from the top-left
// corner of the picture (at Options.DPI for PDF and SVG).
type Geometry struct {
	// Width and Height are the picture's size; DPI its resolution.
	Width, Height int
	DPI           float64
	// Map is the map frame: the raster's extent, drawn at this size.
	Map image.Rectangle
	// Zoom is the frame's pixels per map pixel.
	Zoom float64
	// Legend is the legend's box (empty without one).
	Legend image.Rectangle
	// ScaleBar is the bar itself, without its labels (empty without one);
	// ScaleBarMetres the ground length it stands for and ScaleBarLabel its
	// label ("1 km").
	ScaleBar       image.Rectangle
	ScaleBarMetres float64
	ScaleBarLabel  string
	// NorthArrow is the arrow's box (empty without one); North the
	// direction of true north it shows, in radians clockwise from up.
	NorthArrow image.Rectangle
	North      float64
	// GridStep is the grid's interval in map units (0 without a grid).
	GridStep float64
	// CRS names the map's coordinate reference system as the footer does.
	CRS string
	// Notes say what was left out and why.
	Notes []string
}

type pt struct{ x, y float64 }

type rectF struct{ x0, y0, x1, y1 float64 }

func (r rectF) int() image.Rectangle {
	return image.Rect(int(math.Round(r.x0)), int(math.Round(r.y0)), int(math.Round(r.x1)), int(math.Round(r.y1)))
}

// textStyle is a text's size in points and weight.
type textStyle struct {
	size float64
	bold bool
}

// fonts holds the Liberation fonts every format draws with.
var fonts = font.NewCache(liberation.Collection())

// face returns the Liberation Sans face of st.
func face(st textStyle) font.Face {
	f := font.Font{Typeface: "Liberation", Variant: "Sans", Size: vg.Points(st.size)}
	if st.bold {
		f.Weight = xfont.WeightBold
	}
	return fonts.Lookup(f, vg.Points(st.size))
}

// plan is a laid-out page, in pixels.
type plan struct {
	w, h  int
	dpi   float64
	px    float64 // pixels per point
	k     float64 // text scale
	m     Map
	lut   *colormap.LUT
	opt   Options
	notes []string

	title                 string
	titleLines, subLines  []string
	titleYs, subYs        []float64 // baselines
	titleSt, subSt        textStyle
	frame                 image.Rectangle
	zoom                  float64
	legend                *legendPlan
	arrow                 *arrowPlan
	bar                   *barPlan
	grid                  *gridPlan
	footer                []string
	footerSt              textStyle
	footerY               float64 // first baseline
	footerLineH, marginPx float64
	groupLeft             float64 // left edge of the map, its grid labels and panel
	crsLabel              string
}

// pts converts points to pixels.
func (p *plan) pts(v float64) float64 { return v * p.px }

// width returns the width of s in pixels.
func (p *plan) width(s string, st textStyle) float64 {
	f := face(st)
	return f.Width(s).Points() * p.px
}

// ascent returns the height of capitals above the baseline in pixels.
func (p *plan) ascent(st textStyle) float64 {
	f := face(st)
	return f.Extents().Ascent.Points() * p.px * 0.72
}

// lineH is the line height of st in pixels.
func (p *plan) lineH(st textStyle) float64 { return st.size * 1.25 * p.px }

func (p *plan) st(size float64, bold bool) textStyle { return textStyle{size * p.k, bold} }

// wrap cuts s into lines no wider than w pixels, at spaces.
func (p *plan) wrap(s string, st textStyle, w float64) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		try := word
		if line != "" {
			try = line + " " + word
		}
		if line != "" && p.width(try, st) > w {
			lines = append(lines, line)
			line = word
			continue
		}
		line = try
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// wrapParts joins parts with sep into lines no wider than w pixels,
// breaking between parts where it can and inside a part (at spaces) only
// when it is wider than a line by itself.
func (p *plan) wrapParts(parts []string, sep string, st textStyle, w float64) []string {
	var lines []string
	line := ""
	for _, part := range parts {
		try := part
		if line != "" {
			try = line + sep + part
		}
		if p.width(try, st) <= w {
			line = try
			continue
		}
		if line != "" {
			lines = append(lines, line)
		}
		line = ""
		ws := p.wrap(part, st, w)
		lines = append(lines, ws[:len(ws)-1]...)
		line = ws[len(ws)-1]
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// Plan lays out the page without drawing it.
func Plan(m Map, opt Options) (Geometry, error) {
	p, err := newPlan(m, opt)
	if err != nil {
		return Geometry{}, err
	}
	return p.geometry(), nil
}

func (p *plan) geometry() Geometry {
	g := Geometry{Width: p.w, Height: p.h, DPI: p.dpi, Map: p.frame, Zoom: p.zoom, CRS: p.crsLabel, Notes: p.notes}
	if p.legend != nil {
		g.Legend = p.legend.box.int()
	}
	if p.bar != nil {
		g.ScaleBar, g.ScaleBarMetres, g.ScaleBarLabel = p.bar.bar, p.bar.metres, p.bar.label
	}
	if p.arrow != nil {
		g.NorthArrow, g.North = p.arrow.box.int(), p.arrow.angle
	}
	if p.grid != nil {
		g.GridStep = p.grid.step
	}
	return g
}

func newPlan(m Map, opt Options) (*plan, error) {
	if err := m.check(); err != nil {
		return nil, err
	}
	w, h, dpi, err := opt.size(m)
	if err != nil {
		return nil, err
	}
	p := &plan{w: w, h: h, dpi: dpi, px: dpi / 72, m: m, lut: m.lut(), opt: opt}
	wPt, hPt := float64(w)/p.px, float64(h)/p.px
	p.k = math.Max(0.7, math.Min(2.5, math.Min(wPt, hPt)/500))
	p.titleSt, p.subSt, p.footerSt = p.st(15, true), p.st(10, false), p.st(7.5, false)
	margin := p.pts(16 * p.k)
	p.marginPx = margin
	gap := p.pts(8 * p.k)
	left, right := margin, float64(w)-margin
	top, bottom := margin, float64(h)-margin

	// Header.
	p.title = opt.Title
	if p.title == "" {
		p.title = p.lut.Heading()
		if c := m.Composite; c != nil && c.Title() != "" {
			p.title = c.Title()
		}
	}
	y := top
	// Long titles wrap rather than run off the page.
	for _, l := range p.wrap(p.title, p.titleSt, right-left) {
		p.titleLines = append(p.titleLines, l)
		p.titleYs = append(p.titleYs, y+p.ascent(p.titleSt))
		y += p.lineH(p.titleSt)
	}
	for _, l := range p.wrap(opt.Subtitle, p.subSt, right-left) {
		p.subLines = append(p.subLines, l)
		p.subYs = append(p.subYs, y+p.ascent(p.subSt))
		y += p.lineH(p.subSt)
	}
	y += gap

	// What the georeferencing allows.
	t, georef := m.Geo.Affine()
	var crs geo.CRS
	crsKnown := false
	if georef {
		if c, err := geo.Of(m.Geo); err == nil {
			crs, crsKnown = c, true
			p.crsLabel = c.Label()
		} else {
			p.crsLabel = m.Geo.CRSName()
			p.notes = append(p.notes, "the CRS is not known to PROJ ("+err.Error()+")")
		}
	} else {
		p.crsLabel = "not georeferenced"
		if !opt.NoScaleBar || !opt.NoNorthArrow || opt.Grid {
			p.notes = append(p.notes, "no scale bar, north arrow or grid: the raster is not georeferenced")
		}
	}
	northUp := georef && t[2] == 0 && t[4] == 0

	// Footer, from the bottom up.
	var parts []string
	parts = append(parts, "CRS: "+p.crsLabel)
	if opt.Date != "" {
		parts = append(parts, "Date: "+opt.Date)
	}
	if opt.Source != "" {
		parts = append(parts, "Source: "+opt.Source)
	}
	p.footer = p.wrapParts(parts, "   ·   ", p.footerSt, right-left)
	p.footerLineH = p.lineH(p.footerSt)
	footerH := float64(len(p.footer)) * p.footerLineH
	p.footerY = bottom - footerH + p.ascent(p.footerSt)
	bottom -= footerH + gap

	// The scale bar's strip under the map.
	barStripH := 0.0
	showBar := georef && !opt.NoScaleBar
	if showBar {
		// The bar's offset and height, its labels' offset and line (planBar).
		barStripH = p.pts(8*p.k) + math.Max(3, math.Round(p.pts(5*p.k))) + p.pts(2*p.k) + p.lineH(p.st(7.5, false)) + gap
	}

	// The grid's labels around the frame.
	var gp *gridPlan
	padTop, padLeft := 0.0, 0.0
	if opt.Grid && georef {
		if !northUp {
			p.notes = append(p.notes, "no grid: the raster is rotated")
		} else {
			gp = p.planGrid(t, crsKnown && crs.Geographic)
			padTop = p.lineH(gp.st) + p.pts(2)
			padLeft = gp.labelW + p.pts(4*p.k)
		}
	}

	// The panel: legend and north arrow.
	var lp *legendPlan
	if !opt.NoLegend {
		lp = p.planLegend()
	}
	var ap *arrowPlan
	if georef && !opt.NoNorthArrow {
		ap = p.planArrow(crsKnown, northUp)
	}
	panelW, panelH := 0.0, 0.0 // stacked (right of the map)
	rowW, rowH := 0.0, 0.0     // side by side (below the map)
	if lp != nil {
		panelW, panelH = lp.w, lp.h
		rowW, rowH = lp.w, lp.h
	}
	if ap != nil {
		panelW = math.Max(panelW, ap.size)
		rowW += ap.size
		rowH = math.Max(rowH, ap.size)
		if lp != nil {
			panelH += gap * 2
			rowW += gap * 2
		}
		panelH += ap.size
	}
	bodyW := right - left - padLeft
	bodyH := bottom - y - padTop - barStripH
	if bodyW < 20 || bodyH < 20 {
		return nil, fmt.Errorf("layout: %d×%d pixels at %g DPI leave no room for the map", w, h, dpi)
	}
	mw, mh := float64(m.Width), float64(m.Height)
	zRight, zBelow := 0.0, 0.0
	if panelW > 0 {
		zRight = math.Min((bodyW-panelW-gap*2)/mw, bodyH/mh)
		zBelow = math.Min(bodyW/mw, (bodyH-rowH-gap*2)/mh)
	} else {
		zRight = math.Min(bodyW/mw, bodyH/mh)
	}
	below := zBelow > zRight
	z := math.Max(zRight, zBelow)
	if !(z > 0) {
		return nil, fmt.Errorf("layout: %d×%d pixels at %g DPI leave no room for the map beside its legend", w, h, dpi)
	}
	fw := max(1, int(math.Floor(mw*z)))
	fh := max(1, int(math.Round(mh*float64(fw)/mw)))
	if float64(fh) > math.Floor(mh*z)+0.5 {
		fh = max(1, int(math.Floor(mh*z)))
		fw = max(1, int(math.Round(mw*float64(fh)/mh)))
	}
	p.zoom = float64(fw) / mw

	// Centre the map and its panel across the page.
	groupW := padLeft + float64(fw)
	if !below && panelW > 0 {
		groupW += gap*2 + panelW
	}
	p.groupLeft = math.Round(left + (right-left-groupW)/2)
	x0 := p.groupLeft + math.Round(padLeft)
	y0 := math.Round(y + padTop)
	p.frame = image.Rect(int(x0), int(y0), int(x0)+fw, int(y0)+fh)

	fy := float64(p.frame.Max.Y)
	if showBar {
		p.bar = p.planBar(crs, crsKnown)
		if p.bar != nil {
			fy += barStripH
		}
	}
	if gp != nil {
		p.grid = gp
		p.layoutGrid(t)
	}
	// Place the panel.
	if below {
		px0 := float64(p.frame.Min.X)
		py0 := fy
		if lp != nil {
			lp.place(p, px0, py0)
			px0 += lp.w + gap*2
		}
		if ap != nil {
			ap.place(px0, py0)
		}
	} else {
		px0 := float64(p.frame.Max.X) + gap*2
		py0 := float64(p.frame.Min.Y)
		if lp != nil {
			lp.place(p, px0, py0)
			py0 += lp.h + gap*2
		}
		if ap != nil {
			ap.place(px0+(panelW-ap.size)/2, py0)
		}
	}
	p.legend, p.arrow = lp, ap
	return p, nil
}

// legendPlan is the legend's layout.
type legendPlan struct {
	w, h              float64
	box               rectF
	head              string
	headSt, textSt    textStyle
	classes           colormap.ClassTable
	lines             []string // a composite's rows (channels, stretch)
	ticks             []float64
	tickLabels        []string
	barW, barH        float64
	swW, swH, rowH    float64
	nameW, tickLen    float64
	pad, gap          float64
	headY             float64
	barTop, rowsTop   float64
	noDataY, labelGap float64
}

func (p *plan) planLegend() *legendPlan {
	l := &legendPlan{head: p.lut.Heading(), headSt: p.st(9.5, true), textSt: p.st(8.5, false)}
	l.pad, l.gap, l.labelGap = 0, p.pts(5*p.k), p.pts(5*p.k)
	l.swW, l.swH = math.Round(p.pts(14*p.k)), math.Round(p.pts(10*p.k))
	l.rowH = math.Round(math.Max(l.swH, p.lineH(l.textSt)) + p.pts(3*p.k))
	l.tickLen = math.Round(p.pts(4 * p.k))
	w := 0.0
	body := 0.0
	if c := p.m.Composite; c != nil {
		lines := c.Legend()
		if c.Title() != "" {
			l.head, lines = lines[0], lines[1:]
		}
		l.lines = lines
		for i, s := range lines {
			lw := p.width(s, l.textSt)
			if i < 3 {
				lw += l.swW + l.labelGap
			}
			w = math.Max(w, lw)
		}
		body = float64(len(lines)) * l.rowH
	} else if p.lut.Discrete() {
		l.classes = p.lut.Classes()
		boundsW := 0.0
		for i, c := range l.classes {
			l.nameW = math.Max(l.nameW, p.width(c.Name, l.textSt))
			boundsW = math.Max(boundsW, p.width(l.classes.Bounds(i), l.textSt))
		}
		w = l.swW + l.labelGap + l.nameW + l.labelGap*2 + boundsW
		body = float64(len(l.classes)) * l.rowH
	} else {
		l.ticks, l.tickLabels = p.lut.Ticks()
		lw := 0.0
		for _, s := range l.tickLabels {
			lw = math.Max(lw, p.width(s, l.textSt))
		}
		l.barW = l.swW
		l.barH = math.Round(p.pts(130 * p.k))
		w = l.barW + l.tickLen + l.labelGap + lw
		body = l.barH
	}
	w = math.Max(w, l.swW+l.labelGap+p.width("no data", l.textSt))
	w = math.Max(w, p.width(l.head, l.headSt))
	l.w = math.Ceil(w)
	l.h = math.Ceil(p.lineH(l.headSt) + l.gap + body + l.gap + l.rowH)
	return l
}

// place puts the legend's top-left corner at (x, y).
func (l *legendPlan) place(p *plan, x, y float64) {
	x, y = math.Round(x), math.Round(y)
	l.box = rectF{x, y, x + l.w, y + l.h}
	l.headY = y + p.ascent(l.headSt)
	top := math.Round(y + p.lineH(l.headSt) + l.gap)
	l.barTop, l.rowsTop = top, top
	body := l.barH
	if l.classes != nil {
		body = float64(len(l.classes)) * l.rowH
	}
	if l.lines != nil {
		body = float64(len(l.lines)) * l.rowH
	}
	l.noDataY = math.Round(top + body + l.gap)
}

// arrowPlan is the north arrow's layout.
type arrowPlan struct {
	size  float64
	box   rectF
	angle float64
	grid  bool // north from the grid, not from PROJ
	st    textStyle
}

func (p *plan) planArrow(crsKnown, northUp bool) *arrowPlan {
	a := &arrowPlan{size: math.Round(p.pts(34 * p.k)), st: p.st(9, true)}
	if crsKnown {
		ang, err := geo.NorthAngle(p.m.Geo, float64(p.m.Width)/2, float64(p.m.Height)/2)
		if err == nil {
			a.angle = ang
			return a
		}
		p.notes = append(p.notes, "north arrow: "+err.Error())
	}
	if !northUp {
		p.notes = append(p.notes, "no north arrow: the raster is rotated and its CRS is not known")
		return nil
	}
	a.grid = true
	p.notes = append(p.notes, "the north arrow shows grid north")
	return a
}

func (a *arrowPlan) place(x, y float64) {
	x, y = math.Round(x), math.Round(y)
	a.box = rectF{x, y, x + a.size, y + a.size}
}

// barPlan is the scale bar's layout.
type barPlan struct {
	bar      image.Rectangle
	metres   float64
	label    string
	segments int
	st       textStyle
	note     string
}

// planBar chooses the scale bar's length: the largest 1, 2 or 5 × 10^k
// ground length that fits in 40% of the frame's width.
func (p *plan) planBar(crs geo.CRS, crsKnown bool) *barPlan {
	cx, cy := float64(p.m.Width)/2, float64(p.m.Height)/2
	var perPixel float64 // metres (or map units) per map pixel along a row
	unit := ""
	if crsKnown && (crs.Projected || crs.Geographic) {
		dx, _, err := geo.PixelSize(p.m.Geo, cx, cy)
		if err != nil {
			p.notes = append(p.notes, "no scale bar: "+err.Error())
			return nil
		}
		perPixel = dx
	} else {
		t, _ := p.m.Geo.Affine()
		perPixel = math.Hypot(t[1], t[4])
		unit = " map units"
		p.notes = append(p.notes, "the scale bar is in map units: their length in metres is not known")
	}
	perFramePx := perPixel / p.zoom
	maxPx := float64(p.frame.Dx()) * 0.4
	if !(perFramePx > 0) || maxPx < 10 {
		p.notes = append(p.notes, "no scale bar: the map is too small")
		return nil
	}
	L := NiceLength(maxPx * perFramePx)
	mag := math.Pow(10, math.Floor(math.Log10(L)+1e-9))
	lenPx := int(math.Round(L / perFramePx))
	if lenPx < 4 {
		p.notes = append(p.notes, "no scale bar: the map is too small")
		return nil
	}
	b := &barPlan{metres: L, st: p.st(7.5, false)}
	if unit == "" {
		b.label = numfmt.Length(L)
	} else {
		b.label = numfmt.Value(L) + unit
	}
	if crsKnown && crs.Geographic {
		if x, y, err := geo.PixelToMap(p.m.Geo, cx, cy); err == nil {
			if lat, _, err := geo.ToLatLon(p.m.Geo, x, y); err == nil {
				b.note = "at " + numfmt.Degrees(math.Round(lat*100)/100, 0.01, true)
			}
		}
	}
	b.segments = 4
	if first := L / mag; first == 5 {
		b.segments = 5
	}
	h := int(math.Round(p.pts(5 * p.k)))
	x0 := p.frame.Min.X
	y0 := p.frame.Max.Y + int(math.Round(p.pts(8*p.k)))
	b.bar = image.Rect(x0, y0, x0+lenPx, y0+max(3, h))
	return b
}

// NiceLength returns the scale bar length for at most max: the largest 1,
// 2 or 5 × 10^k not above it (100 m, 500 m, 1 km, 2 km, 5 km…), 0 when
// max is not a positive number. A scale bar in the window takes its
// length from here too.
func NiceLength(max float64) float64 {
	if !(max > 0) || math.IsInf(max, 0) {
		return 0
	}
	mag := math.Pow(10, math.Floor(math.Log10(max)))
	for _, f := range []float64{5, 2, 1} {
		if f*mag <= max*(1+1e-9) {
			return f * mag
		}
	}
	return mag
}

// gridPlan is the coordinate grid's layout.
type gridPlan struct {
	step       float64
	geographic bool
	st         textStyle
	labelW     float64
	xs, ys     []float64 // map coordinates of the lines
	xLabel     []string  // "" for a line left unlabelled
	yLabel     []string
}

func (p *plan) planGrid(t [6]float64, geographic bool) *gridPlan {
	g := &gridPlan{geographic: geographic, st: p.st(7, false)}
	x0, x1 := t[0], t[0]+float64(p.m.Width)*t[1]
	y0, y1 := t[3], t[3]+float64(p.m.Height)*t[5]
	g.step = numfmt.NiceStep(math.Min(math.Abs(x1-x0), math.Abs(y1-y0)), 3)
	lo, hi := math.Min(y0, y1), math.Max(y0, y1)
	for v := math.Ceil(lo/g.step-1e-9) * g.step; v <= hi+g.step*1e-9; v += g.step {
		g.labelW = math.Max(g.labelW, p.width(g.format(v, true), g.st))
	}
	return g
}

func (g *gridPlan) format(v float64, isY bool) string {
	if math.Abs(v) < g.step*1e-9 {
		v = 0
	}
	if g.geographic {
		return numfmt.Degrees(v, g.step, isY)
	}
	return numfmt.Tick(v, g.step)
}

// layoutGrid finds the lines inside the frame and which to label so that
// labels do not touch.
func (p *plan) layoutGrid(t [6]float64) {
	g := p.grid
	x0, x1 := t[0], t[0]+float64(p.m.Width)*t[1]
	y0, y1 := t[3], t[3]+float64(p.m.Height)*t[5]
	lines := func(a, b float64) []float64 {
		lo, hi := math.Min(a, b), math.Max(a, b)
		var vs []float64
		for i := math.Ceil(lo/g.step - 1e-9); i*g.step <= hi+g.step*1e-9; i++ {
			v := i * g.step
			if v > lo+g.step*1e-6 && v < hi-g.step*1e-6 {
				vs = append(vs, v)
			}
		}
		return vs
	}
	g.xs, g.ys = lines(x0, x1), lines(y0, y1)
	spacing := g.step * p.zoom / math.Abs(t[1]) // pixels between lines
	widest := 0.0
	for _, v := range g.xs {
		widest = math.Max(widest, p.width(g.format(v, false), g.st))
	}
	every := 1
	for float64(every)*spacing < widest+p.pts(6*p.k) && every < 64 {
		every++
	}
	for i, v := range g.xs {
		s := ""
		if i%every == 0 {
			s = g.format(v, false)
		}
		g.xLabel = append(g.xLabel, s)
	}
	everyY := 1
	for float64(everyY)*spacing*math.Abs(t[5])/math.Abs(t[1]) < p.lineH(g.st) && everyY < 64 {
		everyY++
	}
	for i, v := range g.ys {
		s := ""
		if i%everyY == 0 {
			s = g.format(v, true)
		}
		g.yLabel = append(g.yLabel, s)
	}
}
