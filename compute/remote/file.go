package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
)

// A Signer turns a file's URL into the URL a request is sent to, such as
// a Planetary Computer link with its SAS token. refresh asks for a new
// signature (the last one was refused). Sign is called for every request
// and must be cheap when it has a signature at hand.
type Signer interface {
	Sign(ctx context.Context, rawURL string, refresh bool) (string, error)
}

// File is a file on an HTTP(S) server read by byte ranges: an io.ReaderAt
// of Size bytes that compute/geotiff reads (geotiff.NewReader) and that
// fetches a window's tiles together (Prefetch, geotiff.Prefetcher). Its
// methods are safe for concurrent use.
type File struct {
	c    *Client
	ctx  context.Context
	url  string // as given: unsigned
	sign Signer
	size int64
	ver  answer // the header answer: size and validator (data dropped)
	co   *cacheObject
	cnt  counter
	// offlineErr is why the server could not be reached when the File
	// was opened from the cache alone (nil: online).
	offlineErr error

	mu     sync.RWMutex
	mem    []extent // sorted by offset, not overlapping
	recent int64    // bytes of unpinned extents fetched on demand
}

// extent is bytes [off, off+len(data)) of the file held in memory.
type extent struct {
	off    int64
	data   []byte
	pins   int  // prefetches holding it
	keep   bool // the header: kept for the File's life
	recent bool // fetched on demand (counted in File.recent)
}

func (e extent) end() int64 { return e.off + int64(len(e.data)) }

// maxRecent bounds the on-demand bytes kept in memory per File.
const maxRecent = 16 << 20

// Open opens the file at rawURL (http or https; s3:// of a public bucket
// is mapped by HTTPURL) with one GET of its first Options.HeaderBytes,
// which gives its size and validator. ctx bounds the File's later reads
// too. sign may be nil.
func (c *Client) Open(ctx context.Context, rawURL string, sign Signer) (*File, error) {
	u, err := HTTPURL(rawURL)
	if err != nil {
		return nil, err
	}
	f := &File{c: c, ctx: ctx, url: u, sign: sign}
	a, err := c.get(ctx, u, sign, 0, c.opt.HeaderBytes, nil, &f.cnt)
	if err != nil {
		if off := c.offline(u, err, f); off != nil {
			return off, nil
		}
		return nil, fmt.Errorf("%s: %w", redact(u), err)
	}
	if a.total < 0 {
		return nil, fmt.Errorf("%s: the server does not say the file's size (Content-Range bytes …/*)", redact(u))
	}
	f.size = a.total
	f.mem = []extent{{off: 0, data: a.data, keep: true}}
	a.data = nil
	f.ver = a
	if c.opt.Cache != nil && !a.val.empty() {
		f.co = c.opt.Cache.object(cacheKey(u), a.val, a.total)
		f.co.put(0, f.mem[0].data) // for opening without a network
	}
	return f, nil
}

// offline is the File of u as the disk cache holds it, when the server
// cannot be reached (err is the network's, not an answer of the server)
// and the cache holds the file's header: the version cached last, read
// from the cache alone (what was never fetched is an error naming the
// network's). nil when that cannot be.
func (c *Client) offline(u string, err error, f *File) *File {
	var oe *net.OpError
	var de *net.DNSError
	if c.opt.Cache == nil || !(errors.As(err, &oe) || errors.As(err, &de)) {
		return nil
	}
	co, meta := c.opt.Cache.latest(cacheKey(u))
	if co == nil {
		return nil
	}
	head := make([]byte, min(c.opt.HeaderBytes, meta.Size))
	if !co.readAll(head, 0) {
		return nil
	}
	f.size, f.co, f.offlineErr = meta.Size, co, err
	f.ver = answer{total: meta.Size, val: validator{meta.ETag, meta.LastModified}}
	f.mem = []extent{{off: 0, data: head, keep: true}}
	return f
}

// Offline reports whether the File is read from the disk cache alone
// (its server could not be reached when it was opened).
func (f *File) Offline() bool { return f.offlineErr != nil }

// Size is the file's length in bytes.
func (f *File) Size() int64 { return f.size }

