package glback

import (
	"runtime"
	"sync"

	"canopy/native/cpu"
)

// copyWorkers caps the goroutines parallelCopy uses (0: GOMAXPROCS). One
// core cannot fill the memory bus, and the staging copies are on the
// transfer's critical path.
var copyWorkers = 0

// copyPiece is what each goroutine of parallelCopy copies with: AVX2 loads
// and streaming stores (native/cpu), which spare the destination's
// read-for-ownership and suit the write-combined memory a driver may map;
// BenchmarkCopyWorkers compares it with Go's copy.
var copyPiece = cpu.Copy

// parallelCopy copies src into dst (same length) on several goroutines.
func parallelCopy(dst, src []float32) {
	n := len(src)
	workers := runtime.GOMAXPROCS(0)
	if copyWorkers > 0 {
		workers = min(workers, copyWorkers)
	}
	if workers <= 1 || n < 1<<18 {
		copyPiece(dst, src)
		return
	}
	block := ((n+workers-1)/workers + 1023) &^ 1023
	var wg sync.WaitGroup
	for lo := 0; lo < n; lo += block {
		hi := min(lo+block, n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			copyPiece(dst[lo:hi], src[lo:hi])
		}()
	}
	wg.Wait()
}
