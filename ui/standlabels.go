package ui

import (
	"image/color"
	"math"
	"sort"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
	"github.com/paulmach/orb"
	"github.com/paulmach/orb/planar"

	"canopy/ui/mapview"
)

// Label rules: at most maxLabels are drawn; a label is drawn only where
// its stand is at least as wide and as tall on the screen as the label
// (zoomed in enough to read which stand it names), and not where it
// would cover more than maxLabelOverlap of its area of a label already
// placed (larger stands are placed first).
const (
	maxLabels       = 400
	maxLabelOverlap = 0.25
	labelPad        = 3 // Fyne units around the text
)

// standLabels draws the stands' names over the map at their centroids,
// as Fyne text (crisp at any zoom) on a dark plate, in a layer stacked on
// the map. It lets every event through to the map.
type standLabels struct {
	widget.BaseWidget
	p *standsPanel
	m *mapview.View
	// centroids and bounds are each stand's centroid and bounding box in
	// image pixels (from standsPanel.geometry).
	centroids []orb.Point
	bounds    []orb.Bound
	// sizes caches each name's text size (nil entries: not measured yet);
	// names changes clear it.
	sizes []fyne.Size
	// drawn are the labels drawn at the last layout, for tests.
	drawn []string
}

func newStandLabels(p *standsPanel, m *mapview.View) *standLabels {
	l := &standLabels{p: p, m: m}
	l.ExtendBaseWidget(l)
	return l
}

// geometry caches the stands' centroids and bounds in image pixels.
func (p *standsPanel) geometry() {
	l := p.labels
	l.centroids = make([]orb.Point, len(p.stands))
	l.bounds = make([]orb.Bound, len(p.stands))
	for i, s := range p.stands {
		c, _ := planar.CentroidArea(s.Geom)
		cx, cy := p.toPixel(c)
		l.centroids[i] = orb.Point{cx, cy}
		bd := s.Geom.Bound()
		ax, ay := p.toPixel(bd.Min)
		bx, by := p.toPixel(bd.Max)
		l.bounds[i] = orb.Bound{Min: orb.Point{math.Min(ax, bx), math.Min(ay, by)}, Max: orb.Point{math.Max(ax, bx), math.Max(ay, by)}}
	}
	l.renamed()
}

// renamed forgets the measured names (the stands are named anew) and
// draws the labels again.
func (l *standLabels) renamed() {
	l.sizes = nil
	l.Refresh()
}

// names returns the stand names drawn over the map now.
func (l *standLabels) names() []string {
	l.Refresh()
	return append([]string(nil), l.drawn...)
}

func (l *standLabels) CreateRenderer() fyne.WidgetRenderer { return &labelsRenderer{l: l} }

// labelsRenderer keeps a pool of plates and texts, reused at each layout.
type labelsRenderer struct {
	l       *standLabels
	plates  []*canvas.Rectangle
	texts   []*canvas.Text
	objects []fyne.CanvasObject
}

// place chooses the labels to draw on a layer of size s: their texts and
// plates' rectangles in Fyne units.
func (l *standLabels) place(s fyne.Size) (texts []string, rects []fyne.Position, sizes []fyne.Size) {
	p, m := l.p, l.m
	if len(p.stands) == 0 || len(l.centroids) != len(p.stands) || len(p.ids) != len(p.stands) {
		return nil, nil, nil
	}
	zoom, x0, y0 := m.View()
	scale := float64(m.Scale())
	if zoom <= 0 || scale <= 0 {
		return nil, nil, nil
	}
	f := zoom / scale // Fyne units per image pixel
	type cand struct {
		i    int
		area float64
	}
	var cands []cand
	for i, b := range l.bounds {
		bw, bh := (b.Max[0]-b.Min[0])*f, (b.Max[1]-b.Min[1])*f
		sx0, sy0 := (b.Min[0]-x0)*f, (b.Min[1]-y0)*f
		if sx0 > float64(s.Width) || sy0 > float64(s.Height) || sx0+bw < 0 || sy0+bh < 0 {
			continue // off the view
		}
		cands = append(cands, cand{i, bw * bh})
	}
	sort.SliceStable(cands, func(a, b int) bool { return cands[a].area > cands[b].area })
	size := theme.CaptionTextSize()
	style := fyne.TextStyle{Bold: true}
	type box struct{ x0, y0, x1, y1 float32 }
	var placed []box
	for _, c := range cands {
		if len(placed) >= maxLabels {
			break
		}
		id := p.ids[c.i]
		if len(l.sizes) != len(p.ids) {
			l.sizes = make([]fyne.Size, len(p.ids))
		}
		ts := l.sizes[c.i]
		if ts.Width == 0 {
			ts = fyne.MeasureText(id, size, style)
			l.sizes[c.i] = ts
		}
		lw, lh := ts.Width+2*labelPad, ts.Height+labelPad
		b := l.bounds[c.i]
		if (b.Max[0]-b.Min[0])*f < float64(lw) || (b.Max[1]-b.Min[1])*f < float64(lh) {
			continue // too small on screen to read whose label it is
		}
		cx, cy := float32((l.centroids[c.i][0]-x0)*f), float32((l.centroids[c.i][1]-y0)*f)
		r := box{cx - lw/2, cy - lh/2, cx + lw/2, cy + lh/2}
		if r.x1 < 0 || r.y1 < 0 || r.x0 > s.Width || r.y0 > s.Height {
			continue
		}
		heavy := false
		for _, q := range placed {
			ox := min(r.x1, q.x1) - max(r.x0, q.x0)
			oy := min(r.y1, q.y1) - max(r.y0, q.y0)
			if ox > 0 && oy > 0 && ox*oy > maxLabelOverlap*lw*lh {
				heavy = true
				break
			}
		}
		if heavy {
			continue
		}
		placed = append(placed, r)
		texts = append(texts, id)
		rects = append(rects, fyne.NewPos(r.x0, r.y0))
		sizes = append(sizes, fyne.NewSize(lw, lh))
	}
	return texts, rects, sizes
}

func (r *labelsRenderer) Layout(s fyne.Size) {
	texts, pos, sizes := r.l.place(s)
	r.l.drawn = texts
	for len(r.texts) < len(texts) {
		t := canvas.NewText("", color.White)
		t.TextSize = theme.CaptionTextSize()
		t.TextStyle = fyne.TextStyle{Bold: true}
		t.Alignment = fyne.TextAlignCenter
		pl := canvas.NewRectangle(color.NRGBA{0, 0, 0, 150})
		pl.CornerRadius = 3
		r.texts, r.plates = append(r.texts, t), append(r.plates, pl)
	}
	r.objects = r.objects[:0]
	for i := range r.texts {
		t, pl := r.texts[i], r.plates[i]
		if i >= len(texts) {
			t.Hide()
			pl.Hide()
			continue
		}
		t.Text = texts[i]
		pl.Move(pos[i])
		pl.Resize(sizes[i])
		t.Move(pos[i])
		t.Resize(sizes[i])
		t.Show()
		pl.Show()
		r.objects = append(r.objects, pl, t)
	}
}

func (r *labelsRenderer) MinSize() fyne.Size           { return fyne.NewSize(0, 0) }
func (r *labelsRenderer) Objects() []fyne.CanvasObject { return r.objects }
func (r *labelsRenderer) Destroy()                     {}
func (r *labelsRenderer) Refresh() {
	r.Layout(r.l.Size())
	for _, o := range r.objects {
		o.Refresh()
	}
}
