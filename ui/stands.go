package ui

import (
	"context"
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
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
	"github.com/paulmach/orb"
	"github.com/paulmach/orb/planar"

	"canopy/compute/outfile"
	"canopy/compute/vector"
	"canopy/compute/zonal"
	"canopy/ui/mapview"
	"canopy/ui/render/colormap"
)

// standColumns are the stands table's first columns, one date; the
// statistics' names take the index's ("mean NDVI"). changeColumns follow
// them in two-date mode (the stand's statistics of before − after), then
// come the stands' own attributes.
var (
	standColumns  = []string{"id", "area ha", "valid ha", "valid px", "mean", "median", "std", "min", "max"}
	changeColumns = []string{"Δ mean", "Δ median", "main change"}
)

// standStatCols is how many of standColumns are per-index statistics
// (their names get the index's), counted from the end.
const standStatCols = 5

// featureID is the id picker's entry for the feature id (FID).
const featureID = "feature id (FID)"

// standsCalls are what the stands panel asks of the window: open starts
// reading the stands of a file (FILE[:LAYER]) onto the map shown; status
// and showError say things; saveDialog asks where to save; showTable
// brings the Stands tab to the front; lut is the map's colours and
// diffLUT the difference's in the difference view (nil otherwise);
// afterFiles are the after date's input files (nil with one date);
// indexTitle names the index the statistics are of ("NDVI"), for the
// column names.
type standsCalls struct {
	open       func(spec string) error
	status     func(text string, ok bool)
	showError  func(error)
	saveDialog func(title, name string, exts []string, save func(path string))
	showTable  func()
	lut        func() *colormap.LUT
	diffLUT    func() *colormap.LUT
	afterFiles func() []string
	indexTitle func() string
}

// standsPanel holds the stands opened over the map (in the raster's CRS),
// their statistics on the map shown (and, in two-date mode, on the
// difference), the table's order, the stand selected and the attribute
// that names the stands. It draws them over the map (outlines, the
// choropleth, the labels) and exports them.
type standsPanel struct {
	standsCalls
	m      *mapview.View
	card   fyne.CanvasObject
	table  *widget.Table
	detail *widget.Label
	choro  *widget.Check
	// IDField picks the attribute that names the stands (featureID: the
	// FID).
	IDField  *widget.Select
	layer    *vector.Layer
	spec     string // the file the stands came from, as OpenStands took it
	stands   []zonal.Stand
	ids      []string // the stands' names by the field picked
	results  []zonal.Result
	classes  zonal.Classes
	change   []zonal.Result // per-stand statistics of the difference
	changeCl zonal.Classes
	order    []int // table row → stand
	sortCol  int   // -1: file order
	sortDesc bool
	selected int // stand index, -1 when none
	gt       [6]float64
	labels   *standLabels
	quiet    bool
	// ChangeCSV exports the per-stand change statistics (two dates).
	ChangeCSV *widget.Button
	// tableTab is the Stands tab: the table at full size.
	tableTab fyne.CanvasObject
}

