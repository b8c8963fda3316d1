package ui

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime/debug"
	"slices"
	"strings"

	"canopy/compute"
	"canopy/compute/fake"
	"canopy/compute/index"
	"canopy/compute/pipeline"
	"canopy/compute/raster"
	"canopy/compute/source"
	"canopy/ui/render/chart"
	"canopy/ui/render/colormap"
)

// bigImage is the size (pixels) from which the window gives memory back
// eagerly after a run: 4096², 200 MB for three float32 planes.
const bigImage = 1 << 24

// start is the first job: ask every backend whether it can run here, open
// or generate the start scene and compute the start index on the chosen
// backend.
func (w *window) start() {
	entries := w.backs.entries
	opts := w.opts
	src0 := w.src
	idx, idxOK := w.idx, w.idxOK
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
			run = w.runOrAuto()
			ramp, stretch = w.colour.selected()
		})
		if !idxOK {
			return func() { w.markReady() }, nil
		}
		open := func() (bandSource, error) { return src0, nil }
		switch {
		case opts.Product != "":
			open = func() (bandSource, error) {
				progress(-1, "Opening "+shortSpec(opts.Product)+"…")
				s, err := openProducts(append([]string{opts.Product}, opts.More...), opts.Mask, opts.MaskBuffer)
				for _, r := range slices.Sorted(maps.Keys(opts.Assign)) {
					s = s.withBand(r, opts.Assign[r])
				}
				return s, err
			}
		case len(opts.Bands) > 0:
			open = func() (bandSource, error) { return filesSource(opts.Bands) }
		}
		apply, err := w.sourceJob(open, nil, idx, run, ramp, stretch)(ctx, progress)
		if err != nil {
			return nil, err
		}
		return func() {
			apply()
			if chooseErr != nil {
				w.setStatus(chooseErr.Error(), false)
			}
			if opts.Compare && w.shown != nil {
				w.compareAll()
			}
		}, nil
	})
}

// chooseStart selects the start backend: spec, or auto.
func (w *window) chooseStart(spec string) error {
	var err error
	if spec != "" && spec != "auto" {
		if err = w.backs.selectSpec(spec); err == nil {
			return nil
		}
	}
	if e := w.backs.auto(); e != nil {
		w.backs.pick(e)
	}
	return err
}

// specSource is the source of bands given as specs (FILE or FILE:B) by
// role, as named: the files are not read (filesSource reads them).
func specSource(specs map[string]string) bandSource {
	src := bandSource{kind: srcFiles, files: map[string]fileBand{}}
	for role, spec := range specs {
		path, band, err := raster.ParseSpec(spec)
		if err != nil {
			path, band = spec, 0
		}
		src.files[role] = fileBand{path: path, band: max(band, 1), count: max(band, 1)}
	}
	return src
}

// filesSource is the source of bands given as specs by role, each file
// checked for its bands.
func filesSource(specs map[string]string) (bandSource, error) {
	var src bandSource
	for _, role := range slices.Sorted(maps.Keys(specs)) {
		path, band, err := raster.ParseSpec(specs[role])
		if err != nil {
			return src, fmt.Errorf("%s band: %w", role, err)
		}
		n, err := raster.Count(path)
		if err != nil {
			return src, fmt.Errorf("%s band: %w", role, err)
		}
		if band > n {
			return src, fmt.Errorf("%s band: %s has %d band%s, not %d", role, path, n, plural(n), band)
		}
		src = src.withFile(role, fileBand{path: path, band: max(band, 1), count: n})
	}
	return src, nil
}

// indexChanged follows the index panel: the bands it needs, its colours;
// a picked index is computed at once, a formula being typed when the
// user says so (Enter, Compute).
func (w *window) indexChanged(c indexChoice, valid, commit bool) {
	c.classes = w.classesFor(c)
	w.idx, w.idxOK = c, valid
	w.bands.show(w.src, bandRoles(w.src, c))
	w.colour.setIndex(c)
	w.updateButtons()
	if !valid {
		w.setStatus("The formula does not parse: "+w.index.Error.Text, false)
		return
	}
	if commit {
		w.computeSelected()
	}
}

// setSource makes src where the bands come from and shows it.
func (w *window) setSource(src bandSource) {
	w.src = src
	w.bands.show(src, bandRoles(src, w.idx))
	w.source.setProduct(&src)
	w.updateButtons()
}

