package ui

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"fyne.io/fyne/v2/dialog"

	"canopy/compute"
	"canopy/ui/render/numfmt"
)

// freeMemory returns the memory the system can still give (MemAvailable
// of /proc/meminfo), false where it is not known.
func freeMemory() (uint64, bool) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "MemAvailable:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb * 1024, err == nil
		}
	}
	return 0, false
}

// compareMemory estimates the memory Compare all takes beyond the bands
// already loaded: the job's index plane and the verifier's, and for the
// GPU backends (whose drivers may keep host copies, as a software
// renderer does) a copy of the bands and two of the plane while one runs,
// and the two buffers of the device copy that measures the ceiling
// (compute.BenchJob: a third of the job's bytes, at most 1 GiB each).
// scripts/gui-smoke measures the real peak against it at 4096².
func compareMemory(bands []compute.BandInput, runs []runSpec) uint64 {
	if len(bands) == 0 {
		return 0
	}
	px := uint64(bands[0].Plane.Pixels())
	var in uint64
	for _, b := range bands {
		in += uint64(len(b.Plane.Data))
	}
	need := 2 * 4 * px
	for _, r := range runs {
		if r.info.GPU {
			need += in + 2*4*px + 2*min((in+4*px)/3, 1<<30)
			break // GPU backends are closed after their runs: one at a time
		}
	}
	return need
}

// bytesText writes a size as a user reads it: "6.2 GB", "512 MB".
func bytesText(n uint64) string {
	switch {
	case n >= 1<<30:
		return numfmt.Value(float64(n)/(1<<30)) + " GB"
	case n >= 1<<20:
		return numfmt.Value(float64(n)/(1<<20)) + " MB"
	}
	return numfmt.Value(float64(n)/(1<<10)) + " kB"
}

// compareBudget is the memory Compare all keeps within without asking (an
// 8 GB laptop runs it beside the app and the system).
var compareBudget uint64 = 2 << 30

// checkMemoryWithin runs start at once when the job fits in free memory
// and within budget (0: no budget), and otherwise asks first, saying how
// much it needs ("Compare all needs about 6.2 GB; 3.1 GB is free").
func (w *window) checkMemoryWithin(what string, need, budget uint64, start func()) {
	free, ok := w.freeMem()
	fits := !ok || need <= free
	if fits && (budget == 0 || need <= budget) {
		start()
		return
	}
	if fits {
		w.memoryWarning = fmt.Sprintf("%s needs about %s of memory, more than the %s it keeps within (%s is free): a laptop may swap.",
			what, bytesText(need), bytesText(budget), bytesText(free))
		if !ok {
			w.memoryWarning = fmt.Sprintf("%s needs about %s of memory, more than the %s it keeps within: a laptop may swap.",
				what, bytesText(need), bytesText(budget))
		}
	} else {
		w.memoryWarning = fmt.Sprintf("%s needs about %s of memory, and %s is free: the system may slow down or stop the app.",
			what, bytesText(need), bytesText(free))
	}
	title := "Not enough free memory"
	if fits {
		title = "A large run"
	}
	d := dialog.NewConfirm(title, w.memoryWarning+"\nRun it anyway?", func(yes bool) {
		if yes {
			start()
		} else {
			w.setStatus(what+" not run: not enough free memory", false)
		}
	}, w.Win)
	d.SetConfirmText("Run anyway")
	d.SetDismissText("Don't run")
	d.Show()
}

// eta says how long a job at frac of its work after elapsed has left:
// "about 40 s left", "" while too early to tell.
func eta(frac float64, elapsed time.Duration) string {
	if frac <= 0.02 || frac >= 1 || elapsed < time.Second {
		return ""
	}
	left := time.Duration(float64(elapsed) * (1 - frac) / frac)
	switch {
	case left < 2*time.Second:
		return "a moment left"
	case left < 90*time.Second:
		return fmt.Sprintf("about %d s left", int(left.Round(time.Second)/time.Second))
	}
	return fmt.Sprintf("about %d min left", int(left.Round(time.Minute)/time.Minute))
}
