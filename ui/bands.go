package ui

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"canopy/compute"
	"canopy/compute/index"
	"canopy/compute/raster"
	"canopy/compute/scene"
)

// roleRow is one band role of the bands panel: what gives it, the band of
// a multi-band file, and a button to read it from a file.
type roleRow struct {
	role   string
	Detail *widget.Label
	Band   *widget.Select
	Open   *widget.Button
	box    fyne.CanvasObject
}

// bandsPanel shows, for every role the index reads, where its band comes
// from: generated, a product's band (roles from its metadata or band
// descriptions), or a file the user picked. A role nothing gives is asked
// for: the user opens a file for it (a multi-band file with band
// descriptions fills every role it describes) or picks the band of an
// orthomosaic. It tells the window through onSource.
type bandsPanel struct {
	parent fyne.Window
	card   fyne.CanvasObject
	list   *fyne.Container
	note   *widget.Label
	rows   map[string]*roleRow

	src  bandSource
	need []string
	// quiet is set while the panel sets its own widgets.
	quiet bool

	// onSource is called with the source the user's choice makes; mask
	// is the mask chosen for products.
	onSource func(bandSource)
	mask     func() (string, int, error)
}

func newBandsPanel(parent fyne.Window) *bandsPanel {
	p := &bandsPanel{parent: parent, rows: map[string]*roleRow{}, list: container.NewVBox(), onSource: func(bandSource) {},
		mask: func() (string, int, error) { return "auto", 0, nil }}
	for _, r := range index.Roles {
		row := &roleRow{role: r}
		row.Detail = widget.NewLabel("")
		row.Detail.Wrapping = fyne.TextWrapWord
		row.Detail.SizeName = theme.SizeNameCaptionText
		row.Band = widget.NewSelect(nil, func(s string) { p.bandPicked(r, s) })
		row.Band.PlaceHolder = "band"
		row.Open = widget.NewButtonWithIcon("", theme.FolderOpenIcon(), func() { p.open(r) })
		name := widget.NewLabelWithStyle(r, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
		row.box = container.NewVBox(container.NewBorder(nil, nil, name, container.NewHBox(fitOptions(row.Band), row.Open)), row.Detail)
		p.rows[r] = row
	}
	p.note = widget.NewLabel("")
	p.note.Wrapping = fyne.TextWrapWord
	p.note.SizeName = theme.SizeNameCaptionText
	p.card = section("Bands", container.NewVBox(p.list, p.note))
	return p
}

// Row returns the row of a role (tests act on it).
func (p *bandsPanel) Row(role string) *roleRow { return p.rows[role] }

// show lists the roles need (those of the index) as src gives them.
func (p *bandsPanel) show(src bandSource, need []string) {
	p.src, p.need = src, need
	p.quiet = true
	defer func() { p.quiet = false }()
	p.list.RemoveAll()
	for _, r := range need {
		row := p.rows[r]
		p.fillRow(row)
		p.list.Add(row.box)
	}
	var other []string
	for _, r := range src.roles() {
		if !contains(need, r) {
			other = append(other, r)
		}
	}
	switch {
	case len(need) == 0:
		p.note.SetText("The formula reads no band.")
	case len(other) > 0:
		p.note.SetText("Also here: " + strings.Join(other, ", ") + ".")
	case src.kind == srcFiles:
		p.note.SetText("Open a file for each band (a GeoTIFF with band descriptions fills every band it names).")
	default:
		p.note.SetText("")
	}
}

func (p *bandsPanel) fillRow(row *roleRow) {
	r, src := row.role, p.src
	row.Detail.Importance = widget.MediumImportance
	row.Band.Hide()
	row.Open.Show()
	switch src.kind {
	case srcFake:
		row.Detail.SetText(fmt.Sprintf("generated (fake %s)", src.fake))
	case srcFiles:
		f, ok := src.files[r]
		if !ok {
			row.Detail.SetText("no file: open one")
			row.Detail.Importance = widget.DangerImportance
			break
		}
		size := ""
		if fi, err := os.Stat(f.path); err == nil {
			size = " · " + humanBytes(fi.Size())
		}
		row.Detail.SetText(fmt.Sprintf("%s%s · %d band%s%s", filepath.Base(f.path), size, f.count, plural(f.count), userScale(src, r)))
		if f.count > 1 {
			row.Band.SetOptions(bandOptions(f.count))
			row.Band.SetSelected(bandOption(f.band))
			row.Band.Show()
		}
	case srcProduct:
		if src.ortho() {
			row.Band.SetOptions(bandOptions(src.bandCount))
			if b := src.band(r); b > 0 {
				row.Band.SetSelected(bandOption(b))
				how := "its band description"
				if src.assign[r] > 0 {
					how = "your choice"
				}
				rad := userScale(src, r)
				if x := src.info.Bands[r]; rad == "" && x != nil && src.assign[r] == 0 {
					rad = " · " + radiometryText(x.Radiometry, x.Type)
				}
				row.Detail.SetText(fmt.Sprintf("band %d of %s (%s)%s", b, filepath.Base(src.info.Path), how, rad))
			} else {
				row.Band.ClearSelected()
				row.Detail.SetText("no band has this role: choose its band")
				row.Detail.Importance = widget.DangerImportance
			}
			row.Band.Show()
			break
		}
		if b := src.info.Bands[r]; b != nil {
			rad := userScale(src, r)
			if rad == "" {
				rad = " · " + radiometryText(b.Radiometry, b.Type)
			}
			row.Detail.SetText(fmt.Sprintf("%s · %g m · %s%s", b.Name, b.Resolution, b.Type, rad))
		} else {
			row.Detail.SetText("not in this product")
			row.Detail.Importance = widget.DangerImportance
		}
	}
	row.Detail.Refresh()
}

// radiometryText is how a band's stored values become its values, as the
// bands panel says it: "reflectance = (DN − 1000) × 0.0001", or "digital
// numbers (no scale known)" for integers of no known radiometry.
func radiometryText(r compute.Radiometry, t compute.DataType) string {
	if r.IsIdentity() {
		if t == compute.F32 {
			return "values as stored (float)"
		}
		return "digital numbers (no scale known)"
	}
	dn := "DN"
	if r.Add != 0 {
		dn = fmt.Sprintf("(DN %s %g)", sign(r.Add), math.Abs(r.Add))
	}
	out := "reflectance = " + dn
	if r.Scale != 1 {
		out += fmt.Sprintf(" × %g", r.Scale)
	}
	if r.Offset != 0 {
		out += fmt.Sprintf(" %s %g", sign(r.Offset), math.Abs(r.Offset))
	}
	return out
}

func sign(v float64) string {
	if v < 0 {
		return "−"
	}
	return "+"
}

// userScale is " · value = DN × S + O (--scale)" where the user gave the
// role's radiometry, "" otherwise.
func userScale(src bandSource, role string) string {
	r, ok := src.scale[role]
	if !ok {
		return ""
	}
	out := fmt.Sprintf(" · value = DN × %g", r.Scale)
	if r.Offset != 0 {
		out += fmt.Sprintf(" %s %g", sign(r.Offset), math.Abs(r.Offset))
	}
	return out + " (--scale)"
}

func bandOption(b int) string { return "Band " + strconv.Itoa(b) }

func bandOptions(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = bandOption(i + 1)
	}
	return out
}

