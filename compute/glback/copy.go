package glback

import (
	"canopy/compute/par"
	"canopy/native/cpu"
)

// parallelCopy copies src into dst (same length) on every core with AVX2
// loads and streaming stores (native/cpu), which spare the destination's
// read-for-ownership and suit the write-combined memory a driver may map;
// BenchmarkCopyWorkers compares it with Go's copy.
func parallelCopy(dst, src []float32) { par.Copy(dst, src, 0, cpu.Copy) }
