package glback

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"canopy/compute"
)

// TestJobStream streams the conformance jobs (every catalogue index over
// bands of every stored type, with and without a mask, random formulas
// over NaN, ±Inf and zeros, sizes that fit no work group) through a
// stream of 3 in each transfer mode, with the device planes cut into
// parts of 1024 pixels as well as whole, and requires each job's bits to
// equal its run alone; then the stream's contract: a job too many, Wait
// with none in flight, a closed stream, a closed backend.
func TestJobStream(t *testing.T) {
	cases, want := referenceOutputs(t)
	for _, part := range []int{0, 1024} {
		b := New()
		if part > 0 {
			b.tu.part = part
			b.tu.memory = MemoryGL // parts in CUDA memory are whole granules
		}
		need(t, b)
		for _, mode := range b.Modes() {
			name := fmt.Sprintf("part %d, %s", part, mode)
			js, err := b.StreamJobs(3)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for _, c := range cases {
				for _, o := range c.Job.Out {
					for p := range o {
						o[p] = 12345
					}
				}
				c.Job.Mode = mode
			}
			check := func(i int, tm compute.Timings) {
				t.Helper()
				j := cases[i].Job
				for o := range j.Out {
					for p, got := range j.Out[o] {
						w := want[i][o][p]
						if math.Float32bits(got) != math.Float32bits(w) && !(got != got && w != w) {
							t.Fatalf("%s: %s: %s pixel %d: streamed %g, alone %g", name, cases[i].Name, j.Names[o], p, got, w)
						}
					}
				}
				if tm.Kernel <= 0 || tm.Upload <= 0 || tm.Download <= 0 || tm.Total < tm.Upload+tm.Kernel+tm.Download {
					t.Errorf("%s: %s: timings %+v", name, cases[i].Name, tm)
				}
			}
			waited := 0
			for i, c := range cases {
				if i-waited == 3 {
					if err := js.Submit(c.Job); err == nil || !strings.Contains(err.Error(), "already in flight") {
						t.Fatalf("%s: a fourth job in a stream of 3: %v", name, err)
					}
					tm, err := js.Wait()
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					check(waited, tm)
					waited++
				}
				if err := js.Submit(c.Job); err != nil {
					t.Fatalf("%s: %s: %v", name, c.Name, err)
				}
			}
			for ; waited < len(cases)-2; waited++ {
				tm, err := js.Wait()
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				check(waited, tm)
			}
			// Two jobs are still in flight: Close finishes them.
			if err := js.Close(); err != nil {
				t.Fatalf("%s: Close: %v", name, err)
			}
			for i := waited; i < len(cases); i++ {
				check(i, compute.Timings{Upload: 1, Kernel: 1, Download: 1, Total: 3})
			}
			if err := js.Close(); err != nil {
				t.Fatalf("%s: second Close: %v", name, err)
			}
			if err := js.Submit(cases[0].Job); err == nil {
				t.Fatalf("%s: Submit on a closed stream worked", name)
			}
		}
		for _, c := range cases {
			c.Job.Mode = ""
		}

		js2, err := b.StreamJobs(2)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := js2.Wait(); err == nil {
			t.Fatal("Wait with nothing in flight worked")
		}
		if _, err := b.StreamJobs(1); err == nil {
			t.Fatal("a stream of depth 1 was opened")
		}
		if err := js2.Submit(cases[0].Job); err != nil {
			t.Fatal(err)
		}
		b.Close()
		if err := js2.Submit(cases[1].Job); !errors.Is(err, errStreamBackendClosed) {
			t.Fatalf("Submit after the backend closed: %v", err)
		}
		if _, err := js2.Wait(); !errors.Is(err, errStreamBackendClosed) {
			t.Fatalf("Wait after the backend closed: %v", err)
		}
		if err := js2.Close(); err != nil {
			t.Fatalf("Close after the backend closed: %v", err)
		}
	}
}

// TestJobStreamRejects checks that a job the shader cannot take fails
// Submit with the reason, and that the stream reports the failure after.
func TestJobStreamRejects(t *testing.T) {
	b := newBackend(t)
	cases, _ := referenceOutputs(t)
	js, err := b.StreamJobs(2)
	if err != nil {
		t.Fatal(err)
	}
	defer js.Close()
	j := *cases[0].Job
	j.Mode = "host"
	if err := js.Submit(&j); err == nil || !strings.Contains(err.Error(), "unknown mode") {
		t.Fatalf("a job in host mode: %v", err)
	}
	b.tu.jobHook = func(src string) string { return strings.Replace(src, "void main", "void broken main", 1) }
	k := *cases[len(cases)-1].Job
	k.Names = append([]string(nil), k.Names...)
	if err := js.Submit(&k); err == nil || !strings.Contains(err.Error(), "rejected the shader") {
		t.Fatalf("a shader the driver rejects: %v", err)
	}
	if err := js.Submit(cases[0].Job); err == nil || !strings.Contains(err.Error(), "failed earlier") {
		t.Fatalf("Submit after a failure: %v", err)
	}
}