// newStandsPanel returns the panel of the stands drawn over map m, its
// dialogs over parent.
func newStandsPanel(parent fyne.Window, m *mapview.View, c standsCalls) *standsPanel {
	p := &standsPanel{standsCalls: c, m: m, sortCol: -1, selected: -1}
	p.detail = widget.NewLabel("No stands open")
	p.detail.Wrapping = fyne.TextWrapWord
	p.choro = widget.NewCheck("Colour stands by their mean", func(bool) { m.Redraw() })
	p.IDField = widget.NewSelect(nil, func(f string) {
		if !p.quiet {
			if err := p.setID(f); err != nil {
				p.status(err.Error(), false)
			}
		}
	})
	p.IDField.PlaceHolder = "open stands first"
	p.IDField.Disable()
	p.labels = newStandLabels(p, m)
	p.table = widget.NewTable(
		func() (int, int) { return len(p.order), len(p.columns()) },
		func() fyne.CanvasObject { return widget.NewLabel("000000") },
		func(id widget.TableCellID, o fyne.CanvasObject) {
			o.(*widget.Label).SetText(p.cell(id.Row, id.Col))
		})
	p.table.ShowHeaderRow = true
	p.table.CreateHeader = func() fyne.CanvasObject { return widget.NewButton("", nil) }
	p.table.UpdateHeader = func(id widget.TableCellID, o fyne.CanvasObject) {
		b := o.(*widget.Button)
		cols := p.columns()
		if id.Row >= 0 || id.Col < 0 || id.Col >= len(cols) {
			b.SetText("")
			b.OnTapped = nil
			return
		}
		t := cols[id.Col]
		if id.Col == p.sortCol {
			t += map[bool]string{false: " ▲", true: " ▼"}[p.sortDesc]
		}
		b.SetText(t)
		col := id.Col
		b.OnTapped = func() { p.sortBy(col) }
	}
	p.table.OnSelected = func(id widget.TableCellID) {
		if id.Row >= 0 && id.Row < len(p.order) {
			p.selectStand(p.order[id.Row])
		}
	}
	open := widget.NewButton("Open stands…", func() { p.openDialog(parent) })
	csvB := widget.NewButton("CSV…", func() { p.exportDialog(".csv") })
	gpkgB := widget.NewButton("GeoPackage…", func() { p.exportDialog(".gpkg") })
	p.ChangeCSV = widget.NewButton("Change CSV…", p.exportChangesDialog)
	p.ChangeCSV.Hide()
	p.tableTab = container.NewBorder(widget.NewLabel("Click a column's name to sort by it (again to reverse); drag a column's edge to widen it."), nil, nil, nil, p.table)
	showTable := widget.NewButton("Show the table", func() { p.showTable() })
	p.card = section("Stands", container.NewVBox(open,
		widget.NewForm(widget.NewFormItem("Named by", p.IDField)),
		container.NewGridWithColumns(2, csvB, gpkgB), p.ChangeCSV, p.choro, p.detail, showTable))
	return p
}

// columns are the table's columns: the stand's id, area, valid area and
// valid pixels, the statistics named after the index ("mean NDVI"), the
// change columns when the difference's statistics are known, then the
// stands' own attributes.
func (p *standsPanel) columns() []string {
	idx := ""
	if p.indexTitle != nil {
		idx = p.indexTitle()
	}
	cols := append([]string(nil), standColumns...)
	if idx != "" {
		for c := len(cols) - standStatCols; c < len(cols); c++ {
			cols[c] += " " + idx
		}
	}
	if p.hasChange() {
		for _, c := range changeColumns {
			if idx != "" && c != "main change" {
				c += " " + idx
			}
			cols = append(cols, c)
		}
	}
	if p.layer != nil {
		for _, f := range p.layer.Fields {
			cols = append(cols, f.Name)
		}
	}
	return cols
}

// hasChange reports whether the table shows the change columns.
func (p *standsPanel) hasChange() bool {
	return len(p.change) == len(p.results) && len(p.change) > 0
}

// attrCol returns the attribute field of column col, or -1.
func (p *standsPanel) attrCol(col int) int {
	first := len(standColumns)
	if p.hasChange() {
		first += len(changeColumns)
	}
	if p.layer == nil || col < first || col-first >= len(p.layer.Fields) {
		return -1
	}
	return col - first
}

// widthOf is column col's width when the table is laid out: ids and
// attributes wide enough for a name, numbers for "0.0000".
func (p *standsPanel) widthOf(col int, name string) float32 {
	w := fyne.MeasureText(name+" ▼", theme.TextSize(), fyne.TextStyle{}).Width + 2*theme.Padding() + 8
	min := float32(90)
	if col == 0 || p.attrCol(col) >= 0 {
		min = 120
	}
	return max(w, min)
}

// layoutColumns sets every column's width from its name (the user may
// then drag them wider or narrower).
func (p *standsPanel) layoutColumns() {
	for c, n := range p.columns() {
		p.table.SetColumnWidth(c, p.widthOf(c, n))
	}
}

// mainChange is the change class of stand i with the most hectares ("–"
// when none has any).
func (p *standsPanel) mainChange(i int) string {
	best, ha := -1, 0.0
	for c, v := range p.change[i].ClassHa {
		if v > ha {
			best, ha = c, v
		}
	}
	if best < 0 || best >= len(p.changeCl.Names) {
		return "–"
	}
	return p.changeCl.Names[best]
}

