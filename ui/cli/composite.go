package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"canopy/compute/geotiff"
	"canopy/compute/outfile"
	"canopy/compute/request"
	"canopy/compute/season"
	"canopy/compute/source"
	"canopy/compute/stack"
)

// seasonReport is what `canopy composite --json` and `canopy monitor
// --json` print.
type seasonReport struct {
	Model   string `json:"model"`
	Index   string `json:"index"`
	Backend string `json:"backend"`
	// Devices is how many devices of the backend the blocks were dealt to.
	Devices int      `json:"devices"`
	Width   int      `json:"width"`
	Height  int      `json:"height"`
	Dates   int      `json:"dates"`
	Bands   []string `json:"bands"`
	// LoadMS is the stack's (decoding every date and computing its
	// index), KernelMS the model's on the backend, WriteMS the COG's.
	LoadMS   float64 `json:"load_ms"`
	KernelMS float64 `json:"kernel_ms"`
	WriteMS  float64 `json:"write_ms"`
	// Part is --shard's I/N and Rows the part's rows of the grid [y0, y1)
	// (empty: no file written); Width and Height are the whole grid's.
	Part string `json:"part,omitempty"`
	Rows []int  `json:"rows,omitempty"`
	// Pixels is the part's (the grid's); Valued those with a value (a
	// composite) or a valid observation (a monitor).
	Pixels int    `json:"pixels"`
	Valued int    `json:"valued_pixels"`
	Alerts int    `json:"alert_pixels,omitempty"`
	Tif    string `json:"tif,omitempty"`
	PNG    string `json:"png,omitempty"`
	Layout string `json:"layout,omitempty"`
	CSV    string `json:"csv,omitempty"`
	GPKG   string `json:"gpkg,omitempty"`
}

// parseStat reads --stat: median, max-ndvi (or max) or pNN.
func parseStat(s string) (season.Stat, float64, error) {
	switch s {
	case "median":
		return season.Median, 50, nil
	case "max", "max-ndvi":
		return season.Max, 100, nil
	}
	if q, ok := strings.CutPrefix(s, "p"); ok {
		if v, err := strconv.ParseFloat(q, 64); err == nil && v >= 0 && v <= 100 {
			return season.Percentile, v, nil
		}
	}
	return 0, 0, request.Errorf("--stat %q: want median, max-ndvi or pNN (a percentile, e.g. p90)", s)
}

// cmdComposite is canopy composite: one statistic of every pixel's valid
// values over a period of a stack.
func cmdComposite(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("composite", stderr)
	var sf seasonFlags
	sf.register(fs, "the index composited (one)", "output COG: the composite, the count of valid dates and the date of the maximum (decimal year)")
	period := fs.String("period", "", "the dates composited, FROM/TO: YYYY, YYYY-MM or YYYY-MM-DD, TO included (e.g. 2024-06/2024-08)")
	stat := fs.String("stat", "median", "median, max-ndvi (the greatest value, and its date) or pNN (a percentile, e.g. p90)")
	paths, err := sf.parse(fs, args, stdout)
	if err != nil {
		return err
	}
	if *period == "" {
		return request.Errorf("--period FROM/TO is required (e.g. 2024-06/2024-08)")
	}
	p, err := parsePeriod("--period", *period, true)
	if err != nil {
		return err
	}
	s, q, err := parseStat(*stat)
	if err != nil {
		return err
	}
	m := season.Model{Kind: season.Composite, Stat: s, Percentile: q, Period: p}
	if err := m.Check(); err != nil {
		return request.Error{Msg: err.Error()}
	}
	var inputs []string
	o, err := sf.stack.open(ctx, paths, &inputs)
	if err != nil {
		return err
	}
	defer o.close()
	rep := seasonReport{Model: "composite " + *stat, Index: o.sel.names[0]}
	set := outfile.NewSet(inputs...)
	defer set.Abort()
	if err := runSeason(ctx, o, &sf.run, m, set, sf.tif, &rep, nil); err != nil {
		return err
	}
	if err := set.Commit(); err != nil {
		return err
	}
	if sf.asJSON {
		return json.NewEncoder(stdout).Encode(rep)
	}
	fmt.Fprintf(stdout, "%s of %s over %s on %s: %dx%d, %d dates, %d pixels with a value\n", rep.Model, rep.Index, *period, rep.Backend, rep.Width, rep.Height, rep.Dates, rep.Valued)
	printPart(stdout, &rep)
	return nil
}

