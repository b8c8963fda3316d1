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
// open a window on and OpenGL to draw it with (GLFW would panic, or log
// and end, without them): without, it says what is missing in one line.
func runGUI(args []string) int {
	if asksHelp(args) {
		releaseConsole()
		return ui.Main(args)
	}
	if runtime.GOOS == "linux" && os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == "" {
		fmt.Fprintln(os.Stderr, "canopy: no display to open the window on (DISPLAY and WAYLAND_DISPLAY are unset); run `canopy help` for the command line, or use xvfb-run")
		return 1
	}
	if why := checkOpenGL(); why != "" {
		fmt.Fprintln(os.Stderr, why)
		alertIfAlone(why)
		return 1
	}
	releaseConsole()
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
