package compute_test

import (
	"slices"
	"testing"

	"canopy/compute"
	"canopy/compute/computetest"
	"canopy/compute/fake"
)

// TestBenchJobProgress: BenchJob tells its progress in Repeat + 2 steps,
// in order: the warm-up, each timed sample, the verification.
func TestBenchJobProgress(t *testing.T) {
	b, err := compute.New(compute.NameGo)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	j := computetest.NDVIJob(fake.Noise, 64, 64, 1)
	var steps []int
	res := compute.BenchJob(b, j, compute.BenchOptions{Repeat: 3, HostCeiling: 1, Progress: func(done, total int) {
		if total != 5 {
			t.Errorf("total %d, want Repeat + 2 = 5", total)
		}
		steps = append(steps, done)
	}})
	if res.Error != "" {
		t.Fatal(res.Error)
	}
	if !slices.Equal(steps, []int{1, 2, 3, 4, 5}) {
		t.Errorf("steps %v, want 1 to 5", steps)
	}
}
