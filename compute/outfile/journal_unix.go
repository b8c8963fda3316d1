//go:build unix

package outfile

import "syscall"

// journalFlags: never through a symbolic link, never blocking on a FIFO.
const journalFlags = syscall.O_NOFOLLOW | syscall.O_NONBLOCK | syscall.O_NOCTTY
