package remote

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"canopy/compute/internal/retry"
)

// Options tune a Client. The zero value of a field takes its default.
type Options struct {
	// HeaderBytes is the first GET of a file (default 32 KiB, as rio-tiler
	// and GDAL_INGESTED_BYTES_AT_OPEN=32768 read it).
	HeaderBytes int64
	// Parallel bounds the requests in flight over the whole Client
	// (default 8).
	Parallel int
	// Retries is how many times a failed request is tried again after
	// the first (429, 5xx, a broken, stalled or short transfer); 0 takes
	// the default, 5; negative, none.
	Retries int
	// BackoffBase is the first wait before a retry, doubled each time up
	// to MaxBackoff, with jitter (defaults 250 ms and 20 s).
	BackoffBase, MaxBackoff time.Duration
	// MaxRetryAfter is the longest Retry-After honoured: a server asking
	// for a longer wait is answered with an error (default 2 minutes).
	MaxRetryAfter time.Duration
	// ConnectTimeout bounds connecting (and the TLS handshake); default 30 s.
	ConnectTimeout time.Duration
	// HeaderTimeout bounds the wait for a response's headers once the
	// request is sent (default 60 s).
	HeaderTimeout time.Duration
	// IdleTimeout and MinRate bound a body's transfer by its progress,
	// not by a clock for the whole read: no byte for IdleTimeout, or
	// fewer than MinRate bytes a second over any IdleTimeout, and the
	// transfer is abandoned (and retried). Defaults 30 s and 4 KiB/s.
	IdleTimeout time.Duration
	MinRate     int64
	// MaxHeaderBytes bounds a response's headers (default 256 KiB).
	MaxHeaderBytes int64
	// MergeGap is the largest gap between two ranges of one prefetch
	// that are fetched in one request anyway (default 16 KiB; COG tiles
	// sit a few bytes apart, GDAL's leader and trailer).
	MergeGap int64
	// MaxRequest is the longest range one request asks for; longer runs
	// are split (default 64 MiB).
	MaxRequest int64
	// PinLimit bounds the bytes one prefetch keeps in memory; the rest
	// of a window larger than that is fetched as the decoder reads it
	// (default 512 MiB).
	PinLimit int64
	// ReadAhead is the least a read outside the prefetched ranges asks
	// the server for (default 64 KiB).
	ReadAhead int64
	// Cache keeps fetched ranges on disk; nil keeps none.
	Cache *Cache
	// TLS is the base of the TLS configuration (nil: the system's roots,
	// TLS 1.2 at least). HTTP/2 is offered over TLS either way.
	TLS *tls.Config
	// Transport replaces the HTTP transport (tests); its redirects are
	// still checked.
	Transport http.RoundTripper
	// UserAgent is sent with every request (default "canopy").
	UserAgent string
}

func (o Options) withDefaults() Options {
	def := func(v *int64, d int64) {
		if *v <= 0 {
			*v = d
		}
	}
	defD := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.HeaderBytes, 32<<10)
	if o.Parallel <= 0 {
		o.Parallel = 8
	}
	if o.Retries < 0 {
		o.Retries = 0
	} else if o.Retries == 0 {
		o.Retries = 5
	}
	defD(&o.BackoffBase, 250*time.Millisecond)
	defD(&o.MaxBackoff, 20*time.Second)
	defD(&o.MaxRetryAfter, 2*time.Minute)
	defD(&o.ConnectTimeout, 30*time.Second)
	defD(&o.HeaderTimeout, 60*time.Second)
	defD(&o.IdleTimeout, 30*time.Second)
	def(&o.MinRate, 4<<10)
	def(&o.MaxHeaderBytes, 256<<10)
	def(&o.MergeGap, 16<<10)
	def(&o.MaxRequest, 64<<20)
	def(&o.PinLimit, 512<<20)
	def(&o.ReadAhead, 64<<10)
	if o.UserAgent == "" {
		o.UserAgent = "canopy"
	}
	return o
}

// Client makes the range requests of any number of Files, at most
// Options.Parallel at once. Its methods are safe for concurrent use.
type Client struct {
	opt Options
	hc  *http.Client
	sem chan struct{}

	requests, bytes atomic.Int64
}

// Stats counts what a Client or a File asked of servers: requests sent
// (retries included) and body bytes received.
type Stats struct {
	Requests int64
	Bytes    int64
}

