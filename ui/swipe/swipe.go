// Package swipe is the swipe between two dates over Canopy's map
// (ui/mapview): a vertical divider the user drags across the map, the
// before date's map left of it and the after date's plane, on the same
// grid and in the same colours, drawn right of it by the map's overlay.
package swipe

import (
	"image"
	"image/color"
	"math"
	"sync"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/widget"

	"canopy/ui/render/colormap"

	"canopy/ui/mapview"
)

// dividerGrab is the width (Fyne units) of the divider's grab area: wide
// enough to catch with a mouse, the line itself is 2 units.
const dividerGrab = 20

// Divider is the swipe view's vertical divider: left of it the map
// shows the before date, right of it the after date. The user drags it
// across the map. Its place is a share of the map's width, so it stays
// where it was when the window is resized; the map under it zooms and
// pans as usual (a drag anywhere but on the divider pans the map, the
// wheel zooms it), and the divider keeps its place on the screen.
type Divider struct {
	widget.BaseWidget

	// OnMoved is called on the event goroutine after a drag moved the
	// divider.
	OnMoved func()

	mu   sync.Mutex
	frac float64 // the divider's place, a share of the map's width
	span float32 // the map's width (Fyne units), from the last layout
}

// NewDivider returns a divider in the middle of the map.
func NewDivider() *Divider {
	d := &Divider{frac: 0.5}
	d.ExtendBaseWidget(d)
	return d
}

// Fraction returns the divider's place as a share of the map's width
// (0 at the left edge, 1 at the right).
func (d *Divider) Fraction() float64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.frac
}

// SetFraction puts the divider at share f of the map's width (clamped to
// [0, 1]).
func (d *Divider) SetFraction(f float64) {
	d.mu.Lock()
	if math.IsNaN(f) {
		f = 0.5
	}
	d.frac = math.Max(0, math.Min(1, f))
	span := d.span
	d.mu.Unlock()
	d.place(span)
}

// place moves the divider's grab area over its line on a map span wide.
func (d *Divider) place(span float32) {
	d.mu.Lock()
	d.span = span
	x := float32(d.frac)*span - dividerGrab/2
	d.mu.Unlock()
	d.Move(fyne.NewPos(x, 0))
}

// Dragged moves the divider by the drag's horizontal distance.
func (d *Divider) Dragged(ev *fyne.DragEvent) {
	d.mu.Lock()
	span := d.span
	f := d.frac
	d.mu.Unlock()
	if span <= 0 {
		return
	}
	d.SetFraction(f + float64(ev.Dragged.DX/span))
	if d.OnMoved != nil {
		d.OnMoved()
	}
}

// DragEnd ends a drag.
func (d *Divider) DragEnd() {}

// Cursor shows that the divider moves sideways.
func (d *Divider) Cursor() desktop.Cursor { return desktop.HResizeCursor }

// MinSize is the grab area's width.
func (d *Divider) MinSize() fyne.Size { return fyne.NewSize(dividerGrab, 1) }

// CreateRenderer draws the divider: a white line edged in black, readable
// over any ramp, and a round grip in its middle.
func (d *Divider) CreateRenderer() fyne.WidgetRenderer {
	edge := color.NRGBA{0, 0, 0, 200}
	r := &dividerRenderer{
		shade: canvas.NewRectangle(edge),
		line:  canvas.NewRectangle(color.White),
		grip:  canvas.NewCircle(color.White),
	}
	r.grip.StrokeColor, r.grip.StrokeWidth = edge, 1.5
	for range 4 {
		a := canvas.NewLine(edge)
		a.StrokeWidth = 1.5
		r.arrows = append(r.arrows, a)
	}
	r.objects = []fyne.CanvasObject{r.shade, r.line, r.grip}
	for _, a := range r.arrows {
		r.objects = append(r.objects, a)
	}
	return r
}

type dividerRenderer struct {
	shade, line *canvas.Rectangle
	grip        *canvas.Circle
	arrows      []*canvas.Line
	objects     []fyne.CanvasObject
}

