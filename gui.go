//go:build !nogui

package main

import (
	"fmt"
	"os"
	"runtime"

	"canopy/ui"
	_ "canopy/ui/locale" // before Fyne reads the locale
)

// runGUI starts the desktop app, after checking that there is a display to
// open a window on (GLFW would panic without one).
func runGUI(args []string) int {
	releaseConsole()
	if runtime.GOOS == "linux" && os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == "" && !asksHelp(args) {
		fmt.Fprintln(os.Stderr, "canopy: no display to open the window on (DISPLAY and WAYLAND_DISPLAY are unset); run `canopy help` for the command line, or use xvfb-run")
		return 1
	}
	return ui.Main(args)
}

// asksHelp reports whether the arguments ask for the help text, which
// needs no display.
func asksHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}
