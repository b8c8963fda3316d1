package compute

import (
	"runtime"
	"sync"
	"time"
)

// SpanKernel computes NDVI over one contiguous span of pixels (out, red and
// nir have the same length). The Go kernel and the C kernel both have this
// shape, so both run on a Pool.
type SpanKernel func(out, red, nir []float32, nd Nodata)

// Pool is a set of goroutines, one per thread, that split an image into
// contiguous blocks and run a SpanKernel on each. The goroutines live as
// long as the pool, so a run allocates nothing; blocks are whole cache
// lines, so no two workers write the same line. One pool per backend
// keeps all threads under the Go scheduler (no second thread pool, no
// spinning barrier competing with Go's).
type Pool struct {
	threads int
	jobs    []chan span
	wg      sync.WaitGroup
	mu      sync.Mutex
}

type span struct {
	k             SpanKernel
	out, red, nir []float32
	nd            Nodata
}

// NewPool starts threads workers (0: GOMAXPROCS).
func NewPool(threads int) *Pool {
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	p := &Pool{threads: threads, jobs: make([]chan span, threads)}
	for i := range p.jobs {
		c := make(chan span)
		p.jobs[i] = c
		go func() {
			for s := range c {
				s.k(s.out, s.red, s.nir, s.nd)
				p.wg.Done()
			}
		}()
	}
	return p
}

// Threads is the number of workers.
func (p *Pool) Threads() int { return p.threads }

// MinParallelPixels is the image size under which a pool runs the kernel
// on the calling goroutine: waking workers costs more than the work.
const MinParallelPixels = 1 << 14

// Run computes k over in into out on all workers and waits for them.
// Concurrent calls are serialised.
func (p *Pool) Run(k SpanKernel, in Input, out []float32) {
	n := len(out)
	if n < MinParallelPixels || p.threads == 1 {
		k(out, in.Red[:n], in.NIR[:n], in.Nodata)
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	block := (n + p.threads - 1) / p.threads
	block = (block + 15) &^ 15
	for w := 0; w < p.threads; w++ {
		lo := w * block
		if lo >= n {
			break
		}
		hi := min(lo+block, n)
		p.wg.Add(1)
		p.jobs[w] <- span{k, out[lo:hi], in.Red[lo:hi], in.NIR[lo:hi], in.Nodata}
	}
	p.wg.Wait()
}

// Close stops the workers; the pool must not be used afterwards.
func (p *Pool) Close() {
	for _, c := range p.jobs {
		close(c)
	}
}

// NewPoolSize is the number of workers NewPool(0) starts.
func NewPoolSize() int { return runtime.GOMAXPROCS(0) }

// RunOnPool is Run for the CPU backends built on a Pool: it checks the
// input, starts *pool with threads workers on first use (reported as
// setup), and times k over the image as the kernel phase.
func RunOnPool(pool **Pool, threads int, k SpanKernel, in Input, out []float32) (Timings, error) {
	if err := CheckRun(in, out); err != nil {
		return Timings{}, err
	}
	var t Timings
	if *pool == nil {
		t0 := time.Now()
		*pool = NewPool(threads)
		t.Setup = time.Since(t0)
	}
	t0 := time.Now()
	(*pool).Run(k, in, out)
	t.Kernel = time.Since(t0)
	t.Total = t.Kernel
	return t, nil
}