// New returns a Client with opt (zero fields take their defaults).
func New(opt Options) *Client {
	opt = opt.withDefaults()
	rt := opt.Transport
	if rt == nil {
		tc := &tls.Config{MinVersion: tls.VersionTLS12}
		if opt.TLS != nil {
			tc = opt.TLS.Clone()
		}
		d := &net.Dialer{Timeout: opt.ConnectTimeout, KeepAlive: 30 * time.Second}
		rt = &http.Transport{
			Proxy:                  http.ProxyFromEnvironment,
			DialContext:            d.DialContext,
			ForceAttemptHTTP2:      true,
			TLSClientConfig:        tc,
			TLSHandshakeTimeout:    opt.ConnectTimeout,
			ResponseHeaderTimeout:  opt.HeaderTimeout,
			MaxResponseHeaderBytes: opt.MaxHeaderBytes,
			MaxIdleConnsPerHost:    opt.Parallel,
			IdleConnTimeout:        90 * time.Second,
			// Range bodies are compressed tiles: asking for gzip would
			// only make Content-Length disagree with the range.
			DisableCompression: true,
		}
	}
	c := &Client{opt: opt, sem: make(chan struct{}, opt.Parallel)}
	c.hc = &http.Client{Transport: rt, CheckRedirect: checkRedirect}
	return c
}

// Stats returns the requests and bytes of every File of the Client so far.
func (c *Client) Stats() Stats { return Stats{c.requests.Load(), c.bytes.Load()} }

// Options returns the Client's options with their defaults filled in.
func (c *Client) Options() Options { return c.opt }

// permanent marks an error that retrying cannot mend.
type permanent struct{ error }

func (p permanent) Unwrap() error { return p.error }

// checkRedirect follows at most 5 redirects, to http and https only, and
// never from one host to another host's private, loopback or link-local
// address (a public server must not make Canopy read the local network).
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 5 {
		return permanent{errors.New("more than 5 redirects")}
	}
	if s := req.URL.Scheme; s != "http" && s != "https" {
		return permanent{fmt.Errorf("the server redirects to a %s: URL; only http and https are followed", s)}
	}
	if h := req.URL.Hostname(); h != via[0].URL.Hostname() && privateHost(req.Context(), h) {
		return permanent{fmt.Errorf("the server redirects to %s, a private or local address of another host; not followed", req.URL.Host)}
	}
	return nil
}

