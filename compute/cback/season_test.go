package cback_test

import (
	"testing"

	"canopy/compute/cback"
	"canopy/compute/season/seasontest"
)

// TestSeries runs the per-pixel models' conformance suite on the C code.
func TestSeries(t *testing.T) {
	b := cback.New(0)
	defer b.Close()
	seasontest.Run(t, b)
}
