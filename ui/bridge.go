package ui

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"fyne.io/fyne/v2"
)

// progressFunc reports the progress of a job: frac in [0, 1] (negative for
// "unknown") and a short description of the current step.
type progressFunc func(frac float64, msg string)

// job is long work run off the event goroutine. It returns the function
// that shows its result (run on the event goroutine with fyne.Do; nil when
// there is nothing to show) or an error. It should check ctx between steps
// and return ctx.Err() when cancelled.
type job func(ctx context.Context, progress progressFunc) (apply func(), err error)

// bridge runs jobs in goroutines, one at a time, and brings their results
// back to the event goroutine with fyne.Do. Starting a job cancels the
// running one; the result of a cancelled or superseded job is dropped, so
// the window shows only what the user asked for last. Jobs are serialised
// (the next starts when the previous returns) because backends are not
// safe for concurrent use.
//
// start, cancel and the callbacks run on the event goroutine.
type bridge struct {
	// onBusy is called when the job state changes: busy with the label of
	// the job, or idle.
	onBusy func(busy bool, label string)
	// onProgress shows the progress of the current job.
	onProgress func(frac float64, msg string)
	// onError shows a failed job's error.
	onError func(label string, err error)

	mu     sync.Mutex // guards gen and cancelFn
	gen    uint64
	cancel context.CancelFunc

	work    sync.Mutex     // held while a job runs
	wg      sync.WaitGroup // jobs not yet finished
	pending atomic.Int64   // the same count, which wait reads

	// loop, when set, replaces Fyne's event goroutine (tests): results
	// are queued and run by wait on the goroutine that calls it.
	loop *eventLoop
	// everyProgress, when set, shows every progress update (tests);
	// otherwise no more than ~20 a second are.
	everyProgress bool
}

// do runs f on the event goroutine without waiting.
func (b *bridge) do(f func()) {
	if b.loop != nil {
		b.loop.q <- f
		return
	}
	fyne.Do(f)
}

// doAndWait runs f on the event goroutine and waits for it.
func (b *bridge) doAndWait(f func()) {
	if b.loop == nil {
		fyne.DoAndWait(f)
		return
	}
	done := make(chan struct{})
	b.loop.q <- func() { f(); close(done) }
	<-done
}

// eventLoop stands in for Fyne's event goroutine in tests. Fyne's test
// driver runs fyne.Do at once on the calling goroutine, which would update
// widgets from a job's goroutine while the test reads them; with the loop
// they are updated on the test's goroutine, inside window.Wait, as the
// real app updates them on its event goroutine.
type eventLoop struct{ q chan func() }

func newEventLoop() *eventLoop { return &eventLoop{q: make(chan func(), 1024)} }

// start cancels any running job and runs j in a goroutine.
func (b *bridge) start(label string, j job) {
	b.mu.Lock()
	if b.cancel != nil {
		b.cancel()
	}
	b.gen++
	gen := b.gen
	ctx, cancel := context.WithCancel(context.Background())
	b.cancel = cancel
	b.mu.Unlock()
	if b.onBusy != nil {
		b.onBusy(true, label)
	}
	b.wg.Add(1)
	b.pending.Add(1)
	go func() {
		defer b.wg.Done()
		defer b.pending.Add(-1)
		defer cancel()
		b.work.Lock()
		var (
			apply func()
			err   error
		)
		if err = ctx.Err(); err == nil {
			apply, err = b.protect(ctx, gen, j)
		}
		b.work.Unlock()
		b.do(func() {
			if !b.current(gen) {
				return // superseded or cancelled: the newer state wins
			}
			b.finish(gen)
			if err != nil {
				if !errors.Is(err, context.Canceled) && b.onError != nil {
					b.onError(label, err)
				}
			} else if apply != nil {
				apply()
			}
			// apply may have started the next job, which is busy now.
			if b.onBusy != nil && !b.busy() {
				b.onBusy(false, "")
			}
		})
	}()
}

// side runs f in a goroutine beside the jobs: it neither waits for nor
// cancels them, and they do not cancel it (reading a file the user opened
// while a map computes: a newer map must not lose it). Its result is shown
// on the event goroutine, its error with onError; wait waits for it too.
func (b *bridge) side(label string, f func() (apply func(), err error)) {
	b.wg.Add(1)
	b.pending.Add(1)
	go func() {
		defer b.wg.Done()
		defer b.pending.Add(-1)
		apply, err := func() (apply func(), err error) {
			defer func() {
				if r := recover(); r != nil {
					apply, err = nil, panicError{r}
				}
			}()
			return f()
		}()
		b.do(func() {
			if err != nil {
				if b.onError != nil {
					b.onError(label, err)
				}
			} else if apply != nil {
				apply()
			}
		})
	}()
}

// protect runs j, turning a panic in the engine into an error so that the
// window survives a bug in a backend.
func (b *bridge) protect(ctx context.Context, gen uint64, j job) (apply func(), err error) {
	defer func() {
		if r := recover(); r != nil {
			apply, err = nil, panicError{r}
		}
	}()
	var last time.Time
	progress := func(frac float64, msg string) {
		// Throttle: the event goroutine needs no more than ~20 updates a second.
		now := time.Now()
		if !b.everyProgress && now.Sub(last) < 50*time.Millisecond && frac >= 0 && frac < 1 {
			return
		}
		last = now
		b.do(func() {
			if b.current(gen) && b.onProgress != nil {
				b.onProgress(frac, msg)
			}
		})
	}
	return j(ctx, progress)
}

type panicError struct{ v any }

func (p panicError) Error() string { return "internal error: " + stringOf(p.v) }

func stringOf(v any) string {
	switch v := v.(type) {
	case error:
		return v.Error()
	case string:
		return v
	}
	return "unexpected panic"
}

// current reports whether gen is the latest job and still wanted.
func (b *bridge) current(gen uint64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return gen == b.gen && b.cancel != nil
}

func (b *bridge) finish(gen uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if gen == b.gen {
		b.cancel = nil
	}
}

// stop cancels the running job, if any, and reports whether there was one.
// Its result will be dropped.
func (b *bridge) stop() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cancel == nil {
		return false
	}
	b.cancel()
	b.cancel = nil
	b.gen++
	return true
}

// busy reports whether a job is running (as far as the window is concerned).
func (b *bridge) busy() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.cancel != nil
}

// wait blocks until every started job has returned and delivered its
// result, and the jobs those results started too (a map's follow-up:
// the after date, the stands). Tests use it; the window itself never
// waits. With an event loop it runs the queued updates meanwhile.
func (b *bridge) wait() {
	if b.loop == nil {
		b.wg.Wait()
		return
	}
	// The job count, not the WaitGroup: a result run here may start the
	// next job (Add at a zero count must not race a Wait). A job queues
	// its result before its count drops, so no count and an empty queue
	// mean everything is shown.
	for {
		select {
		case f := <-b.loop.q:
			f()
			continue
		default:
		}
		if b.pending.Load() == 0 {
			select {
			case f := <-b.loop.q:
				f()
				continue
			default:
				return
			}
		}
		select {
		case f := <-b.loop.q:
			f()
		case <-time.After(time.Millisecond):
		}
	}
}
