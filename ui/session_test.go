package ui

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"canopy/ui/render/colormap"
)

// TestSessionRoundTrip: a window's index, ramp, a class threshold and
// zoom saved to a session file come back in a fresh window opened on it,
// with the same map.
func TestSessionRoundTrip(t *testing.T) {
	w := newTestWindow(t, Options{Seed: 3})
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

	s, err := ReadSession(path)
	if err != nil {
		t.Fatal(err)
	}
	w2 := newTestWindow(t, s.Options(Options{}))
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
	if _, err := ReadSession(path); err == nil {
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
	w := newTestWindow(t, Options{})
	if err := w.SaveSession(walk); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(walk); err != nil || st.Size() == 0 {
		t.Fatalf("walk.canopy: %v, %v", st, err)
	}
	if _, err := ReadSession(walk); err != nil {
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
