package ui

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"canopy/compute"
	"canopy/compute/index"
	"canopy/ui/render/composite"
)

// viewMode is what the map shows: the index, or a colour composite of the
// same scene for context.
type viewMode int

const (
	viewIndex viewMode = iota
	viewNatural
	viewFalse
)

// viewSpec is a view as the user reads it and the roles of its red, green
// and blue channels.
type viewSpec struct {
	label string
	roles [3]string
	file  string // the export's suggested file name
}

// jobLabel names the job that makes the view ("Making the natural colour
// view").
func (v viewSpec) jobLabel() string {
	return "Making the " + strings.ToLower(v.label[:1]) + v.label[1:] + " view"
}

var viewSpecs = [...]viewSpec{
	viewIndex:   {label: "Index"},
	viewNatural: {label: "Natural colour", roles: [3]string{"red", "green", "blue"}, file: viewNameNatural},
	viewFalse:   {label: "False colour (NIR)", roles: [3]string{"nir", "red", "green"}, file: viewNameFalse},
}

// contextView is the map's view switch (Index | Natural colour | False
// colour (NIR)) and the composites it has made of the scene shown. The
// bands a composite needs beyond the index's are read when the user first
// asks for it (never at open time), and kept, with the composites, while
// the same source is shown.
type contextView struct {
	bar fyne.CanvasObject
	// Buttons are the index, natural-colour and false-colour views; a
	// view the scene lacks a band for is disabled and Note says why.
	Buttons [3]*widget.Button
	Note    *widget.Label
	// Legend is shown beside the map instead of the ramp in a composite
	// view; LegendLines are its lines as text.
	Legend      *fyne.Container
	LegendLines []string

	mode viewMode
	// The composites of the source shown (key): the extra bands read for
	// them and each view's composite.
	key   string
	w, h  int
	bands map[string]compute.BandInput
	comps map[viewMode]*composite.Composite
	// ramp is the legend column's content in the index view; side the
	// column (legend and statistics), laid out again when the legend
	// changes size.
	ramp []fyne.CanvasObject
	side *fyne.Container
	area *fyne.Container // the map and its header, laid out again when Note wraps
	// drawn is the composite on the map now (nil: the index).
	drawn *composite.Composite
	// Unmasked shows the composites without the product's mask, so that
	// the mask can be judged against the clouds it hides (shown in a
	// composite view of a masked scene); unmasked is its state.
	Unmasked *widget.Check
	unmasked bool
	// larges are the colour views of an image read by views
	// (ui/largecolour.go), by view.
	larges map[viewMode]*largeColour
}

// newContextView builds the view switch: onView shows a view (the
// window computes what it needs); ramp is the legend column's content in
// the index view.
func newContextView(onView func(viewMode), ramp []fyne.CanvasObject) *contextView {
	v := &contextView{Note: widget.NewLabel(""), Legend: container.NewVBox()}
	for i := range v.Buttons {
		m := viewMode(i)
		v.Buttons[i] = widget.NewButton(viewSpecs[m].label, func() { onView(m) })
	}
	v.Buttons[viewIndex].Importance = widget.HighImportance
	for _, b := range v.Buttons {
		b.Disable() // until a map is shown
	}
	v.Note.SizeName = theme.SizeNameCaptionText
	v.Note.Wrapping = fyne.TextWrapWord
	v.Unmasked = widget.NewCheck("Show under the mask", func(on bool) {
		if on == v.unmasked {
			return
		}
		v.unmasked = on
		v.comps = map[viewMode]*composite.Composite{} // made again with the mask, or without
		v.dropLarge()
		if v.mode != viewIndex {
			onView(v.mode)
		}
	})
	v.Unmasked.Hide()
	v.bar = container.NewBorder(nil, nil, container.NewHBox(v.Buttons[0], v.Buttons[1], v.Buttons[2], v.Unmasked), nil, v.Note)
	v.ramp = ramp
	return v
}

// Mode is the view shown (tests read it).
func (v *contextView) Mode() viewMode { return v.mode }

