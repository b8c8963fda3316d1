package cli

import (
	"bufio"
	"flag"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"canopy/compute"
	"canopy/compute/outfile"
	"canopy/compute/pipeline"
	"canopy/compute/request"
	"canopy/compute/scene"
	"canopy/ui/render/colormap"
	"canopy/ui/render/layout"
)

// layoutFlags are compute's print layout options (--layout and the flags
// that shape it).
type layoutFlags struct {
	out, size, paper, orientation string
	source, date                  string
	dpi                           float64
	grid                          bool
}

// register adds the layout flags to fs.
func (f *layoutFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.out, "layout", "", "write a print layout (title, map, legend, scale bar, north arrow, CRS, date, source) as PNG, PDF or SVG, by extension (several indices: OUT-NAME.ext)")
	fs.StringVar(&f.size, "layout-size", "", "the layout's size in pixels, WxH (default 1600x1200; with --paper, the paper's at --dpi)")
	fs.StringVar(&f.paper, "paper", "", "the layout's paper: "+strings.Join(layout.PaperSizes(), ", "))
	fs.StringVar(&f.orientation, "orientation", "", "the layout's orientation: portrait or landscape (default: the map's)")
	fs.Float64Var(&f.dpi, "dpi", 0, "the layout's resolution in dots per inch (default 150 on paper, 96 for a size in pixels)")
	if !shareGrid(fs, &f.grid) {
		fs.BoolVar(&f.grid, "grid", false, "draw a coordinate grid on the layout")
	}
	fs.StringVar(&f.source, "source", "", "the layout's source line (default: the scene, or the band files)")
	fs.StringVar(&f.date, "date", "", "the layout's date (default: the scene's acquisition date)")
}

// options are the layout options the flags give (without title and
// metadata).
func (f *layoutFlags) options() (layout.Options, error) {
	o := layout.Options{Paper: f.paper, Orientation: f.orientation, DPI: f.dpi, Grid: f.grid}
	if f.size != "" {
		w, h, ok := strings.Cut(strings.ToLower(f.size), "x")
		var err1, err2 error
		o.Width, err1 = strconv.Atoi(strings.TrimSpace(w))
		o.Height, err2 = strconv.Atoi(strings.TrimSpace(h))
		if !ok || err1 != nil || err2 != nil {
			return o, request.Errorf("bad --layout-size %q: give WxH in pixels, e.g. 1600x1200", f.size)
		}
		if f.paper != "" {
			return o, request.Errorf("--layout-size and --paper both give the layout's size: choose one")
		}
	}
	return o, nil
}

// check reports bad layout flags before any work is done: the extension,
// the size, paper, orientation and DPI, and --ramp classes for an index
// with no established classes.
func (f *layoutFlags) check(sel selection, ramp string) error {
	if f.out == "" {
		for name, set := range map[string]bool{"--layout-size": f.size != "", "--paper": f.paper != "", "--orientation": f.orientation != "", "--dpi": f.dpi != 0, "--grid": f.grid, "--source": f.source != "", "--date": f.date != ""} {
			if set {
				return request.Errorf("%s shapes the print layout: give --layout OUT.png|pdf|svg too", name)
			}
		}
		return nil
	}
	if _, err := layout.FormatOf(f.out); err != nil {
		return request.Errorf("--layout %s: name it .png, .pdf or .svg", f.out)
	}
	o, err := f.options()
	if err != nil {
		return err
	}
	if _, _, _, err := o.PageSize(4, 3); err != nil {
		return request.Error{Msg: strings.Replace(err.Error(), "layout: ", "--layout: ", 1)}
	}
	if strings.EqualFold(ramp, colormap.RampClasses) {
		for _, n := range sel.names {
			if _, ok := colormap.IndexClasses(n); !ok {
				return request.Errorf("--ramp classes: %s has no established classes (ndvi, ndwi and ndmi have); use a continuous ramp", n)
			}
		}
	}
	return nil
}

// paths names one layout per index, as --png does.
func (f *layoutFlags) paths(names []string) []string { return pngPaths(f.out, names) }

// layoutRun collects the maps of a run for its layouts.
type layoutRun struct {
	f        *layoutFlags
	opt      layout.Options
	paths    []string
	reducers []*layout.Reducer
	// Sinks receive the run's blocks: plug them into source.Run.
	sinks []pipeline.Sink
}