// value returns column col of stand i as a number (for sorting; NaN for
// text).
func (p *standsPanel) value(i, col int) float64 {
	r := p.results[i]
	switch col {
	case 1:
		return r.AreaHa
	case 2:
		return r.ValidHa
	case 3:
		return r.ValidPixels
	case 4:
		return r.Mean
	case 5:
		return r.Median
	case 6:
		return r.Std
	case 7:
		return r.Min
	case 8:
		return r.Max
	}
	if p.hasChange() {
		switch col {
		case 9:
			return p.change[i].Mean
		case 10:
			return p.change[i].Median
		}
	}
	if a := p.attrCol(col); a >= 0 && i < len(p.layer.Features) {
		switch v := p.layer.Features[i].Attrs[p.layer.Fields[a].Name].(type) {
		case int64:
			return float64(v)
		case float64:
			return v
		}
	}
	return math.NaN()
}

// numeric reports whether column col sorts by number.
func (p *standsPanel) numeric(col int) bool {
	if col == 0 || p.hasChange() && col == 11 {
		return false
	}
	if a := p.attrCol(col); a >= 0 {
		switch strings.ToUpper(p.layer.Fields[a].Type) {
		case "INTEGER", "INT", "REAL", "FLOAT", "DOUBLE", "NUMERIC", "MEDIUMINT", "SMALLINT", "TINYINT":
			return true
		}
		return false
	}
	return true
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
	i := p.order[row]
	r := p.results[i]
	switch {
	case col == 0:
		return r.ID
	case col == 1 || col == 2:
		return fmtStat(p.value(i, col), 2)
	case col == 3:
		return fmtStat(r.ValidPixels, 1)
	case p.hasChange() && col == 11:
		return p.mainChange(i)
	}
	if a := p.attrCol(col); a >= 0 {
		if i >= len(p.layer.Features) {
			return ""
		}
		return vector.FormatValue(p.layer.Features[i].Attrs[p.layer.Fields[a].Name])
	}
	if col >= len(p.columns()) {
		return ""
	}
	return fmtStat(p.value(i, col), 4)
}

// OpenStands opens a stands layer (FILE[:LAYER], GeoPackage or GeoJSON),
// reprojects it to the map's CRS and computes each stand's statistics on
// the map shown (and on the difference in two-date mode), all off the
// event goroutine, with progress; Wait waits for it. The stands are
// named by their first id, stand or name attribute
// (vector.Layer.DefaultIDField; the FID when none), which the user can
// change. What goes wrong is said in the status line and a dialog; an
// error is returned at once only when the map cannot carry stands.
func (w *window) OpenStands(spec string) error { return w.openStands(spec, "") }

// openStands opens the stands of spec named by the attribute id (""
// the layer's default; featureID the FID; an attribute the layer lacks,
// the default).
func (w *window) openStands(spec, id string) error {
	s := w.shown
	if s == nil || s.set == nil || !s.set.geo.Valid() {
		return errors.New("stands: the map shown has no georeference to place stands on")
	}
	gt, ok := s.set.geo.Affine()
	if !ok {
		return errors.New("stands: the map shown has no affine geotransform")
	}
	geo := s.set.geo
	path, name, err := vector.ParseStands(spec)
	if err != nil {
		return err
	}
	w.setStatus("Reading the stands of "+filepath.Base(path)+"…", true)
	// Reading is a side job: a computation started meanwhile does not
	// lose the stands (it cancels their statistics, which its own map
	// recomputes).
	w.bridge.side("Opening stands", func() (func(), error) {
		l, err := vector.Read(path, name)
		if err != nil {
			return nil, err
		}
		if l, _, err = vector.OnRaster(l, geo); err != nil {
			return nil, fmt.Errorf("stands %s: %v", path, err)
		}
		field := l.DefaultIDField()
		switch {
		case id == featureID:
			field = ""
		case id != "" && hasField(l, id):
			field = id
		}
		st, err := zonal.StandsFromLayer(l, field)
		if err != nil {
			return nil, err
		}
		if len(st) == 0 {
			return nil, fmt.Errorf("stands %s: the layer is empty", path)
		}
		return func() {
			if w.shown == nil || !w.shown.set.geo.SameCRS(geo) {
				w.setStatus("The map changed to another CRS while the stands were read: open them again", false)
				return
			}
			if g, ok := w.shown.set.geo.Affine(); ok {
				gt = g
			}
			w.standsP.opened(spec, l, field, st, gt)
			w.setStatus(fmt.Sprintf("Opened %d stands from %s", len(st), path), true)
			w.followUp()
		}, nil
	})
	return nil
}

