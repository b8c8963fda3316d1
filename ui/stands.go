package ui

import (
	"errors"
	"fmt"
	"image"
	"image/color"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/widget"
	"github.com/paulmach/orb"
	"github.com/paulmach/orb/planar"

	"canopy/compute/outfile"
	"canopy/compute/vector"
	"canopy/compute/zonal"
)

// standColumns are the columns of the stands table.
var standColumns = []string{"id", "valid px", "ha", "mean", "median", "min", "max"}

// standsPanel holds the stands opened over the map (in the raster's CRS),
// their statistics on the map shown, the table's order and the stand
// selected.
type standsPanel struct {
	card     fyne.CanvasObject
	table    *widget.Table
	detail   *widget.Label
	choro    *widget.Check
	layer    *vector.Layer
	stands   []zonal.Stand
	results  []zonal.Result
	classes  zonal.Classes
	order    []int // table row → stand
	sortCol  int   // -1: file order
	sortDesc bool
	selected int // stand index, -1 when none
	gt       [6]float64
}

func newStandsPanel(w *Window) *standsPanel {
	p := &standsPanel{sortCol: -1, selected: -1}
	p.detail = widget.NewLabel("No stands open")
	p.detail.Wrapping = fyne.TextWrapWord
	p.choro = widget.NewCheck("Colour stands by their mean", func(bool) { w.Map.raster.Refresh() })
	p.table = widget.NewTable(
		func() (int, int) { return len(p.order), len(standColumns) },
		func() fyne.CanvasObject { return widget.NewLabel("000000") },
		func(id widget.TableCellID, o fyne.CanvasObject) {
			o.(*widget.Label).SetText(p.cell(id.Row, id.Col))
		})
	p.table.ShowHeaderRow = true
	p.table.CreateHeader = func() fyne.CanvasObject { return widget.NewButton("", nil) }
	p.table.UpdateHeader = func(id widget.TableCellID, o fyne.CanvasObject) {
		b := o.(*widget.Button)
		if id.Row >= 0 || id.Col < 0 {
			b.SetText("")
			b.OnTapped = nil
			return
		}
		t := standColumns[id.Col]
		if id.Col == p.sortCol {
			t += map[bool]string{false: " ▲", true: " ▼"}[p.sortDesc]
		}
		b.SetText(t)
		col := id.Col
		b.OnTapped = func() { w.SortStands(col) }
	}
	p.table.OnSelected = func(id widget.TableCellID) {
		if id.Row >= 0 && id.Row < len(p.order) {
			w.selectStand(p.order[id.Row])
		}
	}
	open := widget.NewButton("Open stands…", w.openStandsDialog)
	csvB := widget.NewButton("CSV…", func() { w.exportStandsDialog(".csv") })
	gpkgB := widget.NewButton("GeoPackage…", func() { w.exportStandsDialog(".gpkg") })
	tbl := container.NewGridWrap(fyne.NewSize(200, 200), p.table)
	p.card = section("Stands", container.NewVBox(open, container.NewGridWithColumns(2, csvB, gpkgB), p.choro, p.detail, tbl))
	return p
}

// value returns column col of result r as a number (for sorting).
func standValue(r zonal.Result, col int) float64 {
	switch col {
	case 1:
		return r.ValidPixels
	case 2:
		return r.AreaHa
	case 3:
		return r.Mean
	case 4:
		return r.Median
	case 5:
		return r.Min
	case 6:
		return r.Max
	}
	return 0
}

func fmtStat(v float64, dec int) string {
	if math.IsNaN(v) {
		return "–"
	}
	return strconv.FormatFloat(v, 'f', dec, 64)
}

func (p *standsPanel) cell(row, col int) string {
	if row >= len(p.order) || p.order[row] >= len(p.results) {
		return ""
	}
	r := p.results[p.order[row]]
	switch col {
	case 0:
		return r.ID
	case 1:
		return fmtStat(r.ValidPixels, 1)
	case 2:
		return fmtStat(r.AreaHa, 2)
	}
	return fmtStat(standValue(r, col), 4)
}

