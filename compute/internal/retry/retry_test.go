package retry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
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

func TestUnreachable(t *testing.T) {
	// A real refused connection: a port listened on, then closed.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, refused := net.Dial("tcp", addr)
	if refused == nil {
		t.Skip("a closed loopback port accepted a connection")
	}
	timeout := &net.OpError{Op: "dial", Net: "tcp", Err: os.ErrDeadlineExceeded}
	for _, c := range []struct {
		err  error
		want bool
	}{
		{refused, true},
		{fmt.Errorf("get: %w", refused), true},
		{&net.DNSError{Err: "no such host", Name: "nowhere.invalid", IsNotFound: true}, true},
		{&net.DNSError{Err: "server misbehaving", Name: "x.example", IsTemporary: true}, false},
		{timeout, false},
		{&net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}, false},
		{io.ErrUnexpectedEOF, false},
	} {
		if got := Unreachable(c.err); got != c.want {
			t.Errorf("Unreachable(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
