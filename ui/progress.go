package ui

import (
	"fmt"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"
)

// jobBar is the toolbar's progress line: the bar of the share done, or
// an endless bar for work of unknown length, under a label that says
// what runs and, once it can tell, the time left.
type jobBar struct {
	// Bar and Label show the running job.
	Bar     *widget.ProgressBar
	Label   *widget.Label
	spinner *widget.ProgressBarInfinite
	box     fyne.CanvasObject

	began time.Time // when the running job began (time left)
	msg   string    // the running job's last message
	label string    // the running job's name ("" when none runs)
}

func newJobBar() *jobBar {
	b := &jobBar{}
	b.Bar = widget.NewProgressBar()
	b.Bar.TextFormatter = func() string { return "" } // the label says more
	b.Bar.Hide()
	b.spinner = widget.NewProgressBarInfinite()
	b.spinner.Stop()
	b.spinner.Hide()
	b.Label = widget.NewLabel("")
	b.Label.Truncation = fyne.TextTruncateEllipsis
	b.box = container.NewStack(b.Bar, b.spinner, container.NewPadded(b.Label))
	return b
}

// busy shows that the job label started (busy) or that no job runs.
func (b *jobBar) busy(on bool, label string) {
	b.label = label
	if on {
		b.began, b.msg = time.Now(), label+"…"
		b.Bar.SetValue(0)
		b.spin(true)
		b.Label.SetText(label + "…")
	} else {
		b.Bar.Hide()
		b.spinner.Stop()
		b.spinner.Hide()
		b.Label.SetText("")
	}
}

// spin shows the endless bar (work of unknown length) or the progress
// bar.
func (b *jobBar) spin(on bool) {
	if on {
		b.Bar.Hide()
		b.spinner.Show()
		b.spinner.Start()
	} else {
		b.spinner.Stop()
		b.spinner.Hide()
		b.Bar.Show()
	}
}

// set shows the share done (frac < 0: unknown) and the job's message
// ("" keeps the last one).
func (b *jobBar) set(frac float64, msg string) {
	if frac >= 0 {
		if b.spinner.Visible() {
			b.spin(false)
		}
		b.Bar.SetValue(frac)
	} else if !b.spinner.Visible() {
		b.spin(true)
	}
	if msg != "" {
		b.msg = msg
	}
	text := b.msg
	if frac >= 0 {
		text = fmt.Sprintf("%s  %.0f %%", text, 100*frac)
		if t := eta(frac, time.Since(b.began)); t != "" {
			text += " · " + t
		}
	}
	b.Label.SetText(text)
}

// jobOr names the running job in a sentence, s when none runs.
func (b *jobBar) jobOr(s string) string {
	if b.label != "" {
		return strings.ToLower(b.label[:1]) + b.label[1:]
	}
	return s
}
