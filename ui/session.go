package ui

import (
	"encoding/json"
	"fmt"

	"canopy/compute"
	"canopy/compute/outfile"
	"canopy/ui/render/colormap"
)

// sessionVersion is the session file's format version.
const sessionVersion = 1

// maxSession is the largest session file read: a session is a few
// kilobytes, its class table included.
const maxSession = 16 << 20

// session is the window's state as a session file saves it: where the
// bands come from, the index, its classes, the colours and the view.
type session struct {
	Version int `json:"version"`
	// Product, Bands (band specs by role) or Fake, Size and Seed: the
	// inputs, as options takes them.
	Product string `json:"product,omitempty"`
	// More are further products mosaicked with Product (mosaic.go).
	More       []string          `json:"more,omitempty"`
	Bands      map[string]string `json:"bands,omitempty"`
	Fake       string            `json:"fake,omitempty"`
	Size       int               `json:"size,omitempty"`
	Seed       uint64            `json:"seed,omitempty"`
	Mask       string            `json:"mask,omitempty"`
	MaskBuffer int               `json:"mask_buffer,omitempty"`
	// Index is a catalogue name, Expr a formula of the user's instead.
	Index string `json:"index,omitempty"`
	Expr  string `json:"expr,omitempty"`
	// Classes is the index's class table (nil: its preset).
	Classes colormap.ClassTable `json:"classes,omitempty"`
	Ramp    string              `json:"ramp"`
	Stretch string              `json:"stretch"`
	// Zoom (screen pixels per image pixel) and X0, Y0 (the image point at
	// the view's top-left corner); Zoom 0 is fit. Centre is the image
	// point at the view's centre: a session opened in a window of another
	// size is centred where it was, at the same zoom (X0, Y0 are for the
	// files written before it).
	Zoom   float64     `json:"zoom,omitempty"`
	X0     float64     `json:"x0"`
	Y0     float64     `json:"y0"`
	Centre *[2]float64 `json:"centre,omitempty"`
	// Stands are the stands open (their file, as OpenStands takes it, and
	// the attribute that names them); Pins the pixels pinned, column and
	// row.
	Stands *sessionStands `json:"stands,omitempty"`
	Pins   [][2]int       `json:"pins,omitempty"`
	// View is the map's view: "" (the index), "natural-colour" or
	// "false-colour".
	View string `json:"view,omitempty"`
	// After is the after date of the two-date mode (its inputs and mask
	// only), DateView its view (Before, After, Difference, Swipe).
	After    *session `json:"after,omitempty"`
	DateView string   `json:"date_view,omitempty"`
}

// sessionStands are the stands of a session: the file (FILE or
// FILE:LAYER) and the attribute naming them ("" the layer's default,
// "fid" the feature id).
type sessionStands struct {
	Spec string `json:"spec"`
	ID   string `json:"id,omitempty"`
}

// sessionFID is how a session names the feature id as the stands' name.
const sessionFID = "fid"

// session returns the window's state now.
func (w *window) Session() session {
	s := session{Version: sessionVersion, Ramp: w.ramp, Stretch: w.stretch}
	switch w.src.kind {
	case srcFake:
		s.Fake, s.Size, s.Seed = w.src.fake, w.src.size, w.src.seed
	case srcFiles:
		s.Bands = map[string]string{}
		for r, f := range w.src.files {
			s.Bands[r] = f.spec()
		}
	default:
		if w.src.info != nil {
			s.Product, s.More = w.src.info.Path, w.src.more
		}
		s.Mask, s.MaskBuffer = w.src.mask, w.src.buffer
	}
	if w.idx.cat != nil {
		s.Index = w.idx.cat.Name
	} else {
		s.Expr = w.idx.name
	}
	if t, ok := w.tables[w.idx.name]; ok {
		s.Classes = t.Clone()
	}
	s.Zoom, s.X0, s.Y0 = w.Map.View()
	if zoom, cx, cy := w.Map.Centre(); zoom > 0 {
		s.Centre = &[2]float64{cx, cy}
	}
	if p := w.standsP; p.layer != nil && p.spec != "" {
		st := &sessionStands{Spec: p.spec, ID: p.IDField.Selected}
		if st.ID == featureID {
			st.ID = sessionFID
		}
		s.Stands = st
	}
	for _, r := range w.identify.pins {
		s.Pins = append(s.Pins, [2]int{r.col, r.row})
	}
	if name := w.ViewName(); name != viewNameIndex {
		s.View = name
	}
	w.two.saveTo(&s)
	return s
}

