package cudaback

import (
	"errors"
	"math"
	"strings"
	"testing"

	"canopy/compute"
)

// A job stream runs jobs of one program over its slots: each job's
// output equals the same job run alone, bit for bit, whatever its size
// (big enough to be page-locked in place, small enough to be staged, one
// pixel); with depth jobs in flight Submit refuses; Wait with none in
// flight is an error; Close waits for what is in flight and may be called
// twice; after the backend closes, the stream's calls fail with the
// reason.
func TestJobStream(t *testing.T) {
	b := gpu(t)
	js, err := b.StreamJobs(3)
	if err != nil {
		t.Fatal(err)
	}
	sizes := [][2]int{{1031, 700}, {67, 31}, {1, 1}, {2048, 600}, {999, 3}, {513, 513}, {1031, 700}}
	var jobs, alone []*compute.Job
	for i, sz := range sizes {
		jobs = append(jobs, evi3(sz[0], sz[1], uint64(i), eviFormula))
		a := evi3(sz[0], sz[1], uint64(i), eviFormula)
		if _, err := compute.RunJob(b, a); err != nil {
			t.Fatal(err)
		}
		alone = append(alone, a)
	}
	check := func(i int, tm compute.Timings) {
		t.Helper()
		got, want := jobs[i].Out[0], alone[i].Out[0]
		for p := range want {
			if math.Float32bits(got[p]) != math.Float32bits(want[p]) && !(got[p] != got[p] && want[p] != want[p]) {
				t.Fatalf("job %d (%d×%d) pixel %d: streamed %v, alone %v", i, sizes[i][0], sizes[i][1], p, got[p], want[p])
			}
		}
		if tm.Kernel <= 0 || tm.Total < tm.Upload+tm.Kernel+tm.Download {
			t.Errorf("job %d: timings %+v", i, tm)
		}
	}
	waited := 0
	for i, j := range jobs {
		if i-waited == 3 {
			if err := js.Submit(j); err == nil || !strings.Contains(err.Error(), "already in flight") {
				t.Fatalf("a fourth job in a stream of 3: %v", err)
			}
			tm, err := js.Wait()
			if err != nil {
				t.Fatal(err)
			}
			check(waited, tm)
			waited++
		}
		if err := js.Submit(j); err != nil {
			t.Fatalf("job %d: %v", i, err)
		}
	}
	for ; waited < len(jobs)-1; waited++ {
		tm, err := js.Wait()
		if err != nil {
			t.Fatal(err)
		}
		check(waited, tm)
	}
	// The last job is still in flight: Close waits for it.
	if err := js.Close(); err != nil {
		t.Fatal(err)
	}
	check(len(jobs)-1, compute.Timings{Kernel: 1, Total: 1})
	if err := js.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := js.Submit(jobs[0]); err == nil {
		t.Fatal("Submit on a closed stream worked")
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
	b.Close()
	if err := js2.Submit(jobs[1]); !errors.Is(err, errBackendClosed) {
		t.Fatalf("Submit after the backend closed: %v", err)
	}
	if err := js2.Close(); err != nil {
		t.Fatalf("Close after the backend closed: %v", err)
	}
}
