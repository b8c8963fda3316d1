package glback

import (
	"testing"

	"canopy/compute/computetest"
)

// TestJobs runs the engine's conformance suite on generated shaders:
// every catalogue index together over bands of every stored type, with
// and without a mask, each index alone, and random formulas over NaN,
// ±Inf, zeros, tiny and huge values, at sizes that fit no work group.
func TestJobs(t *testing.T) {
	computetest.RunJobs(t, newBackend(t), false)
}
