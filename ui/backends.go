package ui

import (
	"fmt"
	"slices"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"canopy/compute"
)

// backendEntry is one backend in the picker: a radio button with the
// device it runs on, or greyed out with the reason it cannot run here.
//
// Its fields are the event goroutine's: a job gets the backend and the
// mode chosen as a runSpec when it starts, and never asks the backend its
// mode (a backend's mode is an argument of each run, not its state).
type backendEntry struct {
	b     compute.Backend
	info  compute.Info
	known bool // info has been asked for
	// mode is the choice of the mode picker: one of the backend's Moder
	// modes, or "" for a backend without modes.
	mode string

	radio  *widget.RadioGroup
	detail *widget.Label
	icon   *widget.Icon
	picker *widget.Select
}

func newBackendEntry(b compute.Backend) *backendEntry {
	e := &backendEntry{b: b}
	// The backend's own default, read once before any job runs.
	if m, ok := b.(compute.Moder); ok {
		e.mode = m.Mode()
	}
	return e
}

func (e *backendEntry) name() string { return e.b.Name() }

// modes are the choices of the entry's mode picker: the backend's
// compute.Moder modes; none for a backend without modes (one run in its
// only way).
func (e *backendEntry) modes() []string {
	if m, ok := e.b.(compute.Moder); ok {
		return m.Modes()
	}
	return nil
}

// run is the entry as a job runs it: the backend, what it reported about
// itself, and the mode chosen now.
func (e *backendEntry) run() runSpec { return runSpec{b: e.b, info: e.info, mode: e.mode} }

// backendPanel is the backend picker: one row per backend. It tells the
// window when the user picks a backend or a mode, through callbacks.
type backendPanel struct {
	entries  []*backendEntry
	selected *backendEntry
	box      *fyne.Container

	// keeper says which GPU backends keep a scene on their card.
	keeper cardKeeper
	// onPick is called after the selection changed.
	onPick func()
}

func newBackendPanel(bs []compute.Backend) *backendPanel {
	p := &backendPanel{box: container.NewVBox(), onPick: func() {}}
	for _, b := range bs {
		p.entries = append(p.entries, newBackendEntry(b))
	}
	p.fill()
	return p
}

// fill builds one row per backend.
func (p *backendPanel) fill() {
	p.box.RemoveAll()
	for _, e := range p.entries {
		e.radio = widget.NewRadioGroup([]string{e.name()}, nil)
		e.radio.Required = true
		e.radio.OnChanged = func(s string) {
			if s != "" {
				p.pick(e)
			} else if p.selected == e {
				e.radio.SetSelected(e.name()) // stays selected until another is chosen
			}
		}
		e.detail = widget.NewLabel("checking…")
		e.detail.Wrapping = fyne.TextWrapWord
		e.detail.SizeName = theme.SizeNameCaptionText
		e.icon = widget.NewIcon(nil)
		e.radio.Disable()
		right := fyne.CanvasObject(e.icon)
		if ms := e.modes(); len(ms) > 1 {
			e.picker = widget.NewSelect(ms, func(s string) { e.mode = s })
			e.picker.SetSelected(e.mode)
			e.picker.Disable()
			right = container.NewHBox(e.picker, e.icon)
		}
		row := container.NewBorder(nil, nil, e.radio, right)
		detail := container.New(layout.NewCustomPaddedLayout(-theme.Padding()*2, 0, theme.Padding()*6, 0), e.detail)
		p.box.Add(container.NewVBox(row, detail))
	}
	if len(p.entries) == 0 {
		p.box.Add(widget.NewLabel("No backends are built into this binary."))
	}
}