// OpenStands opens a stands layer (FILE[:LAYER], GeoPackage or GeoJSON),
// reprojects it to the map's CRS and computes each stand's statistics on
// the map shown.
func (w *Window) OpenStands(spec string) error {
	s := w.shown
	if s == nil || s.set == nil || !s.set.geo.Valid() {
		return errors.New("stands: the map shown has no georeference to place stands on")
	}
	gt, ok := s.set.geo.Affine()
	if !ok {
		return errors.New("stands: the map shown has no affine geotransform")
	}
	path, name, err := vector.ParseStands(spec)
	if err != nil {
		return err
	}
	l, err := vector.Read(path, name)
	if err != nil {
		return err
	}
	crs, err := vector.RasterCRS(s.set.geo)
	if err != nil {
		return fmt.Errorf("stands %s: %v", path, err)
	}
	l = l.Clone()
	if err := vector.Reproject(l, crs); err != nil {
		return err
	}
	st, err := zonal.StandsFromLayer(l, "")
	if err != nil {
		return err
	}
	p := w.standsP
	p.layer, p.stands, p.gt, p.selected = l, st, gt, -1
	if err := w.computeStands(); err != nil {
		p.layer, p.stands, p.results = nil, nil, nil
		p.order = nil
		p.table.Refresh()
		return err
	}
	w.setStatus(fmt.Sprintf("Opened %d stands from %s", len(st), path), true)
	return nil
}

// computeStands computes the statistics of the stands open on the map
// shown.
func (w *Window) computeStands() error {
	p, s := w.standsP, w.shown
	if len(p.stands) == 0 || s == nil {
		return nil
	}
	if gt, ok := s.set.geo.Affine(); ok {
		p.gt = gt
	}
	plane, err := zonal.NewPlane(s.plane, s.w, s.h)
	if err != nil {
		return err
	}
	p.classes = zonal.Classes{}
	if s.idx.classes != nil {
		p.classes = zonal.ClassesOf(s.idx.classes.Compute())
	}
	res, warns, err := zonal.Compute(plane, p.gt, p.stands, zonal.Options{Classes: p.classes})
	if err != nil {
		return err
	}
	p.results = res
	p.resort()
	if len(warns) > 0 {
		p.detail.SetText(fmt.Sprintf("%d stands · %s", len(res), warns[0]))
	} else {
		p.detail.SetText(fmt.Sprintf("%d stands · click one on the map", len(res)))
	}
	if p.selected >= 0 {
		w.selectStand(p.selected)
	}
	w.Map.SetOverlay(w.drawStands)
	return nil
}

// resort orders the table by the sort column.
func (p *standsPanel) resort() {
	p.order = make([]int, len(p.results))
	for i := range p.order {
		p.order[i] = i
	}
	if c := p.sortCol; c >= 0 {
		sort.SliceStable(p.order, func(a, b int) bool {
			ra, rb := p.results[p.order[a]], p.results[p.order[b]]
			if c == 0 {
				if p.sortDesc {
					return ra.ID > rb.ID
				}
				return ra.ID < rb.ID
			}
			va, vb := standValue(ra, c), standValue(rb, c)
			if math.IsNaN(va) || math.IsNaN(vb) {
				return !math.IsNaN(va) && math.IsNaN(vb) // NaN last
			}
			if p.sortDesc {
				return va > vb
			}
			return va < vb
		})
	}
	p.table.Refresh()
}

// SortStands sorts the stands table by column col (0 id, 1 valid pixels,
// 2 hectares, 3 mean, 4 median, 5 min, 6 max); sorting by the same column
// again reverses the order.
func (w *Window) SortStands(col int) {
	p := w.standsP
	if p.sortCol == col {
		p.sortDesc = !p.sortDesc
	} else {
		p.sortCol, p.sortDesc = col, false
	}
	p.resort()
}

// StandRows returns the stands table as shown, one row of cells a stand.
func (w *Window) StandRows() [][]string {
	p := w.standsP
	rows := make([][]string, len(p.order))
	for i := range rows {
		for c := range standColumns {
			rows[i] = append(rows[i], p.cell(i, c))
		}
	}
	return rows
}

// StandResults returns the statistics of the stands open, in file order.
func (w *Window) StandResults() []zonal.Result { return w.standsP.results }

