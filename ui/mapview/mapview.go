// Package mapview is Canopy's map: a Fyne widget that shows an index plane
// coloured by a LUT (or a composite of the same grid, or what a renderer
// draws), rendering only the visible viewport; the wheel zooms around the
// cursor, a drag pans, hovering or clicking reports the image pixel.
package mapview

import (
	"encoding/binary"
	"image"
	"image/color"
	"math"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/widget"

	"canopy/compute/par"
	"canopy/ui/render/colormap"
	"canopy/ui/render/composite"
)

// Zoom limits, in screen pixels per image pixel.
const (
	maxZoom       = 64
	wheelStep     = 1.25 // zoom factor of one wheel notch
	wheelNotch    = 25   // Fyne's scroll delta for one notch on Linux/Windows
	minZoomOfFit  = 0.25 // how far out of "fit" the user may zoom
	panKeepInView = 0.1  // share of the view that must still show the image
)

// View shows an NDVI plane coloured by a LUT. It keeps no picture of the
// whole image: its raster's generator renders only the visible viewport at
// screen resolution through colormap's RenderView, so a 10980² map costs no
// more to draw than a small one. The wheel zooms around the cursor, a drag
// pans, and hovering or clicking reports the image pixel under the cursor.
type View struct {
	widget.BaseWidget

	// OnProbe is called on the event goroutine when the pointer moves over
	// the map (pinned false) or the map is clicked (pinned true), with the
	// image column and row under it; inside is false off the image.
	OnProbe func(col, row int, inside, pinned bool)
	// OnViewChanged is called after zoom or pan.
	OnViewChanged func()

	raster *canvas.Raster

	mu     sync.Mutex // guards the fields below (generator vs events)
	ndvi   []float32
	w, h   int
	lut    *colormap.LUT
	zoom   float64 // physical screen pixels per image pixel
	x0, y0 float64 // image point at the view's top-left corner
	scale  float32 // physical pixels per Fyne unit, from the last render
	fitted bool    // follow the widget size with "fit"
	buf    *image.NRGBA
	pins   []image.Point // image pixels marked (identify)
	// render, when set, draws the view instead of the LUT from ndvi (the
	// session kept on the card); false falls back to ndvi.
	render     func(buf *image.NRGBA, lut *colormap.LUT, x0, y0, zoom float64) bool
	lastRender time.Duration
	renders    int
	// overlay, when set, draws over the map after the raster (the
	// stands), in view pixels.
	overlay func(buf *image.NRGBA, x0, y0, zoom float64)
	// comp, when set, is drawn instead of the index (a natural- or
	// false-colour view of the same grid).
	comp *composite.Composite
	// mask, when set (w×h, non-zero masked), marks the pixels the
	// product's mask removed: drawn hatched.
	mask []uint8
	// maskView, when set, marks the view pixels masked at each render
	// instead (an image read by views holds its mask per view, at the
	// view's resolution); marks is its buffer, one byte a view pixel.
	maskView func(dst []uint8, w, h int, x0, y0, zoom float64)
	marks    []uint8
}

// New returns an empty map view.
func New() *View {
	m := &View{scale: 1, fitted: true}
	m.raster = canvas.NewRaster(m.generate)
	m.raster.ScaleMode = canvas.ImageScalePixels
	m.ExtendBaseWidget(m)
	return m
}

// SetData shows ndvi (w×h, row-major) with lut. The view is kept when the
// size is unchanged (recomputing on another backend, changing the ramp) and
// fitted otherwise. The slice is read, never written, and must not change
// while shown.
func (m *View) SetData(ndvi []float32, w, h int, lut *colormap.LUT) {
	m.mu.Lock()
	resize := w != m.w || h != m.h
	m.ndvi, m.w, m.h, m.lut = ndvi, w, h, lut
	if resize {
		m.fitted = true
	}
	m.mu.Unlock()
	if resize {
		m.Fit()
		return
	}
	m.changed()
}

