//go:build !nogui

package main

import (
	"syscall"
	"unsafe"
)

// releaseConsole lets the window open alone when canopy.exe was started
// from Explorer: it is a console program (so that the command line works
// in cmd.exe and PowerShell, which wait for it and get its exit status),
// and Windows gives a console program started by a double-click a console
// window of its own. When this process is the only one attached to its
// console, that console is freed (its window closes); started from a
// terminal, the terminal is shared and kept.
func releaseConsole() {
	k := syscall.NewLazyDLL("kernel32.dll")
	list, free := k.NewProc("GetConsoleProcessList"), k.NewProc("FreeConsole")
	if list.Find() != nil || free.Find() != nil {
		return
	}
	var pids [2]uint32
	if n, _, _ := list.Call(uintptr(unsafe.Pointer(&pids[0])), 2); n == 1 {
		free.Call()
	}
}
