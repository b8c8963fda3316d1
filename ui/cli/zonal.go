package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"canopy/compute"
	"canopy/compute/outfile"
	"canopy/compute/request"
	"canopy/compute/source"
	"canopy/compute/vector"
	"canopy/compute/zonal"
)

// zonalReport is what `canopy zonal --json` prints.
type zonalReport struct {
	Index    string   `json:"index"`
	Stands   int      `json:"stands"`
	CRS      string   `json:"crs"`
	Width    int      `json:"width"`
	Height   int      `json:"height"`
	CSV      string   `json:"csv,omitempty"`
	GPKG     string   `json:"gpkg,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
}

func cmdZonal(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("zonal", stderr)
	var in inputFlags
	in.register(fs)
	var ix indexFlags
	ix.register(fs, "the index to summarise per stand (one)")
	backend := fs.String("backend", "auto", "go, go-parallel, c, gl, cuda[:mode] or auto")
	stands := fs.String("stands", "", "the stands: a GeoPackage (FILE[:LAYER]) or a GeoJSON file")
	idField := fs.String("id", "", "the stands' id attribute (default: the feature id)")
	csvOut := fs.String("csv", "", "write the statistics as CSV")
	gpkgOut := fs.String("gpkg", "", "write the stands with their statistics as a GeoPackage")
	asJSON := fs.Bool("json", false, "print a JSON summary")
	if err := parse(fs, args, stdout); err != nil {
		return err
	}
	if err := in.check(); err != nil {
		return err
	}
	if *stands == "" {
		return request.Errorf("--stands FILE[:LAYER] is required")
	}
	if *csvOut == "" && *gpkgOut == "" {
		return request.Errorf("give --csv OUT.csv and/or --gpkg OUT.gpkg")
	}
	sel, err := ix.parse()
	sel.raw = in.raw
	if err != nil {
		return err
	}
	if len(sel.names) != 1 {
		return request.Errorf("zonal summarises one index, not %d", len(sel.names))
	}
	sel.classTable = "the class table of " + sel.names[0] + " (hectares by class in every stand)"
	path, layer, err := readStands(*stands)
	if err != nil {
		return err
	}
	for _, o := range []string{*csvOut, *gpkgOut} {
		if o != "" {
			in.outs = append(in.outs, o)
		}
	}
	if err := refuseInputs(in.outs, append(in.inputFiles(), path)); err != nil {
		return err
	}
	spec, err := in.spec()
	if err != nil {
		return err
	}
	rg, err := in.grid.regrid()
	if err != nil {
		return err
	}
	planes, opened, err := computeIndices(ctx, spec, source.Options{Need: strings.Join(sel.names, ","), Refuse: in.refuse, Regrid: rg}, sel, *backend)
	if err != nil {
		return err
	}
	opened.Close()
	geo := opened.Grid().Geo
	gt, rcrs, st, err := standsOn(layer, geo, *idField, "the bands have no georeferencing: stands cannot be placed on them")
	if err != nil {
		return err
	}
	src, err := zonal.NewPlane(planes.Out[0], planes.Width, planes.Height)
	if err != nil {
		return err
	}
	classes := zonal.DefaultClasses()
	res, warnings, err := zonal.Compute(src, gt, st, zonal.Options{Classes: classes, Context: ctx})
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, w := range warnings {
		fmt.Fprintf(stderr, "canopy zonal: warning: %s\n", w)
	}
	// The CSV and the GeoPackage are one run's outputs: both or neither,
	// never over an input, a link, a FIFO or a device, nothing left
	// behind on failure or interruption.
	set := outfile.NewSet(append(in.inputFiles(), path)...)
	defer set.Abort()
	if *csvOut != "" {
		w, err := set.Create(*csvOut)
		if err != nil {
			return err
		}
		bw := bufio.NewWriter(w)
		if err := zonal.WriteCSV(bw, res, classes, layer); err != nil {
			return fmt.Errorf("write %s: %w", *csvOut, err)
		}
		if err := bw.Flush(); err != nil {
			return fmt.Errorf("write %s: %w", *csvOut, err)
		}
	}
	if *gpkgOut != "" {
		w, err := set.Create(*gpkgOut)
		if err != nil {
			return err
		}
		if err := vector.WriteGPKGTo(w, layer, zonal.GPKGColumns(classes), zonal.GPKGRows(res)); err != nil {
			return err
		}
	}
	if pause != nil {
		pause(ctx, "commit")
	}
	if err := set.Commit(); err != nil {
		return err
	}
	rep := zonalReport{Index: sel.names[0], Stands: len(res), CRS: rcrs, Width: planes.Width, Height: planes.Height, CSV: *csvOut, GPKG: *gpkgOut, Warnings: warnings}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(rep)
	}
	fmt.Fprintf(stdout, "%s over %d stands (%s, %dx%d pixels)\n", rep.Index, rep.Stands, rcrs, planes.Width, planes.Height)
	for _, p := range []string{*csvOut, *gpkgOut} {
		if p != "" {
			fmt.Fprintf(stdout, "wrote %s\n", p)
		}
	}
	return nil
}

// readStands reads the stands of --stands FILE[:LAYER]: a malformed
// argument is a request error, an unreadable file the run's. It returns
// the file's path too.
func readStands(spec string) (string, *vector.Layer, error) {
	path, layerName, err := vector.ParseStands(spec)
	if err != nil {
		return "", nil, request.Error{Msg: err.Error()}
	}
	layer, err := vector.Read(path, layerName)
	return path, layer, err
}

// standsOn places the stands of layer on the grid geo georeferences: the
// grid's affine transform, its system (as vector.RasterCRS names it) and
// the stands reprojected into it, with their ids from idField (the
// feature id when ""). noGeo is the error where geo places no pixel.
func standsOn(layer *vector.Layer, geo *compute.GeoRef, idField, noGeo string) ([6]float64, string, []zonal.Stand, error) {
	gt, ok := geo.Affine()
	if !ok {
		return gt, "", nil, errors.New(noGeo)
	}
	work, rcrs, err := vector.OnRaster(layer, geo)
	if err != nil {
		return gt, "", nil, err
	}
	st, err := zonal.StandsFromLayer(work, idField)
	return gt, rcrs, st, err
}