// SetRenderer makes render draw the view (a session kept on the card),
// or the LUT from the plane again when nil. It takes effect at the next
// SetData or refresh.
func (m *View) SetRenderer(render func(buf *image.NRGBA, lut *colormap.LUT, x0, y0, zoom float64) bool) {
	m.mu.Lock()
	m.render = render
	m.mu.Unlock()
}

// SetComposite shows c (a colour composite of the image's grid) instead
// of the index, on the same view, pins and overlay; nil shows the index
// again. It redraws.
func (m *View) SetComposite(c *composite.Composite) {
	m.mu.Lock()
	m.comp = c
	m.mu.Unlock()
	m.raster.Refresh()
}

// SetOverlay makes draw paint over the map at each render (nil: none)
// and redraws. draw runs on the generator's goroutine with the view's
// corner and zoom.
func (m *View) SetOverlay(draw func(buf *image.NRGBA, x0, y0, zoom float64)) {
	m.mu.Lock()
	m.overlay = draw
	m.mu.Unlock()
	m.raster.Refresh()
}

// PixelSize is the size in pixels of the last view drawn, 0×0 before one.
func (m *View) PixelSize() (w, h int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.buf == nil {
		return 0, 0
	}
	return m.buf.Rect.Dx(), m.buf.Rect.Dy()
}

// SetLUT changes the colouring and redraws.
func (m *View) SetLUT(lut *colormap.LUT) {
	m.mu.Lock()
	m.lut = lut
	m.mu.Unlock()
	m.raster.Refresh()
}

// SetPins marks image pixels (col, row) on the map: the identify panel's
// pins. nil clears them.
func (m *View) SetPins(pins []image.Point) {
	m.mu.Lock()
	m.pins = append([]image.Point(nil), pins...)
	m.mu.Unlock()
	m.raster.Refresh()
}

// drawMarker draws a pin's marker centred on (cx, cy): a white ring of
// radius r with a black edge outside and inside, readable on any ramp,
// and a black dot at its centre.
func drawMarker(img *image.NRGBA, cx, cy, r int) {
	r = max(r, 4)
	b := img.Rect
	set := func(x, y int, c color.NRGBA) {
		if image.Pt(x, y).In(b) {
			img.SetNRGBA(x, y, c)
		}
	}
	black, white := color.NRGBA{0, 0, 0, 255}, color.NRGBA{255, 255, 255, 255}
	for y := cy - r - 2; y <= cy+r+2; y++ {
		for x := cx - r - 2; x <= cx+r+2; x++ {
			d := math.Hypot(float64(x-cx), float64(y-cy))
			switch {
			case d <= 1.5:
				set(x, y, black)
			case math.Abs(d-float64(r)) <= 1:
				set(x, y, white)
			case math.Abs(d-float64(r)) <= 2:
				set(x, y, black)
			}
		}
	}
}

// ImageSize returns the size of the image shown, 0×0 when empty.
func (m *View) ImageSize() (w, h int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.w, m.h
}

// View returns the current zoom (screen pixels per image pixel) and the
// image point at the top-left corner of the view.
func (m *View) View() (zoom, x0, y0 float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.zoom, m.x0, m.y0
}

// LastRender returns how long the last viewport render took and how many
// renders there have been.
func (m *View) LastRender() (time.Duration, int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lastRender, m.renders
}

// viewPixels returns the view size in physical pixels.
func (m *View) viewPixels() (float64, float64) {
	s := m.Size()
	return float64(s.Width * m.scale), float64(s.Height * m.scale)
}

// Fit zooms so that the whole image fits the view, centred.
func (m *View) Fit() {
	m.mu.Lock()
	m.fitLocked()
	m.mu.Unlock()
	m.changed()
}

func (m *View) fitLocked() {
	m.fitted = true
	vw, vh := m.viewPixels()
	if m.w == 0 || m.h == 0 || vw <= 0 || vh <= 0 {
		m.zoom, m.x0, m.y0 = 1, 0, 0
		return
	}
	m.zoom = math.Min(vw/float64(m.w), vh/float64(m.h))
	m.x0 = (float64(m.w) - vw/m.zoom) / 2
	m.y0 = (float64(m.h) - vh/m.zoom) / 2
}

