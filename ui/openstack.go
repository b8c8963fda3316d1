package ui

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/widget"

	"canopy/compute/stack"
)

// stackForm is File › Open stack…: the stack's files, folders, list files
// and saved searches, typed one a line or added with the file and folder
// dialogs, then opened as a stack of dates in the time-series window.
type stackForm struct {
	// Paths holds the paths, one a line.
	Paths *widget.Entry
	// AddFile and AddFolder append a file or a folder picked in Fyne's
	// dialogs; Open opens the stack.
	AddFile, AddFolder, Open *widget.Button
	dlg                      dialog.Dialog
}

// lines are the non-blank lines of the form, "~/" the home folder.
func (f *stackForm) lines() []string {
	var out []string
	home, _ := os.UserHomeDir()
	for _, l := range strings.Split(f.Paths.Text, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		if home != "" && (l == "~" || strings.HasPrefix(l, "~/")) {
			l = filepath.Join(home, strings.TrimPrefix(l, "~"))
		}
		out = append(out, l)
	}
	return out
}

// add appends path as a line of its own.
func (f *stackForm) add(path string) {
	t := strings.TrimRight(f.Paths.Text, "\n")
	if t != "" {
		t += "\n"
	}
	f.Paths.SetText(t + path)
}

// openStackDialog shows File › Open stack… and returns its form.
func (w *window) openStackDialog() *stackForm {
	f := &stackForm{Paths: widget.NewMultiLineEntry()}
	f.Paths.SetPlaceHolder("One a line: GeoTIFFs or products of the dates, folders of them, a list file (path,date a line) or a saved search")
	f.Paths.SetMinRowsVisible(8)
	f.AddFile = widget.NewButton("Add file…", func() {
		d := dialog.NewFileOpen(func(r fyne.URIReadCloser, err error) {
			if err != nil {
				w.showError(err)
				return
			}
			if r != nil {
				f.add(r.URI().Path())
				r.Close()
			}
		}, w.Win)
		d.Resize(fileDialogSize(w.Win))
		d.Show()
	})
	f.AddFolder = widget.NewButton("Add folder…", func() {
		d := dialog.NewFolderOpen(func(u fyne.ListableURI, err error) {
			if err != nil {
				w.showError(err)
				return
			}
			if u != nil {
				f.add(u.Path())
			}
		}, w.Win)
		d.Resize(fileDialogSize(w.Win))
		d.Show()
	})
	cancel := widget.NewButton("Cancel", func() { f.dlg.Hide() })
	f.Open = widget.NewButton("Open", func() {
		paths := f.lines()
		if len(paths) == 0 {
			w.setStatus("Open stack: name the files or folders of the dates, one a line", false)
			return
		}
		f.dlg.Hide()
		w.OpenStack(paths)
	})
	f.Open.Importance = widget.HighImportance
	note := widget.NewLabel("Each file is one date, dated by its metadata or a YYYYMMDD or YYYY-MM-DD in its name (files of one day are mosaicked); a folder gives every scene in it. The index is the one chosen; the dates must share a grid.")
	note.Wrapping = fyne.TextWrapWord
	body := container.NewBorder(note, container.NewHBox(f.AddFile, f.AddFolder, layout.NewSpacer(), cancel, f.Open), nil, nil, f.Paths)
	f.dlg = dialog.NewCustomWithoutButtons("Open a stack of dates", body, w.Win)
	f.dlg.Resize(fyne.NewSize(720, 420))
	f.dlg.Show()
	return f
}

// OpenStack builds the stack of paths (files, folders of scenes, list
// files, saved searches: stack.Entries, as canopy stack dates them) with
// the index chosen, on the selected backend with the chosen mask, as a job
// with progress and Cancel, and opens it in the time-series window.
func (w *window) OpenStack(paths []string) {
	mask, buffer, r, ok := w.stackSettings()
	if !ok {
		return
	}
	idx := w.idx
	w.bridge.start(fmt.Sprintf("Opening a stack of %d paths", len(paths)), func(ctx context.Context, progress progressFunc) (func(), error) {
		items, err := os.MkdirTemp("", "canopy-items-*")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(items) // the saved searches' items, read once the stack is built
		progress(-1, "dating the files")
		entries, err := stack.Entries(ctx, paths, items)
		if err != nil {
			return nil, err
		}
		dates := stack.Group(entries)
		if len(dates) < 2 {
			return nil, fmt.Errorf("%s: a stack needs at least two dates, these give %d", paths[0], len(dates))
		}
		st, err := stack.Build(ctx, dates, stack.Options{Mask: mask, MaskBuffer: buffer, Backend: r.b, Mode: r.mode, Name: idx.name, Expr: idx.expr,
			Progress: func(done, total int) {
				progress(float64(done)/float64(total), fmt.Sprintf("%d of %d dates", done, total))
			}})
		if err != nil {
			return nil, err
		}
		line := fmt.Sprintf("A stack of %d dates on %d×%d pixels, %s", len(st.Dates), st.Grid.Width, st.Grid.Height, idx.name)
		ts, err := newTSStack(st, paths[0])
		if err != nil {
			return nil, err
		}
		return func() {
			w.series = w.showTimeSeries(ts, "")
			w.setStatus(line, true)
		}, nil
	})
}

// stackSettings are what building a stack takes from the window: the mask
// chosen, the index (which must parse) and the backend (selected, or the
// automatic choice). ok is false, with the reason on the status line, when
// one of them is missing.
func (w *window) stackSettings() (mask string, buffer int, r *runSpec, ok bool) {
	mask, buffer, err := w.source.maskChoice()
	if err != nil {
		w.setStatus(err.Error(), false)
		return "", 0, nil, false
	}
	if !w.idxOK {
		w.setStatus("The formula does not parse: "+w.index.Error.Text, false)
		return "", 0, nil, false
	}
	if r = w.runOrAuto(); r == nil {
		w.setStatus("No backend can run here", false)
		return "", 0, nil, false
	}
	return mask, buffer, r, true
}
