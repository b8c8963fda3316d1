package ui

import (
	"encoding/json"
	"fmt"
	"image"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"fyne.io/fyne/v2"

	"canopy/compute/fake"
	"canopy/ui/render/colormap"
)

// TestSessionRoundTrip: a window's index, ramp, a class threshold and
// zoom saved to a session file come back in a fresh window opened on it,
// with the same map.
func TestSessionRoundTrip(t *testing.T) {
	w := newTestWindow(t, options{Seed: 3})
	w.index.Index.SetSelected("EVI")
	w.Wait()
	w.index.Index.SetSelected("NDVI")
	w.Wait()
	w.colour.SetRamp(colormap.RampClasses)
	w.Wait()
	table, err := w.lut.Classes().WithThreshold(3, 0.55)
	if err != nil {
		t.Fatal(err)
	}
	w.SetClasses(table)
	w.Wait()
	w.Map.ZoomBy(2)
	zoom, x0, y0 := w.Map.View()
	path := filepath.Join(t.TempDir(), "s.json")
	if err := w.SaveSession(path); err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	b, _ := os.ReadFile(path)
	if err := json.Unmarshal(b, &raw); err != nil || raw["index"] != "ndvi" || raw["ramp"] != colormap.RampClasses {
		t.Fatalf("session file %s (%v)", b, err)
	}

	s, err := readSession(path)
	if err != nil {
		t.Fatal(err)
	}
	w2 := newTestWindow(t, s.options(options{}))
	w2.ApplySession(s)
	w2.Wait()
	if w2.idx.name != "ndvi" || w2.ramp != colormap.RampClasses {
		t.Errorf("reopened on %s in %s", w2.idx.name, w2.ramp)
	}
	if got := w2.lut.Classes(); got[4].Lo != 0.55 || got[3].Hi != 0.55 {
		t.Errorf("reopened classes %+v", got)
	}
	if z, a, b := w2.Map.View(); z != zoom || a != x0 || b != y0 {
		t.Errorf("view %v %v %v, saved %v %v %v", z, a, b, zoom, x0, y0)
	}
	p1, _, _, _ := w.Plane()
	p2, _, _, _ := w2.Plane()
	eq := func(a, b float32) bool { return a == b || (a != a && b != b) }
	if !slices.EqualFunc(p1, p2, eq) {
		t.Error("the reopened map differs")
	}
	if w2.lut.Color(0.57) != w.lut.Color(0.57) || w2.lut.Color(0.57) == w.lut.Color(0.5) {
		t.Error("the reopened map is not drawn in the saved classes")
	}

	os.WriteFile(path, []byte(`{"version": 9}`), 0o644)
	if _, err := readSession(path); err == nil {
		t.Error("a version 9 session was read")
	}
}

// TestSessionSaveName: "walk.canopy" chosen in the save dialog (which
// creates the empty file before the app writes) is the session written,
// and it opens again; a name without a session's extension gets
// .canopy and the dialog's empty file is not left beside it; a file that
// is not empty is never removed.
func TestSessionSaveName(t *testing.T) {
	dir := t.TempDir()
	walk := filepath.Join(dir, "walk.canopy")
	os.WriteFile(walk, nil, 0o644) // what the dialog made
	if got := savePath(walk, sessionExts); got != walk {
		t.Fatalf("walk.canopy saved as %s", got)
	}
	w := newTestWindow(t, options{})
	if err := w.SaveSession(walk); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(walk); err != nil || st.Size() == 0 {
		t.Fatalf("walk.canopy: %v, %v", st, err)
	}
	if _, err := readSession(walk); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(walk + ".json"); !os.IsNotExist(err) {
		t.Errorf("a walk.canopy.json beside it: %v", err)
	}
	other := filepath.Join(dir, "walk")
	os.WriteFile(other, nil, 0o644)
	if got := savePath(other, sessionExts); got != other+".canopy" {
		t.Errorf("walk saved as %s", got)
	}
	if _, err := os.Stat(other); !os.IsNotExist(err) {
		t.Errorf("the dialog's empty file is left: %v", err)
	}
	full := filepath.Join(dir, "notes.txt")
	os.WriteFile(full, []byte("keep me"), 0o644)
	if got := savePath(full, []string{".png"}); got != full+".png" {
		t.Errorf("notes.txt saved as %s", got)
	}
	if b, _ := os.ReadFile(full); string(b) != "keep me" {
		t.Errorf("a file with content was touched: %q", b)
	}
}