// drop forgets the composites and their bands (another source is shown).
func (v *contextView) drop() {
	v.key, v.bands, v.comps = "", nil, nil
	v.dropLarge()
}

// bandRoles are the roles the bands card lists for src: the index's,
// and for an orthomosaic (whose bands the user gives roles) those of the
// colour views too, so that natural and false colour can be set up
// whatever the index reads.
func bandRoles(src bandSource, idx indexChoice) []string {
	roles := idx.roles()
	if !src.ortho() {
		return roles
	}
	for _, spec := range viewSpecs[1:] {
		for _, r := range spec.roles {
			if !slices.Contains(roles, r) {
				roles = append(roles, r)
			}
		}
	}
	slices.SortStableFunc(roles, func(a, b string) int { return index.RoleIndex(a) - index.RoleIndex(b) })
	return roles
}

// missingFor are the roles of view m that the scene shown lacks.
func (w *window) missingFor(m viewMode) []string {
	s := w.shown
	if s == nil || m == viewIndex {
		return nil
	}
	return s.src.missing(viewSpecs[m].roles[:])
}

// updateViews enables the views the scene shown can give and says why the
// others cannot.
func (w *window) updateViews() {
	v := w.view
	var why []string
	for i, b := range v.Buttons {
		m := viewMode(i)
		if i == int(v.mode) {
			b.Importance = widget.HighImportance
		} else {
			b.Importance = widget.MediumImportance
		}
		miss := w.missingFor(m)
		switch {
		case w.shown == nil:
			b.Disable()
		case len(miss) > 0:
			b.Disable()
			why = append(why, viewNeeds(m, w.shown.src, miss))
		default:
			b.Enable()
		}
		b.Refresh()
	}
	if text := strings.Join(why, " · "); text != v.Note.Text {
		v.Note.SetText(text)
		if v.area != nil {
			v.area.Refresh()
		}
	}
}

// viewNeeds says which bands a view lacks: "Natural colour needs the blue
// band, which this product does not have".
func viewNeeds(m viewMode, src bandSource, miss []string) string {
	band := "band"
	if len(miss) > 1 {
		band = "bands"
	}
	roles := strings.Join(miss, " and ")
	what := ", which these bands do not include"
	if src.kind == srcProduct {
		what = ", which this product does not have"
		if src.ortho() {
			what = ": no band of this orthomosaic is described as " + strings.Join(miss, " or ") + "; choose it under Bands"
		}
	}
	return fmt.Sprintf("%s needs the %s %s%s", viewSpecs[m].label, roles, band, what)
}

// SetView shows view m on the map: the index, or the natural- or
// false-colour composite of the scene shown, at the same zoom and pan.
// The bands a composite needs beyond those loaded are read in a job;
// a view the scene lacks a band for is refused with the reason in the
// status bar.
func (w *window) SetView(m viewMode) {
	s := w.shown
	if m == viewIndex || s == nil {
		w.view.mode = viewIndex
		w.showView()
		w.viewStatus()
		return
	}
	if miss := w.missingFor(m); len(miss) > 0 {
		w.setStatus(viewNeeds(m, s.src, miss), false)
		return
	}
	if s.large != nil {
		w.setLargeView(s, m) // ui/largecolour.go
		return
	}
	v := w.view
	if v.key == s.src.key() && v.w == s.w && v.h == s.h && v.comps[m] != nil {
		v.mode = m
		w.showView()
		w.viewStatus()
		return
	}
	if v.key != s.src.key() || v.w != s.w || v.h != s.h {
		v.drop()
	}
	have := map[string]compute.BandInput{}
	for r, b := range v.bands {
		have[r] = b
	}
	w.bridge.start(viewSpecs[m].jobLabel(), w.compositeJob(s, m, have))
}

