// Package par is Canopy's one way of spreading work over the cores:
// a persistent Pool for the backends' kernels (no goroutine started per
// run), For and Blocks for one-off fan-outs over rows or blocks, Each for
// items that wait rather than compute (files, requests), and Copy,
// a parallel memory copy. Every fan-out in compute and ui goes through it,
// so the policy (how many workers, how work is split, cache-line aligned
// blocks) is written once.
package par

import (
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Workers is the number of goroutines a fan-out over n independent items
// uses: GOMAXPROCS, never more than n, at least 1.
func Workers(n int) int { return max(1, min(runtime.GOMAXPROCS(0), n)) }

// For calls f(i) for every i in [0, n) on Workers(n) goroutines, handing
// out indices one at a time (rows of an image, blocks of a plane), and
// returns when all calls have returned.
func For(n int, f func(i int)) { ForN(0, n, f) }

// ForN is For on at most workers goroutines (0: GOMAXPROCS).
func ForN(workers, n int, f func(i int)) {
	w := Workers(n)
	if workers > 0 {
		w = max(1, min(w, workers))
	}
	if w == 1 {
		for i := range n {
			f(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range w {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				f(i)
			}
		})
	}
	wg.Wait()
}

// Each calls f(i) for every i in [0, n), each on its own goroutine (the
// calling one when n is 1), and returns when all calls have returned: for
// fan-outs over items that mostly wait (files read at once, a remote
// file's requests) rather than compute, which GOMAXPROCS would throttle.
func Each(n int, f func(i int)) {
	if n == 1 {
		f(0)
		return
	}
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { f(i) })
	}
	wg.Wait()
}

// Blocks splits [0, n) into blocks of size block (the last may be short)
// and calls f(lo, hi) for each on all cores.
func Blocks(n, block int, f func(lo, hi int)) {
	if n <= 0 {
		return
	}
	block = max(1, block)
	For((n+block-1)/block, func(i int) {
		lo := i * block
		f(lo, min(lo+block, n))
	})
}

// Split divides [0, n) into parts contiguous spans whose boundaries are
// multiples of align (except n), for workers that each take one span.
func Split(n, parts, align int) [][2]int {
	parts = max(1, parts)
	align = max(1, align)
	size := (n + parts - 1) / parts
	size = (size + align - 1) / align * align
	var s [][2]int
	for lo := 0; lo < n; lo += size {
		s = append(s, [2]int{lo, min(lo+size, n)})
	}
	return s
}

// MinParallel is the number of elements under which Pool.Run works on the
// calling goroutine: waking workers costs more than the work.
const MinParallel = 1 << 14

// Pool is a set of goroutines, one per thread, living as long as the pool,
// that split a range into contiguous spans (whole 64-byte lines of float32,
// so no two workers write the same cache line) and run a function on each.
// One pool per backend keeps every thread under the Go scheduler.
type Pool struct {
	threads int
	jobs    []chan task
	wg      sync.WaitGroup
	mu      sync.Mutex
}

type task struct {
	t      Task
	lo, hi int
}

// Task is work a Pool splits: Do handles [lo, hi). A backend keeps its task
// in a field and passes a pointer to it, so a run allocates nothing.
type Task interface{ Do(lo, hi int) }

// NewPool starts threads workers (0: GOMAXPROCS).
func NewPool(threads int) *Pool {
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	p := &Pool{threads: threads, jobs: make([]chan task, threads)}
	for i := range p.jobs {
		c := make(chan task)
		p.jobs[i] = c
		go func() {
			for t := range c {
				t.t.Do(t.lo, t.hi)
				p.wg.Done()
			}
		}()
	}
	return p
}

// Threads is the number of workers.
func (p *Pool) Threads() int { return p.threads }

// DefaultThreads is the number of workers NewPool(0) starts.
func DefaultThreads() int { return runtime.GOMAXPROCS(0) }

// Run calls t over [0, n) split into one span per worker (boundaries on
// multiples of 16 elements) and waits for them; below MinParallel it calls
// t.Do(0, n) on the calling goroutine. Concurrent calls are serialised.
func (p *Pool) Run(n int, t Task) {
	if n < MinParallel || p.threads == 1 {
		t.Do(0, n)
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	size := ((n+p.threads-1)/p.threads + 15) &^ 15
	for w, lo := 0, 0; lo < n; w, lo = w+1, lo+size {
		p.wg.Add(1)
		p.jobs[w] <- task{t, lo, min(lo+size, n)}
	}
	p.wg.Wait()
}

// Close stops the workers; the pool must not be used afterwards.
func (p *Pool) Close() {
	for _, c := range p.jobs {
		close(c)
	}
}

// CopyPiece is the size each goroutine of Copy takes at a time: big enough
// to stream, small enough to spread a plane over every core.
const CopyPiece = 4 << 20

// Copy copies src into dst (the shorter length) on up to workers
// goroutines (0: GOMAXPROCS), in CopyPiece pieces, with copyFn (nil: Go's
// copy; the c backend passes its streaming-store copy).
func Copy[T any](dst, src []T, workers int, copyFn func(dst, src []T)) {
	n := min(len(dst), len(src))
	if copyFn == nil {
		copyFn = func(d, s []T) { copy(d, s) }
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var z T
	size := int(sizeOf(z))
	piece := max(1, CopyPiece/max(1, size))
	pieces := (n + piece - 1) / piece
	if pieces <= 1 || workers == 1 {
		copyFn(dst[:n], src[:n])
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(workers, pieces) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= pieces {
					return
				}
				lo := i * piece
				hi := min(lo+piece, n)
				copyFn(dst[lo:hi], src[lo:hi])
			}
		})
	}
	wg.Wait()
}

func sizeOf[T any](z T) uintptr { return unsafe.Sizeof(z) }

// Ranges splits [0, n) into one contiguous part per worker (a single part
// when n < minParallel) and calls f(part, lo, hi) for each concurrently,
// for fan-outs that keep one partial result per part. It returns the
// number of parts, at most Workers(n).
func Ranges(n, minParallel int, f func(part, lo, hi int)) int {
	parts := Workers(n)
	if n < minParallel {
		parts = 1
	}
	block := (n + parts - 1) / max(1, parts)
	if parts == 1 {
		if n > 0 {
			f(0, 0, n)
		}
		return 1
	}
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := p*block, min((p+1)*block, n)
		if lo >= hi {
			continue
		}
		wg.Go(func() { f(p, lo, hi) })
	}
	wg.Wait()
	return parts
}

// WorkerBlocks calls f(worker, lo, hi) on blocks of [0, n) handed out to
// Workers goroutines as they finish the previous one, for fan-outs that
// keep one partial result per worker. It returns the number of workers.
func WorkerBlocks(n, block int, f func(worker, lo, hi int)) int {
	return WorkerBlocksN(0, n, block, f)
}

// WorkerBlocksN is WorkerBlocks on at most workers goroutines (0:
// GOMAXPROCS); worker is below that bound.
func WorkerBlocksN(workers, n, block int, f func(worker, lo, hi int)) int {
	block = max(1, block)
	if w := Workers((n + block - 1) / block); workers <= 0 || workers > w {
		workers = w
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for {
				lo := int(next.Add(int64(block)) - int64(block))
				if lo >= n {
					return
				}
				f(w, lo, min(lo+block, n))
			}
		})
	}
	wg.Wait()
	return workers
}