// sourceChosen follows a new source from the panels (a file for a role, a
// band of an orthomosaic, a fake scene): computed at once when it gives
// every band the index needs, and made the window's source only when that
// computation is shown, so that a source that fails to load (or whose
// run is cancelled) is not listed beside a map of the previous one. A
// source that still lacks a band is kept, as chosen so far.
func (w *window) sourceChosen(src bandSource) {
	if ok, why := w.computableFrom(src); !ok {
		w.setSource(src)
		w.setStatus(why, false)
		return
	}
	w.computeFrom(src)
}

// syncSource shows the window's source in the source and bands cards
// again when they show another (a choice whose job failed or was
// cancelled); the window calls it when no job runs.
func (w *window) syncSource() {
	if w.bands.src.key() != w.src.key() {
		w.setSource(w.src)
	}
}

// openProduct opens a product and computes the index from it.
func (w *window) openProduct(path string) {
	mask, buffer, err := w.source.maskChoice()
	if err != nil {
		w.setStatus(err.Error(), false)
		return
	}
	if !w.idxOK {
		w.setStatus("The formula does not parse: "+w.index.Error.Text, false)
		return
	}
	ramp, stretch := w.colour.selected()
	open := func() (bandSource, error) { return openProduct(path, mask, buffer) }
	w.bridge.start("Opening "+shortSpec(path), w.sourceJob(open, w.set, w.idx, w.runOrAuto(), ramp, stretch))
}

// maskChanged recomputes a product with the new mask choice.
func (w *window) maskChanged(mask string, buffer int) {
	if w.src.kind != srcProduct {
		return
	}
	w.sourceChosen(w.src.withMask(mask, buffer))
}

// computeSelected computes the index from the current source on the
// selected backend.
func (w *window) computeSelected() { w.computeFrom(w.src) }

// computeFrom computes the index from src on the selected backend; src
// becomes the window's source when the map is shown.
func (w *window) computeFrom(src bandSource) {
	if ok, why := w.computableFrom(src); !ok {
		w.setStatus(why, false)
		return
	}
	ramp, stretch := w.colour.selected()
	run := w.backs.selected.run()
	w.bridge.start(fmt.Sprintf("Computing %s on %s", w.idx.title(), run.label()),
		w.sourceJob(func() (bandSource, error) { return src, nil }, w.set, w.idx, &run, ramp, stretch))
}

// sourceJob opens the source, loads the bands the index needs (reusing
// have's), computes the index on run, its statistics and colours, and
// returns the function that shows it all. The current map stays on screen
// until then, and stays if anything fails; a source that lacks a band the
// index needs is shown with what it lacks.
func (w *window) sourceJob(open func() (bandSource, error), have *bandSet, idx indexChoice, run *runSpec, ramp, stretch string) job {
	var card *cardRun
	if run != nil && w.keeper.onCard(run.b, run.info) {
		vw, vh := w.Map.PixelSize()
		card = &cardRun{keeper: w.keeper, prev: w.card, vw: vw, vh: vh}
	}
	return func(ctx context.Context, progress progressFunc) (func(), error) {
		src, err := open()
		if err != nil {
			return nil, err
		}
		if src.kind != srcFake {
			src.scale, src.rawOK = w.opts.Scale, w.opts.Raw // canopy gui --scale, --raw
		}
		if miss := src.missing(idx.roles()); len(miss) > 0 {
			return func() {
				w.setSource(src)
				w.setStatus(missingText(idx, src, miss), false)
				w.markReady()
			}, nil
		}
		s, res, kept, lut, err := computeShown(ctx, progress, src, have, idx, run, card, ramp, stretch)
		if err != nil {
			return nil, err
		}
		return func() {
			if s.card != w.card {
				w.card.close()
				w.card = s.card
			}
			w.setSource(src)
			w.set = s.set
			w.lut, w.ramp, w.stretch = lut, ramp, stretch
			w.show(s)
			if s.large != nil {
				w.setStatus(fmt.Sprintf("Reading the view of %s (%d×%d, too large to load)…", s.label, s.w, s.h), true)
				return
			}
			w.charts.addResult(res)
			for _, k := range kept {
				w.charts.addResult(k)
			}
			s.line, s.lineOK = resultLine(res, s), res.Verified
			w.setStatus(s.line, s.lineOK)
		}, nil
	}
}