// compositeJob reads the bands of view m that neither have nor the bands
// shown hold (with the source's radiometry and mask), and stretches the
// composite. The composite hides the pixels the index map hides (the
// product's mask) and those the extra bands mark (nodata, saturation).
func (w *window) compositeJob(s *shown, m viewMode, have map[string]compute.BandInput) job {
	spec := viewSpecs[m]
	unmasked := w.view.unmasked
	return func(ctx context.Context, progress progressFunc) (func(), error) {
		var missing []string
		for _, r := range spec.roles {
			if _, ok := have[r]; ok {
				continue
			}
			if b, ok := s.set.band(r); ok {
				have[r] = b
				continue
			}
			missing = append(missing, r)
		}
		mask := s.set.mask
		if unmasked {
			mask = nil // the picture under the mask, to judge it by
		}
		if len(missing) > 0 {
			progress(-1, fmt.Sprintf("%s: reading the %s %s…", spec.label, strings.Join(missing, " and "), bandWord(len(missing))))
			more, err := s.src.read(ctx, progress, missing)
			if err != nil {
				return nil, err
			}
			if more.w != s.w || more.h != s.h {
				return nil, fmt.Errorf("%s: the %s bands are %d×%d, the map %d×%d", spec.label, strings.Join(missing, " and "), more.w, more.h, s.w, s.h)
			}
			for _, b := range more.bands {
				have[b.Role] = b
			}
			if !unmasked {
				mask = orMasks(mask, more.mask)
			}
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		progress(-1, fmt.Sprintf("%s: stretching each band between its 2nd and 98th percentiles…", spec.label))
		var bands [3]compute.BandInput
		var names [3]string
		for i, r := range spec.roles {
			bands[i], names[i] = have[r], s.src.bandName(r)
		}
		comp, err := composite.New(bands, mask, composite.Options{Title: spec.label, Names: names})
		if err != nil {
			return nil, err
		}
		return func() {
			if w.shown == nil || w.shown.src.key() != s.src.key() || w.shown.w != s.w || w.shown.h != s.h {
				return // another scene is shown now
			}
			v := w.view
			if v.key != s.src.key() {
				v.drop()
				v.key, v.w, v.h = s.src.key(), s.w, s.h
			}
			if v.bands == nil {
				v.bands = map[string]compute.BandInput{}
				v.comps = map[viewMode]*composite.Composite{}
			}
			for r, b := range have {
				v.bands[r] = b
			}
			v.comps[m] = comp
			v.mode = m
			w.showView()
			line := w.compositeLine(comp)
			if len(missing) > 0 {
				line += fmt.Sprintf(" · read the %s %s", strings.Join(missing, " and "), bandWord(len(missing)))
			}
			w.setStatus(line, true)
		}, nil
	}
}

// compositeLine is the status line of composite c shown.
func (w *window) compositeLine(c *composite.Composite) string {
	line := c.Title() + ": " + c.Describe()
	if w.view.unmasked {
		line += " · shown under the mask (the clouds and shadows it removes are drawn)"
	}
	return line
}

func bandWord(n int) string {
	if n == 1 {
		return "band"
	}
	return "bands"
}

// orMasks is the union of two masks (either may be nil).
func orMasks(a, b []uint8) []uint8 {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	out := make([]uint8, len(a))
	for i := range out {
		if a[i] != 0 || b[i] != 0 {
			out[i] = 1
		}
	}
	return out
}

// bandName is the product's name for the band of role ("B04", "SR_B4",
// "band 3"), the file of a files source, or the role itself.
func (s bandSource) bandName(role string) string {
	switch s.kind {
	case srcProduct:
		if s.ortho() {
			if b := s.band(role); b > 0 {
				return fmt.Sprintf("band %d", b)
			}
		} else if b := s.info.Bands[role]; b != nil {
			return b.Name
		}
	case srcFiles:
		if f, ok := s.files[role]; ok {
			return filepath.Base(f.spec())
		}
	}
	return role
}

// shownComposite is the composite on the map (nil in the index view).
func (w *window) shownComposite() *composite.Composite {
	v, s := w.view, w.shown
	if v.mode == viewIndex || s == nil || v.key != s.src.key() || v.w != s.w || v.h != s.h {
		return nil
	}
	if lc := v.larges[v.mode]; lc != nil && s.large != nil {
		return lc.composite() // the view on screen's
	}
	return v.comps[v.mode]
}

// showView draws the view chosen: the composite and its legend, or the
// index and its ramp; the header names it.
func (w *window) showView() {
	c := w.shownComposite()
	if c == nil {
		w.view.mode = viewIndex
	}
	back := c == nil && w.view.drawn != nil
	w.view.drawn = c
	w.setMapComposite(c)
	if c != nil {
		w.two.swipe.Show(false) // the swipe is between the dates' indices
	} else if back {
		w.applyColour(false) // the index, or the two-date view chosen
	}
	legend := w.colour.legend
	if c == nil {
		legend.Objects = w.view.ramp
		w.view.LegendLines = nil
	} else {
		w.view.fillLegend(c, w.compositeMasked())
		legend.Objects = []fyne.CanvasObject{w.view.Legend}
	}
	w.showMask()
	legend.Refresh()
	for _, c := range []*fyne.Container{w.view.side, w.view.area} {
		if c != nil {
			c.Refresh()
		}
	}
	w.showHeader()
	w.updateViews()
}

// fillLegend shows c's band combination: its title, "R=B04 G=B03 B=B02,
// 2–98 % stretch", and each channel's band and reflectance range beside a
// swatch of its colour.
func (v *contextView) fillLegend(c *composite.Composite, masked bool) {
	head := widget.NewLabelWithStyle(c.Title(), fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	combo := widget.NewLabel(c.Describe())
	combo.Wrapping = fyne.TextWrapWord
	v.LegendLines = []string{c.Title(), c.Describe()}
	objs := []fyne.CanvasObject{head, combo}
	lines := c.Legend()
	if c.Title() != "" {
		lines = lines[1:]
	}
	for i, l := range lines[:3] {
		lab := widget.NewLabel(l)
		lab.SizeName = theme.SizeNameCaptionText
		objs = append(objs, container.NewHBox(swatch(composite.ChannelColors[i], 12), lab))
		v.LegendLines = append(v.LegendLines, l)
	}
	objs = append(objs, patternRow(noDataSwatch(), noDataText))
	v.LegendLines = append(v.LegendLines, noDataText)
	if masked {
		objs = append(objs, patternRow(maskedSwatch(), maskedText))
		v.LegendLines = append(v.LegendLines, maskedText)
	}
	v.Legend.Objects = objs
	v.Legend.Refresh()
}

// View names, as session files and ShowView spell them.
const (
	viewNameIndex   = "index"
	viewNameNatural = "natural-colour"
	viewNameFalse   = "false-colour"
)

// ShowView shows the map's view by name: viewNameIndex, viewNameNatural or
// viewNameFalse ("" is the index). A composite whose bands are not loaded yet
// is read in a job (Wait, in tests, waits for it); a name that is none of
// these is an error.
func (w *window) ShowView(name string) error {
	if name == "" || name == viewNameIndex {
		w.SetView(viewIndex)
		return nil
	}
	for m, spec := range viewSpecs {
		if m != int(viewIndex) && spec.file == name {
			w.SetView(viewMode(m))
			return nil
		}
	}
	return fmt.Errorf("no map view %q (views: %s, %s, %s)", name, viewNameIndex, viewNameNatural, viewNameFalse)
}

// ViewName is the name of the view on the map (viewNameIndex while a
// composite is still being read).
func (w *window) ViewName() string {
	if w.view.mode == viewIndex {
		return viewNameIndex
	}
	return viewSpecs[w.view.mode].file
}

// viewShown follows a new map (another index, backend, mask or scene): a
// composite of the same source stays; one of another source is made again
// for the new scene when it has the bands, else the index is shown.
func (w *window) viewShown() {
	v, s := w.view, w.shown
	if v.key != s.src.key() || v.w != s.w || v.h != s.h {
		v.drop()
		if m := v.mode; m != viewIndex {
			if len(w.missingFor(m)) == 0 && s.large == nil {
				w.bridge.start(viewSpecs[m].jobLabel(), w.compositeJob(s, m, map[string]compute.BandInput{}))
			}
			v.mode = viewIndex
		}
	}
	w.showView()
}