// opened shows the stands st of layer l (from spec, named by field, on
// a grid of geotransform gt) without statistics yet.
func (p *standsPanel) opened(spec string, l *vector.Layer, field string, st []zonal.Stand, gt [6]float64) {
	p.layer, p.stands, p.gt, p.selected, p.spec = l, st, gt, -1, spec
	p.results, p.change = nil, nil
	p.setFields(l, field)
	p.ids = make([]string, len(st))
	for i := range st {
		p.ids[i] = st[i].ID
	}
	p.geometry()
}

// setFields offers the layer's attributes in the id picker, field picked.
func (p *standsPanel) setFields(l *vector.Layer, field string) {
	opts := []string{featureID}
	for _, f := range l.Fields {
		opts = append(opts, f.Name)
	}
	p.quiet = true
	p.IDField.SetOptions(opts)
	if field == "" {
		field = featureID
	}
	p.IDField.SetSelected(field)
	p.quiet = false
	p.IDField.Enable()
}

// setID names the stands by the attribute field (featureID or "" for
// the FID): the table's id column, the labels on the map and the
// exports follow.
func (p *standsPanel) setID(field string) error {
	if p.layer == nil {
		return errors.New("stands: none are open")
	}
	if field == featureID {
		field = ""
	}
	ids, err := p.layer.IDs(field)
	if err != nil {
		return err
	}
	p.ids = ids
	for i := range p.stands {
		p.stands[i].ID = ids[i]
	}
	p.relabel()
	sel := field
	if sel == "" {
		sel = featureID
	}
	if p.IDField.Selected != sel {
		p.quiet = true
		p.IDField.SetSelected(sel)
		p.quiet = false
	}
	p.resort()
	if p.selected >= 0 {
		p.selectStand(p.selected)
	}
	p.labels.renamed()
	return nil
}

// relabel gives the results the stands' current names.
func (p *standsPanel) relabel() {
	for _, rs := range [][]zonal.Result{p.results, p.change} {
		for i := range rs {
			if i < len(p.ids) {
				rs[i].ID = p.ids[i]
			}
		}
	}
}

// standsWork is what the stands' statistics need, taken on the event
// goroutine when a job starts.
type standsWork struct {
	stands  []zonal.Stand
	gt      [6]float64
	classes zonal.Classes
}

// standsOut is the statistics a job computed.
type standsOut struct {
	results, change   []zonal.Result
	classes, changeCl zonal.Classes
	warns             []string
	gt                [6]float64
}

// work is what the stands' statistics on s need (nil when no stands are
// open).
func (p *standsPanel) work(s *shown) *standsWork {
	if len(p.stands) == 0 || s == nil {
		return nil
	}
	wk := &standsWork{stands: p.stands, gt: p.gt}
	if gt, ok := s.set.geo.Affine(); ok {
		wk.gt = gt
	}
	if s.idx.classes != nil {
		wk.classes = zonal.ClassesOf(s.idx.classes.Compute())
	}
	return wk
}

// run computes the stands' statistics on s (and on the difference of r,
// when given) off the event goroutine, with progress, stopping when ctx
// is cancelled.
func (wk *standsWork) run(ctx context.Context, progress progressFunc, s *shown, r *twoResult) (*standsOut, error) {
	if s.large != nil {
		return nil, errLarge("stands")
	}
	out := &standsOut{classes: wk.classes, gt: wk.gt}
	planes := [][]float32{s.plane}
	if r != nil {
		planes = append(planes, r.diff)
		out.changeCl = zonal.ClassesOf(r.diffIdx.classes.Compute())
	}
	for k, plane := range planes {
		src, err := zonal.NewPlane(plane, s.w, s.h)
		if err != nil {
			return nil, err
		}
		what, cl := "Stand statistics", out.classes
		if k == 1 {
			what, cl = "Stand change statistics", out.changeCl
		}
		progress(float64(k)/float64(len(planes)), what+"…")
		res, warns, err := zonal.Compute(src, wk.gt, wk.stands, zonal.Options{Classes: cl, Context: ctx,
			Progress: func(done, total int) {
				progress((float64(k)+float64(done)/float64(total))/float64(len(planes)), what+"…")
			}})
		if err != nil {
			return nil, err
		}
		if k == 0 {
			out.results, out.warns = res, warns
		} else {
			out.change = res
		}
	}
	return out, nil
}

