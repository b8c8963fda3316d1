package remote

import (
	"bytes"
	"context"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// A refused connection at a file's first request fails the Open at once
// (the caller, the window offline, turns to the disk cache without
// waiting out the backoff), while one in the middle of a read of an open
// file is retried like a broken exchange: a server restarting.
func TestRefusedAtOpenNotRetried(t *testing.T) {
	body := make([]byte, 100<<10)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range body {
		body[i] = byte(r.Uint32())
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		http.ServeContent(w, req, "f.bin", time.Unix(0, 0), bytes.NewReader(body))
	}))
	defer srv.Close()
	var calls, refuse atomic.Int64 // refuse: how many more requests to refuse
	c := New(Options{Retries: 3, BackoffBase: time.Millisecond, MaxBackoff: time.Millisecond,
		Transport: rtFunc(func(req *http.Request) (*http.Response, error) {
			calls.Add(1)
			if refuse.Add(-1) >= 0 {
				return nil, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
			}
			return http.DefaultTransport.RoundTrip(req)
		})})
	u := srv.URL + "/f.bin"

	refuse.Store(1 << 20)
	if _, err := c.Open(context.Background(), u, nil); err == nil || !strings.Contains(err.Error(), "connection refused") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("open with the server refusing: %v; want one line saying connection refused", err)
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("open with the server refusing sent %d requests, want 1 (no retry)", n)
	}

	refuse.Store(0)
	f, err := c.Open(context.Background(), u, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	calls.Store(0)
	refuse.Store(2) // the next two tries of the read are refused
	got := make([]byte, 1000)
	if _, err := f.ReadAt(got, 80<<10); err != nil {
		t.Fatalf("a read refused twice, then served: %v", err)
	}
	if !bytes.Equal(got, body[80<<10:80<<10+1000]) {
		t.Fatal("the read after the retries returned other bytes than the file's")
	}
	if n := calls.Load(); n != 3 {
		t.Fatalf("a read refused twice sent %d requests, want 3 (two retried)", n)
	}
}