// bandPicked handles a choice of band.
func (p *bandsPanel) bandPicked(role, s string) {
	if p.quiet || s == "" {
		return
	}
	b, err := strconv.Atoi(strings.TrimPrefix(s, "Band "))
	if err != nil {
		return
	}
	p.onSource(p.src.withBand(role, b))
}

// open shows a file dialog for a role's band.
func (p *bandsPanel) open(role string) {
	d := dialog.NewFileOpen(func(r fyne.URIReadCloser, err error) {
		if err != nil {
			dialog.ShowError(explain(fmt.Errorf("opening the %s band: %w", role, err)), p.parent)
			return
		}
		if r == nil {
			return // cancelled
		}
		path := r.URI().Path()
		r.Close()
		if err := p.SetFile(role, path); err != nil {
			dialog.ShowError(explain(err), p.parent)
		}
	}, p.parent)
	d.SetFilter(storage.NewExtensionFileFilter([]string{".tif", ".tiff", ".TIF", ".TIFF", ".png", ".PNG"}))
	d.SetTitleText("Open the " + role + " band")
	if p.src.kind == srcFiles {
		for _, f := range p.src.files {
			if l, err := storage.ListerForURI(storage.NewFileURI(filepath.Dir(f.path))); err == nil {
				d.SetLocation(l)
			}
			break
		}
	}
	d.Resize(fyne.NewSize(900, 600))
	d.Show()
}

// SetFile reads role from a file, as the file dialog does. A multi-band
// GeoTIFF whose bands are described (or RGB) is opened as an orthomosaic:
// every role it names is filled from it, with its radiometry and alpha
// mask, and role itself asked for if it is not among them. Any other file
// gives role alone (band 1, or the band the user picks), next to the
// files already chosen. A file that cannot be read is refused with the
// reason, and the previous choice stays.
func (p *bandsPanel) SetFile(role, path string) error {
	n, err := raster.Count(path)
	if err != nil {
		return fmt.Errorf("%s band: %w", role, err)
	}
	if low := strings.ToLower(path); n > 1 && (strings.HasSuffix(low, ".tif") || strings.HasSuffix(low, ".tiff")) {
		mask, buffer, err := p.mask()
		if err != nil {
			return err
		}
		if src, err := openProduct(path, mask, buffer); err == nil && len(src.info.Bands) > 0 && src.info.Kind == scene.KindOrthomosaic {
			p.onSource(src)
			return nil
		}
	}
	b := 1
	if n >= 4 {
		// A 4-band file is usually B, G, R, NIR: preselect what the user
		// most likely wants; the user can change it.
		b = map[string]int{"blue": 1, "green": 2, "red": 3, "nir": 4}[role]
		b = max(b, 1)
	}
	p.onSource(p.src.withFile(role, fileBand{path: path, band: b, count: n}))
	return nil
}
