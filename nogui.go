//go:build nogui

package main

import (
	"fmt"
	"os"
)

// runGUI reports that this binary was built without the desktop app (the
// nogui tag, for servers and GPU machines with no X libraries).
func runGUI(args []string) int {
	fmt.Fprintln(os.Stderr, "canopy: this build has no GUI (built with -tags nogui); use a command: backends, compute, bench, fake (canopy help)")
	return 2
}
