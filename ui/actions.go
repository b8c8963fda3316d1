package ui

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"

	"canopy/compute"
	"canopy/compute/index"
	"canopy/ui/render/chart"
	"canopy/ui/render/colormap"
)

// bandsFunc makes the red and NIR bands of a new scene (generating or
// loading them) and names the scene.
type bandsFunc func(ctx context.Context, progress progressFunc) (red, nir *compute.Band, label string, err error)

// bigImage is the size (pixels) from which the window gives memory back
// eagerly after a run: 4096², 200 MB for three float32 planes.
const bigImage = 1 << 24

// start is the first job: ask every backend whether it can run here, make
// the start scene and compute it on the chosen backend.
func (w *Window) start() {
	entries := w.backs.entries
	opts := w.opts
	w.bridge.start("Starting", func(ctx context.Context, progress progressFunc) (func(), error) {
		progress(-1, "Looking for backends…")
		infos := make([]compute.Info, len(entries))
		for i, e := range entries {
			infos[i] = e.b.Info()
		}
		var (
			chooseErr     error
			run           *runSpec
			ramp, stretch string
		)
		w.bridge.doAndWait(func() {
			for i, en := range entries {
				en.info, en.known = infos[i], true
			}
			w.backs.showInfos()
			chooseErr = w.chooseStart(opts.Backend)
			if e := w.backs.selected; e != nil {
				r := e.run()
				run = &r
			}
			ramp, stretch = w.ramp, w.stretch
		})
		var mk bandsFunc
		if opts.Red != "" || opts.NIR != "" {
			mk = loadBands(opts.Red, opts.NIR)
		} else {
			mk = fakeBands(opts.Scene, opts.Size, opts.Size, uint64(opts.Seed))
		}
		apply, err := w.sceneJob(mk, run, ramp, stretch)(ctx, progress)
		if err != nil {
			return nil, err
		}
		return func() {
			apply()
			if chooseErr != nil {
				w.setStatus(chooseErr.Error(), false)
			}
			if opts.Compare {
				w.compareAll()
			}
		}, nil
	})
}

// chooseStart selects the start backend: spec, or auto.
func (w *Window) chooseStart(spec string) error {
	var err error
	if spec != "" && spec != "auto" {
		if err = w.SelectBackend(spec); err == nil {
			return nil
		}
	}
	if e := w.backs.auto(); e != nil {
		w.backs.pick(e)
	}
	return err
}

// fakeBands generates a fake scene.
func fakeBands(kind string, width, height int, seed uint64) bandsFunc {
	return func(ctx context.Context, progress progressFunc) (*compute.Band, *compute.Band, string, error) {
		progress(-1, fmt.Sprintf("Generating a %d×%d %s scene…", width, height, kind))
		red, nir, err := compute.Fake(kind, width, height, seed)
		if err != nil {
			return nil, nil, "", err
		}
		return red, nir, fmt.Sprintf("Fake %s, %d×%d, seed %d", kind, width, height, seed), nil
	}
}

// loadBands loads the red and NIR bands named by two specs.
func loadBands(redSpec, nirSpec string) bandsFunc {
	return func(ctx context.Context, progress progressFunc) (*compute.Band, *compute.Band, string, error) {
		if redSpec == "" || nirSpec == "" {
			return nil, nil, "", errors.New("choose both a red and a near-infrared band")
		}
		progress(-1, "Loading "+shortSpec(redSpec)+" and "+shortSpec(nirSpec)+"…")
		red, nir, err := loadPair(redSpec, nirSpec)
		if err != nil {
			return nil, nil, "", err
		}
		return red, nir, fmt.Sprintf("%s + %s, %d×%d", shortSpec(redSpec), shortSpec(nirSpec), red.Width, red.Height), nil
	}
}