func (r *dividerRenderer) Layout(s fyne.Size) {
	cx := s.Width / 2
	r.shade.Move(fyne.NewPos(cx-2, 0))
	r.shade.Resize(fyne.NewSize(4, s.Height))
	r.line.Move(fyne.NewPos(cx-1, 0))
	r.line.Resize(fyne.NewSize(2, s.Height))
	const rad = 9
	cy := s.Height / 2
	r.grip.Move(fyne.NewPos(cx-rad, cy-rad))
	r.grip.Resize(fyne.NewSize(2*rad, 2*rad))
	// Two chevrons either side of the centre: "< >".
	for i, sx := range []float32{-1, 1} {
		tip, back := fyne.NewPos(cx+sx*5, cy), cx+sx*2
		r.arrows[2*i].Position1, r.arrows[2*i].Position2 = fyne.NewPos(back, cy-4), tip
		r.arrows[2*i+1].Position1, r.arrows[2*i+1].Position2 = tip, fyne.NewPos(back, cy+4)
	}
}

func (r *dividerRenderer) MinSize() fyne.Size           { return fyne.NewSize(dividerGrab, 1) }
func (r *dividerRenderer) Objects() []fyne.CanvasObject { return r.objects }
func (r *dividerRenderer) Destroy()                     {}
func (r *dividerRenderer) Refresh() {
	for _, o := range r.objects {
		o.Refresh()
	}
}

// dividerLayout lays the divider over its place on the map: the grab
// area centred on the line, the map's full height.
type dividerLayout struct{ d *Divider }

func (l dividerLayout) Layout(_ []fyne.CanvasObject, s fyne.Size) {
	l.d.Resize(fyne.NewSize(dividerGrab, s.Height))
	l.d.place(s.Width)
}

func (l dividerLayout) MinSize([]fyne.CanvasObject) fyne.Size { return fyne.NewSize(0, 0) }

// View is the swipe between two dates over a map view: the map
// shows the before plane as usual, and the after plane (on the same
// grid) is drawn right of the divider by the map's overlay, at the same
// zoom and pan, in the same colours.
type View struct {
	m *mapview.View
	// Divider is the line the user drags.
	Divider *Divider
	// Layer holds the divider; it lies over the map in a stack and is
	// shown in the swipe view only.
	Layer *fyne.Container

	mu      sync.Mutex // guards the fields below (generator vs events)
	on      bool
	after   []float32
	w, h    int
	lut     *colormap.LUT
	scratch *image.NRGBA
}

// New returns the swipe over map m, hidden, its divider in the middle.
func New(m *mapview.View) *View {
	s := &View{m: m, Divider: NewDivider()}
	s.Divider.OnMoved = func() { m.Redraw() }
	s.Layer = container.New(dividerLayout{s.Divider}, s.Divider)
	s.Layer.Hide()
	return s
}

// Set gives the after plane (w×h, the before plane's grid) and the
// colours of both dates.
func (s *View) Set(after []float32, w, h int, lut *colormap.LUT) {
	s.mu.Lock()
	s.after, s.w, s.h, s.lut = after, w, h, lut
	s.mu.Unlock()
	s.m.Redraw()
}

// Show turns the swipe on or off.
func (s *View) Show(on bool) {
	s.mu.Lock()
	s.on = on
	s.mu.Unlock()
	if on {
		s.Layer.Show()
	} else {
		s.Layer.Hide()
	}
	s.m.Redraw()
}

// Draw paints the after plane right of the divider over the before map
// in buf (the map's view at corner (x0, y0) and zoom). It runs in the
// map's generator.
func (s *View) Draw(buf *image.NRGBA, x0, y0, zoom float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.on || s.after == nil || s.lut == nil {
		return
	}
	W, H := buf.Rect.Dx(), buf.Rect.Dy()
	cut := int(math.Round(s.Divider.Fraction() * float64(W)))
	if cut >= W {
		return
	}
	if s.scratch == nil || s.scratch.Rect.Dx() != W || s.scratch.Rect.Dy() != H {
		s.scratch = image.NewNRGBA(image.Rect(0, 0, W, H))
	}
	s.lut.RenderView(s.scratch, s.after, s.w, s.h, x0, y0, zoom)
	for y := range H {
		o := y*buf.Stride + 4*cut
		copy(buf.Pix[o:y*buf.Stride+4*W], s.scratch.Pix[y*s.scratch.Stride+4*cut:y*s.scratch.Stride+4*W])
	}
}

// Cut is the view column (physical pixels) where the after date starts
// in a view width pixels wide.
func (s *View) Cut(width int) int {
	return int(math.Round(s.Divider.Fraction() * float64(width)))
}

var (
	_ fyne.Draggable     = (*Divider)(nil)
	_ desktop.Cursorable = (*Divider)(nil)
)
