package compute

import (
	"math"
	"strconv"
)

// Class is one class of index values: Lo ≤ v < Hi, compared in float32 as
// index planes are stored. The first class of a table has Lo = -Inf and the
// last Hi = +Inf, so every number has a class. Classes are data: the
// pictures (ui/render) give them colours.
type Class struct {
	// Name is the class name shown in legends and statistics.
	Name string `json:"name"`
	// Lo and Hi bound the class.
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
}

// Bounds formats the class range for a legend: "< 0", "0 – 0.2", "≥ 0.6".
func (c Class) Bounds() string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	switch {
	case math.IsInf(c.Lo, -1) && math.IsInf(c.Hi, 1):
		return "all"
	case math.IsInf(c.Lo, -1):
		return "< " + f(c.Hi)
	case math.IsInf(c.Hi, 1):
		return "≥ " + f(c.Lo)
	}
	return f(c.Lo) + " – " + f(c.Hi)
}

// ndviClasses is the single definition of the default NDVI classes.
var ndviClasses = []Class{
	{Name: "no vegetation", Lo: math.Inf(-1), Hi: 0},
	{Name: "bare", Lo: 0, Hi: 0.2},
	{Name: "sparse", Lo: 0.2, Hi: 0.4},
	{Name: "moderate", Lo: 0.4, Hi: 0.6},
	{Name: "dense", Lo: 0.6, Hi: math.Inf(1)},
}

// NDVIClasses returns the default NDVI class table (a copy): no vegetation
// < 0, bare 0–0.2, sparse 0.2–0.4, moderate 0.4–0.6, dense ≥ 0.6. Each
// class includes its lower bound: 0.2 is sparse, 0.6 is dense.
func NDVIClasses() []Class {
	c := make([]Class, len(ndviClasses))
	copy(c, ndviClasses)
	return c
}

// ClassOf returns the index in table of the class of v, or -1 for NaN. The
// table's classes are contiguous and ascending (Hi of one is Lo of the
// next).
func ClassOf(table []Class, v float32) int {
	if v != v {
		return -1
	}
	i := 0
	for i < len(table)-1 && v >= float32(table[i].Hi) {
		i++
	}
	return i
}
