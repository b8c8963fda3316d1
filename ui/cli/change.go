package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"

	"canopy/compute"
	"canopy/compute/change"
	"canopy/compute/geotiff"
	"canopy/compute/outfile"
	"canopy/compute/request"
	"canopy/compute/source"
	"canopy/compute/stats"
	"canopy/compute/vector"
	"canopy/compute/zonal"
	"canopy/ui/render/colormap"
)

// changeReport is what `canopy change --json` prints.
type changeReport struct {
	Index     string           `json:"index"`
	Before    string           `json:"before"`
	After     string           `json:"after"`
	Width     int              `json:"width"`
	Height    int              `json:"height"`
	Alignment change.Alignment `json:"alignment"`
	// Valid is the pixels with a value on both dates; Invalid the rest
	// (nodata or masked on either date, or outside the after date).
	Valid   int           `json:"valid_pixels"`
	Invalid int           `json:"invalid_pixels"`
	Mean    float64       `json:"mean"`
	Classes []changeClass `json:"classes"`
	Tif     string        `json:"tif,omitempty"`
	PNG     string        `json:"png,omitempty"`
	CSV     string        `json:"csv,omitempty"`
}

// changeClass is one change class with its area.
type changeClass struct {
	Name     string  `json:"name"`
	Bounds   string  `json:"bounds"`
	Pixels   int     `json:"pixels"`
	Hectares float64 `json:"hectares"`
}

// dateIndex computes the index of one date: the product or multi-band
// GeoTIFF at path through the one road (source.Open, source.Run),
// verified, its whole plane kept; the source comes back closed (its grid
// and files stay).
func dateIndex(ctx context.Context, path string, bandMap map[string]int, sel selection, backend, mask string, buffer int, rg *source.Regrid) (*source.Planes, source.Source, error) {
	spec := source.Spec{Product: path, Assign: bandMap, AssignFlag: "--bands", Mask: mask, MaskBuffer: buffer, Scale: sel.scale}
	planes, src, err := computeIndices(ctx, spec, source.Options{Need: sel.names[0], Regrid: rg}, sel, backend)
	if err != nil {
		return nil, nil, err
	}
	src.Close()
	return planes, src, nil
}

