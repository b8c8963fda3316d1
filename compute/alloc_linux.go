package compute

import (
	"syscall"
	"unsafe"
)

// AdviseHuge asks Linux for transparent huge pages on a big buffer's
// whole 2 MiB pages (where THP is in "madvise" mode), before its first
// touch: one fault per 2 MiB instead of one per 4 KiB, which on virtual
// machines turns seconds of first-touch faults into milliseconds, and
// leaves the process's memory map free for the driver calls and reads
// that run beside the faulting. Best effort: an error leaves ordinary
// pages; buffers under 8 MiB are left alone.
func AdviseHuge(b []byte) {
	const huge = 2 << 20
	if len(b) < 4*huge {
		return
	}
	base := unsafe.Pointer(unsafe.SliceData(b))
	start := uintptr(base)
	end := (start + uintptr(len(b))) &^ (huge - 1)
	aligned := (start + huge - 1) &^ (huge - 1)
	if end <= aligned {
		return
	}
	syscall.Madvise(unsafe.Slice((*byte)(unsafe.Add(base, aligned-start)), end-aligned), 14 /* MADV_HUGEPAGE */)
}
