package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// fitOptions holds a Select at the width of its widest option. Fyne sizes
// a Select by its placeholder alone, so a picker whose placeholder is
// "band" cut a choice such as "B8A — NIR narrow" to a few letters; the
// width follows the options as SetOptions changes them.
func fitOptions(s *widget.Select) fyne.CanvasObject {
	return container.New(selectFit{s}, s)
}

type selectFit struct{ s *widget.Select }

func (l selectFit) Layout(objs []fyne.CanvasObject, size fyne.Size) {
	for _, o := range objs {
		o.Move(fyne.NewPos(0, 0))
		o.Resize(size)
	}
}

func (l selectFit) MinSize([]fyne.CanvasObject) fyne.Size {
	min := l.s.MinSize()
	th := l.s.Theme()
	text := th.Size(theme.SizeNameText)
	place := fyne.MeasureText(l.s.PlaceHolder, text, fyne.TextStyle{}).Width
	widest := place
	for _, o := range l.s.Options {
		widest = max(widest, fyne.MeasureText(o, text, fyne.TextStyle{}).Width)
	}
	// The Select's own minimum is the placeholder plus its padding and
	// icon; the same padding and icon go beside the widest option.
	min.Width += widest - place
	return min
}
