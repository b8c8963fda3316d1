package ui

import (
	"encoding/csv"
	"image"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
)

// TestChartsAfterEveryRunKind drives the window's real buttons through
// every kind of run (Compute, Compare all, the size sweep, Indices per
// upload, then Compute again) and after each looks at every chart the
// Benchmarks tab holds, tab by tab as a user would: each chart that has
// results shows a drawn picture (visible, the size of its widget, not one
// flat colour). "Indices per upload" once left the Timings and Size-sweep
// charts blank.
func TestChartsAfterEveryRunKind(t *testing.T) {
	w := newTestWindow(t, options{Repeat: 1})
	sweepMax := 1024
	if testing.Short() {
		// -short is the race detector's run in make test: a sweep of
		// two sizes still draws a curve.
		sweepMax = 512
	}
	w.charts.SweepMax.SetSelected(sizeLabel(sweepMax))
	w.charts.IndicesSize.SetSelected(sizeLabel(256))
	runIndices := findButton(t, w.charts.indicesTab, "Run")
	steps := []struct {
		name string
		tap  func()
	}{
		{"Compute", func() { test.Tap(w.Compute) }},
		{"Compare all", func() { test.Tap(w.CompareAll) }},
		{"Size sweep", func() { test.Tap(w.Sweep) }},
		{"Indices per upload", func() { test.Tap(runIndices) }},
		{"Compute again", func() { test.Tap(w.Compute) }},
		{"Compare all again", func() { test.Tap(w.CompareAll) }},
	}
	if testing.Short() {
		// -short is the race detector's run in make test: each kind of
		// run once (the runs again, after the charts' renderers expired,
		// in the full run).
		steps = steps[:4]
	}
	views := []struct {
		tab  int
		view *chartView
	}{{0, w.charts.Timing}, {1, w.charts.SweepView}, {2, w.charts.IndicesView}}
	sizes := []fyne.Size{fyne.NewSize(1440, 900), fyne.NewSize(1920, 1080)}
	for k, st := range steps {
		w.tabs.SelectIndex(1)
		w.benchTabs.SelectIndex(2) // where the user runs Indices per upload
		st.tap()
		w.Wait()
		w.Win.Resize(sizes[k%2]) // both window sizes of the report, hidden tabs resized
		orders := [][]int{{0, 1, 2}, {2, 1, 0}}
		if testing.Short() {
			// -short is the race detector's run in make test, where the
			// whole-window captures are most of the time: each step
			// visits the tabs in one order, the steps alternating.
			orders = orders[k%2 : k%2+1]
		}
		for _, order := range orders {
			for _, k := range order {
				v := views[k]
				// A run of a minute or more (Indices per upload at
				// 8192²) leaves the hidden tabs unpainted that long, and
				// Fyne's cache then drops their renderers: the chart is
				// built again when its tab comes back.
				if !v.view.Visible() || !w.tabs.Selected().Content.Visible() || w.benchTabs.SelectedIndex() != v.tab {
					expireRenderer(t, v.view)
				}
				w.tabs.SelectIndex(1)
				w.benchTabs.SelectIndex(v.tab)
				name := w.benchTabs.Items[v.tab].Text
				if len(v.view.Results()) == 0 {
					continue
				}
				w.Wait()
				if !v.view.image.Visible() || v.view.empty.Visible() {
					t.Errorf("after %s, the %s chart shows its empty text %q, not its picture", st.name, name, v.view.empty.Text)
					continue
				}
				img := v.view.Image()
				if img == nil || flat(img) {
					t.Errorf("after %s, the %s chart is blank", st.name, name)
				}
				if s := v.view.image.Size(); s.Width < 100 || s.Height < 100 {
					t.Errorf("after %s, the %s chart's picture is %v", st.name, name, s)
				}
				// What the window draws, not only what the widget holds.
				if onScreenFlat(w, v.view) {
					t.Errorf("after %s, the %s chart's place on the window is blank", st.name, name)
				}
			}
		}
		w.tabs.SelectIndex(0)
	}
}

