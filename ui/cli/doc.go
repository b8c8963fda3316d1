// Package cli is Canopy's command line: every subcommand but the window
// (backends, indices, scene, compute, zonal, change, batch, bench, fake,
// warp, search, stack, composite, monitor), as DESIGN.md's contract gives
// them. It drives the same engine functions as
// the GUI and never starts Fyne, so it runs on machines with no display:
// compute, zonal, change, batch and fake open their inputs with
// source.Open and run with source.Run, plugging their sinks (the COG, the
// PNG maps, the layouts, the whole planes zonal and change need); stack,
// composite and monitor open a stack of dates through compute/stack (the
// same road, date by date) and run compute/season's models over it.
//
// Every command runs under a context that Ctrl+C or SIGTERM cancels
// (Run): it stops at its next block, leaves nothing half-written, says
// "interrupted" and exits 130 (143).
//
// Exit status is 0 on success, 1 when a run fails (a file cannot be read, a
// backend errors or gives wrong numbers) and 2 on bad usage; every message
// goes to stderr as one line naming the file or flag at fault.
package cli
