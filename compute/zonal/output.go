package zonal

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"

	"canopy/compute/vector"
)

// CSVHeader returns the CSV columns: id, pixels, valid_pixels, area_ha,
// mean, median, std, min, max, p10, p90, then one ha_<class> per class.
func CSVHeader(classes Classes) []string {
	h := []string{"id", "pixels", "valid_pixels", "area_ha", "mean", "median", "std", "min", "max", "p10", "p90"}
	return append(h, classes.Columns()...)
}

// WriteCSV writes one line per stand under CSVHeader(classes). Pixel
// counts and hectares have 4 decimals, statistics 6; a NaN statistic is
// an empty field. Fields are quoted as RFC 4180 wants.
func WriteCSV(w io.Writer, results []Result, classes Classes) error {
	if err := classes.Check(); err != nil {
		return err
	}
	cw := csv.NewWriter(w)
	header := CSVHeader(classes)
	if err := cw.Write(header); err != nil {
		return err
	}
	rec := make([]string, len(header))
	for _, r := range results {
		if len(r.ClassHa) != len(classes.Names) {
			return fmt.Errorf("write CSV: stand %s has %d class areas for %d classes", r.ID, len(r.ClassHa), len(classes.Names))
		}
		rec = rec[:0]
		rec = append(rec, r.ID, fixed(r.Pixels, 4), fixed(r.ValidPixels, 4), fixed(r.AreaHa, 4))
		for _, v := range []float64{r.Mean, r.Median, r.Std, r.Min, r.Max, r.P10, r.P90} {
			rec = append(rec, fixed(v, 6))
		}
		for _, v := range r.ClassHa {
			rec = append(rec, fixed(v, 4))
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
		row := []any{r.Pixels, r.ValidPixels, r.AreaHa, r.Mean, r.Median, r.Std, r.Min, r.Max, r.P10, r.P90}
		for _, v := range r.ClassHa {
			row = append(row, v)
		}
		rows[i] = row
	}
	return rows
}
