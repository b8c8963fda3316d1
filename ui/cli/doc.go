// Package cli is Canopy's command line: backends, compute, bench and fake,
// as DESIGN.md's contract gives them. It drives the same engine functions as
// the GUI and never starts Fyne, so it runs on machines with no display.
//
// Exit status is 0 on success, 1 when a run fails (a file cannot be read, a
// backend errors or gives wrong numbers) and 2 on bad usage; every message
// goes to stderr as one line naming the file or flag at fault.
package cli
