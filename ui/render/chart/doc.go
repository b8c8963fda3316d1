// Package chart draws what the backends cost, with gonum/plot rendered to
// images of a requested pixel size, and writes the numbers as CSV.
//
// Timings is one horizontal bar per benchmark result (a backend, in a mode,
// on a device, at one size): the median upload, kernel and download times
// stacked, labelled with the kernel-only time, the time with transfers and
// the kernel's share of the ceiling measured in the same run, with the
// spread of the end-to-end time as a whisker. One-time set-up (context
// creation, shader compilation, module load) is charted apart in a small
// panel on the right, because it is not part of any run. One slow run
// does not set the scale: a bar beyond the upper quartile plus three
// interquartile ranges is cut at a robust maximum, marked with a break and
// labelled "off scale" with its times. Row and value labels wrap rather
// than being cut, and a kernel faster than the memory ceiling measured in
// the same run is said to have run from cache, not at 170% of a ceiling.
//
// Sweep plots time against image size on log-log axes: one solid line per
// backend for the kernel alone, a dashed line for GPU backends with their
// transfers, and dotted ceiling lines (the time a copy at the measured
// ceiling bandwidth would take for 12 bytes a pixel), so that the size
// where a GPU starts to win is visible; Crossover computes it. Every
// series has its own colour and marker (SeriesColors: the first mode of a
// backend keeps the backend's colour, further modes get colours no other
// series has), the legend stands beside or under the data, never over
// it, and a sweep with nothing to plot draws its axes and a message
// rather than nothing. IndexSweep is the same against the number of
// indices per upload.
//
// Histogram draws the counts of a histogram's bins with a value axis of
// round ticks, a count axis and the total, in the map's colours.
//
// Numbers are formatted by ui/render/numfmt, as the legends and the
// statistics are.
//
// WritePNG saves a chart; WriteCSV and ReadCSV carry the results with every
// phase's median, minimum and maximum.
package chart
