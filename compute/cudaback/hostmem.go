package cudaback

import (
	"canopy/compute/par"
	"os"
	"runtime"
	"slices"
	"sync"
	"unsafe"

	"canopy/native/cuda"
)

// pinnedRange is a page-aligned host range registered with the driver,
// holding the Go objects in it pinned for as long as it is registered. It
// is shared by every Backend of the process that uses it (refs): the
// driver registers a page once, and two backends may well be given the
// same slices (the command line's benchmark makes one per mode).
type pinnedRange struct {
	drv    *cuda.Driver
	lo, hi uintptr
	base   unsafe.Pointer // lo as a pointer, for cuMemHostUnregister
	pin    runtime.Pinner
	refs   int
}

// registry is every range registered by this process's backends.
var registry struct {
	sync.Mutex
	ranges []*pinnedRange
}

// acquire returns the registered range w of host, registering it (and
// pinning its Go objects) unless a backend already did. Context current.
func acquire(d *cuda.Driver, host [][]byte, w cuda.PageSpan) (*pinnedRange, bool, error) {
	registry.Lock()
	defer registry.Unlock()
	for _, p := range registry.ranges {
		if p.drv == d && p.lo == w.Lo && p.hi == w.Hi {
			p.refs++
			return p, false, nil
		}
	}
	// The range starts at the page holding the lowest member's first
	// byte: an offset back from a pointer into it.
	first := w.Members[0]
	for _, m := range w.Members {
		if uintptr(unsafe.Pointer(unsafe.SliceData(host[m]))) < uintptr(unsafe.Pointer(unsafe.SliceData(host[first]))) {
			first = m
		}
	}
	fp := unsafe.Pointer(unsafe.SliceData(host[first]))
	p := &pinnedRange{drv: d, lo: w.Lo, hi: w.Hi, base: unsafe.Add(fp, -int(uintptr(fp)-w.Lo)), refs: 1}
	for _, m := range w.Members {
		p.pin.Pin(unsafe.SliceData(host[m]))
	}
	// Portable: a backend on another device (season.Devices) that finds
	// the range here uses it as pinned too.
	if err := d.HostRegister(p.base, int(w.Hi-w.Lo), cuda.HostRegisterPortable); err != nil {
		p.pin.Unpin()
		return nil, false, err
	}
	registry.ranges = append(registry.ranges, p)
	return p, true, nil
}

// releaseRange drops one use of p, unregistering it after the last.
// Context current. It reports whether it unregistered.
func releaseRange(p *pinnedRange) bool {
	registry.Lock()
	defer registry.Unlock()
	if p.refs--; p.refs > 0 {
		return false
	}
	p.drv.HostUnregister(p.base)
	p.pin.Unpin()
	for i, q := range registry.ranges {
		if q == p {
			registry.ranges = append(registry.ranges[:i], registry.ranges[i+1:]...)
			break
		}
	}
	return true
}

// pinHost decides, for each buffer (red, nir and out for Run; bands, mask
// and outputs for RunJob), whether the GPU can reach it in place: in HostRegister mode every buffer of RegisterMin bytes or
// more is page-locked (kept from earlier runs when it is the same range).
// Registrations that the new buffers do not use are released. A buffer the
// driver refuses to register is staged, and regErr says why. Context
// current, s.mu held.
func (s *state) pinHost(host [][]byte) (direct []bool, regErr string) {
	direct = make([]bool, len(host))
	var idx []int
	if s.host == HostRegister {
		for i, b := range host {
			if len(b) >= RegisterMin {
				idx = append(idx, i)
			}
		}
	}
	page := uintptr(os.Getpagesize())
	want := cuda.PageSpans(host, idx, page)
	same := func(p *pinnedRange, w cuda.PageSpan) bool { return p.lo == w.Lo && p.hi == w.Hi }
	// Drop what the new buffers do not use exactly.
	var kept []*pinnedRange
	for _, p := range s.pins {
		if slices.ContainsFunc(want, func(w cuda.PageSpan) bool { return same(p, w) }) {
			kept = append(kept, p)
		} else if releaseRange(p) {
			s.didSetup = true
		}
	}
	s.pins = kept
	for _, w := range want {
		if !slices.ContainsFunc(s.pins, func(p *pinnedRange) bool { return same(p, w) }) {
			p, registered, err := acquire(s.drv, host, w)
			if err != nil {
				regErr = err.Error()
				continue
			}
			if registered {
				s.didSetup = true
			}
			s.pins = append(s.pins, p)
		}
		for _, m := range w.Members {
			direct[m] = true
		}
	}
	return direct, regErr
}

// unpinAll drops every range this backend uses (context current).
func (s *state) unpinAll() {
	for _, p := range s.pins {
		releaseRange(p)
	}
	s.pins = nil
	for _, p := range s.kept {
		releaseRange(p)
	}
	s.kept = nil
}

// copyWorkers is how many goroutines one staging copy uses.
func copyWorkers() int { return max(1, par.DefaultThreads()/2) }

// parallelCopy copies src into dst on up to workers goroutines.
func parallelCopy(dst, src []byte, workers int) { par.Copy(dst, src, workers, nil) }