// ZoomBy multiplies the zoom by f around the centre of the view.
func (m *View) ZoomBy(f float64) {
	vw, vh := m.viewPixels()
	m.zoomAround(f, vw/2, vh/2)
}

// ActualPixels shows one image pixel per screen pixel, keeping the centre.
func (m *View) ActualPixels() {
	m.mu.Lock()
	z := m.zoom
	m.mu.Unlock()
	if z > 0 {
		m.ZoomBy(1 / z)
	}
}

// zoomAround multiplies the zoom by f keeping the image point under the
// physical view pixel (px, py) in place.
func (m *View) zoomAround(f, px, py float64) {
	m.mu.Lock()
	if m.w == 0 || m.zoom <= 0 {
		m.mu.Unlock()
		return
	}
	vw, vh := m.viewPixels()
	fit := math.Min(vw/float64(m.w), vh/float64(m.h))
	lo := math.Min(fit*minZoomOfFit, 1)
	z := math.Max(lo, math.Min(maxZoom, m.zoom*f))
	ix, iy := m.x0+px/m.zoom, m.y0+py/m.zoom
	m.zoom = z
	m.x0, m.y0 = ix-px/z, iy-py/z
	m.fitted = false
	m.clampLocked()
	m.mu.Unlock()
	m.changed()
}

// panBy moves the view by (dx, dy) physical pixels.
func (m *View) panBy(dx, dy float64) {
	m.mu.Lock()
	if m.w == 0 || m.zoom <= 0 {
		m.mu.Unlock()
		return
	}
	m.x0 -= dx / m.zoom
	m.y0 -= dy / m.zoom
	m.fitted = false
	m.clampLocked()
	m.mu.Unlock()
	m.changed()
}

// clampLocked keeps part of the image in view.
func (m *View) clampLocked() {
	vw, vh := m.viewPixels()
	sw, sh := vw/m.zoom, vh/m.zoom // view size in image pixels
	m.x0 = math.Max(-sw*(1-panKeepInView), math.Min(float64(m.w)-sw*panKeepInView, m.x0))
	m.y0 = math.Max(-sh*(1-panKeepInView), math.Min(float64(m.h)-sh*panKeepInView, m.y0))
}

func (m *View) changed() {
	m.raster.Refresh()
	if m.OnViewChanged != nil {
		m.OnViewChanged()
	}
}

// Resize keeps a fitted view fitted.
func (m *View) Resize(s fyne.Size) {
	old := m.Size()
	m.BaseWidget.Resize(s)
	if old == s {
		return
	}
	m.mu.Lock()
	if m.fitted {
		m.fitLocked()
	} else if old.Width > 0 && old.Height > 0 {
		// Keep the centre where it was.
		dx := float64((old.Width - s.Width) * m.scale / 2)
		dy := float64((old.Height - s.Height) * m.scale / 2)
		m.x0 += dx / m.zoom
		m.y0 += dy / m.zoom
	}
	m.mu.Unlock()
}

