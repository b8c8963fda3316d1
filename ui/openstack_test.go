package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"
)

// File › Open stack…: a folder typed in the form (as our own file form
// takes typed paths) opens as a stack of its GeoTIFFs' dates, dated by
// their names, in the time-series window, whose model runs; a file of no
// date is one line naming it; an empty form says what to give.
func TestOpenStack(t *testing.T) {
	w := newTestWindow(t, options{})
	paths := writeTSStack(t, 6, 9, 7)
	dir := filepath.Dir(paths[0])
	os.WriteFile(filepath.Join(dir, "t_20210105.tif.aux.xml"), []byte("<PAMDataset/>"), 0o644)

	f := w.openStackDialog()
	test.Tap(f.Open)
	if !strings.Contains(w.Status.Text, "name the files or folders") {
		t.Fatalf("an empty form: status %q", w.Status.Text)
	}
	f.Paths.SetText(dir + "\n\n")
	test.Tap(f.Open)
	w.Wait()
	v := w.series
	if v == nil {
		t.Fatalf("no time-series window; status %q", w.Status.Text)
	}
	t.Cleanup(v.Close)
	v.Wait()
	if len(v.s.dates) != 6 || v.s.w != 9 || v.s.h != 7 || v.s.st.Dates[0].ISO != "2021-01-05" || v.s.st.Dates[0].How != "file name" ||
		!strings.Contains(w.Status.Text, "A stack of 6 dates on 9×7 pixels, ndvi") {
		t.Fatalf("the stack: %d dates %d×%d, first %+v; status %q", len(v.s.dates), v.s.w, v.s.h, v.s.st.Dates[0], w.Status.Text)
	}
	if v.runs != 1 || v.run == nil || v.run.plan != v.mon {
		t.Fatalf("the model did not run on the stack: %q", v.runInfo.Text)
	}
	v.Click(3, 2)
	if v.series == nil || len(v.series.Values) != 6 {
		t.Fatalf("a click drew %+v", v.series)
	}

	// A file the stack cannot date: one line naming it.
	undated := filepath.Join(t.TempDir(), "scene.tif")
	b, _ := os.ReadFile(paths[0])
	os.WriteFile(undated, b, 0o644)
	f = w.openStackDialog()
	f.add(paths[1])
	f.add(undated)
	if got := f.lines(); len(got) != 2 || got[1] != undated {
		t.Fatalf("the form's lines %q", got)
	}
	test.Tap(f.Open)
	w.Wait()
	if w.series != v || !strings.Contains(w.Status.Text, undated) || !strings.Contains(w.Status.Text, "no date") || strings.Contains(w.Status.Text, "\n") {
		t.Fatalf("an undated file: status %q", w.Status.Text)
	}
}
