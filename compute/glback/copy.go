package glback

import (
	"runtime"
	"sync"
)

// parallelCopy copies src into dst (same length) with up to eight
// goroutines: one core cannot fill the memory bus, and the staging copies
// are on the transfer's critical path.
func parallelCopy(dst, src []float32) {
	n := len(src)
	workers := min(runtime.GOMAXPROCS(0), 8)
	if workers <= 1 || n < 1<<18 {
		copy(dst, src)
		return
	}
	block := ((n+workers-1)/workers + 1023) &^ 1023
	var wg sync.WaitGroup
	for lo := 0; lo < n; lo += block {
		hi := min(lo+block, n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			copy(dst[lo:hi], src[lo:hi])
		}()
	}
	wg.Wait()
}
