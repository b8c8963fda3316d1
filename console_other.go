//go:build !windows && !nogui

package main

// releaseConsole does nothing: only Windows gives a program started from
// the desktop a console window of its own.
func releaseConsole() {}

// alertIfAlone does nothing: the line on stderr is all there is.
func alertIfAlone(string) {}