// sceneJob makes the bands with mk, computes NDVI on run and its
// statistics, and returns the function that shows the new scene. The
// current scene stays on screen until then, and stays if anything fails.
func (w *Window) sceneJob(mk bandsFunc, run *runSpec, ramp, stretch string) job {
	return func(ctx context.Context, progress progressFunc) (func(), error) {
		red, nir, label, err := mk(ctx, progress)
		if err != nil {
			return nil, err
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		in, err := compute.PairInput(red, nir)
		if err != nil {
			return nil, err
		}
		s := &scene{red: red, nir: nir, in: in, label: label}
		return w.computeInto(ctx, progress, s, run, ramp, stretch)
	}
}

// ndviJob is the index job of s's bands: NDVI, one output plane.
func ndviJob(s *scene) (*compute.Job, error) {
	bands := []compute.BandInput{floatBand("red", s.red), floatBand("nir", s.nir)}
	return compute.NewJob(bands, nil, []string{"ndvi"}, []*index.Expr{ndviFormula})
}

// floatBand is a float32 band as the engine's input.
func floatBand(role string, b *compute.Band) compute.BandInput {
	return compute.BandInput{Role: role, Plane: compute.PlaneOf(b.Width, b.Height, b.Data), Radiometry: compute.Identity(),
		NoData: b.NoData, HasNoData: b.HasNoData, Source: b.Source}
}

// computeInto computes s's NDVI on run (compute.RunJob in the run's mode,
// verified against the float64 truth), then its statistics and colour
// stretch, and returns the function showing it.
func (w *Window) computeInto(ctx context.Context, progress progressFunc, s *scene, run *runSpec, ramp, stretch string) (func(), error) {
	if run == nil {
		return nil, errors.New("no backend is available to compute NDVI")
	}
	progress(-1, fmt.Sprintf("Computing NDVI of %d×%d on %s…", s.in.Width, s.in.Height, run.label()))
	j, err := ndviJob(s)
	if err != nil {
		return nil, err
	}
	res, err := run.compute(j)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.ndvi, s.backend = j.Out[0], run.label()
	progress(-1, "Statistics…")
	s.summary = summarize(s)
	lut, st, err := makeLUT(ramp, stretch, s)
	if err != nil {
		return nil, err
	}
	s.setStretch(stretch, st)
	return func() {
		w.lut, w.ramp, w.stretch = lut, ramp, stretch
		w.showScene(s)
		w.addResult(res)
		w.setStatus(resultLine(res), res.Verified)
	}, nil
}

// makeLUT builds the colour table for ramp and the stretch named mode of
// s's NDVI.
func makeLUT(ramp, mode string, s *scene) (*colormap.LUT, colormap.Stretch, error) {
	st, ok := s.stretchFor(mode)
	if !ok {
		var err error
		if st, err = colormap.StretchFor(mode, s.ndvi); err != nil {
			return nil, st, err
		}
	}
	lut, err := colormap.New(ramp, st.Lo, st.Hi)
	return lut, st, err
}

// computeSelected recomputes the current bands on the selected backend.
func (w *Window) computeSelected() {
	e := w.backs.selected
	if w.scene == nil {
		return
	}
	if e == nil || !e.info.Available {
		reason := "no backend is selected"
		if e != nil {
			reason = fmt.Sprintf("backend %s is unavailable: %s", e.name(), e.info.Reason)
		}
		w.setStatus(reason, false)
		return
	}
	old := w.scene
	ramp, stretch := w.ramp, w.stretch
	run := e.run()
	w.bridge.start("Computing on "+e.label(), func(ctx context.Context, progress progressFunc) (func(), error) {
		s := &scene{red: old.red, nir: old.nir, in: old.in, label: old.label}
		return w.computeInto(ctx, progress, s, &run, ramp, stretch)
	})
}

// compareAll runs every available backend (every mode of those with
// modes) on the current bands, verifies each and fills the timing chart.
func (w *Window) compareAll() {
	if w.scene == nil {
		return
	}
	runs := benchPlan(w.backs.available())
	if len(runs) == 0 {
		return
	}
	s := w.scene
	repeat := w.opts.Repeat
	w.bridge.start("Comparing backends", func(ctx context.Context, progress progressFunc) (func(), error) {
		// A job of its own: the map's plane is not overwritten while shown.
		j, err := ndviJob(s)
		if err != nil {
			return nil, err
		}
		var results []compute.BenchResult
		for i, r := range runs {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			progress(float64(i)/float64(len(runs)), fmt.Sprintf("Compare all: %s on %d×%d (%d of %d)…", r.label(), j.Width, j.Height, i+1, len(runs)))
			results = append(results, r.bench(j, repeat))
		}
		if j.Pixels() >= bigImage {
			// GPU backends keep device buffers (host memory on a software
			// renderer) and the scratch planes are garbage: give both back.
			for _, r := range runs {
				if r.info.GPU {
					r.b.Close()
				}
			}
			j = nil
			debug.FreeOSMemory()
		}
		progress(1, "")
		return func() {
			w.results = results
			w.charts.showTimings(results)
			w.tabs.SelectIndex(0)
			w.setStatus(compareLine(results), allVerified(results))
			if !w.ready {
				w.markReady()
			}
		}, nil
	})
}

// sweepSizes are the square sizes of the size sweep up to max: powers of
// two from 256, then max itself (10980 is a Sentinel-2 tile).
func sweepSizes(max int) []int {
	var s []int
	for n := 256; n <= max; n *= 2 {
		s = append(s, n)
	}
	if len(s) == 0 || s[len(s)-1] != max {
		s = append(s, max)
	}
	return s
}

// sizeSweep runs every available backend on noise scenes of growing size,
// so the chart shows where the GPU starts to win.
func (w *Window) sizeSweep() {
	runs := benchPlan(w.backs.available())
	if len(runs) == 0 {
		return
	}
	sizes := sweepSizes(w.charts.sweepMax())
	repeat := w.opts.Repeat
	w.bridge.start("Size sweep", func(ctx context.Context, progress progressFunc) (func(), error) {
		var results []compute.BenchResult
		var weights, done float64
		for _, n := range sizes {
			weights += float64(n) * float64(n) * float64(len(runs))
		}
		for _, n := range sizes {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			progress(done/weights, fmt.Sprintf("Size sweep: generating %d×%d…", n, n))
			bands, _, err := compute.FakeBands(compute.SceneNoise, n, n, 1, ndviFormula.Roles())
			if err != nil {
				return nil, err
			}
			j, err := compute.NewJob(bands, nil, []string{"ndvi"}, []*index.Expr{ndviFormula})
			if err != nil {
				return nil, err
			}
			// Fewer repeats where one run takes long; never fewer than 3
			// so the median means something.
			rep := repeat
			if n >= 4096 {
				rep = min(repeat, 3)
			}
			for _, r := range runs {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				progress(done/weights, fmt.Sprintf("Size sweep: %s at %d×%d…", r.label(), n, n))
				results = append(results, r.bench(j, rep))
				done += float64(n) * float64(n)
			}
		}
		// The backends hold buffers for the largest size now; give them
		// back (a GPU backend on a software renderer holds host memory).
		for _, r := range runs {
			r.b.Close()
		}
		progress(1, "")
		return func() {
			w.sweep = results
			w.charts.showSweep(results)
			w.tabs.SelectIndex(1)
			w.setStatus(sweepLine(results), allVerified(results))
		}, nil
	})
}

// benchPlan lists the runs of Compare all and the sweeps: every entry in
// every mode of compute.BenchModes (the command line's policy), in the
// order of the picker.
func benchPlan(entries []*backendEntry) []runSpec {
	var runs []runSpec
	for _, e := range entries {
		ms := e.modes()
		if len(ms) == 0 {
			ms = []string{""}
		}
		for _, m := range ms {
			runs = append(runs, runSpec{b: e.b, info: e.info, mode: m})
		}
	}
	return runs
}

// addResult puts a single run into the timing chart, replacing the
// backend's previous run; runs at another size are dropped.
func (w *Window) addResult(r compute.BenchResult) {
	var keep []compute.BenchResult
	replaced := false
	for _, o := range w.results {
		if o.Width != r.Width || o.Height != r.Height {
			continue
		}
		if o.Backend == r.Backend && o.Mode == r.Mode {
			keep = append(keep, r)
			replaced = true
			continue
		}
		keep = append(keep, o)
	}
	if !replaced {
		keep = append(keep, r)
	}
	sortResults(keep)
	w.results = keep
	w.charts.showTimings(keep)
}

// canonical is the order backends are listed in everywhere.
var canonical = []string{compute.NameGo, compute.NameGoParallel, compute.NameC, compute.NameGL, compute.NameCUDA}

func rank(name string) int {
	if i := slices.Index(canonical, name); i >= 0 {
		return i
	}
	return len(canonical)
}

// sortResults orders results by backend (canonical order), then mode.
func sortResults(rs []compute.BenchResult) {
	slices.SortStableFunc(rs, func(a, b compute.BenchResult) int {
		if d := rank(a.Backend) - rank(b.Backend); d != 0 {
			return d
		}
		return strings.Compare(a.Mode, b.Mode)
	})
}

// resultLine is one run for the status bar.
func resultLine(r compute.BenchResult) string {
	if r.Error != "" && !r.Verified {
		return fmt.Sprintf("%s: %s", r.Label(), r.Error)
	}
	s := fmt.Sprintf("%s, %d×%d: kernel %s", r.Label(), r.Width, r.Height, ms(r.KernelMS))
	if r.GPU {
		s += fmt.Sprintf(", with transfers %s", ms(r.TotalMS))
	}
	s += fmt.Sprintf(" (setup %s apart) · verified: max error %.3g", ms(r.SetupMS), r.MaxAbsErr)
	return s
}

func compareLine(rs []compute.BenchResult) string {
	var bad []string
	maxErr := 0.0
	for _, r := range rs {
		if !r.Verified {
			bad = append(bad, r.Label()+": "+firstLine(r.Error))
		}
		maxErr = max(maxErr, r.MaxAbsErr)
	}
	if len(bad) > 0 {
		return fmt.Sprintf("Compared %d runs; failed: %s", len(rs), strings.Join(bad, "; "))
	}
	if len(rs) == 0 {
		return "Nothing to compare"
	}
	return fmt.Sprintf("Compared %d runs on %d×%d · all verified: max error %.3g", len(rs), rs[0].Width, rs[0].Height, maxErr)
}

func sweepLine(rs []compute.BenchResult) string {
	if len(rs) == 0 {
		return "Size sweep: no results"
	}
	s := compareLine(rs)
	s = strings.Replace(s, fmt.Sprintf(" on %d×%d", rs[0].Width, rs[0].Height), "", 1)
	return "Size sweep: " + strings.TrimPrefix(s, "Compared ")
}

func allVerified(rs []compute.BenchResult) bool {
	for _, r := range rs {
		if !r.Verified {
			return false
		}
	}
	return len(rs) > 0
}

// ms formats milliseconds as the charts do.
func ms(v float64) string { return chart.FormatMS(v) }

func shortSpec(spec string) string {
	if i := strings.LastIndexAny(spec, `/\`); i >= 0 {
		return spec[i+1:]
	}
	return spec
}
