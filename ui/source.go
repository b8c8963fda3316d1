package ui

import (
	"fmt"
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
	"canopy/compute/raster"
)

type bandKind int

const (
	bandRed bandKind = iota
	bandNIR
)

func (k bandKind) String() string {
	if k == bandRed {
		return "red"
	}
	return "NIR"
}

// bandPicker is one band of the source panel: the file, its size, and the
// band of a multi-band file.
type bandPicker struct {
	kind  bandKind
	path  string
	count int
	Open  *widget.Button
	File  *widget.Label
	Band  *widget.Select
}

// spec returns the band spec FILE or FILE:B.
func (b *bandPicker) spec() string {
	if b.path == "" {
		return ""
	}
	if b.count > 1 {
		n := strings.TrimPrefix(b.Band.Selected, "Band ")
		if _, err := strconv.Atoi(n); err == nil {
			return b.path + ":" + n
		}
	}
	return b.path
}

// Size presets of generated scenes, up to a Sentinel-2 tile.
var sizePresets = []int{256, 512, 1024, 2048, 4096, 8192, 10980}

// sourcePanel opens the red and NIR bands or generates a fake scene; the
// window runs what it asks for (load).
type sourcePanel struct {
	parent   fyne.Window // for dialogs
	defSize  int
	load     func(what string, mk bandsFunc)
	card     fyne.CanvasObject
	Red, NIR *bandPicker
	Load     *widget.Button
	Scene    *widget.Select
	Size     *widget.Select
	Seed     *widget.Entry
	Generate *widget.Button
	shown    *widget.Label
}

func newSourcePanel(parent fyne.Window, opts Options, load func(what string, mk bandsFunc)) *sourcePanel {
	p := &sourcePanel{parent: parent, defSize: opts.Size, load: load}
	p.Red = p.newBandPicker(bandRed)
	p.NIR = p.newBandPicker(bandNIR)
	p.Load = widget.NewButtonWithIcon("Load bands", theme.DownloadIcon(), p.loadBands)
	p.Load.Disable()

	p.Scene = widget.NewSelect(compute.Scenes(), nil)
	p.Scene.SetSelected(opts.Scene)
	var sizes []string
	for _, n := range sizePresets {
		sizes = append(sizes, sizeLabel(n))
	}
	p.Size = widget.NewSelect(sizes, nil)
	p.Size.SetSelected(sizeLabel(opts.Size))
	p.Seed = widget.NewEntry()
	p.Seed.SetText(strconv.Itoa(opts.Seed))
	p.Seed.Validator = func(s string) error {
		if _, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64); err != nil {
			return fmt.Errorf("the seed is a whole number ≥ 0")
		}
		return nil
	}
	p.Generate = widget.NewButtonWithIcon("Generate", theme.MediaReplayIcon(), p.generate)
	p.shown = widget.NewLabel("")
	p.shown.Wrapping = fyne.TextWrapWord
	p.shown.SizeName = theme.SizeNameCaptionText

	files := widget.NewForm(
		widget.NewFormItem("Red", p.Red.row()),
		widget.NewFormItem("NIR", p.NIR.row()),
	)
	gen := widget.NewForm(
		widget.NewFormItem("Scene", p.Scene),
		widget.NewFormItem("Size", p.Size),
		widget.NewFormItem("Seed", p.Seed),
	)
	p.card = section("Source", container.NewVBox(
		files, p.Load,
		widget.NewSeparator(),
		widget.NewLabelWithStyle("Or generate a fake scene", fyne.TextAlignLeading, fyne.TextStyle{Italic: true}),
		gen, p.Generate,
		p.shown,
	))
	return p
}

func sizeLabel(n int) string { return fmt.Sprintf("%d × %d", n, n) }

func (p *sourcePanel) newBandPicker(k bandKind) *bandPicker {
	b := &bandPicker{kind: k}
	b.Open = widget.NewButtonWithIcon("Open…", theme.FolderOpenIcon(), func() { p.open(k) })
	b.File = widget.NewLabel("no file")
	b.File.Truncation = fyne.TextTruncateEllipsis
	b.File.SizeName = theme.SizeNameCaptionText
	b.Band = widget.NewSelect([]string{"Band 1"}, nil)
	b.Band.SetSelected("Band 1")
	b.Band.Disable()
	return b
}

func (b *bandPicker) row() fyne.CanvasObject {
	return container.NewVBox(container.NewBorder(nil, nil, b.Open, b.Band), b.File)
}

func (p *sourcePanel) picker(k bandKind) *bandPicker {
	if k == bandRed {
		return p.Red
	}
	return p.NIR
}