// start prepares the layouts of a w×h run of the indices names: each map
// reduced on the fly to the layout's size (the scene is never held
// whole). It returns nil without --layout.
func (f *layoutFlags) start(w, h int, names []string) (*layoutRun, error) {
	if f.out == "" {
		return nil, nil
	}
	o, err := f.options()
	if err != nil {
		return nil, err
	}
	pw, ph, _, err := o.PageSize(w, h)
	if err != nil {
		return nil, err
	}
	r := &layoutRun{f: f, opt: o, paths: f.paths(names)}
	for i := range names {
		red, err := layout.NewReducer(w, h, max(pw, ph))
		if err != nil {
			return nil, err
		}
		r.reducers = append(r.reducers, red)
		p := r.paths[i]
		r.sinks = append(r.sinks, pipeline.SinkFunc(func(b *pipeline.Block) error {
			if err := red.WriteRows(b.Y0, b.Rows, b.Out[i]); err != nil {
				return fmt.Errorf("layout %s: %w", p, err)
			}
			return nil
		}))
	}
	return r, nil
}

// layoutMeta is what a layout's footer says beside the CRS.
type layoutMeta struct {
	date, source string
	// raw says the bands were digital numbers with no radiometry known.
	raw bool
}

// metaOf fills the footer from the flags, else from the scene (sensor,
// product, acquisition date) or the band files.
func (f *layoutFlags) metaOf(s *scene.Scene, bands []pipeline.Band, raw bool) layoutMeta {
	m := layoutMeta{date: f.date, source: f.source, raw: raw}
	if s != nil {
		if m.date == "" && !s.Date.IsZero() {
			m.date = s.Date.UTC().Format("2006-01-02")
		}
		if m.source == "" {
			m.source = strings.TrimSpace(s.Sensor + " " + s.Product)
		}
	}
	if m.source == "" {
		var parts []string
		for _, b := range bands {
			parts = append(parts, b.Role+": "+filepath.Base(b.Source))
		}
		m.source = strings.Join(parts, ", ")
	}
	return m
}

// finish writes the layouts once the run is over, through temporary
// files renamed into place (never over an input), and returns their
// paths.
func (r *layoutRun) finish(inputs []string, geo *compute.GeoRef, sel selection, st pngStyle, meta layoutMeta) ([]string, error) {
	if r == nil {
		return nil, nil
	}
	set := outfile.NewSet(inputs...)
	defer set.Abort()
	for i, p := range r.paths {
		m, err := r.reducers[i].Map(geo)
		if err != nil {
			return nil, fmt.Errorf("layout %s: %w", p, err)
		}
		name := sel.names[i]
		heading, subtitle := "Index", name
		lo, hi := -1.0, 1.0
		if c := sel.cat[i]; c != nil {
			heading, subtitle = strings.ToUpper(c.Name), c.Reference
			lo, hi = c.Range[0], c.Range[1]
		}
		var lut *colormap.LUT
		if strings.EqualFold(st.ramp, colormap.RampClasses) {
			tb, ok := colormap.IndexClasses(name)
			if !ok {
				return nil, request.Errorf("--ramp classes: %s has no established classes", name)
			}
			lut, err = colormap.NewClasses(tb)
		} else {
			s := colormap.Stretch{Lo: lo, Hi: hi}
			if st.stretch != "" && st.stretch != colormap.StretchFull {
				// Read from the layout's map: its pixels are means of the scene's.
				if s, err = colormap.StretchFor(st.stretch, m.Plane); err != nil {
					return nil, err
				}
			}
			lut, err = colormap.New(st.ramp, s.Lo, s.Hi)
		}
		if err != nil {
			return nil, fmt.Errorf("layout %s: %w", p, err)
		}
		m.LUT = lut.WithHeading(heading)
		o := r.opt
		o.Title, o.Subtitle, o.Date, o.Source = st.title, subtitle, meta.date, meta.source
		if o.Title == "" {
			o.Title = heading
		}
		if meta.raw {
			o.Subtitle = strings.TrimPrefix(o.Subtitle+" · computed on raw digital numbers (no radiometry known)", " · ")
		}
		format, err := layout.FormatOf(p)
		if err != nil {
			return nil, request.Error{Msg: err.Error()}
		}
		w, err := set.Create(p)
		if err != nil {
			return nil, err
		}
		bw := bufio.NewWriterSize(w, 1<<20)
		if _, err := layout.Encode(bw, format, m, o); err != nil {
			return nil, fmt.Errorf("write layout %s: %w", p, err)
		}
		if err := bw.Flush(); err != nil {
			return nil, fmt.Errorf("write layout %s: %w", p, err)
		}
	}
	if err := set.Commit(); err != nil {
		return nil, err
	}
	return r.paths, nil
}
