package ui

import (
	"encoding/csv"
	"fmt"
	"image"
	"math"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"canopy/compute/geo"
	"canopy/compute/outfile"
	"canopy/compute/scene"
	"canopy/ui/render/numfmt"
)

// reading is what the window reads at one pixel of the map shown: its
// place (row, column, map coordinates, CRS, latitude and longitude), every
// band's value and the index.
type reading struct {
	col, row int
	x, y     float64
	hasXY    bool
	crs      string // "EPSG:32632 · WGS 84 / UTM zone 32N", "" when unknown
	geogr    bool   // map coordinates are degrees
	lat, lon float64
	hasLL    bool
	roles    []string
	values   []float64 // by roles; NaN where the band has no data
	index    string    // the index's heading ("NDVI")
	value    float64   // NaN where state is not ""
	state    string    // "", "masked" or "no data"
}

// crsInfo is what the window knows of the CRS of what it shows, found
// once a map (PROJ is asked once).
type crsInfo struct {
	label string
	geogr bool
	tr    *geo.Transformer
}

// crsOf describes the CRS of s's bands; an unknown one gives no label and
// no transformer (map coordinates are shown alone).
func crsOf(s *shown) crsInfo {
	if s == nil || s.set == nil || !s.set.geo.Valid() {
		return crsInfo{}
	}
	c, err := geo.Of(s.set.geo)
	if err != nil {
		return crsInfo{}
	}
	info := crsInfo{label: c.Label(), geogr: c.Geographic}
	if tr, err := geo.TransformerOf(s.set.geo); err == nil {
		info.tr = tr
	}
	return info
}

// read reads pixel (col, row) of s, which must lie on the image.
func (w *window) read(s *shown, col, row int) reading {
	r := reading{col: col, row: row, index: s.idx.heading()}
	i := row*s.w + col
	if x, y, ok := s.set.geo.PixelToMap(col, row); ok && s.set.geo.Valid() {
		r.x, r.y, r.hasXY = x, y, true
		if w.crs.label != "" {
			r.crs, r.geogr = w.crs.label, w.crs.geogr
		}
		if w.crs.tr != nil {
			if lat, lon, err := w.crs.tr.ToLatLon(x, y); err == nil {
				r.lat, r.lon, r.hasLL = lat, lon, true
			}
		}
	}
	if s.large != nil {
		s.large.readPixel(&r, col, row)
		return r
	}
	for _, b := range s.set.bands {
		r.roles = append(r.roles, b.Role)
		r.values = append(r.values, scene.Value(b, i))
	}
	r.value = math.NaN()
	switch v := s.valueAt(col, row); {
	case s.set.mask != nil && s.set.mask[i] != 0:
		r.state = "masked"
	case v != v:
		r.state = "no data"
	default:
		r.value = float64(v)
	}
	return r
}

// valueAt is the index at pixel (col, row): read from the session kept
// on the card when the map is drawn from one (that pixel alone comes
// back), else from the host plane.
func (s *shown) valueAt(col, row int) float32 {
	if s.card != nil {
		if v, ok := s.card.probe(col, row); ok {
			return v
		}
	}
	return s.plane[row*s.w+col]
}

// Number formats of the read-outs: the same everywhere (probe, pins, CSV
// columns shown to the user).
func indexText(v float64) string { return numfmt.Fixed(v, 4) }

func bandText(v float64) string {
	if math.IsNaN(v) {
		return "no data"
	}
	return numfmt.Value(v)
}

func (r reading) valueText() string {
	if r.state != "" {
		return r.state
	}
	return indexText(r.value)
}

func (r reading) xyText() string {
	if !r.hasXY {
		return ""
	}
	if r.geogr {
		return fmt.Sprintf("x %.6f, y %.6f", r.x, r.y)
	}
	// Map coordinates as a GIS writes them (no grouping, so they can be
	// copied), to the centimetre.
	return fmt.Sprintf("x %.2f, y %.2f", r.x, r.y)
}

func (r reading) latLonText() string {
	if !r.hasLL {
		return ""
	}
	ns, ew := "N", "E"
	if r.lat < 0 {
		ns = "S"
	}
	if r.lon < 0 {
		ew = "W"
	}
	return fmt.Sprintf("%s°%s %s°%s", strconv.FormatFloat(math.Abs(r.lat), 'f', 6, 64), ns,
		strconv.FormatFloat(math.Abs(r.lon), 'f', 6, 64), ew)
}

func (r reading) bandsText() string {
	var parts []string
	for k, role := range r.roles {
		parts = append(parts, role+" "+bandText(r.values[k]))
	}
	return strings.Join(parts, "  ")
}

// probeText is the status bar's one-line read-out.
func (r reading) probeText() string {
	parts := []string{fmt.Sprintf("%s %s", r.index, r.valueText()), fmt.Sprintf("row %d, col %d", r.row, r.col)}
	if t := r.xyText(); t != "" {
		parts = append(parts, t)
	}
	if t := r.latLonText(); t != "" {
		parts = append(parts, t)
	}
	parts = append(parts, r.bandsText())
	return strings.Join(parts, "  ·  ")
}

// pinText is the identify panel's several-line row.
func (r reading) pinText(n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d. %s %s  ·  row %d, col %d", n, r.index, r.valueText(), r.row, r.col)
	if t := r.xyText(); t != "" {
		b.WriteString("\n" + t)
	}
	if r.crs != "" {
		b.WriteString("\n" + r.crs)
	} else if r.hasXY {
		b.WriteString("\nCRS unknown")
	}
	if t := r.latLonText(); t != "" {
		b.WriteString("\n" + t)
	}
	b.WriteString("\n" + r.bandsText())
	return b.String()
}

