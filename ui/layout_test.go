package ui

import (
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
)

// TestMapIsTheMainView: at 1440×900 the map takes at least 60 % of the
// window's width and height, the statistics sit beside it on the same tab,
// and the benchmarks are one tab away.
func TestMapIsTheMainView(t *testing.T) {
	w := newTestWindow(t, options{})
	w.Win.Resize(fyne.NewSize(1440, 900))
	win := w.Win.Canvas().Size()
	ms := w.Map.Size()
	if ms.Width < 0.6*win.Width || ms.Height < 0.6*win.Height {
		t.Errorf("the map is %.0f×%.0f in a %.0f×%.0f window, want at least 60 %% of each side",
			ms.Width, ms.Height, win.Width, win.Height)
	}
	if !w.stats.Hist.Visible() || w.stats.Hist.Size().Width == 0 {
		t.Error("the histogram is not shown beside the map")
	}
	hp := fyne.CurrentApp().Driver().AbsolutePositionForObject(w.stats.Hist)
	mp := fyne.CurrentApp().Driver().AbsolutePositionForObject(w.Map)
	if hp.X < mp.X+ms.Width {
		t.Errorf("the histogram (x %.0f) is not right of the map (ends at %.0f)", hp.X, mp.X+ms.Width)
	}
	if got := w.tabs.Selected().Text; got != "Map" {
		t.Errorf("the window opens on %q, want Map", got)
	}
	if len(w.tabs.Items) != 3 || w.tabs.Items[1].Text != "Benchmarks" || w.tabs.Items[2].Text != "Stands" {
		t.Fatalf("top tabs %v, want Map, Benchmarks and Stands", tabNames(w))
	}
}

// TestTabStaysAfterJobs: a finished Compare all or sweep leaves the user
// on the tab they were on.
func TestTabStaysAfterJobs(t *testing.T) {
	w := newTestWindow(t, options{})
	test.Tap(w.CompareAll)
	w.Wait()
	if len(w.Results()) < 2 {
		t.Fatalf("Compare all gave %d results", len(w.Results()))
	}
	if got := w.tabs.Selected().Text; got != "Map" {
		t.Errorf("after Compare all the window shows %q, want Map (where the user was)", got)
	}
	w.tabs.SelectIndex(1)
	w.benchTabs.SelectIndex(2)
	test.Tap(w.Compute)
	w.Wait()
	if w.tabs.Selected().Text != "Benchmarks" || w.benchTabs.Selected().Text != "Indices per upload" {
		t.Errorf("after Compute the window shows %q / %q, want Benchmarks / Indices per upload",
			w.tabs.Selected().Text, w.benchTabs.Selected().Text)
	}
}

func tabNames(w *window) []string {
	var s []string
	for _, it := range w.tabs.Items {
		s = append(s, it.Text)
	}
	return s
}