// computeShown loads the bands of idx from src (off the event goroutine),
// computes idx on run (compute.NewJob, run.compute: RunJob in the run's
// mode, verified against the float64 truth), its statistics and colour
// table. With card (a backend that keeps the scene on its card) the map,
// the statistics and the plane shown come from the session kept there
// (computeOnCard), whose rows are returned beside the round trip's.
func computeShown(ctx context.Context, progress progressFunc, src bandSource, have *bandSet, idx indexChoice, run *runSpec, card *cardRun, ramp, stretch string) (*shown, compute.BenchResult, []compute.BenchResult, *colormap.LUT, error) {
	var res compute.BenchResult
	if run == nil {
		return nil, res, nil, nil, errors.New("no backend is available to compute an index")
	}
	roles := idx.roles()
	if len(roles) == 0 {
		// A formula of constants: the size of the source's first band.
		if rs := src.roles(); len(rs) > 0 {
			roles = rs[:1]
		} else {
			return nil, res, nil, nil, errors.New("open a band first: a formula of constants still needs the image's size")
		}
	}
	if largeFor(src, roles) {
		s, lut, err := computeLarge(progress, src, idx, run, ramp, stretch, roles)
		return s, res, nil, lut, err
	}
	set, err := src.load(ctx, progress, roles, have)
	if err != nil {
		return nil, res, nil, nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, res, nil, nil, err
	}
	set = set.only(roles)
	if set.raw && !src.rawOK {
		// One rule with the terminal: an index with constants needs
		// reflectance (source.CheckValues).
		if err := source.CheckValues(source.DigitalNumbers, []string{idx.title()}, []*index.Expr{idx.expr}, false); err != nil {
			return nil, res, nil, nil, err
		}
	}
	progress(-1, fmt.Sprintf("Computing %s of %d×%d on %s…", idx.title(), set.w, set.h, run.label()))
	j, err := compute.NewJob(set.bands, set.mask, []string{idx.name}, []*index.Expr{idx.expr})
	if err != nil {
		return nil, res, nil, nil, err
	}
	res, err = run.compute(ctx, j)
	if err != nil {
		return nil, res, nil, nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, res, nil, nil, err
	}
	s := &shown{src: src, set: set, idx: idx, plane: j.Out[0], w: j.Width, h: j.Height,
		label: src.describe(j.Width, j.Height) + src.mosaicNote(set.geo), backend: run.label(), masked: set.masked()}
	var kept *cardResult
	if card != nil {
		progress(-1, fmt.Sprintf("Computing %s on %s, kept on the card…", idx.title(), run.label()))
		kept, err = computeOnCard(card, run, set, idx)
		if err == nil {
			err = ctx.Err()
		}
		if err != nil {
			if kept != nil && kept.view != card.prev {
				kept.view.close()
			}
			return nil, res, nil, nil, err
		}
		s.summary, s.card = kept.summary, kept.view // the plane stays on the card
	} else {
		progress(-1, "Statistics…")
		s.summary = summarize(s)
	}
	lut, st, err := makeLUT(ramp, stretch, s)
	if err == nil && kept != nil {
		err = kept.timeViews(card, lut)
	}
	if err != nil {
		if kept != nil && kept.view != card.prev {
			kept.view.close()
		}
		return nil, res, nil, nil, err
	}
	s.setStretch(stretch, st)
	var rows []compute.BenchResult
	if kept != nil {
		rows = kept.keptRows(res, j.Out[0])
	}
	return s, res, rows, lut, nil
}

// road runs j's indices over its bands through the one road, as the
// terminal's compute does: source.Run over the bands in memory
// (source.FromBands), every block verified against the float64 truth, the
// outputs gathered into j.Out. It returns the phases summed over the
// blocks and the verification's reports.
func (r runSpec) road(ctx context.Context, j *compute.Job) (compute.Timings, []compute.Report, error) {
	src, err := source.FromBands(j.Bands, j.Mask, nil)
	if err != nil {
		return compute.Timings{}, nil, err
	}
	defer src.Close()
	out := pipeline.SinkFunc(func(b *pipeline.Block) error {
		for i, o := range b.Out {
			copy(j.Out[i][b.Y0*j.Width:], o)
		}
		return nil
	})
	res, err := source.Run(ctx, src, source.Job{Backend: r.b, Mode: j.Mode, Names: j.Names, Exprs: j.Exprs, Verify: true}, out)
	if err != nil {
		return compute.Timings{}, nil, err
	}
	return res.Timings, res.Reports, nil
}

// only is the set with the bands of roles alone (the memory of the others
// goes).
func (b *bandSet) only(roles []string) *bandSet {
	c := *b
	c.bands = slices.DeleteFunc(slices.Clone(b.bands), func(x compute.BandInput) bool { return !slices.Contains(roles, x.Role) })
	return &c
}