// SelectedStand returns the id of the stand selected, "" when none.
func (w *Window) SelectedStand() string {
	p := w.standsP
	if p.selected < 0 || p.selected >= len(p.results) {
		return ""
	}
	return p.results[p.selected].ID
}

// selectStand shows stand i's statistics and marks its row.
func (w *Window) selectStand(i int) {
	p := w.standsP
	if i < 0 || i >= len(p.results) {
		return
	}
	p.selected = i
	r := p.results[i]
	p.detail.SetText(fmt.Sprintf("Stand %s · %.2f ha · mean %s · median %s · std %s · min %s · max %s · p10 %s · p90 %s",
		r.ID, r.AreaHa, fmtStat(r.Mean, 4), fmtStat(r.Median, 4), fmtStat(r.Std, 4),
		fmtStat(r.Min, 4), fmtStat(r.Max, 4), fmtStat(r.P10, 4), fmtStat(r.P90, 4)))
	for row, s := range p.order {
		if s == i {
			p.table.ScrollTo(widget.TableCellID{Row: row, Col: 0})
		}
	}
	w.Map.raster.Refresh()
}

// standAt returns the stand containing image point (x, y) (pixels), the
// last one drawn when they overlap, -1 when none.
func (p *standsPanel) standAt(x, y float64) int {
	pt := orb.Point{p.gt[0] + x*p.gt[1] + y*p.gt[2], p.gt[3] + x*p.gt[4] + y*p.gt[5]}
	for i := len(p.stands) - 1; i >= 0; i-- {
		if !p.stands[i].Geom.Bound().Contains(pt) {
			continue
		}
		switch g := p.stands[i].Geom.(type) {
		case orb.Polygon:
			if planar.PolygonContains(g, pt) {
				return i
			}
		case orb.MultiPolygon:
			if planar.MultiPolygonContains(g, pt) {
				return i
			}
		}
	}
	return -1
}

// standTapped selects the stand under the clicked pixel's centre.
func (w *Window) standTapped(col, row int) {
	if i := w.standsP.standAt(float64(col)+0.5, float64(row)+0.5); i >= 0 {
		w.selectStand(i)
	}
}

// toPixel maps a map point to image pixel coordinates.
func (p *standsPanel) toPixel(pt orb.Point) (float64, float64) {
	g := p.gt
	det := g[1]*g[5] - g[2]*g[4]
	dx, dy := pt[0]-g[0], pt[1]-g[3]
	return (g[5]*dx - g[2]*dy) / det, (g[1]*dy - g[4]*dx) / det
}

// drawStands draws the stands over the map view: a fill in the LUT's
// colour of each stand's mean when the choropleth is on, and outlines
// (the selected stand's in white, the others in black). It runs in the
// map's generator, which holds the map's lock; it reads the panel, which
// only the event goroutine changes, between renders.
func (w *Window) drawStands(buf *image.NRGBA, x0, y0, zoom float64) {
	p := w.standsP
	if len(p.stands) == 0 || zoom <= 0 {
		return
	}
	b := buf.Rect
	if p.choro.Checked && w.lut != nil && len(p.results) == len(p.stands) {
		for i, s := range p.stands {
			if math.IsNaN(p.results[i].Mean) {
				continue
			}
			c := w.lut.Color(float32(p.results[i].Mean))
			r := p.screenBound(s.Geom, x0, y0, zoom).Intersect(b)
			for sy := r.Min.Y; sy < r.Max.Y; sy++ {
				for sx := r.Min.X; sx < r.Max.X; sx++ {
					if p.standAt(x0+(float64(sx)+0.5)/zoom, y0+(float64(sy)+0.5)/zoom) == i {
						o := buf.PixOffset(sx, sy)
						buf.Pix[o], buf.Pix[o+1], buf.Pix[o+2], buf.Pix[o+3] = c.R, c.G, c.B, 255
					}
				}
			}
		}
	}
	for i, s := range p.stands {
		col := color.NRGBA{0, 0, 0, 255}
		if i == p.selected {
			col = color.NRGBA{255, 255, 255, 255}
		}
		for _, ring := range rings(s.Geom) {
			for k := 1; k < len(ring); k++ {
				ax, ay := p.toPixel(ring[k-1])
				bx, by := p.toPixel(ring[k])
				drawLine(buf, (ax-x0)*zoom, (ay-y0)*zoom, (bx-x0)*zoom, (by-y0)*zoom, col)
			}
		}
	}
}

