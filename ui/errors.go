package ui

import (
	"fyne.io/fyne/v2/dialog"

	"canopy/compute/usererr"
)

// explain says what an error means in a user's words, on one line naming
// the file (compute/usererr, which the terminal uses too): every error the
// window shows goes through it.
func explain(err error) error { return usererr.Explain(err) }

// showError shows what went wrong with something the user asked for at
// once (not a job): one line in the status bar and in a dialog.
func (w *window) showError(err error) {
	err = explain(err)
	w.setStatus(err.Error(), false)
	dialog.ShowError(err, w.Win)
}