// generate renders the viewport at w×h physical pixels.
func (m *View) generate(w, h int) image.Image {
	m.mu.Lock()
	defer m.mu.Unlock()
	if w <= 0 || h <= 0 {
		return image.NewNRGBA(image.Rect(0, 0, 1, 1))
	}
	if m.buf == nil || m.buf.Rect.Dx() != w || m.buf.Rect.Dy() != h {
		m.buf = image.NewNRGBA(image.Rect(0, 0, w, h))
	}
	if sw := m.Size().Width; sw > 0 {
		s := float32(w) / sw
		if math.Abs(float64(s-m.scale)) > 1e-3 {
			m.scale = s
			if m.fitted {
				m.fitLocked()
			}
		}
	}
	comp := m.comp
	if comp != nil {
		if cw, ch := comp.Size(); cw != m.w || ch != m.h {
			comp = nil // of another grid: never drawn out of place
		}
	}
	if comp == nil && (m.ndvi == nil || m.lut == nil) {
		clear(m.buf.Pix)
		return m.buf
	}
	t0 := time.Now()
	switch {
	case comp != nil:
		comp.RenderView(m.buf, m.x0, m.y0, m.zoom)
	case m.render == nil || !m.render(m.buf, m.lut, m.x0, m.y0, m.zoom):
		m.lut.RenderView(m.buf, m.ndvi, m.w, m.h, m.x0, m.y0, m.zoom)
	}
	switch {
	case m.maskView != nil:
		if cap(m.marks) < w*h {
			m.marks = make([]uint8, w*h)
		}
		marks := m.marks[:w*h]
		clear(marks)
		m.maskView(marks, w, h, m.x0, m.y0, m.zoom)
		hatchMarks(m.buf, marks, m.scale)
	case len(m.mask) == m.w*m.h && m.mask != nil:
		hatchMasked(m.buf, m.mask, m.w, m.h, m.x0, m.y0, m.zoom, m.scale)
	}
	if m.overlay != nil {
		m.overlay(m.buf, m.x0, m.y0, m.zoom)
	}
	for _, p := range m.pins {
		// The marker sits on the pixel's centre.
		cx := int(math.Floor((float64(p.X) + 0.5 - m.x0) * m.zoom))
		cy := int(math.Floor((float64(p.Y) + 0.5 - m.y0) * m.zoom))
		drawMarker(m.buf, cx, cy, int(math.Round(float64(6*m.scale))))
	}
	m.lastRender = time.Since(t0)
	m.renders++
	return m.buf
}

// pixelAt returns the image pixel under a position in the widget.
func (m *View) pixelAt(p fyne.Position) (col, row int, inside bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.w == 0 || m.zoom <= 0 {
		return 0, 0, false
	}
	sx, sy := int(p.X*m.scale), int(p.Y*m.scale)
	col, row = colormap.ViewPixel(sx, sy, m.x0, m.y0, m.zoom)
	return col, row, col >= 0 && row >= 0 && col < m.w && row < m.h
}

// PixelAt returns the image column and row under a position in the widget
// (Fyne units), and whether it lies on the image.
func (m *View) PixelAt(p fyne.Position) (col, row int, inside bool) { return m.pixelAt(p) }

func (m *View) probe(p fyne.Position, pinned bool) {
	if m.OnProbe != nil {
		c, r, in := m.pixelAt(p)
		m.OnProbe(c, r, in, pinned)
	}
}

// Scrolled zooms around the cursor: wheel away from you zooms in.
func (m *View) Scrolled(ev *fyne.ScrollEvent) {
	d := float64(ev.Scrolled.DY)
	if d == 0 {
		d = float64(ev.Scrolled.DX)
	}
	if d == 0 {
		return
	}
	f := math.Pow(wheelStep, d/wheelNotch)
	m.mu.Lock()
	s := m.scale
	m.mu.Unlock()
	m.zoomAround(f, float64(ev.Position.X*s), float64(ev.Position.Y*s))
}

// Dragged pans.
func (m *View) Dragged(ev *fyne.DragEvent) {
	m.mu.Lock()
	s := m.scale
	m.mu.Unlock()
	m.panBy(float64(ev.Dragged.DX*s), float64(ev.Dragged.DY*s))
	m.probe(ev.Position, false)
}

// DragEnd ends a pan.
func (m *View) DragEnd() {}

// Tapped pins the probe at the clicked pixel.
func (m *View) Tapped(ev *fyne.PointEvent) { m.probe(ev.Position, true) }

// MouseIn starts probing.
func (m *View) MouseIn(ev *desktop.MouseEvent) { m.probe(ev.Position, false) }

// MouseMoved probes the pixel under the cursor.
func (m *View) MouseMoved(ev *desktop.MouseEvent) { m.probe(ev.Position, false) }

// MouseOut ends probing.
func (m *View) MouseOut() {
	if m.OnProbe != nil {
		m.OnProbe(0, 0, false, false)
	}
}

// Cursor shows a crosshair over the map.
func (m *View) Cursor() desktop.Cursor { return desktop.CrosshairCursor }

