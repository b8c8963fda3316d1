package ui

import (
	"canopy/compute/fake"
	"fmt"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// Size presets of generated scenes, up to a Sentinel-2 tile.
var sizePresets = []int{256, 512, 1024, 2048, 4096, 8192, 10980}

// sourcePanel opens a product (a Sentinel-2 .SAFE folder or .zip, a
// Landsat folder or .tar, a STAC item, an orthomosaic GeoTIFF) and says
// what it is, chooses its mask, or generates a fake scene. The window
// runs what it asks for: onOpen (a product's path), onMask (the mask
// choice changed), onGenerate (a fake scene).
type sourcePanel struct {
	parent  fyne.Window // for dialogs
	defSize int
	card    fyne.CanvasObject

	// OpenFolder and OpenFile pick a product; Path is a typed path that
	// OpenPath (or Enter) opens.
	OpenFolder, OpenFile, OpenPath *widget.Button
	Path                           *widget.Entry
	// SceneLine says what the product is: sensor, date, tile, cloud share.
	SceneLine *widget.Label
	// Mask applies the product's mask (auto) or not (none); Buffer grows
	// its clouds and shadows by that many pixels; MaskInfo says what it
	// masks.
	Mask     *widget.Check
	Buffer   *widget.Entry
	MaskInfo *widget.Label

	Scene    *widget.Select
	Size     *widget.Select
	Seed     *widget.Entry
	Generate *widget.Button
	shown    *widget.Label

	quiet bool

	onOpen     func(path string)
	onMask     func(mask string, buffer int)
	onGenerate func(src bandSource)
}

func newSourcePanel(parent fyne.Window, opts options) *sourcePanel {
	p := &sourcePanel{parent: parent, defSize: opts.Size,
		onOpen: func(string) {}, onMask: func(string, int) {}, onGenerate: func(bandSource) {}}
	p.OpenFolder = widget.NewButtonWithIcon("Folder…", theme.FolderOpenIcon(), p.pickFolder)
	p.OpenFile = widget.NewButtonWithIcon("File…", theme.FileIcon(), p.pickFile)
	p.Path = widget.NewEntry()
	p.Path.SetPlaceHolder(".SAFE, .zip, .tar, item .json or .tif")
	p.Path.OnSubmitted = func(string) { p.openTyped() }
	p.OpenPath = widget.NewButtonWithIcon("", theme.NavigateNextIcon(), p.openTyped)
	p.SceneLine = widget.NewLabel("No product open")
	p.SceneLine.Wrapping = fyne.TextWrapWord
	p.Mask = widget.NewCheck("Mask clouds and bad pixels", nil)
	p.Mask.SetChecked(opts.Mask != "none")
	p.Mask.OnChanged = func(bool) { p.maskChanged() }
	p.Buffer = widget.NewEntry()
	p.Buffer.SetText(strconv.Itoa(opts.MaskBuffer))
	p.Buffer.Validator = func(s string) error { _, err := parseBuffer(s); return err }
	p.Buffer.OnSubmitted = func(string) { p.maskChanged() }
	p.MaskInfo = widget.NewLabel("")
	p.MaskInfo.Wrapping = fyne.TextWrapWord
	p.MaskInfo.SizeName = theme.SizeNameCaptionText
	p.setProduct(nil)

	p.Scene = widget.NewSelect(fake.Kinds(), nil)
	p.Scene.SetSelected(opts.Fake)
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

	gen := widget.NewForm(
		widget.NewFormItem("Scene", p.Scene),
		widget.NewFormItem("Size", p.Size),
		widget.NewFormItem("Seed", p.Seed),
	)
	open := container.NewVBox(
		widget.NewLabelWithStyle("Open a product", fyne.TextAlignLeading, fyne.TextStyle{Italic: true}),
		container.NewGridWithColumns(2, p.OpenFolder, p.OpenFile),
		container.NewBorder(nil, nil, nil, p.OpenPath, p.Path),
		p.SceneLine,
		p.Mask,
		widget.NewForm(widget.NewFormItem("Buffer (px)", p.Buffer)),
		p.MaskInfo,
	)
	p.card = section("Source", container.NewVBox(
		open,
		widget.NewSeparator(),
		widget.NewLabelWithStyle("Or generate a fake scene", fyne.TextAlignLeading, fyne.TextStyle{Italic: true}),
		gen, p.Generate,
		p.shown,
	))
	return p
}

func sizeLabel(n int) string { return fmt.Sprintf("%d × %d", n, n) }

// parseBuffer reads the mask buffer: 0 to 1000 pixels.
func parseBuffer(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 0 || n > 1000 {
		return 0, fmt.Errorf("the mask buffer is 0 to 1000 pixels")
	}
	return n, nil
}

// maskChoice is the mask asked for: "auto" or "none", and the buffer.
func (p *sourcePanel) maskChoice() (string, int, error) {
	n, err := parseBuffer(p.Buffer.Text)
	if err != nil {
		return "", 0, err
	}
	if p.Mask.Checked {
		return "auto", n, nil
	}
	return "none", n, nil
}

func (p *sourcePanel) maskChanged() {
	if p.quiet {
		return
	}
	mask, n, err := p.maskChoice()
	if err != nil {
		dialog.ShowError(err, p.parent)
		return
	}
	p.onMask(mask, n)
}

// setProduct shows the product src opens (nil: none open).
func (p *sourcePanel) setProduct(src *bandSource) {
	if src == nil || src.kind != srcProduct {
		p.SceneLine.SetText("No product open")
		p.Mask.Disable()
		p.Buffer.Disable()
		p.MaskInfo.SetText("")
		return
	}
	p.SceneLine.SetText(sceneLine(src.info))
	p.quiet = true
	p.Mask.SetChecked(src.mask != "none") // the mask of the scene shown
	p.quiet = false
	p.Mask.Enable()
	p.Buffer.Enable()
	p.MaskInfo.SetText(src.info.Mask.Description)
}

// pickFolder opens a product folder (.SAFE, a Landsat folder).
func (p *sourcePanel) pickFolder() {
	d := dialog.NewFolderOpen(func(u fyne.ListableURI, err error) {
		if err != nil {
			dialog.ShowError(explain(err), p.parent)
			return
		}
		if u != nil {
			p.onOpen(u.Path())
		}
	}, p.parent)
	d.SetTitleText("Open a product folder (.SAFE, Landsat)")
	d.Resize(fileDialogSize(p.parent))
	d.Show()
}

// pickFile opens a product file (.zip, .tar, a STAC item, a GeoTIFF).
func (p *sourcePanel) pickFile() {
	d := dialog.NewFileOpen(func(r fyne.URIReadCloser, err error) {
		if err != nil {
			dialog.ShowError(explain(err), p.parent)
			return
		}
		if r == nil {
			return
		}
		path := r.URI().Path()
		r.Close()
		p.onOpen(path)
	}, p.parent)
	d.SetFilter(storage.NewExtensionFileFilter([]string{".zip", ".tar", ".gz", ".tgz", ".json", ".tif", ".tiff", ".xml", ".ZIP", ".TAR", ".TIF", ".TIFF"}))
	d.SetTitleText("Open a product (.zip, .tar, STAC item .json, GeoTIFF)")
	d.Resize(fileDialogSize(p.parent))
	d.Show()
}

// openTyped opens the typed path.
func (p *sourcePanel) openTyped() {
	if s := strings.TrimSpace(p.Path.Text); s != "" {
		p.onOpen(s)
	}
}

// generate makes a fake scene.
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
	p.onGenerate(fakeSource(p.Scene.Selected, n, seed))
}

// showShown describes the bands shown.
func (p *sourcePanel) showShown(s *shown) {
	if s.large != nil {
		p.shown.SetText(s.large.describe())
		return
	}
	bytes := 4 * s.w * s.h // the index plane
	for _, b := range s.set.bands {
		bytes += len(b.Plane.Data)
	}
	bytes += len(s.set.mask)
	geo := "no georeferencing"
	if s.set.geo.Valid() {
		if a, ok := s.set.geo.PixelArea(); ok {
			geo = fmt.Sprintf("georeferenced, %.4g m² per pixel", a)
		} else {
			geo = "georeferenced"
		}
	}
	p.shown.SetText(fmt.Sprintf("Shown: %d×%d, %s, %s in memory (bands as stored, and the index as float32)", s.w, s.h, geo, humanBytes(int64(bytes))))
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