// TestChartCSVRuns: the window's CSV export names each row's run and its
// number of indices.
func TestChartCSVRuns(t *testing.T) {
	w := newTestWindow(t, options{Repeat: 1})
	w.charts.IndicesSize.SetSelected(sizeLabel(256))
	test.Tap(w.CompareAll)
	w.Wait()
	test.Tap(findButton(t, w.charts.indicesTab, "Run"))
	w.Wait()
	path := filepath.Join(t.TempDir(), "timings.csv")
	if err := w.charts.exportCSV(path); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	runs := map[string]int{}
	counts := map[string]bool{}
	for _, r := range recs[1:] {
		runs[r[col["run"]]]++
		if r[col["run"]] == "indices per upload" {
			counts[r[col["indices"]]] = true
		}
	}
	if runs["timings"] == 0 || runs["indices per upload"] == 0 || len(counts) != len(sweepCounts) {
		t.Errorf("runs %v, index counts %v", runs, counts)
	}
}

// expireRenderer drops o's renderer, as Fyne's cache does with the
// widgets that were not painted for a minute (a hidden tab's); the next
// paint builds it again.
func expireRenderer(t *testing.T, o fyne.Widget) {
	t.Run("expire", func(t *testing.T) { test.TempWidgetRenderer(t, o) })
}

// onScreenFlat captures the window and reports whether the part where o
// lies is one colour.
func onScreenFlat(w *window, o fyne.CanvasObject) bool {
	img := w.Win.Canvas().Capture()
	c := w.Win.Canvas()
	pos := fyne.CurrentApp().Driver().AbsolutePositionForObject(o)
	sz := o.Size()
	sc := c.Scale()
	r := image.Rect(int(pos.X*sc), int(pos.Y*sc), int((pos.X+sz.Width)*sc), int((pos.Y+sz.Height)*sc))
	sub, ok := img.(interface {
		SubImage(image.Rectangle) image.Image
	})
	if !ok || r.Empty() {
		return true
	}
	return flat(sub.SubImage(r))
}

// flat reports whether an image is one colour.
func flat(img image.Image) bool {
	b := img.Bounds()
	first := img.At(b.Min.X, b.Min.Y)
	r0, g0, b0, a0 := first.RGBA()
	for y := b.Min.Y; y < b.Max.Y; y += 3 {
		for x := b.Min.X; x < b.Max.X; x += 3 {
			r, g, bb, a := img.At(x, y).RGBA()
			if r != r0 || g != g0 || bb != b0 || a != a0 {
				return false
			}
		}
	}
	return true
}

// findButton returns the button labelled text inside o.
func findButton(t *testing.T, o fyne.CanvasObject, text string) *widget.Button {
	t.Helper()
	for _, c := range test.LaidOutObjects(o) {
		if b, ok := c.(*widget.Button); ok && b.Text == text {
			return b
		}
	}
	t.Fatalf("no button %q", text)
	return nil
}

// TestCeilingAbove100Explained: a kernel faster than its ceiling (the
// bands in cache) reads "in cache" in the table, with the reason under
// it, not "170%".
func TestCeilingAbove100Explained(t *testing.T) {
	w := newTestWindow(t, options{})
	rs := w.Results()
	rs[0].KernelPct = 170
	w.charts.showTimings(rs)
	text := labelsText(w.charts.table)
	if strings.Contains(text, "170%") || !strings.Contains(text, "in cache") || !strings.Contains(text, "fit in the processor's cache") {
		t.Errorf("the table says:\n%s", text)
	}
	rs[0].KernelPct = 64
	w.charts.showTimings(rs)
	if text := labelsText(w.charts.table); !strings.Contains(text, "64%") || strings.Contains(text, "in cache") {
		t.Errorf("below the ceiling the table says:\n%s", text)
	}
}
