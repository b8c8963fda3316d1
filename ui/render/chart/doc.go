// Package chart draws what the backends cost, with gonum/plot rendered to
// images of a requested pixel size, and writes the numbers as CSV.
//
// Timings is one horizontal bar per benchmark result (a backend, in a mode,
// on a device, at one size): the median upload, kernel and download times
// stacked, labelled with the kernel-only time, the time with transfers and
// the kernel's share of the ceiling measured in the same run, with the
// spread of the end-to-end time as a whisker. One-time set-up (context
// creation, shader compilation, module load) is charted apart in a small
// panel on the right, because it is not part of any run.
//
// Sweep plots time against image size on log-log axes: one solid line per
// backend for the kernel alone, a dashed line for GPU backends with their
// transfers, and dotted ceiling lines (the time a copy at the measured
// ceiling bandwidth would take for 12 bytes a pixel), so that the size
// where a GPU starts to win is visible; Crossover computes it.
//
// WritePNG saves a chart; WriteCSV and ReadCSV carry the results with every
// phase's median, minimum and maximum.
package chart
