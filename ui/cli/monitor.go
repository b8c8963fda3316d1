package cli

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"

	"canopy/compute/outfile"
	"canopy/compute/request"
	"canopy/compute/season"
	"canopy/compute/source"
	"canopy/compute/vector"
	"canopy/compute/zonal"
	"canopy/ui/render/colormap"
	"canopy/ui/render/layout"
)

// standAlert is one stand's alerts.
type standAlert struct {
	ID string
	// First is the earliest alert date of the stand's pixels (NaN: none).
	First float64
	// AlertedHa is the hectares of the stand alerted, AreaHa its area on
	// the grid, ValidHa the part monitored (some valid observation).
	AlertedHa, AreaHa, ValidHa float64
}

// cmdMonitor is canopy monitor: a season-trend model fitted on a history
// period, the monitoring period checked against it (BFAST-monitor's MOSUM
// or fordead's anomaly rule), alerts per pixel and per stand.
func cmdMonitor(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("monitor", stderr)
	var sf seasonFlags
	sf.register(fs, "the index monitored (one; ndmi or nbr for bark beetle and storms)", "output COG: break date (decimal year), magnitude, confidence, valid observations")
	history := fs.String("history", "", "the history the model is fitted on, FROM/TO (YYYY, YYYY-MM or YYYY-MM-DD, TO included)")
	monitor := fs.String("monitor", "", "the monitoring period, FROM/ (to the last date) or FROM/TO")
	harmonics := fs.Int("harmonics", 3, "harmonics of the seasonal model (1 to 3; bfastmonitor's order)")
	trend := fs.Bool("trend", true, "fit a linear trend too (bfastmonitor's response ~ trend + harmon)")
	rule := fs.String("rule", "mosum", "mosum (BFAST-monitor, strucchange's OLS-MOSUM) or anomaly (fordead's: --run successive anomalies)")
	h := fs.Float64("window", 0.25, "mosum: the window, as a share of the history's valid dates: 0.25, 0.5 or 1 (bfastmonitor's h)")
	level := fs.Float64("level", 0.05, "mosum: the significance level, 0.001 to 0.05")
	end := fs.Float64("end", 10, "mosum: the monitoring horizon in multiples of the history: 2, 4, 6, 8 or 10")
	threshold := fs.Float64("threshold", 0.1, "anomaly: how far from the model (index units) a date is anomalous")
	direction := fs.String("direction", "down", "anomaly: down (a loss: ndvi, ndmi, nbr), up (a rise: fordead's crswir) or both")
	runLen := fs.Int("run", 3, "anomaly: successive anomalous dates that raise an alert, normal ones that clear it")
	stands := fs.String("stands", "", "stands (GeoPackage FILE[:LAYER] or GeoJSON) for alerts per stand")
	idField := fs.String("id", "", "the stands' id attribute (default: the feature id)")
	csvOut := fs.String("csv", "", "with --stands: alerts per stand as CSV (id, first alert date, hectares alerted, share)")
	gpkgOut := fs.String("gpkg", "", "with --stands: the stands with their alerts as a GeoPackage")
	png := fs.String("png", "", "write a map of the alert dates as PNG (viridis from the monitoring's first date to its last; no alert transparent)")
	legend := fs.Bool("legend", false, "draw the legend beside the PNG map")
	layoutOut := fs.String("layout", "", "write a print layout of the alert dates: OUT.png, .pdf or .svg (title, legend, scale bar, north arrow, CRS, dates)")
	paper := fs.String("paper", "", "with --layout: a paper size (a4, a3, letter, ...) at 150 dpi; default 1600×1200 pixels")
	paths, err := sf.parse(fs, args, stdout)
	if err != nil {
		return err
	}
	if *history == "" || *monitor == "" {
		return request.Errorf("--history FROM/TO and --monitor FROM/ are both required")
	}
	if (*stands == "") != (*csvOut == "" && *gpkgOut == "") {
		return request.Errorf("--stands goes with --csv and/or --gpkg")
	}
	if *harmonics < 1 || *harmonics > 3 {
		return request.Errorf("--harmonics %d: 1 to 3", *harmonics)
	}
	if sf.run.sharded() && (*stands != "" || *png != "" || *layoutOut != "") {
		return request.Errorf("--shard writes the GeoTIFF of one part of the area; --stands, --png and --layout need the whole area: run them without --shard")
	}
	var layoutFormat string
	if *layoutOut != "" {
		if layoutFormat, err = layout.FormatOf(*layoutOut); err != nil {
			return request.Errorf("--layout %s: name it .png, .pdf or .svg", *layoutOut)
		}
	} else if *paper != "" {
		return request.Errorf("--paper shapes the print layout: give --layout OUT.png|pdf|svg too")
	}
	hist, err := parsePeriod("--history", *history, false)
	if err != nil {
		return err
	}
	mon, err := parsePeriod("--monitor", *monitor, true)
	if err != nil {
		return err
	}
	m := season.Model{Harmonics: *harmonics, Trend: *trend, History: hist, Monitor: mon, H: *h, Level: *level, End: *end,
		Threshold: *threshold, Run: *runLen}
	switch *rule {
	case "mosum":
		m.Kind = season.Mosum
	case "anomaly":
		m.Kind = season.Anomaly
	default:
		return request.Errorf("--rule %q: mosum or anomaly", *rule)
	}
	switch *direction {
	case "down":
		m.Direction = season.Down
	case "up":
		m.Direction = season.Up
	case "both":
		m.Direction = season.Both
	default:
		return request.Errorf("--direction %q: down, up or both", *direction)
	}
	if err := m.Check(); err != nil {
		return request.Error{Msg: err.Error()}
	}
	var inputs []string
	if *stands != "" {
		inputs = append(inputs, *stands)
		if p, _, err := vector.ParseStands(*stands); err == nil {
			inputs = append(inputs, p)
		}
	}
	o, err := sf.stack.open(ctx, paths, &inputs)
	if err != nil {
		return err
	}
	defer o.close()
	rep := seasonReport{Model: "monitor " + *rule, Index: o.sel.names[0]}
	set := outfile.NewSet(inputs...)
	defer set.Abort()
	// Every output is placed before any is written: a refused one stops
	// the run at once.
	var csvW, gpkgW, pngW, layoutW *outfile.Writer
	if *layoutOut != "" {
		if layoutW, err = set.Create(*layoutOut); err != nil {
			return err
		}
	}
	if *png != "" {
		if pngW, err = set.Create(*png); err != nil {
			return err
		}
	}
	if *csvOut != "" {
		if csvW, err = set.Create(*csvOut); err != nil {
			return err
		}
	}
	if *gpkgOut != "" {
		if gpkgW, err = set.Create(*gpkgOut); err != nil {
			return err
		}
	}
	g := o.st.Grid
	var brk, cnt []float32
	if *stands != "" || *png != "" || *layoutOut != "" {
		brk, cnt = make([]float32, g.Width*g.Height), make([]float32, g.Width*g.Height)
	}
	alerts := 0
	keep := func(y0, rows int, out [][]float32) {
		for _, v := range out[0] {
			if v == v {
				alerts++
			}
		}
		if brk != nil {
			copy(brk[y0*g.Width:], out[0])
			copy(cnt[y0*g.Width:], out[3])
		}
	}
	if err := runSeason(ctx, o, &sf.run, m, set, sf.tif, &rep, keep); err != nil {
		return err
	}
	rep.Alerts = alerts
	if pngW != nil {
		if err := alertMap(pngW, *png, brk, g, o.st.Decimals(), mon, *legend); err != nil {
			return err
		}
		rep.PNG = *png
	}
	if layoutW != nil {
		lo, hi := alertSpan(o.st.Decimals(), mon)
		lut, err := colormap.New(colormap.RampViridis, lo, hi)
		if err != nil {
			return err
		}
		first, last := o.st.Dates[0].ISO, o.st.Dates[len(o.st.Dates)-1].ISO
		opt := layout.Options{Paper: *paper, Title: fmt.Sprintf("Alerts: %s of %s", *rule, rep.Index),
			Subtitle: fmt.Sprintf("history %s, monitoring %s, %d dates", *history, *monitor, len(o.st.Dates)),
			Date:     first + " to " + last, Source: fmt.Sprintf("%d alerted pixels", alerts)}
		m := layout.Map{Plane: brk, Width: g.Width, Height: g.Height, Geo: g.Geo, LUT: lut.WithHeading("alert date (decimal year)")}
		if _, err := layout.Encode(layoutW, layoutFormat, m, opt); err != nil {
			return fmt.Errorf("layout %s: %w", *layoutOut, err)
		}
		rep.Layout = *layoutOut
	}
	var per []standAlert
	if *stands != "" {
		if per, err = alertsByStand(ctx, *stands, *idField, brk, cnt, g, stderr); err != nil {
			return err
		}
		// A break is its date's decimal year as float32: the exact date
		// back (float32 may round a midnight to the evening before).
		for i := range per {
			for _, d := range o.st.Dates {
				if float32(d.Decimal) == float32(per[i].First) {
					per[i].First = d.Decimal
				}
			}
		}
		if err := writeStandAlerts(csvW, gpkgW, *stands, *csvOut, *gpkgOut, per); err != nil {
			return err
		}
		rep.CSV, rep.GPKG = *csvOut, *gpkgOut
	}
	if err := set.Commit(); err != nil {
		return err
	}
	if sf.asJSON {
		return json.NewEncoder(stdout).Encode(rep)
	}
	fmt.Fprintf(stdout, "%s of %s on %s: %dx%d, %d dates, %d pixels monitored, %d alerted\n", rep.Model, rep.Index, rep.Backend, rep.Width, rep.Height, rep.Dates, rep.Valued, rep.Alerts)
	if rep.Part != "" {
		printPart(stdout, &rep)
		return nil
	}
	for _, s := range per {
		if !math.IsNaN(s.First) {
			fmt.Fprintf(stdout, "  stand %-12s first alert %s, %.2f ha alerted (%.1f%%)\n", s.ID, season.ISODate(s.First), s.AlertedHa, 100*share(s.AlertedHa, s.AreaHa))
		}
	}
	for _, p := range []string{rep.Tif, rep.PNG, rep.Layout, rep.CSV, rep.GPKG} {
		if p != "" {
			fmt.Fprintf(stdout, "wrote %s\n", p)
		}
	}
	return nil
}