// makeLUT builds the colour table for ramp and the stretch named mode of
// s's plane, headed by the index's name: "full" is the catalogue's range
// of the index (a custom formula's min–max); the NDVI classes are NDVI's
// alone.
func makeLUT(ramp, mode string, s *shown) (*colormap.LUT, colormap.Stretch, error) {
	st, ok := s.stretchFor(mode)
	if !ok {
		var err error
		if st, err = colormap.StretchFor(dataMode(s.idx, mode), s.dataPlane()); err != nil {
			return nil, st, err
		}
	}
	lut, err := newLUT(ramp, st, s.idx)
	return lut, st, err
}

// newLUT is the colour table of ramp over st, headed by the index's name
// (the classes ramp draws the index's class table; an index without one
// gets the default ramp).
func newLUT(ramp string, st colormap.Stretch, idx indexChoice) (*colormap.LUT, error) {
	if ramp == colormap.RampClasses {
		if idx.classes == nil {
			ramp = colormap.DefaultRamp
		} else {
			lut, err := colormap.NewClasses(idx.classes)
			if err != nil {
				return nil, err
			}
			return lut.WithHeading(idx.heading()), nil
		}
	}
	lut, err := colormap.New(ramp, st.Lo, st.Hi)
	if err != nil {
		return nil, err
	}
	return lut.WithHeading(idx.heading()), nil
}

// dataMode is the stretch read from the data for mode: a custom formula
// has no full range, its full stretch is its min–max.
func dataMode(idx indexChoice, mode string) string {
	if _, ok := idx.fullRange(); !ok && (mode == "" || mode == colormap.StretchFull) {
		return colormap.StretchMinMax
	}
	return mode
}

// compareAll runs every available backend (every mode of those with
// modes) on the bands and index shown, verifies each and fills the timing
// chart.
func (w *window) compareAll() {
	s := w.shown
	runs := benchPlan(w.backs.available())
	if s == nil || len(runs) == 0 {
		return
	}
	if s.large != nil {
		w.compareLarge(s, runs)
		return
	}
	repeat := w.opts.Repeat
	w.compareNeed = compareMemory(s.set.bands, runs)
	w.checkMemoryWithin("Compare all", w.compareNeed, compareBudget, func() { w.compareAllRuns(s, runs, repeat) })
}

