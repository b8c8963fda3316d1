// Package cputime reads the CPU time the process has used, for tests that
// bound how much work a case costs: unlike the wall clock, it does not
// grow when other work shares the machine.
package cputime

import "time"

// Since is the CPU time (user and system, every thread) the process used
// since t0, a value of Now.
func Since(t0 time.Duration) time.Duration { return Now() - t0 }