// install shows statistics computed by a job.
func (p *standsPanel) install(out *standsOut) {
	if len(out.results) != len(p.stands) {
		return // the stands changed meanwhile
	}
	p.results, p.classes, p.gt = out.results, out.classes, out.gt
	p.change, p.changeCl = out.change, out.changeCl
	p.showChangeCSV()
	p.relabel()
	p.resort()
	if len(out.warns) > 0 {
		p.detail.SetText(fmt.Sprintf("%d stands · %s", len(p.results), out.warns[0]))
	} else {
		p.detail.SetText(fmt.Sprintf("%d stands · click one on the map", len(p.results)))
	}
	if p.selected >= 0 {
		p.selectStand(p.selected)
	}
	p.labels.Refresh()
	p.m.Redraw()
}

// clearChange drops the per-stand change statistics (one date again).
func (p *standsPanel) clearChange() {
	p.change = nil
	p.showChangeCSV()
	p.sortCol = -1 // the columns after the statistics moved
	p.resort()
}

// resort orders the table by the sort column.
func (p *standsPanel) resort() {
	p.order = make([]int, len(p.results))
	for i := range p.order {
		p.order[i] = i
	}
	if c := p.sortCol; c >= 0 {
		num := p.numeric(c)
		sort.SliceStable(p.order, func(a, b int) bool {
			ia, ib := p.order[a], p.order[b]
			if !num {
				ta, tb := p.cellOf(ia, c), p.cellOf(ib, c)
				if ta == "" || tb == "" {
					return ta != "" && tb == "" // empty last
				}
				if p.sortDesc {
					return ta > tb
				}
				return ta < tb
			}
			va, vb := p.value(ia, c), p.value(ib, c)
			if math.IsNaN(va) || math.IsNaN(vb) {
				return !math.IsNaN(va) && math.IsNaN(vb) // NaN last
			}
			if p.sortDesc {
				return va > vb
			}
			return va < vb
		})
	}
	p.layoutColumns()
	p.table.Refresh()
}

// cellOf is column col's text for stand i (cell by stand, not by row).
func (p *standsPanel) cellOf(i, col int) string {
	switch {
	case col == 0:
		return p.results[i].ID
	case p.hasChange() && col == 11:
		return p.mainChange(i)
	}
	if a := p.attrCol(col); a >= 0 && i < len(p.layer.Features) {
		return vector.FormatValue(p.layer.Features[i].Attrs[p.layer.Fields[a].Name])
	}
	return ""
}

// sortBy sorts the stands table by column col (0 id, 1 area ha, 2
// valid ha, 3 valid pixels, 4 mean, 5 median, 6 std, 7 min, 8 max; in
// two-date mode 9 the change's mean, 10 its median, 11 the main change
// class; then the stands' attributes, by number when the field is one);
// sorting by the same column again reverses the order.
func (p *standsPanel) sortBy(col int) {
	if p.sortCol == col {
		p.sortDesc = !p.sortDesc
	} else {
		p.sortCol, p.sortDesc = col, false
	}
	p.resort()
}

// rows returns the stands table as shown, one row of cells a stand.
func (p *standsPanel) rows() [][]string {
	rows := make([][]string, len(p.order))
	for i := range rows {
		for c := range p.columns() {
			rows[i] = append(rows[i], p.cell(i, c))
		}
	}
	return rows
}

// changes returns the stands' statistics of the difference before −
// after in two-date mode (nil with one date), in file order.
func (p *standsPanel) changes() []zonal.Result {
	if len(p.change) != len(p.results) {
		return nil
	}
	return p.change
}

// selectedID returns the id of the stand selected, "" when none.
func (p *standsPanel) selectedID() string {
	if p.selected < 0 || p.selected >= len(p.results) {
		return ""
	}
	return p.results[p.selected].ID
}

