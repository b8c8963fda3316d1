package ui

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"fyne.io/fyne/v2/widget"
)

// TestExportErrorLine: an export that fails shows one line in the user's
// words naming the file, in the status bar and in the dialog, for a
// folder that does not exist and a folder given as the file (real
// writes), and a read-only folder and a full disk (as the system reports
// them); the map stays.
func TestExportErrorLine(t *testing.T) {
	w := newTestWindow(t, options{})
	before, _, _, _ := w.Plane()
	dir := t.TempDir()
	missing := filepath.Join(dir, "nodir", "ndvi.tif")
	fail := func(err error) func(string) error { return func(string) error { return err } }
	cases := []struct {
		path  string
		write func(string) error
		want  string
	}{
		{missing, w.tiffWriter(), missing + ": the folder " + filepath.Dir(missing) + " does not exist; choose another place"},
		{dir, w.tiffWriter(), dir + ": this is a folder; give the name of a file to write"},
		{"out.tif", fail(fmt.Errorf("write out.tif: %w", syscall.EROFS)), "out.tif: the folder is read-only; choose another place"},
		{"map.png", fail(fmt.Errorf("encode png: %w", &fs.PathError{Op: "write", Path: ".map.png.0a1b2c3d4e5f.tmp", Err: syscall.ENOSPC})),
			"map.png: the disk is full; free some space or choose another place"},
	}
	for _, c := range cases {
		w.exportJob("the NDVI GeoTIFF", c.path, c.write)
		w.Wait()
		want := "Exporting the NDVI GeoTIFF failed: " + c.want
		if w.Status.Text != want {
			t.Errorf("status %q\n  want %q", w.Status.Text, want)
		}
		if w.Status.Importance != widget.DangerImportance {
			t.Errorf("%s: the status is not shown as an error", c.path)
		}
		if d := dialogText(w); !strings.Contains(d, c.want) {
			t.Errorf("dialog %q lacks %q", d, c.want)
		}
		if top := w.Win.Canvas().Overlays().Top(); top != nil {
			w.Win.Canvas().Overlays().Remove(top)
		}
	}
	if _, err := os.Stat(missing); err == nil {
		t.Error("a file was written in a folder that does not exist")
	}
	if after, _, _, _ := w.Plane(); &after[0] != &before[0] {
		t.Error("a failed export replaced the map")
	}
}

// TestDialogErrorLine: a file dialog that cannot create the file chosen
// (a read-only folder, as Fyne's dialog reports it) and pins exported
// into a folder that does not exist show one line naming the file.
func TestDialogErrorLine(t *testing.T) {
	w := newTestWindow(t, options{})
	w.showError(&fs.PathError{Op: "open", Path: "/media/card/pins.csv", Err: syscall.EROFS})
	if want := "/media/card/pins.csv: the folder is read-only; choose another place"; w.Status.Text != want || !strings.Contains(dialogText(w), want) {
		t.Errorf("status %q, dialog %q, want %q", w.Status.Text, dialogText(w), want)
	}
	w.identify.add(w.read(w.shown, 3, 4))
	missing := filepath.Join(t.TempDir(), "nodir", "pins.csv")
	err := w.identify.export(missing)
	if want := missing + ": the folder " + filepath.Dir(missing) + " does not exist; choose another place"; err == nil || err.Error() != want {
		t.Errorf("ExportPins into a missing folder: %v, want %q", err, want)
	}
}