// open shows a file dialog for a band, filtered to the formats Canopy reads.
func (p *sourcePanel) open(k bandKind) {
	d := dialog.NewFileOpen(func(r fyne.URIReadCloser, err error) {
		if err != nil {
			dialog.ShowError(fmt.Errorf("opening the %s band: %w", k, err), p.parent)
			return
		}
		if r == nil {
			return // cancelled
		}
		path := r.URI().Path()
		r.Close()
		if err := p.SetFile(k, path); err != nil {
			dialog.ShowError(err, p.parent)
		}
	}, p.parent)
	d.SetFilter(storage.NewExtensionFileFilter([]string{".tif", ".tiff", ".TIF", ".TIFF", ".png", ".PNG"}))
	d.SetTitleText("Open the " + k.String() + " band")
	if other := p.picker(1 - k).path; other != "" {
		if l, err := storage.ListerForURI(storage.NewFileURI(filepath.Dir(other))); err == nil {
			d.SetLocation(l)
		}
	}
	d.Resize(fyne.NewSize(900, 600))
	d.Show()
}

// SetFile chooses the file of a band, as the file dialog does: it reads
// how many bands the file has (for the band picker) and shows its name
// and size. A file that cannot be read is refused with the reason and the
// previous choice stays.
func (p *sourcePanel) SetFile(k bandKind, path string) error {
	n, err := raster.Count(path)
	if err != nil {
		return fmt.Errorf("%s band: %w", k, err)
	}
	b := p.picker(k)
	b.path, b.count = path, n
	var bands []string
	for i := 1; i <= n; i++ {
		bands = append(bands, "Band "+strconv.Itoa(i))
	}
	b.Band.SetOptions(bands)
	// A 4-band file is usually B, G, R, NIR: preselect what a user most
	// likely wants, the user can change it.
	sel := 1
	if n >= 4 {
		sel = map[bandKind]int{bandRed: 3, bandNIR: 4}[k]
	}
	b.Band.SetSelected("Band " + strconv.Itoa(sel))
	if n > 1 {
		b.Band.Enable()
	} else {
		b.Band.Disable()
	}
	size := ""
	if fi, err := os.Stat(path); err == nil {
		size = " · " + humanBytes(fi.Size())
	}
	b.File.SetText(fmt.Sprintf("%s%s · %d band%s", filepath.Base(path), size, n, plural(n)))
	if p.Red.path != "" && p.NIR.path != "" {
		p.Load.Enable()
	}
	return nil
}

// SetSpecs fills both band pickers from specs (FILE or FILE:B), as given
// on the command line, without checking the files (loading does).
func (p *sourcePanel) SetSpecs(red, nir string) {
	for k, spec := range map[bandKind]string{bandRed: red, bandNIR: nir} {
		if spec == "" {
			continue
		}
		path, band, err := raster.ParseSpec(spec)
		if err != nil {
			path, band = spec, 0
		}
		if err := p.SetFile(k, path); err != nil {
			b := p.picker(k)
			b.path, b.count = path, max(band, 1)
			b.File.SetText(filepath.Base(path))
			continue
		}
		if band > 0 {
			p.picker(k).Band.SetSelected("Band " + strconv.Itoa(band))
		}
	}
	if p.Red.path != "" && p.NIR.path != "" {
		p.Load.Enable()
	}
}

// loadBands loads the chosen bands and computes them on the selected
// backend.
func (p *sourcePanel) loadBands() {
	p.load("Loading bands", loadBands(p.Red.spec(), p.NIR.spec()))
}

// generate makes a fake scene and computes it on the selected backend.
func (p *sourcePanel) generate() {
	seed, err := strconv.ParseUint(strings.TrimSpace(p.Seed.Text), 10, 64)
	if err != nil {
		dialog.ShowError(fmt.Errorf("seed %q: a whole number ≥ 0, please", p.Seed.Text), p.parent)
		return
	}
	n := p.defSize
	for _, s := range sizePresets {
		if sizeLabel(s) == p.Size.Selected {
			n = s
		}
	}
	p.load("Generating a scene", fakeBands(p.Scene.Selected, n, n, seed))
}

// showScene describes the bands of the scene shown.
func (p *sourcePanel) showScene(s *scene) {
	mb := float64(3*4*s.in.Pixels()) / (1 << 20)
	geo := "no georeferencing"
	if s.red.Geo.Valid() {
		if a, ok := s.red.Geo.PixelArea(); ok {
			geo = fmt.Sprintf("georeferenced, %.4g m² per pixel", a)
		} else {
			geo = "georeferenced"
		}
	}
	p.shown.SetText(fmt.Sprintf("Shown: %d×%d, %s, %.0f MiB in memory (red, NIR, NDVI as float32)", s.in.Width, s.in.Height, geo, mb))
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.0f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