// MinSize is small: the map takes whatever room the window gives it.
func (m *View) MinSize() fyne.Size { return fyne.NewSize(160, 120) }

// CreateRenderer draws the no-data checkerboard (what transparent
// pixels, NaN and outside the image, show) under the raster.
func (m *View) CreateRenderer() fyne.WidgetRenderer {
	bg := canvas.NewRaster(checkerboard)
	bg.ScaleMode = canvas.ImageScalePixels
	return &mapRenderer{m: m, bg: bg, objects: []fyne.CanvasObject{bg, m.raster}}
}

// NoDataColors are the two greys of the checkerboard under the map: what
// a pixel with no value (NaN: nodata, 0/0, not covered by the other date)
// and the space outside the image show. It differs from every ramp's
// colours, white ("no change" in the difference) among them.
var NoDataColors = [2]color.NRGBA{{0x9c, 0x9c, 0x9c, 0xff}, {0xbe, 0xbe, 0xbe, 0xff}}

// MaskedColors are the stripes drawn over the pixels the product's mask
// removed (clouds, shadows, saturated): dark slate on light grey-blue.
var MaskedColors = [2]color.NRGBA{{0x3b, 0x44, 0x58, 0xff}, {0xd9, 0xdd, 0xe6, 0xff}}

// The patterns' periods in physical pixels at scale 1.
const (
	checkerCell  = 8
	stripePeriod = 8
	stripeWidth  = 3
)

// checkerboard draws the no-data pattern at w×h physical pixels.
func checkerboard(w, h int) image.Image {
	img := image.NewNRGBA(image.Rect(0, 0, max(w, 1), max(h, 1)))
	FillNoData(img)
	return img
}

// FillNoData fills img with the no-data checkerboard (a legend's swatch
// draws it too).
func FillNoData(img *image.NRGBA) {
	b := img.Rect
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := NoDataColors[((x/checkerCell)+(y/checkerCell))&1]
			i := img.PixOffset(x, y)
			img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = c.R, c.G, c.B, c.A
		}
	}
}

// stripe is the masked pattern's colour at physical pixel (x, y).
func stripe(x, y int, scale float32) color.NRGBA {
	return stripesAt(scale).at(x, y)
}

// stripes is the masked pattern at a scale: period and width of its
// stripes in physical pixels.
type stripes struct{ period, width int }

func stripesAt(scale float32) stripes {
	return stripes{max(1, int(math.Round(float64(stripePeriod*scale)))), max(1, int(math.Round(float64(stripeWidth*scale))))}
}

// at is the pattern's colour at physical pixel (x, y).
func (s stripes) at(x, y int) color.NRGBA {
	if (x+y)%s.period < s.width {
		return MaskedColors[0]
	}
	return MaskedColors[1]
}

// FillMasked fills img with the masked pattern (a legend's swatch).
func FillMasked(img *image.NRGBA) {
	b := img.Rect
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := stripe(x, y, 1)
			i := img.PixOffset(x, y)
			img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = c.R, c.G, c.B, c.A
		}
	}
}

// hatchMasked draws the masked pattern over the view pixels whose image
// pixel the mask marks.
func hatchMasked(buf *image.NRGBA, mask []uint8, w, h int, x0, y0, zoom float64, scale float32) {
	if zoom <= 0 {
		return
	}
	b := buf.Rect
	st := stripesAt(scale)
	cols := make([]int, b.Dx())
	for px := range cols {
		cols[px] = int(math.Floor(x0 + (float64(px)+0.5)/zoom))
	}
	for py := b.Min.Y; py < b.Max.Y; py++ {
		iy := int(math.Floor(y0 + (float64(py)+0.5)/zoom))
		if iy < 0 || iy >= h {
			continue
		}
		row := mask[iy*w : (iy+1)*w]
		for px, ix := range cols {
			if ix < 0 || ix >= w || row[ix] == 0 {
				continue
			}
			c := st.at(px, py)
			i := buf.PixOffset(px, py)
			buf.Pix[i], buf.Pix[i+1], buf.Pix[i+2], buf.Pix[i+3] = c.R, c.G, c.B, c.A
		}
	}
}

