package ui

import (
	"errors"
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/widget"
)

// fileDialogSize is the size of a file dialog in win: most of the window
// (a real folder holds hundreds of files with long names), at least
// 900×600.
func fileDialogSize(win fyne.Window) fyne.Size {
	s := fyne.NewSize(900, 600)
	if c := win.Canvas(); c != nil {
		cs := c.Size()
		s.Width = max(s.Width, 0.85*cs.Width)
		s.Height = max(s.Height, 0.85*cs.Height)
	}
	return s
}

// saveForm is the window's own save flow: the path is typed (an
// absolute path is taken as it is, a name or a relative path goes into
// the folder shown), or chosen with Fyne's file dialog behind Browse…,
// which appends whatever is typed in its name field to its current
// folder.
type saveForm struct {
	// Path is the file to write; Folder says where a relative one goes.
	Path   *widget.Entry
	Folder *widget.Label
	dir    string
	exts   []string
	save   func(path string)
	d      dialog.Dialog
}

// resolve is the file a typed text names: as typed when absolute, "~/"
// the home folder, else inside dir; with exts[0] added when it has none of
// exts.
func resolveSavePath(text, dir string, exts []string) (string, error) {
	p := strings.TrimSpace(text)
	if p == "" {
		return "", errors.New("type a file name")
	}
	if strings.HasPrefix(p, "~"+string(filepath.Separator)) || p == "~" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("%s: no home folder is known", p)
		}
		p = filepath.Join(home, p[1:])
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	p = filepath.Clean(p)
	if ext := strings.ToLower(filepath.Ext(p)); len(exts) > 0 && !contains(exts, ext) {
		p += exts[0]
	}
	st, err := os.Stat(filepath.Dir(p))
	switch {
	case err != nil:
		return "", fmt.Errorf("%s: the folder %s does not exist", filepath.Base(p), filepath.Dir(p))
	case !st.IsDir():
		return "", fmt.Errorf("%s: %s is not a folder", filepath.Base(p), filepath.Dir(p))
	}
	return p, nil
}

// submit saves to the path typed, asking first before replacing a file.
func (f *saveForm) submit(parent fyne.Window, onErr func(error)) {
	p, err := resolveSavePath(f.Path.Text, f.dir, f.exts)
	if err != nil {
		onErr(err)
		return
	}
	if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
		dialog.ShowConfirm("Replace the file?", filepath.Base(p)+" exists in "+filepath.Dir(p)+". Replace it?", func(ok bool) {
			if ok {
				f.done(p)
			}
		}, parent)
		return
	}
	f.done(p)
}

func (f *saveForm) done(p string) {
	if f.d != nil {
		f.d.Hide()
	}
	lastSaveDir = filepath.Dir(p)
	f.save(p)
}

// lastSaveDir is the folder of the last file saved: the next save starts
// there.
var lastSaveDir string

// saveStartDir is where a save starts: the last folder saved to, else
// the home folder (an app started from a desktop menu runs in /), else
// the working folder.
func saveStartDir() string {
	if lastSaveDir != "" {
		return lastSaveDir
	}
	if d, err := os.UserHomeDir(); err == nil {
		return d
	}
	if d, err := os.Getwd(); err == nil {
		return d
	}
	return string(filepath.Separator)
}

// saveDialog asks where to save, suggesting name in the last folder, and
// calls save with the path chosen.
func (w *window) saveDialog(title, name string, exts []string, save func(path string)) {
	f := &saveForm{Path: widget.NewEntry(), dir: saveStartDir(), exts: exts, save: save}
	f.Path.SetText(filepath.Join(f.dir, name))
	f.Folder = widget.NewLabel("A name or a relative path is saved in " + f.dir + "; an absolute path is taken as it is.")
	f.Folder.Wrapping = fyne.TextWrapWord
	f.Path.OnSubmitted = func(string) { f.submit(w.Win, w.showError) }
	browse := widget.NewButton("Browse…", func() {
		if f.d != nil {
			f.d.Hide()
		}
		w.browseSave(title, f, name)
	})
	content := container.NewVBox(container.NewBorder(nil, nil, nil, browse, f.Path), f.Folder)
	d := dialog.NewCustomConfirm(title, "Save", "Cancel", content, func(ok bool) {
		if ok {
			f.submit(w.Win, w.showError)
		}
	}, w.Win)
	f.d = d
	w.saveForm = f
	d.Resize(fyne.NewSize(max(700, 0.6*w.Win.Canvas().Size().Width), 0))
	d.Show()
	w.Win.Canvas().Focus(f.Path)
}

// browseSave is Fyne's save dialog, started in the form's folder.
func (w *window) browseSave(title string, f *saveForm, name string) {
	d := dialog.NewFileSave(func(wc fyne.URIWriteCloser, err error) {
		if err != nil {
			w.showError(err) // the dialog could not create the file
			return
		}
		if wc == nil {
			return
		}
		path := wc.URI().Path()
		wc.Close() // the engine writes to a temporary file and renames it
		lastSaveDir = filepath.Dir(path)
		f.save(savePath(path, f.exts))
	}, w.Win)
	d.SetTitleText(title)
	d.SetFileName(name)
	if l, err := storage.ListerForURI(storage.NewFileURI(f.dir)); err == nil {
		d.SetLocation(l)
	}
	if len(f.exts) > 0 {
		d.SetFilter(storage.NewExtensionFileFilter(f.exts))
	}
	d.Resize(fileDialogSize(w.Win))
	d.Show()
}

// wheelLayer lies over the sidebar and gives it the mouse wheel: Fyne
// gives the wheel to the innermost scrollable under the pointer, and
// every entry holds one (its text scrolls sideways), so the sidebar
// stopped scrolling whenever the pointer crossed an entry. The layer
// takes the wheel alone: taps, hovering, drags and the cursor go through
// to what lies under it.
type wheelLayer struct {
	widget.BaseWidget
	scroll *container.Scroll
}

func newWheelLayer(s *container.Scroll) *wheelLayer {
	l := &wheelLayer{scroll: s}
	l.ExtendBaseWidget(l)
	return l
}

// Scrolled scrolls the sidebar.
func (l *wheelLayer) Scrolled(ev *fyne.ScrollEvent) { l.scroll.Scrolled(ev) }

func (l *wheelLayer) CreateRenderer() fyne.WidgetRenderer {
	return widget.NewSimpleRenderer(canvas.NewRectangle(color.Transparent))
}
