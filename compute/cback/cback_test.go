package cback_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"golang.org/x/sys/cpu"

	"canopy/compute"
	"canopy/compute/cback"
	"canopy/compute/computetest"
)

// The c backend runs every engine conformance job exactly as the float32
// definition (index.Program.Eval32 over Job.Value32) says, bit for bit.
func TestRunJobs(t *testing.T) {
	b := cback.New(3)
	defer b.Close()
	computetest.RunJobs(t, b, true)
}

// Odd thread counts split the image at other places; one thread runs the
// whole image in one call. The small odd sizes above the parallel
// threshold (65537×1, 257×131) already split into every thread count's
// spans, so one large case stands for the large sizes here; TestRunJobs
// runs them all.
func TestJobs(t *testing.T) {
	for _, threads := range []int{1, 5, 7} {
		t.Run(string(rune('0'+threads))+" threads", func(t *testing.T) {
			b := cback.New(threads)
			defer b.Close()
			computetest.RunJobsOneLarge(t, b, true)
		})
	}
}

// Engine is implemented; Info names the interpreter's instruction set.
var _ compute.Backend = (*cback.Backend)(nil)

// The portable C ops (CPUs without AVX2, CANOPY_NOSIMD=1) pass the same
// suite: a child process runs TestRunJobs with them.
func TestRunJobsScalar(t *testing.T) {
	if os.Getenv("CBACK_TEST_CHILD") != "" {
		t.Skip("in the child")
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestRunJobs$", "-test.short")
	cmd.Env = append(os.Environ(), "CBACK_TEST_CHILD=1", "CANOPY_NOSIMD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("scalar ops: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "PASS") {
		t.Fatalf("scalar ops: the child did not pass:\n%s", out)
	}
}

// The interpreter in use is the one Info names.
func TestInfoNamesISA(t *testing.T) {
	want := "avx2"
	if os.Getenv("CANOPY_NOSIMD") == "1" || !cpuHasAVX2() {
		want = "scalar"
	}
	if d := cback.New(1).Info().Device; !strings.Contains(d, "C "+want+" ") {
		t.Fatalf("device %q does not name the %s interpreter", d, want)
	}
}

func cpuHasAVX2() bool { return cpu.X86.HasAVX2 && cpu.X86.HasAVX }
