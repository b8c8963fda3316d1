package ui

import (
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// TestPickerFitsWidestOption: a band picker is as wide as its widest
// choice, so "B8A — NIR narrow" is shown whole, and it follows new options.
func TestPickerFitsWidestOption(t *testing.T) {
	test.NewTempApp(t)
	s := widget.NewSelect([]string{"Band 1", "Band 2"}, nil)
	s.PlaceHolder = "band"
	fit := fitOptions(s)
	text := s.Theme().Size(theme.SizeNameText)
	room := s.MinSize().Width - fyne.MeasureText("band", text, fyne.TextStyle{}).Width
	if room <= 0 {
		t.Fatalf("the Select's padding and icon measure %v", room)
	}
	long := "B8A — NIR narrow"
	s.SetOptions([]string{"B04 — red", long})
	want := fyne.MeasureText(long, text, fyne.TextStyle{}).Width + room
	if got := fit.MinSize().Width; got < want {
		t.Fatalf("picker %v wide, %q needs %v", got, long, want)
	}
	if s.MinSize().Width >= want {
		t.Fatalf("Fyne's Select now sizes to its options (%v): fitOptions can go", s.MinSize().Width)
	}
	s.SetSelected(long)
	w := test.NewWindow(fit)
	defer w.Close()
	w.Resize(fit.MinSize().Add(fyne.NewSize(8, 8)))
	if s.Size().Width < want {
		t.Fatalf("the picker was laid out %v wide, %q needs %v", s.Size().Width, long, want)
	}
	s.SetOptions([]string{"Band 1"})
	if got := fit.MinSize().Width; got >= want {
		t.Fatalf("picker still %v wide after its options shrank", got)
	}
}