// URL is the file's URL as opened (without a signature).
func (f *File) URL() string { return f.url }

// Name is the URL without its query, for messages.
func (f *File) Name() string { return redact(f.url) }

// Stats returns what this File asked of the server so far.
func (f *File) Stats() Stats { return Stats{f.cnt.requests.Load(), f.cnt.bytes.Load()} }

// Close drops the bytes held in memory. The File must not be read after.
func (f *File) Close() error {
	f.mu.Lock()
	f.mem = nil
	f.mu.Unlock()
	return nil
}

// ReadAt reads len(p) bytes at off: from memory, the disk cache, or the
// server (at least Options.ReadAhead bytes, kept for the next reads).
func (f *File) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("negative offset")
	}
	if off >= f.size {
		return 0, io.EOF
	}
	n := min(int64(len(p)), f.size-off)
	pos := off
	for pos < off+n {
		k := f.fromMemory(p[pos-off:n], pos)
		if k == 0 && f.co != nil {
			k = f.co.read(p[pos-off:n], pos)
		}
		if k == 0 {
			want := max(off+n-pos, f.c.opt.ReadAhead)
			want = min(want, f.size-pos)
			if f.offlineErr != nil {
				return int(pos - off), fmt.Errorf("%s: offline, and bytes %d-%d were never fetched into the cache (%w)", f.Name(), pos, pos+want-1, f.offlineErr)
			}
			a, err := f.c.get(f.ctx, f.url, f.sign, pos, want, &f.ver, &f.cnt)
			if err != nil {
				return int(pos - off), fmt.Errorf("%s: %w", f.Name(), err)
			}
			if f.co != nil {
				f.co.put(pos, a.data)
			}
			f.addRecent(pos, a.data)
			k = copy(p[pos-off:n], a.data)
		}
		pos += int64(k)
	}
	if n < int64(len(p)) {
		return int(n), io.EOF
	}
	return int(n), nil
}

// fromMemory copies what memory holds of the file at pos into p, as far
// as one extent reaches; 0 when none holds pos.
func (f *File) fromMemory(p []byte, pos int64) int {
	f.mu.RLock()
	defer f.mu.RUnlock()
	i, _ := slices.BinarySearchFunc(f.mem, pos, func(e extent, t int64) int {
		switch {
		case e.end() <= t:
			return -1
		case e.off > t:
			return 1
		}
		return 0
	})
	if i < len(f.mem) && f.mem[i].off <= pos && pos < f.mem[i].end() {
		e := f.mem[i]
		return copy(p, e.data[pos-e.off:])
	}
	return 0
}

// insert adds an extent, dropping the parts of it that memory already
// holds (so that extents never overlap), and returns what it added.
func (f *File) insert(e extent) []extent {
	var added []extent
	pos, end := e.off, e.end()
	for pos < end {
		i, _ := slices.BinarySearchFunc(f.mem, pos, func(x extent, t int64) int {
			if x.end() <= t {
				return -1
			}
			if x.off > t {
				return 1
			}
			return 0
		})
		if i < len(f.mem) && f.mem[i].off <= pos {
			// Held already: a prefetch pins it for its window.
			if e.pins > 0 {
				f.mem[i].pins++
				added = append(added, f.mem[i])
			}
			pos = f.mem[i].end()
			continue
		}
		stop := end
		if i < len(f.mem) {
			stop = min(stop, f.mem[i].off)
		}
		ne := extent{off: pos, data: e.data[pos-e.off : stop-e.off], pins: e.pins, recent: e.recent}
		f.mem = slices.Insert(f.mem, i, ne)
		added = append(added, ne)
		pos = stop
	}
	return added
}