// selectStand shows stand i's statistics and marks its row.
func (p *standsPanel) selectStand(i int) {
	if i < 0 || i >= len(p.results) {
		return
	}
	p.selected = i
	r := p.results[i]
	p.detail.SetText(fmt.Sprintf("Stand %s · %.2f ha · mean %s · median %s · std %s · min %s · max %s · p10 %s · p90 %s",
		r.ID, r.AreaHa, fmtStat(r.Mean, 4), fmtStat(r.Median, 4), fmtStat(r.Std, 4),
		fmtStat(r.Min, 4), fmtStat(r.Max, 4), fmtStat(r.P10, 4), fmtStat(r.P90, 4)))
	if len(p.change) == len(p.results) {
		c := p.change[i]
		var has []string
		for k, ha := range c.ClassHa {
			if ha > 0 && k < len(p.changeCl.Names) {
				has = append(has, fmt.Sprintf("%s %.2f ha", p.changeCl.Names[k], ha))
			}
		}
		p.detail.SetText(p.detail.Text + fmt.Sprintf("\nChange (before − after): mean %s · median %s · min %s · max %s · %s",
			fmtStat(c.Mean, 4), fmtStat(c.Median, 4), fmtStat(c.Min, 4), fmtStat(c.Max, 4), strings.Join(has, " · ")))
	}
	for row, s := range p.order {
		if s == i {
			p.table.ScrollTo(widget.TableCellID{Row: row, Col: 0})
		}
	}
	p.m.Redraw()
}

// standAt returns the stand containing image point (x, y) (pixels), the
// last one drawn when they overlap, -1 when none.
func (p *standsPanel) standAt(x, y float64) int { return standAt(p.stands, p.gt, x, y) }

