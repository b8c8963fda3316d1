package zonal

import (
	"fmt"
	"math"
)

// Series is a stand's time series over a stack of dates on one grid: per
// date one statistic of the stand's valid pixels, each weighted by the
// share of it the stand covers (as Compute weighs them on one date's
// plane), and the share of the stand with no value that date.
type Series struct {
	// Values are the weighted mean (or median) of the stand's valid
	// pixels on each date, NaN where none is valid.
	Values []float64
	// Masked is the share of the stand's covered pixels (by weight) with
	// no value on each date (NaN: masked, nodata), 1 when the stand
	// covers no pixel.
	Masked []float64
	// Pixels is the stand's covered pixels (the coverage weights summed),
	// as Result.Pixels.
	Pixels float64
}

// StandSeries is the series of the stand whose coverage on the grid is
// cov (Coverage with the grid's geotransform, width and height) over a
// cube of dates × width × height values, date-major (cube[t·w·h + row·w +
// col], NaN where missing): the weighted median of each date (Result's
// Median, bit for bit) when median is set, else the weighted mean (Result's
// Mean within rounding: summed in raster order, not sorted first). A stand
// of n pixels costs n values a date, and a sort of them for the median.
func StandSeries(cov *CoverageGrid, cube []float32, width, height, dates int, median bool) (Series, error) {
	P := width * height
	if dates < 1 || len(cube) != dates*P {
		return Series{}, fmt.Errorf("zonal: a cube of %d values is not %d dates of %d×%d pixels", len(cube), dates, width, height)
	}
	if cov.X0 < 0 || cov.Y0 < 0 || cov.X0+cov.W > width || cov.Y0+cov.H > height || len(cov.Frac) != cov.W*cov.H {
		return Series{}, fmt.Errorf("zonal: a coverage window of %d×%d at %d, %d is not on a grid of %d×%d", cov.W, cov.H, cov.X0, cov.Y0, width, height)
	}
	// The covered pixels, once: their place in a date's plane and weight.
	var at []int
	var wt []float64
	var total float64
	for r := range cov.H {
		for c := range cov.W {
			if f := cov.Frac[r*cov.W+c]; f > 0 {
				at = append(at, (cov.Y0+r)*width+cov.X0+c)
				wt = append(wt, f)
				total += f
			}
		}
	}
	s := Series{Values: make([]float64, dates), Masked: make([]float64, dates), Pixels: total}
	samp := getSamples()
	defer putSamples(samp)
	var sc sortScratch
	for t := range dates {
		plane := cube[t*P : (t+1)*P]
		samp.inner, samp.edgeK, samp.edgeW = samp.inner[:0], samp.edgeK[:0], samp.edgeW[:0]
		var masked, sw, swx float64
		for i, p := range at {
			v := plane[p]
			if v != v {
				masked += wt[i]
				continue
			}
			if median {
				samp.add(v, wt[i])
			} else {
				sw += wt[i]
				swx += wt[i] * float64(v)
			}
		}
		s.Masked[t] = 1
		if total > 0 {
			s.Masked[t] = masked / total
		}
		switch {
		case !median && sw > 0:
			s.Values[t] = swx / sw
		case median && samp.len() > 0:
			samp.sort(&sc)
			s.Values[t] = samp.summarise(nil).median
		default:
			s.Values[t] = math.NaN()
		}
	}
	return s, nil
}
