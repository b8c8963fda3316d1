package ui

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"canopy/compute"
)

// TestMemoryWarning: Compare all asks before a job that would not fit in
// free memory, says how much it needs and how much is free, runs nothing
// unless told to, and runs when told.
func TestMemoryWarning(t *testing.T) {
	free := uint64(1 << 10)
	w := newTestWindow(t, options{}, hooks{freeMemory: func() (uint64, bool) { return free, true }})
	before := len(w.Results())
	test.Tap(w.CompareAll)
	w.Wait()
	txt := dialogText(w)
	// 64² float32 bands: the planes of the job and of the verifier (32 kB)
	// and the GPU's copies of the two bands and two planes (64 kB).
	if !strings.Contains(txt, "Compare all needs about 128 kB of memory, and 1 kB is free") {
		t.Fatalf("the warning says %q", txt)
	}
	if len(w.Results()) != before || w.Busy() {
		t.Fatal("Compare all ran before the user said so")
	}
	var run *widget.Button
	for _, o := range test.LaidOutObjects(w.Win.Canvas().Overlays().Top()) {
		if b, ok := o.(*widget.Button); ok && b.Text == "Run anyway" {
			run = b
		}
	}
	if run == nil {
		t.Fatal("no Run anyway button")
	}
	test.Tap(run)
	w.Wait()
	if len(w.Results()) <= before {
		t.Error("Run anyway ran nothing")
	}
	// With room, no question.
	free = 1 << 40
	test.Tap(w.CompareAll)
	w.Wait()
	if top := w.Win.Canvas().Overlays().Top(); top != nil && top.Visible() {
		t.Errorf("a question with room to spare: %q", dialogText(w))
	}
}

// TestCompareAllBudget: Compare all that needs more than its budget (2 GB;
// here 50 kB for a 64² scene) asks first, with the number, even with
// memory free; at 10980² with two uint16 bands and a GPU backend the
// estimate is over 2 GB (the job's and the verifier's planes, the GPU's
// copies and its ceiling's buffers), so it asks there; scripts/gui-smoke
// measures the real peak against the estimate at 4096².
func TestCompareAllBudget(t *testing.T) {
	old := compareBudget
	compareBudget = 50 << 10
	t.Cleanup(func() { compareBudget = old })
	w := newTestWindow(t, options{}, hooks{freeMemory: func() (uint64, bool) { return 1 << 40, true }})
	before := len(w.Results())
	test.Tap(w.CompareAll)
	w.Wait()
	if txt := dialogText(w); !strings.Contains(txt, "Compare all needs about 128 kB of memory, more than the 50 kB it keeps within") {
		t.Fatalf("the question says %q", txt)
	}
	if len(w.Results()) != before || w.Busy() {
		t.Fatal("Compare all ran before the user said so")
	}
	// The plan's estimate at a Sentinel-2 tile's size, beyond the bands
	// loaded: 10980² uint16 red and NIR (their pages never touched).
	n := 10980
	bands := []compute.BandInput{{Plane: compute.NewPlane(compute.U16, n, n)}, {Plane: compute.NewPlane(compute.U16, n, n)}}
	cpuOnly := compareMemory(bands, []runSpec{{info: compute.Info{Name: compute.NameGo}}})
	withGPU := compareMemory(bands, []runSpec{{info: compute.Info{Name: compute.NameGo}}, {info: compute.Info{Name: compute.NameGL, GPU: true}}})
	ceiling := 2 * uint64(4*n*n+4*n*n) / 3 // the device copy's two buffers, a third of the job's bytes each
	if cpuOnly != uint64(8*n*n) || withGPU != uint64(8*n*n+4*n*n+8*n*n)+ceiling || withGPU <= old {
		t.Errorf("10980² estimate: %s on the CPU, %s with a GPU (budget %s)", bytesText(cpuOnly), bytesText(withGPU), bytesText(old))
	}
}

