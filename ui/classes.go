package ui

import (
	"context"
	"fmt"
	"image/color"
	"math"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"canopy/ui/render/colormap"
	"canopy/ui/render/numfmt"
)

// classEditor edits a class table: each class's name, colour ("#rrggbb")
// and lower bound (the lowest class has none: it takes everything below
// the next one), listed as the legend lists them, the highest class
// first. Apply checks the table (colormap.NewClassTable) and hands it to
// the window; what is wrong is said under the rows.
type classEditor struct {
	box  *fyne.Container
	rows *fyne.Container
	// Names, From and Colours are the entries of the classes, lowest
	// class first (From[0] is nil: the lowest class is open below).
	Names, From, Colours []*widget.Entry
	Apply, Reset         *widget.Button
	Error                *widget.Label
	onApply              func(colormap.ClassTable)
	onReset              func()
}

func newClassEditor(onApply func(colormap.ClassTable), onReset func()) *classEditor {
	e := &classEditor{rows: container.NewVBox(), onApply: onApply, onReset: onReset}
	e.Error = widget.NewLabel("")
	e.Error.Importance = widget.DangerImportance
	e.Error.Wrapping = fyne.TextWrapWord
	e.Error.Hide()
	e.Apply = widget.NewButton("Apply classes", e.apply)
	e.Apply.Importance = widget.HighImportance
	e.Reset = widget.NewButton("Preset", func() { e.onReset() })
	e.box = container.NewVBox(e.rows, e.Error, container.NewGridWithColumns(2, e.Apply, e.Reset))
	return e
}

// load shows t in the entries.
func (e *classEditor) load(t colormap.ClassTable) {
	e.rows.RemoveAll()
	e.Names, e.From, e.Colours = make([]*widget.Entry, len(t)), make([]*widget.Entry, len(t)), make([]*widget.Entry, len(t))
	e.Error.Hide()
	for i, c := range t {
		n := widget.NewEntry()
		n.SetText(c.Name)
		col := widget.NewEntry()
		col.SetText(fmt.Sprintf("#%02x%02x%02x", c.Color.R, c.Color.G, c.Color.B))
		e.Names[i], e.Colours[i] = n, col
		var from fyne.CanvasObject = widget.NewLabel("below")
		if i > 0 {
			f := widget.NewEntry()
			f.SetText(numfmt.Value(c.Lo))
			e.From[i] = f
			from = container.NewBorder(nil, nil, widget.NewLabel("≥"), nil, f)
		}
		sw := swatch(c.Color, 14)
		e.rows.Objects = append([]fyne.CanvasObject{container.NewBorder(nil, nil, sw, nil,
			container.NewGridWithColumns(1, n, container.NewGridWithColumns(2, from, col)))}, e.rows.Objects...)
	}
	e.rows.Refresh()
}

// table reads the entries.
func (e *classEditor) table() (colormap.ClassTable, error) {
	n := len(e.Names)
	names := make([]string, n)
	colors := make([]color.NRGBA, n)
	var th []float64
	for i := range n {
		names[i] = strings.TrimSpace(e.Names[i].Text)
		c, err := colormap.ParseColor(strings.TrimSpace(e.Colours[i].Text))
		if err != nil {
			return nil, fmt.Errorf("the colour of %q: write it #rrggbb, like #1a9850", names[i])
		}
		colors[i] = c
		if i > 0 {
			txt := strings.NewReplacer(" ", "", "\u202f", "", "−", "-", ",", ".").Replace(e.From[i].Text)
			v, err := strconv.ParseFloat(txt, 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("the lower bound of %q is not a number: %q", names[i], e.From[i].Text)
			}
			th = append(th, v)
		}
	}
	for i := 1; i < len(th); i++ {
		if !(th[i] > th[i-1]) {
			return nil, fmt.Errorf("%q must start above %q (%s ≤ %s)", names[i+1], names[i], numfmt.Value(th[i]), numfmt.Value(th[i-1]))
		}
	}
	t, err := colormap.NewClassTable(th, names, colors)
	if err != nil {
		return nil, fmt.Errorf("%s", strings.TrimPrefix(err.Error(), "class table: "))
	}
	return t, nil
}

func (e *classEditor) apply() {
	t, err := e.table()
	if err != nil {
		e.Error.SetText(err.Error())
		e.Error.Show()
		return
	}
	e.Error.Hide()
	e.onApply(t)
}

// classesFor is the class table of index c: the user's, else its preset.
func (w *window) classesFor(c indexChoice) colormap.ClassTable {
	if t, ok := w.tables[c.name]; ok {
		return t
	}
	return presetClasses(c)
}

// SetClasses gives the index chosen the class table t (as Apply in the
// class editor does): the map shows the classes ramp, and the legend and
// the class statistics follow.
func (w *window) SetClasses(t colormap.ClassTable) {
	if w.tables == nil {
		w.tables = map[string]colormap.ClassTable{}
	}
	if t == nil {
		delete(w.tables, w.idx.name)
		t = presetClasses(w.idx)
	} else {
		w.tables[w.idx.name] = t
	}
	w.idx.classes = t
	w.colour.setIndex(w.idx)
	s := w.shown
	if s == nil || s.idx.name != w.idx.name || t == nil {
		w.stats.editor.load(t)
		return
	}
	w.bridge.start("Classifying", func(ctx context.Context, progress progressFunc) (func(), error) {
		progress(-1, "Counting the classes…")
		c := *s
		c.idx.classes = t
		c.summary = summarize(&c)
		return func() {
			if w.shown != s {
				return
			}
			w.show(&c)
			if w.ramp != colormap.RampClasses {
				w.colour.SetRamp(colormap.RampClasses) // recolours
			} else {
				w.recolour(w.ramp, w.stretch)
			}
		}, nil
	})
}
