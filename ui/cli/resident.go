package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strings"
	"time"

	"canopy/compute"
	"canopy/compute/fake"
	"canopy/compute/index"
	"canopy/compute/par"
	"canopy/compute/request"
	"canopy/compute/residentcpu"
	"canopy/ui/render/colormap"
)

// residentFlag is the flag that turns `canopy bench` into the resident
// benchmark.
const residentFlag = "resident"

// wantsResident reports whether bench's arguments ask for --resident.
func wantsResident(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "-"+residentFlag || a == "--"+residentFlag || a == "--"+residentFlag+"=true" || a == "-"+residentFlag+"=true" {
			return true
		}
	}
	return false
}

// ResidentStep is one line of `canopy bench --resident --json`: one step
// of a map viewer on one backend, medians of the repeats with their
// spread (milliseconds), each phase the wall clock of its call (setup
// excluded, reported apart).
type ResidentStep struct {
	Backend string `json:"backend"`
	Device  string `json:"device"`
	// Step is first_view (open, index, statistics, view), index_change
	// (index, statistics, view), ramp_change (view), zoom_pan (view).
	Step   string `json:"step"`
	Width  int    `json:"width"`
	Height int    `json:"height"`
	View   string `json:"view"`
	Bands  string `json:"bands"`
	Repeat int    `json:"repeat"`
	// Total is the step end to end; Upload, Index, Stats and Render are
	// its calls (Upload: OpenResident's); Kernel is the device time of
	// the statistics and view kernels (zero on the host).
	Total  compute.Phase `json:"total"`
	Upload compute.Phase `json:"upload"`
	Index  compute.Phase `json:"index"`
	Stats  compute.Phase `json:"stats"`
	Render compute.Phase `json:"render"`
	// SetupMS is the median one-time work of the step's calls (page-locking
	// the bands, allocations; the JIT is done in the warm-up).
	SetupMS float64 `json:"setup_ms"`
}

// ResidentAgreement is the last line: the GPU session's statistics and
// view against the host session's, for the same plane and view.
type ResidentAgreement struct {
	Step          string  `json:"step"` // "agreement"
	Backend       string  `json:"backend"`
	Reference     string  `json:"reference"`
	Valid         bool    `json:"valid_equal"`
	Histogram     bool    `json:"histogram_equal"`
	Classes       bool    `json:"classes_equal"`
	MinMax        bool    `json:"min_max_equal"`
	MeanRelErr    float64 `json:"mean_rel_err"`
	StdRelErr     float64 `json:"std_rel_err"`
	ViewMaxLevels int     `json:"view_max_levels"`
	ViewBytesOff  int     `json:"view_bytes_off"`
}

// s2Bands are the red and NIR bands of a fake landscape as Sentinel-2
// L2A stores them: uint16 DN = reflectance × 10000 + 1000, nodata 0.
func s2Bands(w, h int, seed uint64) ([]compute.BandInput, error) {
	fb, _, err := fake.Bands(fake.Landscape, w, h, seed, []string{"red", "nir"})
	if err != nil {
		return nil, err
	}
	out := make([]compute.BandInput, len(fb))
	for i, b := range fb {
		p := compute.NewPlane(compute.U16, w, h)
		src, dst := b.Plane.F32(), p.U16()
		par.Blocks(len(src), 1<<16, func(lo, hi int) {
			for k := lo; k < hi; k++ {
				dst[k] = uint16(max(1, min(math.Round(float64(src[k])*1e4)+1000, 65535)))
			}
		})
		out[i] = compute.BandInput{Role: b.Role, Plane: p, Radiometry: compute.Radiometry{Add: -1000, Scale: 1e-4},
			NoData: 0, HasNoData: true, Source: "fake landscape as Sentinel-2 uint16 " + b.Role}
	}
	return out, nil
}

