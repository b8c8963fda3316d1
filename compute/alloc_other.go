//go:build !linux

package compute

// AdviseHuge does nothing where there is no madvise(MADV_HUGEPAGE).
func AdviseHuge(b []byte) {}
