// Package numfmt is the one place where the pictures format numbers: chart
// axes, legend ticks, class bounds, scale bars, coordinate grids and the
// statistics beside the map all call it, so that the same value reads the
// same everywhere. Negative numbers take a true minus sign (U+2212),
// thousands are grouped with a narrow no-break space (U+202F), and ticks
// fall on round values (1, 2, 2.5 or 5 times a power of ten).
package numfmt

import (
	"math"
	"strconv"
	"strings"
)

// Minus is the minus sign numbers are written with.
const Minus = "−"

// group is the thousands separator: a narrow no-break space.
const group = "\u202f"

// NiceStep returns a round step (1, 2, 2.5 or 5 × 10^k) that cuts span
// into about n parts (at least the span / n), or 0 when span or n is not
// positive.
func NiceStep(span float64, n int) float64 {
	if !(span > 0) || n < 1 || math.IsInf(span, 0) {
		return 0
	}
	raw := span / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw*(1-1e-9) {
			return m * mag
		}
	}
	return 10 * mag
}

// Ticks returns the multiples of a round step (NiceStep of hi − lo into
// about n parts) that lie in [lo, hi], and the step. With lo ≥ hi it
// returns lo alone and a step of 0.
func Ticks(lo, hi float64, n int) ([]float64, float64) {
	step := NiceStep(hi-lo, n)
	if step == 0 {
		return []float64{lo}, 0
	}
	var vs []float64
	for i := math.Ceil(lo/step - 1e-9); i*step <= hi+step*1e-9; i++ {
		v := i * step
		if i == 0 {
			v = 0 // not -0
		}
		vs = append(vs, v)
	}
	return vs, step
}

// Decimals returns the number of decimals that writes every multiple of
// step exactly (0.25 → 2, 0.5 → 1, 5 → 0), at most 6.
func Decimals(step float64) int {
	if !(step > 0) || math.IsInf(step, 0) {
		return 0
	}
	for d := 0; d < 6; d++ {
		s := step * math.Pow(10, float64(d))
		if math.Round(s) >= 1 && math.Abs(s-math.Round(s)) < 1e-6*s {
			return d
		}
	}
	return 6
}

// Tick formats v as a tick of a scale whose ticks are step apart: the
// decimals the step needs with trailing zeros trimmed, a true minus sign
// and no "−0": Tick(-0.5, 0.25) is "−0.5", Tick(0.25, 0.25) is "0.25",
// Tick(15000, 5000) is "15 000" (with a narrow no-break space).
func Tick(v, step float64) string {
	return Fixed(v, Decimals(step))
}

// Fixed formats v with at most dec decimals (trailing zeros trimmed),
// thousands grouped and a true minus sign. NaN is "–" (no value) and the
// infinities "∞" and "−∞".
func Fixed(v float64, dec int) string {
	switch {
	case math.IsNaN(v):
		return "–"
	case math.IsInf(v, 1):
		return "∞"
	case math.IsInf(v, -1):
		return Minus + "∞"
	}
	s := strconv.FormatFloat(math.Abs(v), 'f', max(0, dec), 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	intPart, frac, hasFrac := strings.Cut(s, ".")
	s = groupDigits(intPart)
	if hasFrac {
		s += "." + frac
	}
	if v < 0 && strings.Trim(s, "0.") != "" {
		s = Minus + s
	}
	return s
}

// groupDigits puts the thousands separator into a run of digits of five
// or more (four digits stay together: 2048, 10 980).
func groupDigits(d string) string {
	if len(d) < 5 {
		return d
	}
	var b strings.Builder
	head := len(d) % 3
	if head > 0 {
		b.WriteString(d[:head])
	}
	for i := head; i < len(d); i += 3 {
		if b.Len() > 0 {
			b.WriteString(group)
		}
		b.WriteString(d[i : i+3])
	}
	return b.String()
}

// Value formats a measured value (an index, a mean, a bound) with four
// significant digits, at most 4 decimals: 0.4321, 12.35, 1 234.6, 0.0012.
// Whole numbers are written without decimals. It is what the statistics,
// the identify panel and class bounds use.
func Value(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) || v == 0 {
		return Fixed(v, 0)
	}
	a := math.Abs(v)
	dec := max(0, min(4, 3-int(math.Floor(math.Log10(a)))))
	if a >= 1000 {
		dec = 1
	}
	return Fixed(v, dec)
}

// Count formats a whole number with its thousands grouped: 950, 2048,
// 12 345, 1 048 576.
func Count(n int) string {
	s := groupDigits(strconv.Itoa(abs(n)))
	if n < 0 {
		s = Minus + s
	}
	return s
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// Short formats a count for a crowded axis with a unit suffix and three
// significant digits: 950, 12.3k, 4.19M, 1.2G.
func Short(v float64) string {
	a := math.Abs(v)
	for _, u := range []struct {
		f float64
		s string
	}{{1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
		if a >= u.f {
			return Fixed(v/u.f, max(0, 2-int(math.Floor(math.Log10(a/u.f))))) + u.s
		}
	}
	if a >= 100 || v == math.Trunc(v) {
		return Fixed(v, 0)
	}
	return Fixed(v, max(0, 2-int(math.Floor(math.Log10(a)))))
}

// Percent formats a share in percent with one decimal: "16.7%", "100%".
func Percent(p float64) string { return Fixed(p, 1) + "%" }

// Length formats a ground length in metres as a scale bar labels it:
// "20 cm", "500 m", "1 km", "2.5 km", "1 000 km".
func Length(m float64) string {
	a := math.Abs(m)
	switch {
	case a >= 1000:
		return Value(m/1000) + " km"
	case a >= 1 || a == 0:
		return Value(m) + " m"
	}
	return Value(m*100) + " cm"
}

// Degrees formats an angle in decimal degrees for a coordinate grid with
// the decimals step needs and the hemisphere: "12.5°E", "3°W", "48°N", or
// "0°". lat says whether v is a latitude.
func Degrees(v, step float64, lat bool) string {
	s := Tick(math.Abs(v), step) + "°"
	if s == "0°" {
		return s
	}
	switch {
	case lat && v > 0:
		return s + "N"
	case lat:
		return s + "S"
	case v > 0:
		return s + "E"
	}
	return s + "W"
}