// standAt returns the stand of stands containing image point (x, y)
// (pixels of the grid gt), the last one when they overlap, -1 when none.
func standAt(stands []zonal.Stand, gt [6]float64, x, y float64) int {
	pt := orb.Point{gt[0] + x*gt[1] + y*gt[2], gt[3] + x*gt[4] + y*gt[5]}
	for i := len(stands) - 1; i >= 0; i-- {
		if !stands[i].Geom.Bound().Contains(pt) {
			continue
		}
		switch g := stands[i].Geom.(type) {
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

// tapped selects the stand under the clicked pixel's centre.
func (p *standsPanel) tapped(col, row int) {
	if i := p.standAt(float64(col)+0.5, float64(row)+0.5); i >= 0 {
		p.selectStand(i)
	}
}

// toPixel maps a map point to image pixel coordinates.
func (p *standsPanel) toPixel(pt orb.Point) (float64, float64) { return toPixel(p.gt, pt) }

// toPixel is point pt (in the grid's system) in pixels of the grid of
// geotransform g.
func toPixel(g [6]float64, pt orb.Point) (float64, float64) {
	det := g[1]*g[5] - g[2]*g[4]
	dx, dy := pt[0]-g[0], pt[1]-g[3]
	return (g[5]*dx - g[2]*dy) / det, (g[1]*dy - g[4]*dx) / det
}

// drawOutlines outlines stands (on the grid of geotransform gt) over a
// map view at (x0, y0) and zoom: the selected one in white, the others in
// black.
func drawOutlines(buf *image.NRGBA, stands []zonal.Stand, gt [6]float64, selected int, x0, y0, zoom float64) {
	for i, s := range stands {
		col := color.NRGBA{0, 0, 0, 255}
		if i == selected {
			col = color.NRGBA{255, 255, 255, 255}
		}
		for _, ring := range rings(s.Geom) {
			for k := 1; k < len(ring); k++ {
				ax, ay := toPixel(gt, ring[k-1])
				bx, by := toPixel(gt, ring[k])
				drawLine(buf, (ax-x0)*zoom, (ay-y0)*zoom, (bx-x0)*zoom, (by-y0)*zoom, col)
			}
		}
	}
}

// draw draws the stands over the map view: a fill in the LUT's
// colour of each stand's mean when the choropleth is on, and outlines
// (the selected stand's in white, the others in black). It runs in the
// map's generator, which holds the map's lock; it reads the panel, which
// only the event goroutine changes, between renders.
func (p *standsPanel) draw(buf *image.NRGBA, x0, y0, zoom float64) {
	if len(p.stands) == 0 || zoom <= 0 {
		return
	}
	b := buf.Rect
	// The choropleth colours each stand by its mean on the map shown: the
	// difference's mean in the LUT of the difference in that view.
	means, lut := p.results, p.lut()
	if len(p.change) == len(p.results) {
		if d := p.diffLUT(); d != nil {
			means, lut = p.change, d
		}
	}
	if p.choro.Checked && lut != nil && len(means) == len(p.stands) {
		for i, s := range p.stands {
			if math.IsNaN(means[i].Mean) {
				continue
			}
			c := lut.Color(float32(means[i].Mean))
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
	drawOutlines(buf, p.stands, p.gt, p.selected, x0, y0, zoom)
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

// export writes the stands' statistics as CSV (zonal.WriteCSV) or,
// for a .gpkg path, as a GeoPackage of the stands with their statistics.
func (p *standsPanel) export(path string) error {
	if len(p.results) == 0 {
		return errors.New("export stands: no stands are open")
	}
	set := outfile.NewSet(p.layer.Path)
	f, err := set.Create(path)
	if err != nil {
		return err
	}
	if strings.EqualFold(filepath.Ext(path), ".gpkg") {
		if err := vector.WriteGPKGTo(f, p.layer, zonal.GPKGColumns(p.classes), zonal.GPKGRows(p.results)); err != nil {
			set.Abort()
			return err
		}
		return set.Commit()
	}
	if err := zonal.WriteCSV(f, p.results, p.classes, p.layer); err != nil {
		set.Abort()
		return fmt.Errorf("%s: %v", path, err)
	}
	return set.Commit()
}

// showChangeCSV offers the change export when there are change
// statistics.
func (p *standsPanel) showChangeCSV() {
	if len(p.change) > 0 && len(p.change) == len(p.results) {
		p.ChangeCSV.Show()
	} else {
		p.ChangeCSV.Hide()
	}
}

// exportChanges writes the stands' statistics of the difference
// before − after (two dates) as CSV, the columns `canopy change --stands
// --csv` writes: zonal's, with hectares per change class.
func (p *standsPanel) exportChanges(path string) error {
	if len(p.change) == 0 || len(p.change) != len(p.results) {
		return errors.New("export stand changes: open stands and an after date first")
	}
	srcs := append([]string{p.layer.Path}, p.afterFiles()...)
	set := outfile.NewSet(srcs...)
	f, err := set.Create(path)
	if err != nil {
		return err
	}
	if err := zonal.WriteCSV(f, p.change, p.changeCl, p.layer); err != nil {
		set.Abort()
		return fmt.Errorf("%s: %v", path, err)
	}
	return set.Commit()
}

func (p *standsPanel) exportChangesDialog() {
	p.saveDialog("Export the stands' change as CSV", "stand-changes.csv", []string{".csv"}, func(path string) {
		if err := p.exportChanges(path); err != nil {
			p.showError(err)
			return
		}
		p.status(fmt.Sprintf("Wrote the change of %d stands to %s", len(p.change), path), true)
	})
}

func (p *standsPanel) openDialog(parent fyne.Window) {
	d := dialog.NewFileOpen(func(uc fyne.URIReadCloser, err error) {
		if err != nil {
			p.showError(err)
			return
		}
		if uc == nil {
			return
		}
		path := uc.URI().Path()
		uc.Close()
		if err := p.open(path); err != nil {
			p.showError(err)
		}
	}, parent)
	d.SetFilter(storage.NewExtensionFileFilter([]string{".gpkg", ".geojson", ".json"}))
	d.Show()
}

func (p *standsPanel) exportDialog(ext string) {
	p.saveDialog("Export the stands", "stands"+ext, []string{ext}, func(path string) {
		if err := p.export(path); err != nil {
			p.showError(err)
			return
		}
		p.status(fmt.Sprintf("Wrote %d stands to %s", len(p.results), path), true)
	})
}

// extentLatLon is the stands' extent in degrees (west,south,east,north).
func (p *standsPanel) extentLatLon() (string, error) {
	if p.layer == nil || len(p.stands) == 0 {
		return "", errors.New("no stands are open: open them first (Stands), or take the map view")
	}
	b, err := vector.ExtentLatLon(p.layer)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%.5f,%.5f,%.5f,%.5f", b[0], b[1], b[2], b[3]), nil
}

// showStandsTab brings the Stands tab (the table) to the front.
func (w *window) showStandsTab() {
	for i, it := range w.tabs.Items {
		if it.Text == "Stands" {
			w.tabs.SelectIndex(i)
		}
	}
}

// hasField reports whether the layer has an attribute named name.
func hasField(l *vector.Layer, name string) bool {
	_, ok := l.Field(name)
	return ok
}
