//go:build !windows && !nogui

package main

// checkOpenGL returns "": on Linux gui.go checks for a display first, and
// Mesa gives every X server OpenGL 2.1 (llvmpipe when there is no driver).
func checkOpenGL() string { return "" }
