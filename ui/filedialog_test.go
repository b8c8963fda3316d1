package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
)

// TestSaveTypedAbsolutePath: the save flow takes a typed absolute path
// as it is (Fyne's own dialog appends it to its current folder), puts a
// bare name in the folder it shows, adds the extension to a name without
// one, and refuses a folder that does not exist with one line, writing
// nothing.
func TestSaveTypedAbsolutePath(t *testing.T) {
	w := newTestWindow(t, options{})
	start := t.TempDir()
	lastSaveDir = start
	t.Cleanup(func() { lastSaveDir = "" })
	other := filepath.Join(t.TempDir(), "walks")
	if err := os.Mkdir(other, 0o755); err != nil {
		t.Fatal(err)
	}
	save := func(text string) {
		t.Helper()
		w.saveSessionDialog()
		f := w.saveForm
		if f == nil || !strings.HasPrefix(f.Path.Text, start) {
			t.Fatalf("the save form starts on %q, want the last folder %s", f.Path.Text, start)
		}
		f.Path.SetText("")
		test.Type(f.Path, text)
		f.submit(w.Win, w.showError)
		w.Wait()
	}
	abs := filepath.Join(other, "walk.canopy")
	save(abs)
	if _, err := os.Stat(abs); err != nil {
		t.Fatalf("typing %s did not write it: %v (status %q)", abs, err, w.Status.Text)
	}
	if entries, _ := os.ReadDir(start); len(entries) != 0 {
		t.Errorf("the typed absolute path also wrote into the start folder: %v", entries)
	}
	lastSaveDir = start
	save("second")
	if _, err := os.Stat(filepath.Join(start, "second.canopy")); err != nil {
		t.Errorf("a bare name: %v", err)
	}
	lastSaveDir = start
	save(filepath.Join(other, "no-such-folder", "x.canopy"))
	if msg := dialogText(w); !strings.Contains(msg, "does not exist") {
		t.Errorf("a missing folder: dialog %q", msg)
	}
}

// TestSidebarWheelOverEntry: the mouse wheel over an entry of the sidebar
// scrolls the sidebar (the entry's own scroller took it).
func TestSidebarWheelOverEntry(t *testing.T) {
	w := newTestWindow(t, options{})
	w.Win.Resize(fyne.NewSize(1440, 900))
	c := w.Win.Canvas()
	if w.sidebar.Content.MinSize().Height <= w.sidebar.Size().Height {
		t.Skip("the sidebar fits the window: nothing to scroll")
	}
	for _, e := range []fyne.CanvasObject{w.index.Formula, w.source.Path, w.source.Seed} {
		if !e.Visible() {
			continue
		}
		w.sidebar.Offset.Y = 0
		w.sidebar.Refresh()
		pos := fyne.CurrentApp().Driver().AbsolutePositionForObject(e).AddXY(5, 5)
		if pos.Y > c.Size().Height-10 {
			continue // below the window: scrolled into view by an earlier wheel
		}
		test.Scroll(c, pos, 0, -120)
		if w.sidebar.Offset.Y <= 0 {
			t.Errorf("the wheel over the %T at %v did not scroll the sidebar", e, pos)
		}
	}
}

// TestFileDialogsSizedForFolders: the open dialogs take most of the
// window.
func TestFileDialogsSizedForFolders(t *testing.T) {
	w := newTestWindow(t, options{})
	w.Win.Resize(fyne.NewSize(1920, 1080))
	w.source.pickFile()
	top := w.Win.Canvas().Overlays().Top()
	if top == nil {
		t.Fatal("no dialog")
	}
	var widest float32
	for _, o := range test.LaidOutObjects(top) {
		widest = max(widest, o.Size().Width)
	}
	if cs := w.Win.Canvas().Size(); widest < 0.8*cs.Width {
		t.Errorf("the open dialog is %.0f wide in a %.0f-wide window", widest, cs.Width)
	}
}