// screenBound is the bounding box of g in view pixels.
func (p *standsPanel) screenBound(g orb.Geometry, x0, y0, zoom float64) image.Rectangle {
	bd := g.Bound()
	ax, ay := p.toPixel(bd.Min)
	bx, by := p.toPixel(bd.Max)
	sx0, sx1 := (math.Min(ax, bx)-x0)*zoom, (math.Max(ax, bx)-x0)*zoom
	sy0, sy1 := (math.Min(ay, by)-y0)*zoom, (math.Max(ay, by)-y0)*zoom
	return image.Rect(int(math.Floor(sx0)), int(math.Floor(sy0)), int(math.Ceil(sx1))+1, int(math.Ceil(sy1))+1)
}

// rings returns the rings of a polygon or multipolygon.
func rings(g orb.Geometry) []orb.Ring {
	switch g := g.(type) {
	case orb.Polygon:
		return g
	case orb.MultiPolygon:
		var rs []orb.Ring
		for _, p := range g {
			rs = append(rs, p...)
		}
		return rs
	}
	return nil
}

// drawLine draws a line of physical view pixels, clipped to img.
func drawLine(img *image.NRGBA, ax, ay, bx, by float64, c color.NRGBA) {
	n := int(math.Ceil(math.Max(math.Abs(bx-ax), math.Abs(by-ay))))
	if n > 1<<16 {
		n = 1 << 16
	}
	for k := 0; k <= n; k++ {
		t := 0.0
		if n > 0 {
			t = float64(k) / float64(n)
		}
		x, y := int(math.Floor(ax+t*(bx-ax))), int(math.Floor(ay+t*(by-ay)))
		if image.Pt(x, y).In(img.Rect) {
			img.SetNRGBA(x, y, c)
		}
	}
}

// ExportStands writes the stands' statistics as CSV (zonal.WriteCSV) or,
// for a .gpkg path, as a GeoPackage of the stands with their statistics.
func (w *Window) ExportStands(path string) error {
	p := w.standsP
	if len(p.results) == 0 {
		return errors.New("export stands: no stands are open")
	}
	if strings.EqualFold(filepath.Ext(path), ".gpkg") {
		return vector.WriteGPKG(path, p.layer, zonal.GPKGColumns(p.classes), zonal.GPKGRows(p.results))
	}
	set := outfile.NewSet(p.layer.Path)
	f, err := set.Create(path)
	if err != nil {
		return err
	}
	if err := zonal.WriteCSV(f, p.results, p.classes); err != nil {
		set.Abort()
		return fmt.Errorf("%s: %v", path, err)
	}
	return set.Commit()
}

func (w *Window) openStandsDialog() {
	d := dialog.NewFileOpen(func(uc fyne.URIReadCloser, err error) {
		if err != nil || uc == nil {
			return
		}
		path := uc.URI().Path()
		uc.Close()
		if err := w.OpenStands(path); err != nil {
			dialog.ShowError(err, w.Win)
		}
	}, w.Win)
	d.SetFilter(storage.NewExtensionFileFilter([]string{".gpkg", ".geojson", ".json"}))
	d.Show()
}

func (w *Window) exportStandsDialog(ext string) {
	d := dialog.NewFileSave(func(uc fyne.URIWriteCloser, err error) {
		if err != nil || uc == nil {
			return
		}
		path := uc.URI().Path()
		uc.Close()
		if err := w.ExportStands(path); err != nil {
			dialog.ShowError(err, w.Win)
			return
		}
		w.setStatus(fmt.Sprintf("Wrote %d stands to %s", len(w.standsP.results), path), true)
	}, w.Win)
	d.SetFileName("stands" + ext)
	d.SetFilter(storage.NewExtensionFileFilter([]string{ext}))
	d.Show()
}
