// Package stats summarises an index plane: minimum, maximum, mean and
// standard deviation of the valid pixels (Summarize), a histogram
// (Histogram) and the share and area of each class of a class table
// (ClassesOf; Classes with the default NDVI classes), whole (these
// functions) or streamed block by block (Stream).
//
// A pixel is valid when its value is finite: NaN marks no data and 0/0
// (see package compute), and ±Inf, which no backend writes, is left out as
// well. Every function makes one pass over the plane on all threads and
// never copies it, so a 10980×10980 Sentinel-2 tile is summarised in a
// fraction of a second. The float64 results agree with a straightforward
// float64 computation (gonum's stat.PopMeanStdDev, stat.Histogram) to
// rounding.
package stats
