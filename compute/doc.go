// Package compute is Canopy's engine: red and near-infrared bands in, an NDVI
// plane and per-phase timings out. It knows nothing of the GUI; the command
// line and the desktop app call the same functions.
//
// NDVI = (NIR - Red) / (NIR + Red) is computed in float32 from bands held as
// float32 planes. Where NIR + Red == 0, or either input equals its band's
// nodata value, the result is NaN on every backend. The float64 loop in
// Reference is the truth every backend is checked against (Verify).
//
// A Backend runs the computation in three timed phases: upload (host to
// device, zero on the CPU), kernel (the index computation only) and download
// (device to host). One-time work (context creation, module load, shader
// compilation, buffer allocation) is done by Setup and reported apart, as the
// textbook benchmark excludes numba's first call. Backends are named go, go-parallel, c,
// gl and cuda everywhere (CLI, JSON, GUI).
//
// Sub-packages hold what earns its own place: raster I/O (geotiff), colour
// ramps (colormap), the command line (cli), the benchmark runner (bench).
package compute
