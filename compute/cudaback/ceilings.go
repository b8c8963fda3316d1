package cudaback

import (
	"fmt"
	"runtime"
	"time"
	"unsafe"

	"canopy/compute"
	"canopy/native/cuda"
)

// ceilingRepeats is how many timed copies each ceiling takes the best of,
// after one untimed warm-up.
const ceilingRepeats = 5

// Ceilings implements compute.DeviceCeilings: the best of five copies of
// bytes (rounded up to a multiple of 4, at least 1 MiB) device to device
// (counting bytes read plus bytes written, as NDVI's 12 bytes per pixel
// count them), host to device and device to host from page-locked memory,
// and both directions at once on two streams (bytes moved both ways
// together). Buffers are allocated for the measurement and freed after it.
func (b *Backend) Ceilings(bytes int) (compute.Ceilings, error) {
	s := b.s
	s.mu.Lock()
	defer s.mu.Unlock()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := s.open(); err != nil {
		return compute.Ceilings{}, fmt.Errorf("cuda: %w", err)
	}
	if err := s.ctx.SetCurrent(); err != nil {
		return compute.Ceilings{}, fmt.Errorf("cuda: %w", err)
	}
	bytes = max(1<<20, (bytes+3)&^3)
	c, err := s.ceilings(bytes)
	if err != nil {
		return c, fmt.Errorf("cuda: measure copy ceilings with %d bytes: %w", bytes, err)
	}
	return c, nil
}

func (s *state) ceilings(bytes int) (c compute.Ceilings, err error) {
	d := s.drv
	var dev [2]cuda.DevicePtr
	var host [2]unsafe.Pointer
	var ev []cuda.Event
	var streams []cuda.Stream
	defer func() {
		d.Synchronize()
		for _, p := range dev {
			if p != 0 {
				d.MemFree(p)
			}
		}
		for _, p := range host {
			if p != nil {
				d.FreeHost(p)
			}
		}
		for _, e := range ev {
			d.EventDestroy(e)
		}
		for _, st := range streams {
			d.StreamDestroy(st)
		}
	}()
	for i := range dev {
		if dev[i], err = d.MemAlloc(bytes); err != nil {
			return c, err
		}
		if host[i], err = d.HostAlloc(bytes, 0); err != nil {
			return c, err
		}
	}
	for range 3 {
		e, err := d.EventCreate(cuda.EventDefault)
		if err != nil {
			return c, err
		}
		ev = append(ev, e)
	}
	for range 2 {
		st, err := d.StreamCreate(cuda.StreamNonBlocking)
		if err != nil {
			return c, err
		}
		streams = append(streams, st)
	}
	// Real bytes, not zeros, in every buffer.
	src := unsafe.Slice((*byte)(host[0]), bytes)
	for i := range src[:4096] {
		src[i] = byte(i*7 + 1)
	}
	for k := 4096; k < bytes; k *= 2 {
		copy(src[k:], src[:k])
	}
	st := streams[0]
	if err = d.MemcpyHtoDAsync(dev[0], host[0], bytes, st); err != nil {
		return c, err
	}
	if err = d.MemcpyHtoDAsync(dev[1], host[0], bytes, st); err != nil {
		return c, err
	}

	// best times one copy on streams[0], warm-up first.
	best := func(copyOnce func() error) (time.Duration, error) {
		b := time.Duration(1<<63 - 1)
		for r := range ceilingRepeats + 1 {
			if err := d.EventRecord(ev[0], st); err != nil {
				return 0, err
			}
			if err := copyOnce(); err != nil {
				return 0, err
			}
			if err := d.EventRecord(ev[1], st); err != nil {
				return 0, err
			}
			if err := d.EventSynchronize(ev[1]); err != nil {
				return 0, err
			}
			t, err := d.EventElapsed(ev[0], ev[1])
			if err != nil {
				return 0, err
			}
			if r > 0 {
				b = min(b, t)
			}
		}
		return max(b, time.Nanosecond), nil
	}
	gbps := func(n int, t time.Duration) float64 { return float64(n) / float64(t.Nanoseconds()) }

	t, err := best(func() error { return d.MemcpyDtoDAsync(dev[1], dev[0], bytes, st) })
	if err != nil {
		return c, err
	}
	c.DeviceCopy = gbps(2*bytes, t)
	if t, err = best(func() error { return d.MemcpyHtoDAsync(dev[0], host[0], bytes, st) }); err != nil {
		return c, err
	}
	c.H2D = gbps(bytes, t)
	if t, err = best(func() error { return d.MemcpyDtoHAsync(host[1], dev[1], bytes, st) }); err != nil {
		return c, err
	}
	c.D2H = gbps(bytes, t)
	// Both ways: streams[1] starts with streams[0] (ev[0]) and records its
	// end in ev[2]; the time is until the later of the two ends.
	if t, err = best(func() error {
		if err := d.StreamWaitEvent(streams[1], ev[0]); err != nil {
			return err
		}
		if err := d.MemcpyDtoHAsync(host[1], dev[1], bytes, streams[1]); err != nil {
			return err
		}
		if err := d.EventRecord(ev[2], streams[1]); err != nil {
			return err
		}
		if err := d.MemcpyHtoDAsync(dev[0], host[0], bytes, st); err != nil {
			return err
		}
		return d.StreamWaitEvent(st, ev[2])
	}); err != nil {
		return c, err
	}
	c.Duplex = gbps(2*bytes, t)
	return c, nil
}