// addRecent keeps bytes fetched on demand, forgetting the oldest unpinned
// ones past maxRecent.
func (f *File) addRecent(off int64, data []byte) {
	if int64(len(data)) > maxRecent {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, e := range f.insert(extent{off: off, data: data, recent: true}) {
		f.recent += int64(len(e.data))
	}
	for f.recent > maxRecent {
		// Drop the first unpinned, unkept extent (simplest order; the
		// header is kept).
		i := slices.IndexFunc(f.mem, func(e extent) bool { return e.pins == 0 && e.recent })
		if i < 0 {
			break
		}
		f.recent -= int64(len(f.mem[i].data))
		f.mem = slices.Delete(f.mem, i, i+1)
	}
}

// run is a span of the file one request fetches.
type run struct{ off, n int64 }

// plan merges ranges (offset, length) into runs: sorted, overlapping or
// at most gap bytes apart merged, none longer than maxReq unless one range
// is, clipped to [0, size).
func plan(ranges [][2]int64, size, gap, maxReq int64) []run {
	rs := make([]run, 0, len(ranges))
	for _, r := range ranges {
		off, n := r[0], r[1]
		if off < 0 || n <= 0 || off >= size {
			continue
		}
		rs = append(rs, run{off, min(n, size-off)})
	}
	slices.SortFunc(rs, func(a, b run) int {
		if a.off != b.off {
			if a.off < b.off {
				return -1
			}
			return 1
		}
		return 0
	})
	var out []run
	for _, r := range rs {
		if k := len(out) - 1; k >= 0 {
			last := &out[k]
			end := last.off + last.n
			if r.off <= end+gap && max(end, r.off+r.n)-last.off <= maxReq {
				last.n = max(end, r.off+r.n) - last.off
				continue
			}
		}
		out = append(out, r)
	}
	return out
}

// Prefetch fetches the byte ranges (offset, length) a window will read,
// neighbours merged into one request (Options.MergeGap), the requests
// running at once within the Client's bound, and holds them in memory
// until release is called. Ranges the memory or the disk cache holds cost
// no request. Past Options.PinLimit bytes the rest is left to ReadAt.
func (f *File) Prefetch(ranges [][2]int64) (release func(), err error) {
	opt := f.c.opt
	runs := plan(ranges, f.size, opt.MergeGap, opt.MaxRequest)
	var need []run
	var pinned int64
	for _, r := range runs {
		if f.held(r) {
			continue
		}
		if pinned+r.n > opt.PinLimit {
			break
		}
		pinned += r.n
		need = append(need, r)
	}
	got := make([][]byte, len(need))
	errs := make([]error, len(need))
	var wg sync.WaitGroup
	for i, r := range need {
		if f.co != nil {
			buf := make([]byte, r.n)
			if f.co.readAll(buf, r.off) {
				got[i] = buf
				continue
			}
		}
		if f.offlineErr != nil {
			errs[i] = fmt.Errorf("offline, and bytes %d-%d were never fetched into the cache (%w)", r.off, r.off+r.n-1, f.offlineErr)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			a, err := f.c.get(f.ctx, f.url, f.sign, r.off, r.n, &f.ver, &f.cnt)
			if err != nil {
				errs[i] = err
				return
			}
			got[i] = a.data
			if f.co != nil {
				f.co.put(r.off, a.data)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		for _, e := range errs {
			if e != nil {
				return nil, fmt.Errorf("%s: %w", f.Name(), e)
			}
		}
	}
	f.mu.Lock()
	var mine []extent
	for i, r := range need {
		mine = append(mine, f.insert(extent{off: r.off, data: got[i], pins: 1})...)
	}
	f.mu.Unlock()
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, e := range mine {
			i := slices.IndexFunc(f.mem, func(x extent) bool { return x.off == e.off && len(x.data) == len(e.data) })
			if i >= 0 {
				f.mem[i].pins--
				if f.mem[i].pins <= 0 && !f.mem[i].keep {
					if f.mem[i].recent {
						f.recent -= int64(len(f.mem[i].data))
					}
					f.mem = slices.Delete(f.mem, i, i+1)
				}
			}
		}
	}, nil
}

// held reports whether memory holds all of r.
func (f *File) held(r run) bool {
	f.mu.RLock()
	defer f.mu.RUnlock()
	pos, end := r.off, r.off+r.n
	for pos < end {
		i, found := slices.BinarySearchFunc(f.mem, pos, func(e extent, t int64) int {
			if e.end() <= t {
				return -1
			}
			if e.off > t {
				return 1
			}
			return 0
		})
		if !found {
			return false
		}
		pos = f.mem[i].end()
	}
	return true
}