// TestProgressSaysTimeLeft: the progress line gives the share done and,
// once it can tell, the time left.
func TestProgressSaysTimeLeft(t *testing.T) {
	w := newTestWindow(t, options{})
	w.setBusy(true, "Generating")
	w.bar.began = time.Now().Add(-10 * time.Second)
	w.bar.set(0.25, "Generating 10980×10980")
	if got := w.bar.Label.Text; got != "Generating 10980×10980  25 % · about 30 s left" {
		t.Errorf("progress says %q", got)
	}
	if !w.bar.Bar.Visible() || w.bar.Bar.Value != 0.25 {
		t.Errorf("bar visible %v at %v", w.bar.Bar.Visible(), w.bar.Bar.Value)
	}
	w.setBusy(false, "")
	for _, c := range []struct {
		frac    float64
		elapsed time.Duration
		want    string
	}{{0.5, 3 * time.Minute, "about 3 min left"}, {0.01, time.Minute, ""}, {0.9, 5 * time.Second, "a moment left"}, {0.5, 500 * time.Millisecond, ""}} {
		if got := eta(c.frac, c.elapsed); got != c.want {
			t.Errorf("eta(%v, %v) = %q, want %q", c.frac, c.elapsed, got, c.want)
		}
	}
}

// TestCancelIsQuick: Cancel frees the window at once, while the run it
// cancels is still going (the backend holds it until the test lets it go),
// and its result never shows.
func TestCancelIsQuick(t *testing.T) {
	cpu, _, _, bs := testBackends()
	w := newTestWindow(t, options{}, hooks{backends: bs})
	before, _, _ := ndviOf(w)
	release := holdRuns(t, cpu)
	test.Tap(w.Compute)
	test.Tap(w.Cancel)
	if w.Busy() || w.Compute.Disabled() {
		t.Errorf("Cancel did not free the window (busy %v, Compute disabled %v)", w.Busy(), w.Compute.Disabled())
	}
	release()
	w.Wait()
	if after, _, _ := ndviOf(w); &after[0] != &before[0] {
		t.Error("a cancelled compute replaced the map")
	}
}

// TestCompareAllProgress: Compare all's progress line moves per backend
// and per run: each backend's warm-up, timed runs and verification in
// turn, the share growing from 0 to 1, and the time left once it can be
// told.
func TestCompareAllProgress(t *testing.T) {
	w := newTestWindow(t, options{Repeat: 3})
	w.bridge.everyProgress = true
	show := w.bridge.onProgress
	var fracs []float64
	var msgs, labels []string
	w.bridge.onProgress = func(frac float64, msg string) {
		w.bar.began = time.Now().Add(-20 * time.Second) // as if it had run that long
		show(frac, msg)
		fracs, msgs, labels = append(fracs, frac), append(msgs, msg), append(labels, w.bar.Label.Text)
	}
	test.Tap(w.CompareAll)
	w.Wait()
	runs := len(benchPlan(w.backs.available()))
	if runs < 2 {
		t.Fatalf("%d runs planned", runs)
	}
	for i := 1; i <= runs; i++ {
		for _, what := range []string{"warming up", "timed run 1 of 3", "timed run 3 of 3", "checking against the float64 truth"} {
			want := fmt.Sprintf("(backend %d of %d), %s…", i, runs, what)
			if !slices.ContainsFunc(msgs, func(m string) bool { return strings.HasSuffix(m, want) }) {
				t.Errorf("no progress %q in %q", want, msgs)
			}
		}
	}
	for k := 1; k < len(fracs); k++ {
		if fracs[k] < fracs[k-1] {
			t.Fatalf("the share went back from %.3f to %.3f (%q)", fracs[k-1], fracs[k], msgs[k])
		}
	}
	mid := slices.IndexFunc(msgs, func(m string) bool {
		return strings.Contains(m, fmt.Sprintf("(backend %d of %d), timed run 1", runs/2+1, runs))
	})
	if mid < 0 || !strings.Contains(labels[mid], " %") || !strings.Contains(labels[mid], "left") {
		t.Errorf("mid-way the progress line says %q, want the share and the time left", labels[max(mid, 0)])
	}
}