func cmdChange(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("change", stderr)
	before := fs.String("before", "", "the earlier date: a product or a multi-band GeoTIFF")
	after := fs.String("after", "", "the later date, the same kind")
	var pf productFlags
	pf.register(fs, "the index to compare (one)")
	var gf gridFlags
	gf.register(fs)
	classSpec := fs.String("classes", "", "change class thresholds, e.g. -0.2,-0.1,0.1,0.2 (default: USGS dNBR severity for nbr, ±0.1 and ±0.2 otherwise)")
	tif := fs.String("tif", "", "write before − after as a float32 GeoTIFF")
	png := fs.String("png", "", "write the change map as PNG (blue gain, red loss)")
	legend := fs.Bool("legend", false, "draw the legend beside the PNG map")
	stands := fs.String("stands", "", "stands (GeoPackage FILE[:LAYER] or GeoJSON) for per-stand change statistics")
	idField := fs.String("id", "", "the stands' id attribute")
	csvOut := fs.String("csv", "", "with --stands, write per-stand change statistics as CSV")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if err := parse(fs, args, stdout); err != nil {
		return err
	}
	if *before == "" || *after == "" {
		return request.Errorf("--before and --after are both required")
	}
	if (*stands == "") != (*csvOut == "") {
		return request.Errorf("--stands and --csv go together")
	}
	bandMap, sel, err := pf.parse()
	if err != nil {
		return err
	}
	if len(sel.names) != 1 {
		return request.Errorf("change compares one index, not %d", len(sel.names))
	}
	sel.classTable = "the change classes of " + sel.names[0] + " (hectares by class)"
	classes := change.ClassesFor(sel.names[0])
	if *classSpec != "" {
		if classes, err = change.ParseClasses(*classSpec); err != nil {
			return request.Errorf("--classes: %v", err)
		}
	}
	rg, err := gf.regrid()
	if err != nil {
		return err
	}
	jb, sb, err := dateIndex(ctx, *before, bandMap, sel, pf.backend, pf.mask, pf.buffer, rg)
	if err != nil {
		return err
	}
	ja, sa, err := dateIndex(ctx, *after, bandMap, sel, pf.backend, pf.mask, pf.buffer, rg)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	geoA, geoB := sa.Grid().Geo, sb.Grid().Geo
	aligned, al, err := change.OntoGrid(ja.Out[0], ja.Width, ja.Height, geoA, jb.Width, jb.Height, geoB)
	if err != nil {
		return fmt.Errorf("%s and %s: %w", *before, *after, err)
	}
	diff := jb.Out[0] // before − after in place: the before plane is not needed after
	if err := change.Difference(diff, jb.Out[0], aligned); err != nil {
		return err
	}
	area, _ := geoB.PixelArea()
	sum := stats.Summarize(diff)
	rep := changeReport{Index: sel.names[0], Before: *before, After: *after, Width: jb.Width, Height: jb.Height,
		Alignment: al, Valid: sum.Valid, Invalid: sum.Total - sum.Valid, Mean: sum.Mean}
	for _, c := range stats.ClassesOf(classes, diff, area) {
		rep.Classes = append(rep.Classes, changeClass{Name: c.Class.Name, Bounds: c.Class.Bounds(), Pixels: c.Pixels, Hectares: c.Hectares})
	}
	// Every file of both dates is protected (a band file of a product
	// named as --tif is refused, not overwritten), and the stands.
	inputs := append(append([]string{*before, *after, *stands}, sb.Files()...), sa.Files()...)
	if p, _, err := vector.ParseStands(*stands); err == nil {
		inputs = append(inputs, p)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	set := outfile.NewSet(inputs...)
	defer set.Abort()
	if *tif != "" {
		w, err := set.Create(*tif)
		if err != nil {
			return err
		}
		if err := geotiff.WriteBandsTo(w, jb.Width, jb.Height, [][]float32{diff}, geoB, geotiff.WriteOptions{NoData: "nan", Descriptions: []string{"d" + sel.names[0]}}); err != nil {
			return fmt.Errorf("write %s: %w", *tif, err)
		}
		rep.Tif = *tif
	}
	if *png != "" {
		w, err := set.Create(*png)
		if err != nil {
			return err
		}
		opt := colormap.PNGOptions{Ramp: colormap.RampChange, Stretch: colormap.Stretch{Lo: -1, Hi: 1}, Legend: *legend, Geo: geoB}
		if *legend {
			opt.Title = "d" + sel.names[0] + " (before − after)"
		}
		if err := colormap.EncodePNG(w, diff, jb.Width, jb.Height, opt); err != nil {
			return fmt.Errorf("write %s: %w", *png, err)
		}
		rep.PNG = *png
	}
	if *stands != "" {
		if err := changeByStand(ctx, set, *stands, *idField, *csvOut, diff, jb.Width, jb.Height, geoB, classes, stderr); err != nil {
			return err
		}
		rep.CSV = *csvOut
	}
	if err := set.Commit(); err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(rep)
	}
	fmt.Fprintf(stdout, "d%s = %s − %s: %dx%d, %d valid pixels, mean %.4f\n", rep.Index, *before, *after, rep.Width, rep.Height, rep.Valid, rep.Mean)
	if al.Resampled {
		fmt.Fprintf(stdout, "the after date was resampled onto the before date's grid (%s); it covers %.1f%% of it\n", al.Method, 100*al.Overlap)
	}
	for _, c := range rep.Classes {
		ha := "—"
		if !math.IsNaN(c.Hectares) {
			ha = fmt.Sprintf("%.2f ha", c.Hectares)
		}
		fmt.Fprintf(stdout, "  %-24s %-14s %10d px  %s\n", c.Name, c.Bounds, c.Pixels, ha)
	}
	for _, p := range []string{rep.Tif, rep.PNG, rep.CSV} {
		if p != "" {
			fmt.Fprintf(stdout, "wrote %s\n", p)
		}
	}
	return nil
}

// changeByStand writes per-stand statistics of the difference.
func changeByStand(ctx context.Context, set *outfile.Set, standsSpec, idField, csvOut string, diff []float32, w, h int, geo *compute.GeoRef, classes []compute.Class, stderr io.Writer) error {
	_, layer, err := readStands(standsSpec)
	if err != nil {
		return err
	}
	gt, _, st, err := standsOn(layer, geo, idField, "the dates have no georeferencing: stands cannot be placed on them")
	if err != nil {
		return err
	}
	src, err := zonal.NewPlane(diff, w, h)
	if err != nil {
		return err
	}
	zc := zonal.ClassesOf(classes)
	res, warnings, err := zonal.Compute(src, gt, st, zonal.Options{Classes: zc, Context: ctx})
	if err != nil {
		return err
	}
	for _, w := range warnings {
		fmt.Fprintf(stderr, "canopy change: warning: %s\n", w)
	}
	out, err := set.Create(csvOut)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(out)
	if err := zonal.WriteCSV(bw, res, zc, layer); err != nil {
		return fmt.Errorf("write %s: %w", csvOut, err)
	}
	return bw.Flush()
}