// identifyPanel lists the pins: a click on the map pins the pixel, each
// pin is a row with everything read there; they can be removed, cleared
// and exported as CSV.
type identifyPanel struct {
	card *fyne.Container
	rows *fyne.Container
	hint *widget.Label
	// Export and Clear act on every pin.
	Export, Clear *widget.Button
	pins          []reading
	// onChange is called when the pins change (to mark them on the map).
	onChange func()
	identifyCalls
}

// identifyCalls are what the identify panel asks of the window to export
// the pins: saveDialog asks where, showError and status say how it went,
// inputs are the files the map was read from (never overwritten).
type identifyCalls struct {
	saveDialog func(title, name string, exts []string, save func(path string))
	showError  func(error)
	status     func(text string, ok bool)
	inputs     func() []string
}

func newIdentifyPanel(c identifyCalls) *identifyPanel {
	p := &identifyPanel{rows: container.NewVBox(), identifyCalls: c}
	p.hint = widget.NewLabel("Click the map to pin a pixel.")
	p.hint.SizeName = theme.SizeNameCaptionText
	p.hint.Wrapping = fyne.TextWrapWord
	p.Export = widget.NewButtonWithIcon("CSV…", theme.DocumentSaveIcon(), p.exportDialog)
	p.Clear = widget.NewButtonWithIcon("Clear", theme.DeleteIcon(), p.clear)
	title := widget.NewLabelWithStyle("Identify", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	// The buttons get a row of their own, half the panel each: beside the
	// title they made the panel wider than the column beside the map has
	// room for, and were cut at its edge.
	buttons := container.NewGridWithColumns(2, p.Export, p.Clear)
	p.card = container.NewVBox(title, buttons, p.hint, p.rows, widget.NewSeparator())
	p.refresh()
	return p
}

func (p *identifyPanel) add(r reading) {
	p.pins = append(p.pins, r)
	p.refresh()
}

func (p *identifyPanel) remove(i int) {
	if i >= 0 && i < len(p.pins) {
		p.pins = append(p.pins[:i], p.pins[i+1:]...)
		p.refresh()
	}
}

func (p *identifyPanel) clear() {
	p.pins = nil
	p.refresh()
}

// points returns the pinned pixels.
func (p *identifyPanel) points() []image.Point {
	var pts []image.Point
	for _, r := range p.pins {
		pts = append(pts, image.Pt(r.col, r.row))
	}
	return pts
}

func (p *identifyPanel) refresh() {
	p.rows.RemoveAll()
	for i, r := range p.pins {
		l := widget.NewLabel(r.pinText(i + 1))
		l.Wrapping = fyne.TextWrapWord
		l.SizeName = theme.SizeNameCaptionText
		del := widget.NewButtonWithIcon("", theme.ContentRemoveIcon(), func() { p.remove(i) })
		del.Importance = widget.LowImportance
		p.rows.Add(container.NewBorder(nil, nil, nil, container.NewVBox(del), l))
	}
	if len(p.pins) == 0 {
		p.hint.Show()
		p.Export.Disable()
		p.Clear.Disable()
	} else {
		p.hint.Hide()
		p.Export.Enable()
		p.Clear.Enable()
	}
	if p.onChange != nil {
		p.onChange()
	}
}

// texts returns the panel's rows as the user reads them.
func (p *identifyPanel) texts() []string {
	var s []string
	for i, r := range p.pins {
		s = append(s, r.pinText(i+1))
	}
	return s
}

// export writes the pins as CSV: one row a pin with its place, every
// band's value and the index (empty where there is no data; the state
// says why).
func (p *identifyPanel) export(path string) error {
	pins := p.pins
	if len(pins) == 0 {
		return fmt.Errorf("%s: no pin to export (click the map to pin a pixel)", path)
	}
	var roles []string
	seen := map[string]bool{}
	for _, r := range pins {
		for _, role := range r.roles {
			if !seen[role] {
				seen[role] = true
				roles = append(roles, role)
			}
		}
	}
	head := []string{"pin", "row", "col", "x", "y", "crs", "lat", "lon"}
	head = append(head, roles...)
	head = append(head, "index", "value", "state")
	rows := [][]string{head}
	f := func(v float64, ok bool) string {
		if !ok || math.IsNaN(v) {
			return ""
		}
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	for i, r := range pins {
		row := []string{strconv.Itoa(i + 1), strconv.Itoa(r.row), strconv.Itoa(r.col),
			f(r.x, r.hasXY), f(r.y, r.hasXY), r.crs, f(r.lat, r.hasLL), f(r.lon, r.hasLL)}
		for _, role := range roles {
			v := math.NaN()
			for k, rr := range r.roles {
				if rr == role {
					v = r.values[k]
				}
			}
			row = append(row, f(v, true))
		}
		row = append(row, strings.ToLower(r.index), f(r.value, r.state == ""), r.state)
		rows = append(rows, row)
	}
	var b strings.Builder
	cw := csv.NewWriter(&b)
	if err := cw.WriteAll(rows); err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	if err := refuseInput(path, p.inputs()); err != nil {
		return err
	}
	err := outfile.WriteFile(path, func(o *outfile.Writer) error {
		_, err := o.Write([]byte(b.String()))
		return err
	})
	if err != nil {
		return explain(fmt.Errorf("write %s: %w", path, err))
	}
	return nil
}

func (p *identifyPanel) exportDialog() {
	p.saveDialog("Export the pins as CSV", "pins.csv", []string{".csv"}, func(path string) {
		if err := p.export(path); err != nil {
			p.showError(err)
			return
		}
		p.status(fmt.Sprintf("Wrote %d pins to %s", len(p.pins), path), true)
	})
}