// hatchMarks draws the masked pattern over the view pixels marks marks
// (one byte a pixel of buf, non-zero masked), run by run of marked
// pixels.
func hatchMarks(buf *image.NRGBA, marks []uint8, scale float32) {
	st := stripesAt(scale)
	w, h := buf.Rect.Dx(), buf.Rect.Dy()
	par.For((h+maskRowChunk-1)/maskRowChunk, func(c int) {
		for py := c * maskRowChunk; py < min(h, (c+1)*maskRowChunk); py++ {
			hatchRow(buf.Pix[py*buf.Stride:py*buf.Stride+4*w], marks[py*w:(py+1)*w], py, st)
		}
	})
}

// maskRowChunk is how many view rows a worker marks or hatches at once.
const maskRowChunk = 32

// hatchRow hatches the pixels of pix (a view row, py) that row marks.
func hatchRow(pix []uint8, row []uint8, py int, st stripes) {
	w := len(row)
	for x := 0; x < w; {
		// The next run of marked pixels, [x, e).
		for x < w && row[x] == 0 {
			if x+8 <= w && binary.LittleEndian.Uint64(row[x:]) == 0 {
				x += 8 // eight unmarked at once
				continue
			}
			x++
		}
		e := x
		for e < w && row[e] != 0 {
			e++
		}
		if x == e {
			break
		}
		k := (x + py) % st.period
		for px := x; px < e; px++ {
			c := MaskedColors[1]
			if k < st.width {
				c = MaskedColors[0]
			}
			p := pix[4*px : 4*px+4 : 4*px+4]
			p[0], p[1], p[2], p[3] = c.R, c.G, c.B, c.A
			if k++; k == st.period {
				k = 0
			}
		}
		x = e
	}
}

// MarkMask sets dst, one byte a pixel of a dw×dh view whose top-left
// corner is point (x0, y0) of an image mw samples wide, at zoom view
// pixels a sample, from rows [0, rows) of the image's mask (non-zero
// masked; nil: none masked): each view pixel over those rows takes the
// mask of the sample under its centre (as hatching the whole image's mask
// does), the others are left as they are. A maskView draws the mask of
// an image read by views with it, a view at a time.
func MarkMask(dst []uint8, dw, dh int, mask []uint8, mw, rows int, x0, y0, zoom float64) {
	if !(zoom > 0) || math.IsInf(zoom, 0) || dw <= 0 || len(dst) < dw*dh {
		return
	}
	// The view's columns over the image: [c0, c1).
	c0 := 0
	for c0 < dw && colormapPixel(c0, x0, zoom) < 0 {
		c0++
	}
	c1 := c0
	for c1 < dw && colormapPixel(c1, x0, zoom) < mw {
		c1++
	}
	if c0 >= c1 {
		return
	}
	cols := make([]int32, c1-c0)
	for k := range cols {
		cols[k] = int32(colormapPixel(c0+k, x0, zoom))
	}
	par.For((dh+maskRowChunk-1)/maskRowChunk, func(c int) {
		for py := c * maskRowChunk; py < min(dh, (c+1)*maskRowChunk); py++ {
			iy := colormapPixel(py, y0, zoom)
			if iy < 0 || iy >= rows {
				continue
			}
			row := dst[py*dw+c0 : py*dw+c1]
			if mask == nil {
				clear(row)
				continue
			}
			src := mask[iy*mw : (iy+1)*mw]
			for k, ix := range cols {
				row[k] = src[ix]
			}
		}
	})
}

// colormapPixel is the image column (or row) under the centre of view
// pixel p, as colormap.ViewPixel maps them.
func colormapPixel(p int, x0, zoom float64) int {
	return int(math.Floor(x0 + (float64(p)+0.5)/zoom))
}

// SetMask marks the pixels the product's mask removed (w×h as the data,
// non-zero masked; nil: none): they are drawn hatched over whatever the
// view draws there, so that they differ from no data and from outside the
// image (the checkerboard). It redraws.
func (m *View) SetMask(mask []uint8) {
	m.mu.Lock()
	m.mask = mask
	m.mu.Unlock()
	m.raster.Refresh()
}

