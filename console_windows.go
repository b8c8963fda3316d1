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

// alertIfAlone shows line in a message box when canopy.exe was started
// from Explorer (it is the only process on its console, and stderr is that
// console, which closes as the program ends): a line printed there alone
// would vanish unread. From a terminal, or with stderr redirected, the
// printed line is enough.
func alertIfAlone(line string) {
	k := syscall.NewLazyDLL("kernel32.dll")
	list, mode := k.NewProc("GetConsoleProcessList"), k.NewProc("GetConsoleMode")
	box := syscall.NewLazyDLL("user32.dll").NewProc("MessageBoxW")
	if list.Find() != nil || mode.Find() != nil || box.Find() != nil {
		return
	}
	var pids [2]uint32
	if n, _, _ := list.Call(uintptr(unsafe.Pointer(&pids[0])), 2); n != 1 {
		return
	}
	var m uint32
	if ok, _, _ := mode.Call(uintptr(syscall.Stderr), uintptr(unsafe.Pointer(&m))); ok == 0 {
		return // stderr is a file or a pipe
	}
	text, err1 := syscall.UTF16PtrFromString(line)
	title, err2 := syscall.UTF16PtrFromString("Canopy")
	if err1 != nil || err2 != nil {
		return
	}
	const mbIconError = 0x10
	box.Call(0, uintptr(unsafe.Pointer(text)), uintptr(unsafe.Pointer(title)), mbIconError)
}
