package ui

import (
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"canopy/compute/index"
	"canopy/ui/render/colormap"
)

// indexChoice is the index the window computes: one of the catalogue, or
// a formula of the user's.
type indexChoice struct {
	// name is the catalogue name ("ndvi") or the formula's canonical text.
	name string
	expr *index.Expr
	// cat is the catalogue entry, nil for a custom formula.
	cat *index.Index
	// classes is the index's class table (its preset, or the user's
	// edit of it), nil when it has none: the classes ramp, the legend and
	// the class statistics all draw it.
	classes colormap.ClassTable
}

// presetClasses is the class table an index starts with: its preset
// (colormap.PresetFor) where one classifies the index itself (the dNBR
// classes classify a difference of NBR, not one date).
func presetClasses(c indexChoice) colormap.ClassTable {
	if c.cat == nil || c.cat.Name == "nbr" || c.cat.Name == "nbr2" {
		return nil
	}
	t, _ := colormap.PresetFor(c.cat.Name)
	return t
}

// catalogueChoice is the catalogue index called name.
func catalogueChoice(name string) (indexChoice, bool) {
	c, ok := index.Lookup(name)
	if !ok {
		return indexChoice{}, false
	}
	return indexChoice{name: c.Name, expr: c.Expr, cat: &c}, true
}

// customChoice parses a formula; the error is an *index.SyntaxError
// naming the column.
func customChoice(formula string) (indexChoice, error) {
	e, err := index.Parse(formula)
	if err != nil {
		return indexChoice{}, err
	}
	return indexChoice{name: e.String(), expr: e}, nil
}

// title is how the map, the legend and the statistics name the index:
// "NDVI", or "custom formula".
func (c indexChoice) title() string {
	if c.cat == nil {
		return "custom formula"
	}
	return strings.ToUpper(c.cat.Name)
}

// heading heads the legend: the index's name, or "Index" for a formula.
func (c indexChoice) heading() string {
	if c.cat == nil {
		return "Index"
	}
	return strings.ToUpper(c.cat.Name)
}

// roles are the bands the index reads, in canonical order.
func (c indexChoice) roles() []string {
	if c.expr == nil {
		return nil
	}
	return c.expr.Roles()
}

// fullRange is the stretch of the full ramp: the catalogue's expected
// range of the index; a custom formula has none (its full stretch is the
// data's min–max).
func (c indexChoice) fullRange() (colormap.Stretch, bool) {
	if c.cat == nil {
		return colormap.Stretch{}, false
	}
	return colormap.Stretch{Lo: c.cat.Range[0], Hi: c.cat.Range[1]}, true
}

// customLabel is the picker's entry for a formula of the user's.
const customLabel = "Custom formula"

// indexPanel picks the index: the catalogue, or a custom formula whose
// parse error (with its column) shows as the user types. It tells the
// window through onChange (commit: the user picked an index, compute it
// now; otherwise a formula is being typed) and onSubmit (Enter in the
// formula).
type indexPanel struct {
	card fyne.CanvasObject
	// Index is the catalogue's names and customLabel; Formula the formula
	// (the catalogue's, read-only in effect: editing it makes it custom);
	// Error the formula's parse error; About describes the index.
	Index   *widget.Select
	Formula *widget.Entry
	Error   *widget.Label
	About   *widget.Label

	choice indexChoice
	valid  bool
	// quiet is set while the panel changes its own widgets.
	quiet bool

	onChange func(c indexChoice, valid, commit bool)
	onSubmit func()
}

func newIndexPanel() *indexPanel {
	p := &indexPanel{onChange: func(indexChoice, bool, bool) {}, onSubmit: func() {}}
	opts := append(index.Names(), customLabel)
	for i := range opts[:len(opts)-1] {
		opts[i] = strings.ToUpper(opts[i])
	}
	p.Index = widget.NewSelect(opts, p.picked)
	p.Formula = widget.NewEntry()
	p.Formula.SetPlaceHolder("e.g. (nir - swir1) / (nir + swir1)")
	p.Formula.OnChanged = p.typed
	p.Formula.OnSubmitted = func(string) {
		if p.valid {
			p.onSubmit()
		}
	}
	p.Error = widget.NewLabel("")
	p.Error.Importance = widget.DangerImportance
	p.Error.Wrapping = fyne.TextWrapWord
	p.Error.Hide()
	p.About = widget.NewLabel("")
	p.About.Wrapping = fyne.TextWrapWord
	p.About.SizeName = theme.SizeNameCaptionText
	p.card = section("Index", container.NewVBox(p.Index, p.Formula, p.Error, p.About))
	return p
}

// set chooses an index as the picker does (a catalogue name), or a
// formula, without telling the window.
func (p *indexPanel) set(name, formula string) error {
	p.quiet = true
	defer func() { p.quiet = false }()
	if formula != "" {
		c, err := customChoice(formula)
		p.Index.SetSelected(customLabel)
		p.Formula.SetText(formula)
		p.showParse(c, err)
		return err
	}
	c, ok := catalogueChoice(name)
	if !ok {
		return fmt.Errorf("unknown index %q (indices: %s)", name, strings.Join(index.Names(), ", "))
	}
	p.Index.SetSelected(strings.ToUpper(c.name))
	p.Formula.SetText(c.cat.Formula)
	p.showParse(c, nil)
	return nil
}

// picked handles a choice in the picker.
func (p *indexPanel) picked(s string) {
	if p.quiet {
		return
	}
	if s == customLabel {
		c, err := customChoice(p.Formula.Text)
		p.showParse(c, err)
		p.onChange(p.choice, p.valid, false)
		return
	}
	c, ok := catalogueChoice(s)
	if !ok {
		return
	}
	p.quiet = true
	p.Formula.SetText(c.cat.Formula)
	p.quiet = false
	p.showParse(c, nil)
	p.onChange(c, true, true)
}

// typed handles an edit of the formula: it becomes a custom formula,
// parsed as the user types.
func (p *indexPanel) typed(text string) {
	if p.quiet {
		return
	}
	if p.choice.cat != nil && text == p.choice.cat.Formula {
		return
	}
	p.quiet = true
	p.Index.SetSelected(customLabel)
	p.quiet = false
	c, err := customChoice(text)
	p.showParse(c, err)
	p.onChange(p.choice, p.valid, false)
}

// showParse shows the choice, or the formula's error.
func (p *indexPanel) showParse(c indexChoice, err error) {
	if err != nil {
		p.valid = false
		p.Error.SetText(err.Error())
		p.Error.Show()
		p.About.SetText("")
		return
	}
	p.choice, p.valid = c, true
	p.Error.SetText("")
	p.Error.Hide()
	if c.cat != nil {
		p.About.SetText(fmt.Sprintf("%s: %s. Bands: %s. Range %g … %g.", c.cat.Reference, c.cat.Description,
			strings.Join(c.roles(), ", "), c.cat.Range[0], c.cat.Range[1]))
	} else if rs := c.roles(); len(rs) > 0 {
		p.About.SetText("A formula of your own over " + strings.Join(rs, ", ") + "; coloured over its min–max. Enter computes it.")
	} else {
		p.About.SetText("A formula of constants only. Enter computes it.")
	}
}