// alertMap draws the alert dates: viridis over the monitoring period's
// dates of the stack, transparent where there is no alert.
func alertMap(w *outfile.Writer, path string, brk []float32, g source.Grid, dates []float64, mon season.Period, legend bool) error {
	lo, hi := alertSpan(dates, mon)
	opt := colormap.PNGOptions{Ramp: colormap.RampViridis, Stretch: colormap.Stretch{Lo: lo, Hi: hi}, Legend: legend, Heading: "alert date (decimal year)"}
	if legend {
		opt.Title = "alerts from " + season.ISODate(lo)
	}
	if err := colormap.EncodePNG(w, brk, g.Width, g.Height, opt); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// alertSpan is the span of the stack's dates in the monitoring period (a
// year from its start when it holds fewer than two).
func alertSpan(dates []float64, mon season.Period) (float64, float64) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, d := range dates {
		if mon.Has(d) {
			lo, hi = min(lo, d), max(hi, d)
		}
	}
	if !(hi > lo) {
		lo, hi = mon.From, mon.From+1
	}
	return lo, hi
}

func share(a, b float64) float64 {
	if b == 0 {
		return math.NaN()
	}
	return a / b
}

// alertsByStand sums the alerts over each stand, pixels weighted by the
// share of them the stand covers (compute/zonal): the earliest break of
// the stand, the hectares alerted and the hectares monitored.
func alertsByStand(ctx context.Context, standsSpec, idField string, brk, cnt []float32, g source.Grid, stderr io.Writer) ([]standAlert, error) {
	_, layer, err := readStands(standsSpec)
	if err != nil {
		return nil, err
	}
	gt, _, st, err := standsOn(layer, g.Geo, idField, "the stack has no georeferencing: stands cannot be placed on it")
	if err != nil {
		return nil, err
	}
	// alerted: 1 where a pixel has an alert, 0 where it was monitored
	// without one, NaN where it has no valid observation.
	alerted := make([]float32, len(brk))
	for i := range brk {
		switch {
		case brk[i] == brk[i]:
			alerted[i] = 1
		case cnt[i] > 0:
			alerted[i] = 0
		default:
			alerted[i] = float32(math.NaN())
		}
	}
	pa, err := zonal.NewPlane(alerted, g.Width, g.Height)
	if err != nil {
		return nil, err
	}
	ra, warnings, err := zonal.Compute(pa, gt, st, zonal.Options{Context: ctx})
	if err != nil {
		return nil, err
	}
	for _, w := range warnings {
		fmt.Fprintf(stderr, "canopy monitor: warning: %s\n", w)
	}
	pb, err := zonal.NewPlane(brk, g.Width, g.Height)
	if err != nil {
		return nil, err
	}
	rb, _, err := zonal.Compute(pb, gt, st, zonal.Options{Context: ctx})
	if err != nil {
		return nil, err
	}
	out := make([]standAlert, len(ra))
	for i, r := range ra {
		a := standAlert{ID: r.ID, First: math.NaN(), AreaHa: r.AreaHa, ValidHa: r.ValidHa}
		if r.ValidPixels > 0 {
			a.AlertedHa = r.Mean * r.ValidHa
		}
		if rb[i].ValidPixels > 0 {
			a.First = rb[i].Min
		}
		out[i] = a
	}
	return out, nil
}