// SetMaskView marks the masked pixels at each render with mark instead of
// a mask of the whole image (nil: SetMask's mask again): mark sets
// dst[y*w+x] non-zero for each masked pixel (x, y) of the w×h view whose
// top-left corner is image point (x0, y0) at zoom view pixels an image
// pixel (dst comes zeroed; MarkMask fills it from a mask read for a
// view). They are drawn hatched as SetMask's. mark runs on the
// generator's goroutine after the view is drawn (its renderer first). It
// redraws.
func (m *View) SetMaskView(mark func(dst []uint8, w, h int, x0, y0, zoom float64)) {
	m.mu.Lock()
	m.maskView = mark
	if mark == nil {
		m.marks = nil
	}
	m.mu.Unlock()
	m.raster.Refresh()
}

type mapRenderer struct {
	m       *View
	bg      *canvas.Raster
	objects []fyne.CanvasObject
}

func (r *mapRenderer) Layout(s fyne.Size) {
	r.bg.Resize(s)
	r.m.raster.Resize(s)
}
func (r *mapRenderer) MinSize() fyne.Size           { return r.m.MinSize() }
func (r *mapRenderer) Objects() []fyne.CanvasObject { return r.objects }
func (r *mapRenderer) Destroy()                     {}
func (r *mapRenderer) Refresh() {
	r.m.raster.Refresh()
}

var (
	_ fyne.Scrollable    = (*View)(nil)
	_ fyne.Draggable     = (*View)(nil)
	_ fyne.Tappable      = (*View)(nil)
	_ desktop.Hoverable  = (*View)(nil)
	_ desktop.Cursorable = (*View)(nil)
)

// Redraw draws the map again (a view of a large image arrived, an
// overlay changed).
func (m *View) Redraw() { m.raster.Refresh() }

// Viewport is the view's top-left image point, zoom and size in screen
// pixels.
func (m *View) Viewport() (x0, y0, zoom float64, vw, vh int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	w, h := m.viewPixels()
	return m.x0, m.y0, m.zoom, int(w), int(h)
}

// SetView sets the zoom and the image point at the view's top-left
// corner (a session's view).
func (m *View) SetView(zoom, x0, y0 float64) {
	m.mu.Lock()
	m.zoom, m.x0, m.y0, m.fitted = zoom, x0, y0, false
	m.clampLocked()
	m.mu.Unlock()
	m.changed()
}

// Centre returns the zoom and the image point at the view's centre.
func (m *View) Centre() (zoom, cx, cy float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	vw, vh := m.viewPixels()
	if m.zoom <= 0 {
		return 0, 0, 0
	}
	return m.zoom, m.x0 + vw/(2*m.zoom), m.y0 + vh/(2*m.zoom)
}

// SetCentre sets the zoom and the image point at the view's centre (a
// session's view, restored in a window of another size).
func (m *View) SetCentre(zoom, cx, cy float64) {
	if zoom <= 0 {
		return
	}
	m.mu.Lock()
	vw, vh := m.viewPixels()
	m.zoom, m.fitted = zoom, false
	m.x0, m.y0 = cx-vw/(2*zoom), cy-vh/(2*zoom)
	m.clampLocked()
	m.mu.Unlock()
	m.changed()
}

// Draw renders the view at w×h screen pixels, as the widget's raster
// does, and returns the picture.
func (m *View) Draw(w, h int) image.Image { return m.generate(w, h) }

// PanBy moves the view by dx, dy screen pixels, as a drag does.
func (m *View) PanBy(dx, dy float64) { m.panBy(dx, dy) }

// ZoomAround zooms by f keeping the image point under screen pixel (x, y),
// as the wheel does.
func (m *View) ZoomAround(f, x, y float64) { m.zoomAround(f, x, y) }

// Scale is the physical screen pixels per Fyne unit of the last render.
func (m *View) Scale() float32 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.scale
}
