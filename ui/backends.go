package ui

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"canopy/compute"
)

// backendEntry is one backend in the picker: a radio button with the
// device it runs on, or greyed out with the reason it cannot run here.
type backendEntry struct {
	b     compute.Backend
	info  compute.Info
	known bool // info has been asked for

	radio  *widget.RadioGroup
	detail *widget.Label
	icon   *widget.Icon
	mode   *widget.Select

	// host: runs put the bands in the backend's own host buffers
	// (compute.HostMemory, the "host" choice of the mode picker), as
	// canopy compute does; the staging copy counts as setup.
	host atomic.Bool
}

func (e *backendEntry) name() string { return e.b.Name() }

// modes are the choices of the entry's mode picker: compute.ModeHost first
// where the backend keeps host memory of its own, then its Moder modes.
func (e *backendEntry) modes() []string { return compute.BenchModes(e.b) }

// setMode applies a choice of the mode picker.
func (e *backendEntry) setMode(s string) error {
	if s == compute.ModeHost {
		e.host.Store(true)
		return nil
	}
	e.host.Store(false)
	if m, ok := e.b.(compute.Moder); ok {
		return m.SetMode(s)
	}
	return nil
}

// currentMode is the current choice of the mode picker ("" without modes).
func (e *backendEntry) currentMode() string {
	if e.host.Load() {
		return compute.ModeHost
	}
	if m, ok := e.b.(compute.Moder); ok {
		return m.Mode()
	}
	return ""
}

// label is the name with the mode for backends that have modes.
func (e *backendEntry) label() string {
	if md := e.currentMode(); md != "" {
		return e.b.Name() + ":" + md
	}
	return e.b.Name()
}

// fillPicker builds one row per backend.
func (w *Window) fillPicker() {
	w.picker.RemoveAll()
	for _, e := range w.backends {
		e.radio = widget.NewRadioGroup([]string{e.name()}, nil)
		e.radio.Required = true
		e.radio.OnChanged = func(s string) {
			if s != "" {
				w.pick(e)
			} else if w.selected == e {
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
			e.mode = widget.NewSelect(ms, func(s string) {
				if err := e.setMode(s); err != nil {
					w.setStatus(err.Error(), false)
				}
			})
			e.mode.SetSelected(e.currentMode())
			e.mode.Disable()
			right = container.NewHBox(e.mode, e.icon)
		}
		row := container.NewBorder(nil, nil, e.radio, right)
		detail := container.New(layout.NewCustomPaddedLayout(-theme.Padding()*2, 0, theme.Padding()*6, 0), e.detail)
		w.picker.Add(container.NewVBox(row, detail))
	}
	if len(w.backends) == 0 {
		w.picker.Add(widget.NewLabel("No backends are built into this binary."))
	}
}

// showInfos shows each backend's device, or why it is unavailable.
func (w *Window) showInfos() {
	for _, e := range w.backends {
		if !e.known {
			continue
		}
		if e.info.Available {
			dev := e.info.Device
			if dev == "" {
				dev = "available"
			}
			e.detail.SetText(dev)
			e.detail.Importance = widget.MediumImportance
			e.radio.Enable()
			if e.info.GPU {
				e.icon.SetResource(theme.ComputerIcon())
			} else {
				e.icon.SetResource(nil)
			}
			if e.mode != nil {
				e.mode.Enable()
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
			if e.mode != nil {
				e.mode.Disable()
			}
		}
		e.detail.Refresh()
	}
	w.updateButtons()
}

func (w *Window) pick(e *backendEntry) {
	w.selected = e
	for _, o := range w.backends {
		if o != e && o.radio.Selected != "" {
			o.radio.SetSelected("")
		}
	}
	if e.radio.Selected == "" {
		e.radio.SetSelected(e.name())
	}
	w.updateButtons()
}

// SelectBackend selects a backend by name (name or name:mode), as a click
// in the picker does. It refuses, with the reason, a backend that is
// unknown or cannot run here, and leaves the selection as it was.
func (w *Window) SelectBackend(spec string) error {
	name, mode, _ := strings.Cut(spec, ":")
	for _, e := range w.backends {
		if e.name() != name {
			continue
		}
		if e.known && !e.info.Available {
			return fmt.Errorf("backend %s is unavailable: %s", name, e.info.Reason)
		}
		if mode != "" {
			if !slices.Contains(e.modes(), mode) {
				return fmt.Errorf("backend %s has no mode %q (%s)", name, mode, strings.Join(e.modes(), ", "))
			}
			if err := e.setMode(mode); err != nil {
				return err
			}
			if e.mode != nil {
				e.mode.SetSelected(mode)
			}
		}
		w.pick(e)
		return nil
	}
	names := make([]string, len(w.backends))
	for i, e := range w.backends {
		names[i] = e.name()
	}
	return fmt.Errorf("unknown backend %q (known: %s)", name, strings.Join(names, ", "))
}

// Selected returns the name of the selected backend, "" when none.
func (w *Window) Selected() string {
	if w.selected == nil {
		return ""
	}
	return w.selected.name()
}

// BackendMode returns the picker's mode choice for a backend, nil when it
// has none (tests pick from it).
func (w *Window) BackendMode(name string) *widget.Select {
	for _, e := range w.backends {
		if e.name() == name {
			return e.mode
		}
	}
	return nil
}

// BackendRadio returns the picker's radio button for a backend (tests tap it).
func (w *Window) BackendRadio(name string) *widget.RadioGroup {
	for _, e := range w.backends {
		if e.name() == name {
			return e.radio
		}
	}
	return nil
}

// BackendDetail returns the text under a backend in the picker: its device
// or the reason it is unavailable.
func (w *Window) BackendDetail(name string) string {
	for _, e := range w.backends {
		if e.name() == name {
			return e.detail.Text
		}
	}
	return ""
}

// autoBackend picks the backend to start on: the fastest available for an
// image that starts and ends in host memory, in the CLI's order, else the
// first available.
func (w *Window) autoBackend() *backendEntry {
	for _, n := range compute.AutoOrder {
		for _, e := range w.backends {
			if e.name() == n && e.info.Available {
				return e
			}
		}
	}
	for _, e := range w.backends {
		if e.info.Available {
			return e
		}
	}
	return nil
}

// available returns the available backends in picker order.
func (w *Window) available() []*backendEntry {
	return slices.DeleteFunc(slices.Clone(w.backends), func(e *backendEntry) bool { return !e.info.Available })
}
