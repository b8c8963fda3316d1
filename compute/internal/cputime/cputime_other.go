//go:build !unix

package cputime

import "time"

var start = time.Now()

// Now is the wall time since the process started, where the system gives
// no CPU time to read.
func Now() time.Duration { return time.Since(start) }
