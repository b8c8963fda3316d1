// Package retry is the one retry loop of Canopy's HTTP clients
// (compute/remote's range reader, compute/stac's search and token
// fetches): a request is tried again after a 429, a 5xx or a broken
// exchange, a bounded number of times, with exponential backoff and
// jitter, honouring the wait a server asks for (Retry-After) up to a
// limit, and stopping at once when its context ends.
package retry

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Policy is how a request is retried. Zero fields take their defaults.
type Policy struct {
	// Retries is how many times a request is tried again after the
	// first (default 5); negative, none.
	Retries int
	// Base is the first wait (default 250 ms), doubled each time up to
	// Max (default 20 s), with jitter: a wait d is drawn from [d/2, d].
	Base, Max time.Duration
	// MaxAfter is the longest wait a server may ask for: a longer one
	// ends the retries at once (default 2 minutes).
	MaxAfter time.Duration
}

// Outcome is one try's: Err nil for success; Retry whether trying again
// may mend it; Busy whether the server answered that it cannot serve now
// (429, 5xx), After the wait it asked for (0: none).
type Outcome struct {
	Err   error
	Retry bool
	Busy  bool
	After time.Duration
}

func (p Policy) withDefaults() Policy {
	if p.Retries == 0 {
		p.Retries = 5
	} else if p.Retries < 0 {
		p.Retries = 0
	}
	if p.Base <= 0 {
		p.Base = 250 * time.Millisecond
	}
	if p.Max <= 0 {
		p.Max = 20 * time.Second
	}
	if p.MaxAfter <= 0 {
		p.MaxAfter = 2 * time.Minute
	}
	return p
}

// Wait is the wait before retry number try (1-based) of a try that
// ended with o, or -1 when the server asks for longer than MaxAfter.
func (p Policy) Wait(try int, o Outcome) time.Duration {
	p = p.withDefaults()
	d := p.Base << min(try-1, 20)
	if d > p.Max || d <= 0 {
		d = p.Max
	}
	d = d/2 + time.Duration(rand.Int64N(int64(d/2)+1))
	if o.After > 0 {
		if o.After > p.MaxAfter {
			return -1
		}
		d = max(d, o.After)
	}
	return d
}

// Do calls once (with the try's number, 0 first) until it succeeds, its
// error may not be retried, the retries are spent, the server asks for a
// wait longer than MaxAfter, or ctx ends (ctx's error then). The error
// says which: the try's own, "…, still after N tries; try again later"
// for a busy server, "… (after N tries)" for a broken exchange, "… and
// asks to wait D; try again later".
func (p Policy) Do(ctx context.Context, once func(try int) Outcome) error {
	p = p.withDefaults()
	for try := 0; ; try++ {
		o := once(try)
		if o.Err == nil {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if !o.Retry {
			return o.Err
		}
		if try >= p.Retries {
			if o.Busy {
				return fmt.Errorf("%w, still after %d tries; try again later", o.Err, try+1)
			}
			return fmt.Errorf("%w (after %d tries)", o.Err, try+1)
		}
		wait := p.Wait(try+1, o)
		if wait < 0 {
			return fmt.Errorf("%w and asks to wait %v; try again later", o.Err, o.After)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// After reads a Retry-After header: seconds or an HTTP date; 0 for none
// or one that cannot be read.
func After(h string) time.Duration {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0
	}
	if s, err := strconv.ParseInt(h, 10, 64); err == nil {
		if s < 0 {
			return 0
		}
		return time.Duration(min(s, 1<<31)) * time.Second
	}
	if t, err := http.ParseTime(h); err == nil {
		return max(0, time.Until(t))
	}
	return 0
}

// Unreachable reports whether err says that no server is there to ask: a
// connection refused (or any other failed dial that did not time out) or
// a host name with no address. Unlike a broken or timed-out exchange, that
// does not mend within a backoff's seconds, so the first request to a
// server is not retried on it: offline, Canopy then turns to what it has
// cached at once instead of after a minute of waiting.
func Unreachable(err error) bool {
	var oe *net.OpError
	var de *net.DNSError
	return (errors.As(err, &oe) && oe.Op == "dial" && !oe.Timeout()) || (errors.As(err, &de) && de.IsNotFound)
}