// writeStandAlerts writes the alerts per stand as CSV (id, first_alert
// ISO date, first_alert_year decimal, alerted_ha, area_ha, monitored_ha,
// share = alerted_ha / area_ha) and as the stands with those columns in a
// GeoPackage.
func writeStandAlerts(csvW, gpkgW *outfile.Writer, standsSpec, csvOut, gpkgOut string, per []standAlert) error {
	num := func(v float64) string {
		if math.IsNaN(v) {
			return ""
		}
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	if csvW != nil {
		bw := bufio.NewWriter(csvW)
		cw := csv.NewWriter(bw)
		cw.Write([]string{"id", "first_alert", "first_alert_year", "alerted_ha", "area_ha", "monitored_ha", "share"})
		for _, s := range per {
			cw.Write([]string{s.ID, season.ISODate(s.First), num(s.First), num(s.AlertedHa), num(s.AreaHa), num(s.ValidHa), num(share(s.AlertedHa, s.AreaHa))})
		}
		cw.Flush()
		if err := cw.Error(); err != nil {
			return fmt.Errorf("write %s: %w", csvOut, err)
		}
		if err := bw.Flush(); err != nil {
			return fmt.Errorf("write %s: %w", csvOut, err)
		}
	}
	if gpkgW != nil {
		_, layer, err := readStands(standsSpec)
		if err != nil {
			return err
		}
		cols := []vector.Column{{Name: "first_alert", Type: "TEXT"}, {Name: "first_alert_year", Type: "REAL"}, {Name: "alerted_ha", Type: "REAL"},
			{Name: "area_ha", Type: "REAL"}, {Name: "monitored_ha", Type: "REAL"}, {Name: "share", Type: "REAL"}}
		rows := make([][]any, len(per))
		for i, s := range per {
			var first any
			if d := season.ISODate(s.First); d != "" {
				first = d
			}
			rows[i] = []any{first, s.First, s.AlertedHa, s.AreaHa, s.ValidHa, share(s.AlertedHa, s.AreaHa)}
		}
		if err := vector.WriteGPKGTo(gpkgW, layer, cols, rows); err != nil {
			return fmt.Errorf("write %s: %w", gpkgOut, err)
		}
	}
	return nil
}
