// Canopy computes vegetation indices (NDVI, EVI, any band-math formula)
// from the imagery foresters have, on the backend you pick (pure Go, Go
// parallel, C, OpenGL compute, CUDA), with the cost of each made visible.
// This file only wires: no arguments or `gui` opens the desktop app,
// anything else is the command line (ui/cli).
package main

import (
	"os"

	"canopy/ui/cli"
)

func main() {
	args := os.Args[1:]
	if len(args) == 0 || args[0] == "gui" {
		if len(args) > 0 {
			args = args[1:]
		}
		os.Exit(runGUI(args))
	}
	os.Exit(cli.Run(args, os.Stdout, os.Stderr))
}