func phase(ms []float64) compute.Phase {
	if len(ms) == 0 {
		return compute.Phase{}
	}
	s := slices.Clone(ms)
	slices.Sort(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return compute.Phase{Median: med, Min: s[0], Max: s[len(s)-1]}
}

func msOf(d time.Duration) float64 { return float64(d) / 1e6 }

// stepTimes collects one step's repeats.
type stepTimes struct {
	total, upload, index, stats, render, setup []float64
}

func (st *stepTimes) add(total float64, upload, idx, stats, render, setup time.Duration) {
	st.total = append(st.total, total)
	st.upload = append(st.upload, msOf(upload))
	st.index = append(st.index, msOf(idx))
	st.stats = append(st.stats, msOf(stats))
	st.render = append(st.render, msOf(render))
	st.setup = append(st.setup, msOf(setup))
}

// cmdBenchResident is `canopy bench --resident`: a map viewer's steps on
// a Sentinel-2 tile kept where each backend computes (the GPU's memory, or
// the host for the CPU backends), headless.
func cmdBenchResident(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench --resident", stderr)
	fs.Bool(residentFlag, true, "time the resident session: bands kept where the backend computes")
	size := fs.String("size", "10980", "scene size, N or NxM (10980: a Sentinel-2 tile)")
	list := fs.String("backends", "cuda,gl,c", "backends, comma-separated (GPU backends keep the bands on the card; CPU backends on the host)")
	repeat := fs.Int("repeat", 10, "timed repeats per step, after one untimed warm-up")
	viewSize := fs.String("view", "1920x1080", "screen view in pixels, WxH")
	seed := fs.Uint64("seed", 1, "scene seed")
	asJSON := fs.Bool("json", false, "one JSON object per backend and step, then the agreement")
	if err := parse(fs, args, stdout); err != nil {
		return err
	}
	if *repeat < 1 {
		return request.Errorf("bad --repeat %d: at least 1", *repeat)
	}
	w, h, err := parseSize(*size)
	if err != nil {
		return err
	}
	vw, vh, err := parseSize(*viewSize)
	if err != nil {
		return err
	}
	var backends []compute.Backend
	for _, name := range strings.Split(*list, ",") {
		b, err := compute.New(strings.TrimSpace(name))
		if err != nil {
			return request.Error{Msg: err.Error()}
		}
		defer b.Close()
		if info := b.Info(); !info.Available {
			fmt.Fprintf(stderr, "canopy bench: %s skipped: %s\n", b.Name(), info.Reason)
			continue
		}
		backends = append(backends, b)
	}
	if len(backends) == 0 {
		return errors.New("no backend of --backends can run here")
	}
	bands, err := s2Bands(w, h, *seed)
	if err != nil {
		return err
	}
	ndvi, _ := index.Lookup("ndvi")
	savi, _ := index.Lookup("savi")
	indices := [][]*index.Expr{{ndvi.Expr}, {savi.Expr}}
	names := [][]string{{"ndvi"}, {"savi"}}
	req := compute.StatsRequest{Bins: 256, Lo: -1, Hi: 1, Classes: compute.NDVIClasses(), PixelAreaM2: 100}
	tables := make([]compute.ColorTable, 0, 2)
	for _, r := range []string{colormap.RampRdYlGn, colormap.RampViridis} {
		l, err := colormap.New(r, -1, 1)
		if err != nil {
			return err
		}
		tables = append(tables, l.Table())
	}
	fit := min(float64(vw)/float64(w), float64(vh)/float64(h))
	fitView := compute.View{Table: tables[0], Zoom: fit, Width: vw, Height: vh,
		X0: -(float64(vw)/fit - float64(w)) / 2, Y0: -(float64(vh)/fit - float64(h)) / 2}
	// Zoom and pan: 1:1 at the centre, 2× a quarter in, and half of the
	// tile, in turn.
	moves := []compute.View{
		{Zoom: 1, X0: float64(w)/2 - float64(vw)/2, Y0: float64(h)/2 - float64(vh)/2},
		{Zoom: 2, X0: float64(w) / 4, Y0: float64(h) / 4},
		{Zoom: 0.5, X0: float64(w)/2 - float64(vw), Y0: float64(h)/2 - float64(vh)},
	}
	for i := range moves {
		moves[i].Table, moves[i].Width, moves[i].Height = tables[0], vw, vh
	}
	dst := make([]byte, 4*vw*vh)
	enc := json.NewEncoder(stdout)
	if !*asJSON {
		fmt.Fprintf(stdout, "# resident session: %dx%d Sentinel-2 uint16 red and nir, %dx%d view, %d repeats after one warm-up, GOMAXPROCS %d; medians [min-max] ms\n",
			w, h, vw, vh, *repeat, runtime.GOMAXPROCS(0))
	}
	type kept struct {
		name string
		s    compute.ResidentSession
	}
	var sessions []kept
	defer func() {
		for _, k := range sessions {
			k.s.Close()
		}
	}()
	for _, b := range backends {
		info := b.Info()
		emit := func(step string, st stepTimes) error {
			r := ResidentStep{Backend: b.Name(), Device: info.Device, Step: step, Width: w, Height: h,
				View: fmt.Sprintf("%dx%d", vw, vh), Bands: "red,nir uint16", Repeat: len(st.total),
				Total: phase(st.total), Upload: phase(st.upload), Index: phase(st.index), Stats: phase(st.stats),
				Render: phase(st.render), SetupMS: phase(st.setup).Median}
			if *asJSON {
				return enc.Encode(r)
			}
			p := func(ph compute.Phase) string { return fmt.Sprintf("%.2f", ph.Median) }
			_, err := fmt.Fprintf(stdout, "%-6s %-13s total %8.2f [%.2f-%.2f]  upload %s  index %s  stats %s  view %s  (setup %.1f)\n",
				b.Name(), step, r.Total.Median, r.Total.Min, r.Total.Max, p(r.Upload), p(r.Index), p(r.Stats), p(r.Render), r.SetupMS)
			return err
		}
		// firstView opens a session and shows the fitted view of NDVI.
		firstView := func() (compute.ResidentSession, float64, [5]time.Duration, error) {
			var ph [5]time.Duration // upload, index, stats, render, setup
			s, to, err := residentcpu.OpenFor(b, bands, nil)
			if err != nil {
				return nil, 0, ph, fmt.Errorf("%s: %w", b.Name(), err)
			}
			ti, err := s.Index(names[0], indices[0])
			if err != nil {
				s.Close()
				return nil, 0, ph, fmt.Errorf("%s: %w", b.Name(), err)
			}
			_, ts, err := s.Stats(0, req)
			if err != nil {
				s.Close()
				return nil, 0, ph, fmt.Errorf("%s: %w", b.Name(), err)
			}
			tr, err := s.Render(0, fitView, dst)
			if err != nil {
				s.Close()
				return nil, 0, ph, fmt.Errorf("%s: %w", b.Name(), err)
			}
			ph = [5]time.Duration{to.Total, ti.Total, ts.Total, tr.Total, to.Setup + ti.Setup + ts.Setup + tr.Setup}
			return s, msOf(to.Total + ti.Total + ts.Total + tr.Total), ph, nil
		}
		var st stepTimes
		var s compute.ResidentSession
		for i := range *repeat + 1 {
			if s != nil {
				s.Close()
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			var total float64
			var ph [5]time.Duration
			if s, total, ph, err = firstView(); err != nil {
				return err
			}
			if i > 0 { // the first is the warm-up: JIT, allocations
				st.add(total, ph[0], ph[1], ph[2], ph[3], ph[4])
			}
		}
		sessions = append(sessions, kept{b.Name(), s})
		if err := emit("first_view", st); err != nil {
			return err
		}
		// A change of index: the other index, its statistics, the view.
		st = stepTimes{}
		for i := range *repeat + 1 {
			if err := ctx.Err(); err != nil {
				return err
			}
			k := (i + 1) % 2
			ti, err := s.Index(names[k], indices[k])
			if err != nil {
				return fmt.Errorf("%s: %w", b.Name(), err)
			}
			_, ts, err := s.Stats(0, req)
			if err != nil {
				return fmt.Errorf("%s: %w", b.Name(), err)
			}
			tr, err := s.Render(0, fitView, dst)
			if err != nil {
				return fmt.Errorf("%s: %w", b.Name(), err)
			}
			if i > 0 {
				st.add(msOf(ti.Total+ts.Total+tr.Total), 0, ti.Total, ts.Total, tr.Total, ti.Setup+ts.Setup+tr.Setup)
			}
		}
		if err := emit("index_change", st); err != nil {
			return err
		}
		if _, err := s.Index(names[0], indices[0]); err != nil {
			return fmt.Errorf("%s: %w", b.Name(), err)
		}
		// Views alone: a change of ramp, then zoom and pan.
		renders := func(step string, views []compute.View) error {
			st := stepTimes{}
			for i := range *repeat + 1 {
				if err := ctx.Err(); err != nil {
					return err
				}
				tr, err := s.Render(0, views[i%len(views)], dst)
				if err != nil {
					return fmt.Errorf("%s: %w", b.Name(), err)
				}
				if i > 0 {
					st.add(msOf(tr.Total), tr.Upload, 0, 0, tr.Total, tr.Setup)
				}
			}
			return emit(step, st)
		}
		other := fitView
		other.Table = tables[1]
		if err := renders("ramp_change", []compute.View{other, fitView}); err != nil {
			return err
		}
		if err := renders("zoom_pan", moves); err != nil {
			return err
		}
	}
	// The GPU sessions against the first host session.
	var ref *kept
	for i := range sessions {
		if _, host := sessions[i].s.(*residentcpu.Session); host {
			ref = &sessions[i]
			break
		}
	}
	if ref == nil {
		return nil
	}
	want, _, err := ref.s.Stats(0, req)
	if err != nil {
		return err
	}
	wantView := make([]byte, len(dst))
	if _, err := ref.s.Render(0, fitView, wantView); err != nil {
		return err
	}
	for _, k := range sessions {
		if k.s == ref.s {
			continue
		}
		got, _, err := k.s.Stats(0, req)
		if err != nil {
			return err
		}
		if _, err := k.s.Render(0, fitView, dst); err != nil {
			return err
		}
		a := ResidentAgreement{Step: "agreement", Backend: k.name, Reference: ref.name,
			Valid: got.Valid == want.Valid && got.Total == want.Total, Histogram: slices.Equal(got.Histogram, want.Histogram),
			Classes:    slices.EqualFunc(got.Classes, want.Classes, func(x, y compute.ClassCount) bool { return x.Pixels == y.Pixels }),
			MinMax:     got.Min == want.Min && got.Max == want.Max,
			MeanRelErr: math.Abs(got.Mean-want.Mean) / math.Abs(want.Mean), StdRelErr: math.Abs(got.Std-want.Std) / math.Abs(want.Std)}
		for i := range dst {
			d := int(dst[i]) - int(wantView[i])
			if d != 0 {
				a.ViewBytesOff++
				a.ViewMaxLevels = max(a.ViewMaxLevels, d, -d)
			}
		}
		if *asJSON {
			if err := enc.Encode(a); err != nil {
				return err
			}
		} else {
			fmt.Fprintf(stdout, "%s against %s: valid %v, histogram %v, classes %v, min/max %v, mean %.1e, std %.1e relative; view %d bytes off, at most %d levels\n",
				a.Backend, a.Reference, a.Valid, a.Histogram, a.Classes, a.MinMax, a.MeanRelErr, a.StdRelErr, a.ViewBytesOff, a.ViewMaxLevels)
		}
		if !a.Valid || !a.Histogram || !a.Classes || !a.MinMax || a.MeanRelErr > 1e-6 || a.StdRelErr > 1e-6 || a.ViewMaxLevels > 1 {
			return fmt.Errorf("%s's statistics or view differ from %s's", a.Backend, a.Reference)
		}
	}
	return nil
}
