package ui

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/storage"

	"canopy/compute/fake"
	"canopy/compute/index"
	"canopy/ui/render/colormap"
)

// OpenSession loads the session file at path into the running window:
// the file is read, its inputs opened and its index computed off the
// event goroutine (a job of the bridge); once all of that has worked the
// window shows the session's inputs, index, classes, ramp, stretch and
// view. A missing or bad session file, or inputs that cannot be opened,
// give one line in the status bar naming the file and the problem, and
// leave the window as it was.
func (w *window) OpenSession(path string) {
	run := w.runOrAuto()
	w.bridge.start("Opening session "+filepath.Base(path), func(ctx context.Context, progress progressFunc) (func(), error) {
		progress(-1, "Reading the session "+filepath.Base(path)+"…")
		fail := func(err error) (func(), error) {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			msg := sessionErrorLine(path, err)
			return func() { w.setStatus(msg, false) }, nil
		}
		s, err := readSession(path)
		if err != nil {
			return fail(err)
		}
		idx, err := s.choice()
		if err != nil {
			return fail(err)
		}
		ramp, stretch, err := s.colours(idx)
		if err != nil {
			return fail(err)
		}
		src, err := s.source(progress)
		if err != nil {
			return fail(err)
		}
		if miss := src.missing(idx.roles()); len(miss) > 0 {
			return fail(fmt.Errorf("%s needs the %s band, which the session's inputs do not give", idx.title(), strings.Join(miss, ", ")))
		}
		if run == nil {
			return fail(fmt.Errorf("no backend is available to compute %s", idx.title()))
		}
		// The job that computes the map reads the window's card session
		// and map size: it is made on the event goroutine.
		var inner job
		w.bridge.doAndWait(func() {
			inner = w.sourceJob(func() (bandSource, error) { return src, nil }, nil, idx, run, ramp, stretch)
		})
		apply, err := inner(ctx, progress)
		if err != nil {
			return fail(err)
		}
		return func() { w.applyOpenedSession(path, s, idx, ramp, stretch, apply) }, nil
	})
}

// sessionErrorLine is the one line a failed session shows: the session
// file and what went wrong, in the user's words.
func sessionErrorLine(path string, err error) string {
	msg := firstLine(explain(err).Error())
	msg = strings.TrimPrefix(msg, path+": ")
	return "Could not open the session " + filepath.Base(path) + ": " + msg
}

// applyOpenedSession shows an opened session (on the event goroutine):
// the index and its classes, the colour choices, the map (show, through
// the source job's apply), the saved zoom and pan and the map's view.
func (w *window) applyOpenedSession(path string, s session, idx indexChoice, ramp, stretch string, show func()) {
	if w.tables == nil {
		w.tables = map[string]colormap.ClassTable{}
	}
	if s.Classes != nil {
		w.tables[idx.name] = s.Classes.Clone()
	} else {
		delete(w.tables, idx.name)
	}
	_ = w.index.set(s.Index, s.Expr) // checked by choice
	w.idx, w.idxOK = idx, true
	w.colour.setIndex(idx)
	w.colour.showChoice(ramp, stretch)
	w.source.showSession(s)
	show()
	if s.Zoom > 0 {
		w.applySessionView(s)
	} else {
		w.Map.Fit()
		w.applySessionView(s)
	}
	_ = w.ShowView(s.View) // the index, or a natural- or false-colour composite (an unknown name: the index)
	w.setStatus("Opened the session "+filepath.Base(path)+" · "+w.Status.Text, true)
	w.applyTwoSession(s)
}

// choice is the session's index, with its class table (the session's, or
// the index's preset).
func (s session) choice() (indexChoice, error) {
	var c indexChoice
	switch {
	case s.Expr != "" && s.Index != "":
		return c, fmt.Errorf("it names both an index (%s) and a formula", s.Index)
	case s.Expr != "":
		var err error
		if c, err = customChoice(s.Expr); err != nil {
			return c, fmt.Errorf("its formula %q does not parse: %v", s.Expr, err)
		}
	default:
		name := s.Index
		if name == "" {
			name = "ndvi"
		}
		var ok bool
		if c, ok = catalogueChoice(name); !ok {
			return c, fmt.Errorf("unknown index %q (indices: %s)", name, strings.Join(index.Names(), ", "))
		}
	}
	c.classes = presetClasses(c)
	if s.Classes != nil {
		c.classes = s.Classes.Clone()
	}
	return c, nil
}

