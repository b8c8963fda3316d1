package retry

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestDo: a busy server is tried Retries+1 times and said so; a broken
// exchange likewise with its own words; an error that may not be retried
// is tried once; a wait longer than MaxAfter ends at once; a cancelled
// context ends with its error; success after failures is success.
func TestDo(t *testing.T) {
	p := Policy{Retries: 2, Base: time.Microsecond, Max: time.Microsecond}
	ctx := context.Background()
	busy := errors.New("the server answers 429 Too Many Requests")
	for _, c := range []struct {
		name  string
		o     Outcome
		tries int
		want  string
	}{
		{"busy", Outcome{Err: busy, Retry: true, Busy: true}, 3, "429 Too Many Requests, still after 3 tries; try again later"},
		{"broken", Outcome{Err: errors.New("connection reset"), Retry: true}, 3, "connection reset (after 3 tries)"},
		{"permanent", Outcome{Err: errors.New("not found")}, 1, "not found"},
		{"an hour", Outcome{Err: busy, Retry: true, Busy: true, After: time.Hour}, 1, "and asks to wait 1h0m0s; try again later"},
	} {
		n := 0
		err := p.Do(ctx, func(try int) Outcome {
			if try != n {
				t.Fatalf("%s: try %d numbered %d", c.name, n, try)
			}
			n++
			return c.o
		})
		if n != c.tries || err == nil || !strings.HasSuffix(err.Error(), c.want) || (c.o.Err != nil && !errors.Is(err, c.o.Err)) {
			t.Errorf("%s: %d tries, %v; want %d and %q", c.name, n, err, c.tries, c.want)
		}
	}
	n := 0
	if err := p.Do(ctx, func(int) Outcome {
		n++
		if n < 3 {
			return Outcome{Err: busy, Retry: true, Busy: true}
		}
		return Outcome{}
	}); err != nil || n != 3 {
		t.Fatalf("success on the third try: %v after %d", err, n)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := p.Do(cctx, func(int) Outcome { return Outcome{Err: busy, Retry: true} }); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
	if d := (Policy{Base: time.Second, Max: 4 * time.Second}).Wait(10, Outcome{After: 7 * time.Second}); d != 7*time.Second {
		t.Fatalf("a Retry-After of 7 s past the 4 s cap: %v", d)
	}
	if After("120") != 2*time.Minute || After("") != 0 || After("soon") != 0 || After("-5") != 0 {
		t.Fatal("After")
	}
}