// SaveSession writes the window's state to path as JSON, through a
// temporary file renamed into place.
func (w *window) SaveSession(path string) error {
	b, err := json.MarshalIndent(w.Session(), "", "  ")
	if err != nil {
		return fmt.Errorf("save session %s: %w", path, err)
	}
	b = append(b, '\n')
	if err := refuseInput(path, w.exportInputs()); err != nil {
		return err
	}
	err = outfile.WriteFile(path, func(o *outfile.Writer) error {
		_, err := o.Write(b)
		return err
	})
	if err != nil {
		return fmt.Errorf("save session %s: %w", path, err)
	}
	return nil
}

// readSession reads a session file. Its errors are one line that starts
// with the file's path and says what is wrong in a user's words.
func readSession(path string) (session, error) {
	var s session
	b, err := compute.ReadInput(path, maxSession)
	if err != nil {
		return s, explain(fmt.Errorf("%s: %w", path, err))
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("%s: not a Canopy session file, or it is damaged (%v)", path, err)
	}
	if s.Version != sessionVersion {
		return s, fmt.Errorf("%s: a session file of version %d; this Canopy reads version %d", path, s.Version, sessionVersion)
	}
	if s.Classes != nil {
		if err := s.Classes.Validate(); err != nil {
			return s, fmt.Errorf("%s: its classes are wrong: %v", path, err)
		}
	}
	return s, nil
}

// options returns the window options that open on the session's inputs
// and index (the colours, classes and view are applied once the first
// map is shown: window.ApplySession).
func (s session) options(base options) options {
	o := base
	o.Product, o.More, o.Bands = s.Product, s.More, s.Bands
	if s.Fake != "" {
		o.Fake, o.Size, o.Seed = s.Fake, s.Size, int(s.Seed)
	}
	if s.Mask != "" {
		o.Mask, o.MaskBuffer = s.Mask, s.MaskBuffer
	}
	o.Index, o.Expr = s.Index, s.Expr
	return o
}

// ApplySession shows the session's classes, ramp, stretch and view on the
// map shown (its inputs and index are the window's options).
func (w *window) ApplySession(s session) {
	if s.Classes != nil {
		w.SetClasses(s.Classes.Clone())
	}
	if s.Ramp != "" {
		w.colour.quiet = true
		w.colour.SetRamp(s.Ramp)
		for _, it := range w.colour.stretchs {
			if it.mode == s.Stretch {
				w.colour.Stretch.SetSelected(it.label)
			}
		}
		w.colour.quiet = false
		w.colour.changed()
	}
	w.applySessionView(s)
	_ = w.ShowView(s.View) // an unknown view (a newer Canopy's) leaves the index
	w.applyTwoSession(s)
}

// applySessionView puts the session's view on the map shown (centred
// where it was, at its zoom, whatever the window's size now), its pins
// and its stands.
func (w *window) applySessionView(s session) {
	switch {
	case s.Zoom > 0 && s.Centre != nil:
		w.Map.SetCentre(s.Zoom, s.Centre[0], s.Centre[1])
	case s.Zoom > 0:
		w.Map.SetView(s.Zoom, s.X0, s.Y0)
	}
	if sh := w.shown; sh != nil && len(s.Pins) > 0 {
		w.identify.clear()
		for _, p := range s.Pins {
			if p[0] >= 0 && p[1] >= 0 && p[0] < sh.w && p[1] < sh.h {
				w.identify.add(w.read(sh, p[0], p[1]))
			}
		}
		w.Map.SetPins(w.identify.points())
	}
	if st := s.Stands; st != nil && st.Spec != "" {
		id := st.ID
		if id == sessionFID {
			id = featureID
		}
		if err := w.openStands(st.Spec, id); err != nil {
			w.setStatus(err.Error(), false)
		}
	}
}

// sessionExts are the names a session file takes: .canopy (the
// default), or .json as before.
var sessionExts = []string{".canopy", ".json"}

// saveSessionDialog asks where to save the session.
func (w *window) saveSessionDialog() {
	w.saveDialog("Save session", "canopy-session.canopy", sessionExts, func(path string) {
		if err := w.SaveSession(path); err != nil {
			w.setStatus(explain(err).Error(), false)
			return
		}
		w.setStatus("Saved the session to "+path, true)
	})
}