// showInfos shows each backend's device, or why it is unavailable.
func (p *backendPanel) showInfos() {
	for _, e := range p.entries {
		if !e.known {
			continue
		}
		if e.info.Available {
			dev := e.info.Device
			if dev == "" {
				dev = "available"
			}
			if p.keeper != nil {
				dev += keptDetail(p.keeper, e)
			}
			e.detail.SetText(dev)
			e.detail.Importance = widget.MediumImportance
			e.radio.Enable()
			if e.info.GPU {
				e.icon.SetResource(theme.ComputerIcon())
			} else {
				e.icon.SetResource(nil)
			}
			if e.picker != nil {
				e.picker.Enable()
			}
		} else {
			reason := e.info.Reason
			if reason == "" {
				reason = "not available on this machine"
			}
			e.detail.SetText("Unavailable: " + reason)
			e.detail.Importance = widget.LowImportance
			e.radio.Disable()
			e.icon.SetResource(theme.WarningIcon())
			if e.picker != nil {
				e.picker.Disable()
			}
		}
		e.detail.Refresh()
	}
	p.onPick()
}

func (p *backendPanel) pick(e *backendEntry) {
	p.selected = e
	for _, o := range p.entries {
		if o != e && o.radio.Selected != "" {
			o.radio.SetSelected("")
		}
	}
	if e.radio.Selected == "" {
		e.radio.SetSelected(e.name())
	}
	p.onPick()
}

// selectSpec selects a backend by name (name or name:mode), as a click
// in the picker does. It refuses, with the reason, a backend that is
// unknown or cannot run here, and leaves the selection as it was.
func (p *backendPanel) selectSpec(spec string) error {
	name, mode, _ := strings.Cut(spec, ":")
	for _, e := range p.entries {
		if e.name() != name {
			continue
		}
		if e.known && !e.info.Available {
			return fmt.Errorf("backend %s cannot run here: %s; choose another", name, e.info.Reason)
		}
		if mode != "" {
			if !slices.Contains(e.modes(), mode) {
				return fmt.Errorf("backend %s has no mode %q (%s)", name, mode, strings.Join(e.modes(), ", "))
			}
			e.mode = mode
			if e.picker != nil {
				e.picker.SetSelected(mode)
			}
		}
		p.pick(e)
		return nil
	}
	names := make([]string, len(p.entries))
	for i, e := range p.entries {
		names[i] = e.name()
	}
	return fmt.Errorf("unknown backend %q (known: %s)", name, strings.Join(names, ", "))
}

// selectedName returns the name of the selected backend, "" when none.
func (p *backendPanel) selectedName() string {
	if p.selected == nil {
		return ""
	}
	return p.selected.name()
}

// modePicker returns the picker's mode choice for a backend, nil when it
// has none (tests pick from it).
func (p *backendPanel) modePicker(name string) *widget.Select {
	if e := p.entry(name); e != nil {
		return e.picker
	}
	return nil
}

// entry returns the entry of the backend called name, nil if none.
func (p *backendPanel) entry(name string) *backendEntry {
	for _, e := range p.entries {
		if e.name() == name {
			return e
		}
	}
	return nil
}

// radio returns the picker's radio button for a backend (tests tap it).
func (p *backendPanel) radio(name string) *widget.RadioGroup {
	if e := p.entry(name); e != nil {
		return e.radio
	}
	return nil
}

// detailOf returns the text under a backend in the picker: its device
// or the reason it is unavailable.
func (p *backendPanel) detailOf(name string) string {
	if e := p.entry(name); e != nil {
		return e.detail.Text
	}
	return ""
}

// autoBackend picks the backend to start on: the fastest available for an
// image that starts and ends in host memory, in the CLI's order, else the
// first available.
func (p *backendPanel) auto() *backendEntry {
	for _, n := range compute.AutoOrder {
		if e := p.entry(n); e != nil && e.info.Available {
			return e
		}
	}
	for _, e := range p.entries {
		if e.info.Available {
			return e
		}
	}
	return nil
}

// available returns the available backends in picker order.
func (p *backendPanel) available() []*backendEntry {
	return slices.DeleteFunc(slices.Clone(p.entries), func(e *backendEntry) bool { return !e.info.Available })
}

// selectedOrAuto is the selected backend if it can run, else the automatic
// choice (nil when none can).
func (p *backendPanel) selectedOrAuto() *backendEntry {
	if p.selected != nil && p.selected.info.Available {
		return p.selected
	}
	return p.auto()
}