// TestSessionEverythingOnScreen: a session saved with stands (named by an
// attribute the user picked), pins, a class table, an index, two dates and
// a zoomed, panned view opens again, through File › Open session… and
// through --session (ApplySession), in a window of the other size of the
// report (1440×900 ↔ 1920×1080): the same stands and names, the same
// pins, classes, index, date view and difference, at the same zoom and
// centred on the same image point.
func TestSessionEverythingOnScreen(t *testing.T) {
	sizes := []fyne.Size{fyne.NewSize(1440, 900), fyne.NewSize(1920, 1080)}
	for k, size := range sizes {
		other := sizes[1-k]
		w := newTestWindow(t, options{Size: 96, Index: "savi"})
		w.Win.Resize(size)
		_, _, bw, bh := w.Plane()
		after, _ := afterDate(t, "after.tif", bw, bh, 9, fake.GeoRef())
		openAfterTyped(w, after)
		if err := w.SetDateView(viewDifference); err != nil {
			t.Fatal(err)
		}
		if err := w.OpenStands(writeNamedStands(t, [][4]int{{2, 2, 20, 30}, {30, 35, 60, 60}})); err != nil {
			t.Fatal(err)
		}
		w.Wait()
		if err := w.standsP.setID("code"); err != nil {
			t.Fatal(err)
		}
		w.identify.add(w.read(w.shown, 10, 12))
		w.identify.add(w.read(w.shown, 70, 40))
		w.Map.ZoomBy(3)
		w.Map.PanBy(-120, 60)
		w.Wait()
		cx, cy := viewCentre(w)
		zoom, _, _ := w.Map.View()
		rows := w.standsP.rows()
		diff, _, _ := w.Difference()
		path := filepath.Join(t.TempDir(), "walk.canopy")
		if err := w.SaveSession(path); err != nil {
			t.Fatal(err)
		}
		s, err := readSession(path)
		if err != nil {
			t.Fatal(err)
		}
		if s.Stands == nil || s.Stands.ID != "code" || len(s.Pins) != 2 || s.Centre == nil || s.After == nil || s.Index != "savi" {
			t.Fatalf("session %+v", s)
		}

		opened := newTestWindow(t, options{})
		opened.Win.Resize(other)
		opened.OpenSession(path)
		opened.Wait()
		started := newTestWindow(t, s.options(options{}))
		started.Win.Resize(other)
		started.ApplySession(s)
		started.Wait()
		for name, w2 := range map[string]*window{"File › Open session": opened, "--session": started} {
			at := fmt.Sprintf("saved at %v, %s at %v", size, name, other)
			if _, idx, _, _ := w2.Plane(); idx != "savi" || w2.DateView() != viewDifference {
				t.Errorf("%s: index %s, date view %s", at, idx, w2.DateView())
			}
			if got, _, _ := w2.Difference(); !slices.EqualFunc(got, diff, func(a, b float32) bool { return a == b || a != a && b != b }) {
				t.Errorf("%s: another difference", at)
			}
			if got := w2.standsP.rows(); !slices.EqualFunc(got, rows, slices.Equal[[]string]) || w2.standsP.IDField.Selected != "code" {
				t.Errorf("%s: stands %v named by %q, saved %v", at, got, w2.standsP.IDField.Selected, rows)
			}
			if pins := w2.identify.points(); len(pins) != 2 || pins[0] != image.Pt(10, 12) || pins[1] != image.Pt(70, 40) {
				t.Errorf("%s: pins %v", at, pins)
			}
			z, _, _ := w2.Map.View()
			x, y := viewCentre(w2)
			if math.Abs(z-zoom) > 1e-9 || math.Abs(x-cx) > 0.5/z || math.Abs(y-cy) > 0.5/z {
				t.Errorf("%s: zoom %.3f centred on (%.2f, %.2f), saved %.3f on (%.2f, %.2f)", at, z, x, y, zoom, cx, cy)
			}
		}
	}
}

// viewCentre is the image point at the centre of the map's view.
func viewCentre(w *window) (float64, float64) {
	_, cx, cy := w.Map.Centre()
	return cx, cy
}