func (w *window) compareAllRuns(s *shown, runs []runSpec, repeat int) {
	w.bridge.start("Comparing backends", func(ctx context.Context, progress progressFunc) (func(), error) {
		// A job of its own: the map's plane is not overwritten while shown.
		j, err := compute.NewJob(s.set.bands, s.set.mask, []string{s.idx.name}, []*index.Expr{s.idx.expr})
		if err != nil {
			return nil, err
		}
		var results []compute.BenchResult
		for i, r := range runs {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			// Per backend and per run: the share of the whole, and what
			// the backend does now, so that a 10980² comparison moves.
			head := fmt.Sprintf("Compare all: %s on %s, %d×%d (backend %d of %d)", s.idx.title(), r.label(), j.Width, j.Height, i+1, len(runs))
			res, err := r.bench(ctx, j, repeat, func(frac float64, what string) {
				progress((float64(i)+frac)/float64(len(runs)), head+", "+what+"…")
			})
			if err != nil {
				return nil, err
			}
			results = append(results, res)
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
			w.charts.showTimings(results)
			w.setStatus(compareLine(results), allVerified(results))
			w.markReady()
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

// ndviChoice is the catalogue's NDVI, the index of the size sweep.
var ndviChoice, _ = catalogueChoice("ndvi")

// sizeSweep runs every available backend on NDVI of noise scenes of
// growing size, so the chart shows where the GPU starts to win.
func (w *window) sizeSweep() {
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
			bands, _, err := fake.Bands(fake.Noise, n, n, 1, ndviChoice.roles())
			if err != nil {
				return nil, err
			}
			j, err := compute.NewJob(bands, nil, []string{ndviChoice.name}, []*index.Expr{ndviChoice.expr})
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
				head := fmt.Sprintf("Size sweep: %s at %d×%d", r.label(), n, n)
				res, err := r.bench(ctx, j, rep, func(frac float64, what string) {
					progress((done+frac*float64(n)*float64(n))/weights, head+", "+what+"…")
				})
				if err != nil {
					return nil, err
				}
				results = append(results, res)
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
			w.charts.showSweep(results)
			w.setStatus(sweepLine(results), allVerified(results))
		}, nil
	})
}

// sweepIndices are the catalogue indices of the indices-per-upload sweep,
// in the order they join a job: those of red and NIR first, then the ones
// that add a band, so that the bands uploaded grow slowly.
var sweepIndices = []string{"ndvi", "evi", "savi", "evi2", "msavi2", "osavi", "gndvi", "ndre", "ndmi", "nbr"}

// sweepCounts are the numbers of indices per job of that sweep.
var sweepCounts = []int{1, 2, 5, 10}

// indexSweep times jobs of 1, 2, 5 and 10 catalogue indices computed from
// one upload of the same noise bands on every available backend, so the
// chart shows from how many indices a GPU with its transfers overtakes
// the CPU: the transfers are paid once per job, the kernels per index.
func (w *window) indexSweep() {
	runs := benchPlan(w.backs.available())
	if len(runs) == 0 {
		return
	}
	n := w.charts.indicesSize()
	repeat := w.opts.Repeat
	if n >= 4096 {
		repeat = min(repeat, 3)
	}
	w.bridge.start("Indices per upload", func(ctx context.Context, progress progressFunc) (func(), error) {
		var exprs []*index.Expr
		var roles []string
		for _, name := range sweepIndices {
			c, _ := catalogueChoice(name)
			exprs = append(exprs, c.expr)
			for _, r := range c.roles() {
				if !slices.Contains(roles, r) {
					roles = append(roles, r)
				}
			}
		}
		progress(-1, fmt.Sprintf("Indices per upload: generating %d×%d bands (%s)…", n, n, strings.Join(roles, ", ")))
		bands, _, err := fake.Bands(fake.Noise, n, n, 1, roles)
		if err != nil {
			return nil, err
		}
		var results []compute.BenchResult
		total := len(sweepCounts) * len(runs)
		for ci, k := range sweepCounts {
			j, err := compute.NewJob(bands, nil, sweepIndices[:k], exprs[:k])
			if err != nil {
				return nil, err
			}
			for ri, r := range runs {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				head := fmt.Sprintf("Indices per upload: %d on %s", k, r.label())
				at := ci*len(runs) + ri
				res, err := r.bench(ctx, j, repeat, func(frac float64, what string) {
					progress((float64(at)+frac)/float64(total), head+", "+what+"…")
				})
				if err != nil {
					return nil, err
				}
				results = append(results, res)
			}
		}
		for _, r := range runs {
			r.b.Close()
		}
		progress(1, "")
		return func() {
			w.charts.showIndexSweep(results)
			s := compareLine(results)
			s = strings.Replace(s, "Compared ", "Indices per upload: ", 1)
			w.setStatus(s, allVerified(results))
		}, nil
	})
}

// benchPlan lists the runs of Compare all and the sweeps: every entry in
// every mode of its modes (the command line's policy), in the
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

// sortResults orders results by backend (canonical order), then mode.
func sortResults(rs []compute.BenchResult) {
	slices.SortStableFunc(rs, func(a, b compute.BenchResult) int {
		if d := compute.Rank(a.Backend) - compute.Rank(b.Backend); d != 0 {
			return d
		}
		return strings.Compare(a.Mode, b.Mode)
	})
}

// resultLine is one run for the status bar: the index, the backend, the
// phases, the verification and what the mask removed.
func resultLine(r compute.BenchResult, s *shown) string {
	name := s.idx.title()
	if s.idx.cat == nil {
		name = s.idx.name
	}
	if r.Error != "" && !r.Verified {
		return fmt.Sprintf("%s on %s: %s", name, chart.Label(r.Backend, r.Mode), r.Error)
	}
	line := fmt.Sprintf("%s on %s, %d×%d: kernel %s", name, chart.Label(r.Backend, r.Mode), r.Width, r.Height, ms(r.KernelMS))
	if r.GPU {
		line += fmt.Sprintf(", with transfers %s", ms(r.TotalMS))
	}
	line += fmt.Sprintf(" (setup %s apart) · verified: max error %.3g", ms(r.SetupMS), r.MaxAbsErr)
	if s.masked > 0 {
		line += fmt.Sprintf(" · masked %s pixels (%.1f %%)", thousands(s.masked), 100*float64(s.masked)/float64(s.w*s.h))
	}
	if s.set.raw {
		line += " · raw digital numbers (no radiometry known)"
	}
	return line
}

func compareLine(rs []compute.BenchResult) string {
	var bad []string
	maxErr := 0.0
	for _, r := range rs {
		if !r.Verified {
			bad = append(bad, chart.Label(r.Backend, r.Mode)+": "+firstLine(r.Error))
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
	spec = strings.TrimRight(spec, `/\`)
	if i := strings.LastIndexAny(spec, `/\`); i >= 0 {
		return spec[i+1:]
	}
	return spec
}