// runSeason runs the model over the stack (the part of it --shard names:
// the stack holds those rows) and writes its planes as a COG (band
// descriptions: the model's outputs; a part's file georeferenced where
// the part lies); keep, when set, hears every block's planes too.
func runSeason(ctx context.Context, o *openedStack, rf *seasonRunFlags, m season.Model, set *outfile.Set, tif string, rep *seasonReport, keep func(y0, rows int, out [][]float32)) error {
	st := o.st
	names := m.Outputs()
	backends, closeDevices, err := rf.spread(o.backend)
	if err != nil {
		return err
	}
	defer closeDevices()
	rep.Backend, rep.Devices, rep.Width, rep.Height, rep.Dates, rep.Bands = o.backend.Name(), len(backends), st.Grid.Width, st.Grid.Height, len(st.Dates), names
	if rf.sharded() {
		rep.Part, rep.Rows = fmt.Sprintf("%d/%d", rf.part, rf.parts), []int{st.Y0, st.Y1}
		if st.Y0 == st.Y1 {
			return nil // an empty part: no file
		}
		tif = rf.out(tif)
	}
	grid := stack.Rows(st.Grid, st.Y0, st.Y1)
	w, err := set.Create(tif)
	if err != nil {
		return err
	}
	var out io.WriterAt = w
	if wr := wrapOutput(w); wr != outWriter(w) {
		out = wr
	}
	cog, err := source.NewCOG(out, tif, grid, names, geotiff.Deflate, filepath.Dir(tif))
	if err != nil {
		return err
	}
	valued := 0
	var write time.Duration
	_, tm, err := stack.RunRows(ctx, st, backends, m, st.Y0, st.Y1, func(y0, rows int, planes [][]float32) error {
		// A composite's pixels with a value; a monitor's with a valid
		// observation.
		if m.Kind == season.Composite {
			for _, v := range planes[0] {
				if v == v {
					valued++
				}
			}
		} else {
			for _, v := range planes[3] {
				if v > 0 {
					valued++
				}
			}
		}
		if keep != nil {
			keep(y0, rows, planes)
		}
		t0 := time.Now()
		defer func() { write += time.Since(t0) }()
		return cog.WriteRows(y0-st.Y0, rows, planes)
	})
	if err != nil {
		cog.Abort()
		return err
	}
	t0 := time.Now()
	if err := cog.Close(); err != nil {
		return fmt.Errorf("write %s: %w", tif, err)
	}
	write += time.Since(t0)
	rep.LoadMS, rep.WriteMS = ms(o.load), ms(write)
	rep.KernelMS, rep.Pixels, rep.Valued, rep.Tif = ms(tm.Kernel), grid.Width*grid.Height, valued, tif
	return nil
}

// printPart says what a composite or monitor wrote, and which part of
// the area it was.
func printPart(stdout io.Writer, rep *seasonReport) {
	if rep.Part != "" {
		if rep.Tif == "" {
			fmt.Fprintf(stdout, "part %s is empty: the grid's %d rows make fewer rows of %d-pixel tiles than parts; nothing written\n", rep.Part, rep.Height, stack.PartRows)
			return
		}
		fmt.Fprintf(stdout, "part %s: rows %d to %d of %d\n", rep.Part, rep.Rows[0], rep.Rows[1], rep.Height)
	}
	if rep.Tif != "" {
		fmt.Fprintf(stdout, "wrote %s\n", rep.Tif)
	}
}
