package season

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"canopy/compute"
)

// Devices is what a backend with several devices of its kind implements
// (cudaback: every CUDA GPU of the machine), an optional interface of
// compute.Backend found by type assertion: a season run deals its blocks
// to one backend per device (Deal).
type Devices interface {
	// DeviceCount is the number of devices the backend can run on.
	DeviceCount() (int, error)
	// OnDevice returns a new backend of the same kind and settings on
	// device i (0 ≤ i < DeviceCount), with a context, streams and device
	// buffers of its own; the caller closes it.
	OnDevice(i int) (compute.Backend, error)
}

// Spread returns b and, when b has several devices (Devices), a backend
// on each further one: n of them (n ≤ 0: every device; n larger than the
// devices there are is an error). A backend of one device, or one that is
// not a Devices, is itself alone (n > 1 is then an error). close closes
// the backends Spread opened (not b).
func Spread(b compute.Backend, n int) (bs []compute.Backend, close func(), err error) {
	bs = []compute.Backend{b}
	close = func() {}
	d, ok := b.(Devices)
	if !ok {
		if n > 1 {
			return nil, close, fmt.Errorf("the %s backend runs on one device, not %d", b.Name(), n)
		}
		return bs, close, nil
	}
	count, err := d.DeviceCount()
	if err != nil {
		return nil, close, fmt.Errorf("%s: %w", b.Name(), err)
	}
	if n > count {
		return nil, close, fmt.Errorf("%d devices asked for; the %s backend has %d here", n, b.Name(), count)
	}
	if n <= 0 {
		n = max(count, 1)
	}
	close = func() {
		for _, o := range bs[1:] {
			o.Close()
		}
	}
	for i := 1; i < n; i++ {
		o, err := d.OnDevice(i)
		if err != nil {
			close()
			return nil, func() {}, fmt.Errorf("%s device %d: %w", b.Name(), i, err)
		}
		bs = append(bs, o)
		if info := o.Info(); !info.Available {
			close()
			return nil, func() {}, fmt.Errorf("%s device %d cannot run: %s", b.Name(), i, info.Reason)
		}
	}
	return bs, close, nil
}

// Deal runs blocks 0..n−1 over the backends, one per device: build makes
// block k's job (reusing, when not nil, the job of a block already
// handed to sink: its cube and planes), in block order on one goroutine;
// the next free backend runs it (RunJob); sink hears every block's job in
// block order, on the caller's goroutine, whatever order the devices
// finish in. At most two blocks per backend are made and not yet sunk, so
// memory is bounded. The first error (of build, a backend, sink, or ctx)
// stops the dealing: blocks in flight finish, nothing more is sunk, and
// that error is returned (a backend's named by its device when there are
// several). Timings are every block's, summed.
func Deal(ctx context.Context, backends []compute.Backend, n int, build func(k int, reuse *Job) (*Job, error), sink func(k int, j *Job) error) (compute.Timings, error) {
	var total compute.Timings
	if len(backends) == 0 {
		return total, errors.New("season: no backend to run on")
	}
	for _, b := range backends {
		if !Runs(b) {
			return total, fmt.Errorf("the %s backend does not run per-pixel models over a stack of dates", b.Name())
		}
	}
	if n <= 0 {
		return total, ctx.Err()
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	type block struct {
		k   int
		job *Job
		t   compute.Timings
		err error
	}
	depth := 2 * len(backends)
	tokens := make(chan struct{}, depth) // blocks made and not sunk
	spare := make(chan *Job, depth)      // sunk jobs for make to reuse
	work := make(chan block)             // made blocks, to the next free backend
	done := make(chan block, depth)      // run blocks, in any order
	var wg sync.WaitGroup
	wg.Go(func() { // the dealer: makes blocks in order
		defer close(work)
		for k := range n {
			select {
			case tokens <- struct{}{}:
			case <-ctx.Done():
				return
			}
			var reuse *Job
			select {
			case reuse = <-spare:
			default:
			}
			j, err := build(k, reuse)
			if err == nil {
				err = ctx.Err()
			}
			if err != nil {
				cancel(err)
				return
			}
			select {
			case work <- block{k: k, job: j}:
			case <-ctx.Done():
				return
			}
		}
	})
	var runners sync.WaitGroup
	for d, b := range backends {
		runners.Go(func() {
			for bl := range work {
				if ctx.Err() != nil {
					continue // drain: the dealer stops at the cancel
				}
				bl.t, bl.err = RunJob(b, bl.job)
				if bl.err != nil && len(backends) > 1 {
					bl.err = fmt.Errorf("%s device %d: %w", b.Name(), d, bl.err)
				}
				done <- bl
			}
		})
	}
	wg.Go(func() {
		runners.Wait()
		close(done)
	})
	// The collector, on the caller's goroutine: sinks in block order.
	waiting := map[int]block{}
	next := 0
	for bl := range done {
		if bl.err != nil {
			cancel(bl.err)
		}
		if ctx.Err() != nil {
			continue
		}
		waiting[bl.k] = bl
		for {
			w, ok := waiting[next]
			if !ok {
				break
			}
			delete(waiting, next)
			total.Add(w.t)
			if err := sink(next, w.job); err != nil {
				cancel(err)
				break
			}
			next++
			spare <- w.job
			<-tokens
		}
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil && next < n {
		return total, err
	}
	return total, nil
}
