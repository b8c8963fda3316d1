package zonal

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"canopy/compute/vector"
)

// CSVHeader returns the statistics columns of the CSV: id, pixels,
// valid_pixels, area_ha (the stand's area on the raster), valid_ha (its
// unmasked part), mean, median, std, min, max, p10, p90, then one
// ha_<class> per class. WriteCSV adds the stands' own attributes after.
func CSVHeader(classes Classes) []string {
	h := []string{"id", "pixels", "valid_pixels", "area_ha", "valid_ha", "mean", "median", "std", "min", "max", "p10", "p90"}
	return append(h, classes.Columns()...)
}

// AttrColumns returns the CSV names of the stands' own attributes, in the
// layer's order, after the statistics columns: a name that one of them
// already has (case ignored) gets _1, _2, ..., as vector.WriteGPKG does.
func AttrColumns(classes Classes, layer *vector.Layer) []string {
	if layer == nil {
		return nil
	}
	taken := map[string]bool{}
	for _, c := range CSVHeader(classes) {
		taken[strings.ToLower(c)] = true
	}
	names := make([]string, len(layer.Fields))
	for i, f := range layer.Fields {
		n, k := f.Name, 1
		for taken[strings.ToLower(n)] {
			n = fmt.Sprintf("%s_%d", f.Name, k)
			k++
		}
		taken[strings.ToLower(n)] = true
		names[i] = n
	}
	return names
}

// WriteCSV writes one line per stand under CSVHeader(classes), then the
// stand's own attributes (AttrColumns) when layer is not nil; results[i]
// is the stand of layer.Features[i] (StandsFromLayer's order). Pixel
// counts and hectares have 4 decimals, statistics 6; a NaN statistic and a
// NULL attribute are empty fields. Fields are quoted as RFC 4180 wants.
func WriteCSV(w io.Writer, results []Result, classes Classes, layer *vector.Layer) error {
	if err := classes.Check(); err != nil {
		return err
	}
	if layer != nil && len(layer.Features) != len(results) {
		return fmt.Errorf("write CSV: %d stands for %d results", len(layer.Features), len(results))
	}
	cw := csv.NewWriter(w)
	header := append(CSVHeader(classes), AttrColumns(classes, layer)...)
	if err := cw.Write(header); err != nil {
		return err
	}
	rec := make([]string, len(header))
	for i, r := range results {
		if len(r.ClassHa) != len(classes.Names) {
			return fmt.Errorf("write CSV: stand %s has %d class areas for %d classes", r.ID, len(r.ClassHa), len(classes.Names))
		}
		rec = rec[:0]
		rec = append(rec, r.ID, fixed(r.Pixels, 4), fixed(r.ValidPixels, 4), fixed(r.AreaHa, 4), fixed(r.ValidHa, 4))
		for _, v := range []float64{r.Mean, r.Median, r.Std, r.Min, r.Max, r.P10, r.P90} {
			rec = append(rec, fixed(v, 6))
		}
		for _, v := range r.ClassHa {
			rec = append(rec, fixed(v, 4))
		}
		if layer != nil {
			for _, f := range layer.Fields {
				rec = append(rec, vector.FormatValue(layer.Features[i].Attrs[f.Name]))
			}
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func fixed(v float64, prec int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return ""
	}
	s := strconv.FormatFloat(v, 'f', prec, 64)
	if s == "-"+strconv.FormatFloat(0, 'f', prec, 64) {
		s = s[1:]
	}
	return s
}

// GPKGColumns returns the statistics columns for vector.WriteGPKG: the CSV
// columns but id (the stands keep their own attributes and FID).
func GPKGColumns(classes Classes) []vector.Column {
	h := CSVHeader(classes)[1:]
	cols := make([]vector.Column, len(h))
	for i, n := range h {
		cols[i] = vector.Column{Name: n, Type: "REAL"}
	}
	return cols
}

// GPKGRows returns the values of GPKGColumns for each result, in order
// (NaN statistics become NULL in the GeoPackage).
func GPKGRows(results []Result) [][]any {
	rows := make([][]any, len(results))
	for i, r := range results {
		row := []any{r.Pixels, r.ValidPixels, r.AreaHa, r.ValidHa, r.Mean, r.Median, r.Std, r.Min, r.Max, r.P10, r.P90}
		for _, v := range r.ClassHa {
			row = append(row, v)
		}
		rows[i] = row
	}
	return rows
}