// colours are the session's ramp and stretch for idx: an unknown ramp or
// stretch is an error; the classes ramp of an index without classes is
// the default ramp.
func (s session) colours(idx indexChoice) (ramp, stretch string, err error) {
	ramp, stretch = s.Ramp, s.Stretch
	if ramp == "" {
		ramp = colormap.DefaultRamp
	}
	if !contains(colormap.Ramps(), ramp) {
		return "", "", fmt.Errorf("unknown colour ramp %q (ramps: %s)", ramp, strings.Join(colormap.Ramps(), ", "))
	}
	if ramp == colormap.RampClasses && idx.classes == nil {
		ramp = colormap.DefaultRamp
	}
	var modes []string
	for _, it := range stretchItems(idx) {
		modes = append(modes, it.mode)
	}
	if stretch == "" {
		stretch = modes[0]
	}
	if !contains(modes, stretch) {
		return "", "", fmt.Errorf("unknown stretch %q for %s (stretches: %s)", stretch, idx.title(), strings.Join(modes, ", "))
	}
	return ramp, stretch, nil
}

// source opens the session's inputs: its product, its band files or its
// generated scene.
func (s session) source(progress progressFunc) (bandSource, error) {
	switch {
	case s.Product != "":
		mask := s.Mask
		if mask == "" {
			mask = "auto"
		}
		if mask != "auto" && mask != "none" {
			return bandSource{}, fmt.Errorf("unknown mask %q (auto or none)", s.Mask)
		}
		if _, err := parseBuffer(strconv.Itoa(s.MaskBuffer)); err != nil {
			return bandSource{}, err
		}
		progress(-1, "Opening "+shortSpec(s.Product)+"…")
		return openProducts(append([]string{s.Product}, s.More...), mask, s.MaskBuffer)
	case len(s.Bands) > 0:
		for role := range s.Bands {
			if index.RoleIndex(role) < 0 {
				return bandSource{}, fmt.Errorf("unknown band role %q (roles: %s)", role, strings.Join(index.Roles[:], ", "))
			}
		}
		return filesSource(s.Bands)
	case s.Fake != "":
		if !contains(fake.Kinds(), s.Fake) {
			return bandSource{}, fmt.Errorf("unknown generated scene %q (%s)", s.Fake, strings.Join(fake.Kinds(), ", "))
		}
		if s.Size <= 0 || s.Size > 1<<16 {
			return bandSource{}, fmt.Errorf("bad scene size %d", s.Size)
		}
		return fakeSource(s.Fake, s.Size, s.Seed), nil
	}
	return bandSource{}, fmt.Errorf("it names no inputs (a product, band files or a generated scene)")
}

// showChoice shows a ramp and a stretch as chosen, without recolouring
// (the map is drawn in them already).
func (p *colourPanel) showChoice(ramp, stretch string) {
	p.quiet = true
	defer func() { p.quiet = false }()
	p.SetRamp(ramp)
	for _, it := range p.stretchs {
		if it.mode == stretch {
			p.Stretch.SetSelected(it.label)
		}
	}
	p.hint.SetText(colormap.Describe(ramp))
	p.enableStretch(ramp)
}

// showSession shows a session's inputs in the panel: its product's path
// and mask, or its generated scene.
func (p *sourcePanel) showSession(s session) {
	p.quiet = true
	defer func() { p.quiet = false }()
	switch {
	case s.Product != "":
		p.Path.SetText(s.Product)
		p.Mask.SetChecked(s.Mask != "none")
		p.Buffer.SetText(strconv.Itoa(s.MaskBuffer))
	case s.Fake != "":
		p.Scene.SetSelected(s.Fake)
		p.Size.SetSelected(sizeLabel(s.Size))
		p.Seed.SetText(strconv.FormatUint(s.Seed, 10))
	}
}

// openSessionDialog asks for a session file to open.
func (w *window) openSessionDialog() {
	d := dialog.NewFileOpen(func(r fyne.URIReadCloser, err error) {
		if err != nil {
			w.setStatus(explain(err).Error(), false)
			return
		}
		if r == nil {
			return
		}
		path := r.URI().Path()
		r.Close()
		w.OpenSession(path)
	}, w.Win)
	d.SetFilter(storage.NewExtensionFileFilter([]string{".canopy", ".json", ".CANOPY", ".JSON"}))
	d.SetTitleText("Open a session (.canopy or .json saved by File › Save session)")
	d.Resize(fileDialogSize(w.Win))
	d.Show()
}