// privateHost reports whether host is, or resolves to, a loopback,
// private, link-local or unspecified address (or cannot be resolved).
func privateHost(ctx context.Context, host string) bool {
	bad := func(ip net.IP) bool {
		return ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() || ip.IsUnspecified() || ip.IsInterfaceLocalMulticast()
	}
	if ip := net.ParseIP(host); ip != nil {
		return bad(ip)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	if err != nil || len(addrs) == 0 {
		return true
	}
	for _, a := range addrs {
		if bad(a.IP) {
			return true
		}
	}
	return false
}

// validator is what identifies one version of a server's file.
type validator struct {
	etag, lastMod string
}

func (v validator) String() string {
	if v.etag != "" {
		return "ETag " + v.etag
	}
	return "Last-Modified " + v.lastMod
}

func (v validator) empty() bool { return v.etag == "" && v.lastMod == "" }

// answer is one range response's body and what it said of the file.
type answer struct {
	data  []byte
	total int64 // the file's size (-1 unknown)
	val   validator
}

// errChanged is the error for a file that changed on the server.
var errChanged = errors.New("the file changed on the server while it was being read; open it again")

// get fetches bytes [off, off+n) of the file at u (the server may hold
// fewer when known is nil: the header request), retrying what can be
// retried (compute/internal/retry). sign, when not nil, signs the URL of
// every try; a refused signed URL is signed afresh once.
func (c *Client) get(ctx context.Context, u string, sign Signer, off, n int64, known *answer, fc *counter) (answer, error) {
	refresh, resigned := false, false
	var a answer
	err := c.policy().Do(ctx, func(int) retry.Outcome {
		for {
			target := u
			if sign != nil {
				s, err := sign.Sign(ctx, u, refresh)
				if err != nil {
					return retry.Outcome{Err: err}
				}
				target, refresh = s, false
			}
			var err error
			if a, err = c.once(ctx, target, off, n, known, fc); err == nil {
				return retry.Outcome{}
			}
			var p permanent
			if errors.As(err, &p) {
				if sign != nil && !resigned && isForbidden(err) {
					resigned, refresh = true, true
					continue
				}
				return retry.Outcome{Err: p.error}
			}
			var ra retryAfter
			busy := errors.As(err, &ra)
			return retry.Outcome{Err: err, Retry: true, Busy: busy, After: ra.wait}
		}
	})
	if err != nil {
		return answer{}, err
	}
	return a, nil
}

// policy is the Client's retry policy.
func (c *Client) policy() retry.Policy {
	r := c.opt.Retries
	if r == 0 {
		r = -1 // withDefaults made 0 mean none
	}
	return retry.Policy{Retries: r, Base: c.opt.BackoffBase, Max: c.opt.MaxBackoff, MaxAfter: c.opt.MaxRetryAfter}
}

// counter is a File's requests and bytes, counted as its requests go.
type counter struct {
	requests, bytes atomic.Int64
}

// forbidden is a 401 or 403 answer; bucket names a requester-pays S3
// bucket the request went to.
type forbidden struct{ status, bucket string }

func (f forbidden) Error() string {
	if f.bucket != "" {
		return "the server refuses access (" + f.status + "): s3://" + f.bucket + " is a requester-pays bucket, read with AWS credentials that bill the reader, which Canopy does not send; the Planetary Computer serves the same scenes (canopy search --api planetary-computer)"
	}
	return "the server refuses access (" + f.status + "): the link may need signing, or its signature expired"
}

func isForbidden(err error) bool {
	var f forbidden
	return errors.As(err, &f)
}

// retryAfter is a 429 or 5xx answer, with the wait the server asked for.
type retryAfter struct {
	status string
	wait   time.Duration // 0: none asked
}

func (r retryAfter) Error() string { return "the server answers " + r.status }

// once sends one range request and checks its answer.
func (c *Client) once(ctx context.Context, u string, off, n int64, known *answer, fc *counter) (answer, error) {
	select {
	case c.sem <- struct{}{}:
	case <-ctx.Done():
		return answer{}, ctx.Err()
	}
	defer func() { <-c.sem }()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return answer{}, permanent{err}
	}
	req.Header.Set("Range", fmt.Sprintf("bytes=%d-%d", off, off+n-1))
	req.Header.Set("User-Agent", c.opt.UserAgent)
	if known != nil && known.val.etag != "" && !strings.HasPrefix(known.val.etag, "W/") {
		req.Header.Set("If-Match", known.val.etag)
	}
	c.requests.Add(1)
	if fc != nil {
		fc.requests.Add(1)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		var p permanent
		if errors.As(err, &p) {
			return answer{}, p
		}
		if strings.Contains(err.Error(), "response headers exceeded") {
			return answer{}, permanent{fmt.Errorf("the server's response headers are longer than %d KiB", c.opt.MaxHeaderBytes>>10)}
		}
		if cause := context.Cause(ctx); cause != nil && ctx.Err() != nil {
			return answer{}, cause
		}
		inner := errors.Unwrap(err) // url.Error's inner error: the URL may hold a signature
		// No server there (no such host; a refused connection at the
		// file's first request, the header's): retrying will not make
		// one, and the disk cache can answer at once. Once the file is
		// open, a refused request is retried: a server restarting in the
		// middle of a long read.
		var de *net.DNSError
		if (errors.As(err, &de) && de.IsNotFound) || (known == nil && retry.Unreachable(err)) {
			return answer{}, permanent{inner}
		}
		return answer{}, inner
	}
	defer resp.Body.Close()
	a := answer{total: -1, val: validator{resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")}}
	if known != nil && !known.val.empty() && !sameVersion(known.val, a.val) {
		return answer{}, permanent{errChanged}
	}
	switch sc := resp.StatusCode; {
	case sc == http.StatusPartialContent:
		first, last, total, ok := parseContentRange(resp.Header.Get("Content-Range"))
		if !ok {
			return answer{}, permanent{fmt.Errorf("the server's Content-Range %q cannot be read", clip(resp.Header.Get("Content-Range")))}
		}
		a.total = total
		want := off + n - 1
		if known == nil && total >= 0 {
			want = min(want, total-1)
		}
		if first != off || last != want || (total >= 0 && last >= total) {
			return answer{}, permanent{fmt.Errorf("the server sent bytes %d-%d for bytes %d-%d (Content-Range %q)", first, last, off, want, clip(resp.Header.Get("Content-Range")))}
		}
		if known != nil && total != known.total {
			return answer{}, permanent{fmt.Errorf("%w (its size went from %d to %d bytes)", errChanged, known.total, total)}
		}
		n = last - first + 1
	case sc == http.StatusOK:
		// The whole file: acceptable for a header request of a file no
		// longer than the header, never for a range of a larger one.
		if off != 0 || resp.ContentLength < 0 || resp.ContentLength > n {
			return answer{}, permanent{fmt.Errorf("the server does not answer byte-range requests (200 OK for bytes %d-%d); the whole file would have to be downloaded", off, off+n-1)}
		}
		n, a.total = resp.ContentLength, resp.ContentLength
		if known != nil && a.total != known.total {
			return answer{}, permanent{errChanged}
		}
	case sc == http.StatusRequestedRangeNotSatisfiable:
		if _, _, total, ok := parseContentRange(resp.Header.Get("Content-Range")); ok && total == 0 && known == nil {
			return answer{}, permanent{errors.New("the file is empty")}
		}
		return answer{}, permanent{fmt.Errorf("%w (416 for bytes %d-%d)", errChanged, off, off+n-1)}
	case sc == http.StatusPreconditionFailed:
		return answer{}, permanent{errChanged}
	case sc == http.StatusTooManyRequests || sc == http.StatusRequestTimeout || sc >= 500:
		io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
		return answer{}, retryAfter{resp.Status, retry.After(resp.Header.Get("Retry-After"))}
	case sc == http.StatusUnauthorized || sc == http.StatusForbidden:
		return answer{}, permanent{forbidden{resp.Status, requesterPaysBucket(req.URL)}}
	case sc == http.StatusNotFound || sc == http.StatusGone:
		return answer{}, permanent{fmt.Errorf("not found (%s)", resp.Status)}
	default:
		return answer{}, permanent{fmt.Errorf("the server answers %s", resp.Status)}
	}
	if resp.ContentLength >= 0 && resp.ContentLength != n {
		return answer{}, permanent{fmt.Errorf("the server announces %d bytes for a range of %d (Content-Length against Content-Range)", resp.ContentLength, n)}
	}
	a.data = make([]byte, n)
	got, err := c.readBody(ctx, cancel, resp.Body, a.data, fc)
	if err != nil {
		return answer{}, err
	}
	if got < n {
		return answer{}, fmt.Errorf("the server sent %d of %d bytes", got, n)
	}
	// Nothing may follow the range (a chunked body without a length).
	var one [1]byte
	if k, _ := io.ReadFull(resp.Body, one[:]); k > 0 {
		return answer{}, permanent{fmt.Errorf("the server sent more than the %d bytes of the range", n)}
	}
	return a, nil
}

// readBody fills dst from body, abandoning a transfer that stalls for
// IdleTimeout or drips slower than MinRate over IdleTimeout.
func (c *Client) readBody(ctx context.Context, cancel context.CancelCauseFunc, body io.Reader, dst []byte, fc *counter) (int64, error) {
	idle := c.opt.IdleTimeout
	stalled := fmt.Errorf("the transfer stalled: no data for %v", idle)
	timer := time.AfterFunc(idle, func() { cancel(stalled) })
	defer timer.Stop()
	var got int64
	winStart, winBytes := time.Now(), int64(0)
	for got < int64(len(dst)) {
		k, err := body.Read(dst[got:min(int64(len(dst)), got+256<<10)])
		got += int64(k)
		winBytes += int64(k)
		c.bytes.Add(int64(k))
		if fc != nil {
			fc.bytes.Add(int64(k))
		}
		if k > 0 {
			timer.Reset(idle)
		}
		if el := time.Since(winStart); el >= idle {
			if float64(winBytes) < float64(c.opt.MinRate)*el.Seconds() {
				return got, fmt.Errorf("the transfer is too slow: %d bytes in %v, under %d bytes a second", winBytes, el.Round(time.Millisecond), c.opt.MinRate)
			}
			winStart, winBytes = time.Now(), 0
		}
		if err == io.EOF {
			return got, nil
		}
		if err != nil {
			if cause := context.Cause(ctx); cause != nil && ctx.Err() != nil {
				return got, cause
			}
			return got, err
		}
	}
	return got, nil
}

// sameVersion reports whether two validators name the same file version:
// the ETags when both have one, else the Last-Modified dates.
func sameVersion(a, b validator) bool {
	if a.etag != "" && b.etag != "" {
		return strings.TrimPrefix(a.etag, "W/") == strings.TrimPrefix(b.etag, "W/")
	}
	if a.lastMod != "" && b.lastMod != "" {
		return a.lastMod == b.lastMod
	}
	return a.empty() == b.empty()
}

// parseContentRange reads "bytes first-last/total" (total "*": -1).
func parseContentRange(h string) (first, last, total int64, ok bool) {
	unit, rest, found := strings.Cut(strings.TrimSpace(h), " ")
	if !found || !strings.EqualFold(unit, "bytes") {
		return
	}
	span, tot, found := strings.Cut(rest, "/")
	if !found {
		return
	}
	total = -1
	if tot != "*" {
		t, err := strconv.ParseInt(tot, 10, 64)
		if err != nil || t < 0 {
			return
		}
		total = t
	}
	if span == "*" {
		return -1, -1, total, total >= 0
	}
	a, b, found := strings.Cut(span, "-")
	if !found {
		return
	}
	f, err1 := strconv.ParseInt(a, 10, 64)
	l, err2 := strconv.ParseInt(b, 10, 64)
	if err1 != nil || err2 != nil || f < 0 || l < f {
		return
	}
	return f, l, total, true
}

// clip shortens a server's text for an error line.
func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// redact drops a URL's query (it may hold a signature) for messages.
func redact(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return clip(u)
	}
	p.RawQuery, p.User = "", nil
	return clip(p.String())
}
