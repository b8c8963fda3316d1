// Package compute is Canopy's engine: bands as stored in, index planes and
// per-phase timings out. It knows nothing of the GUI; the command line and
// the desktop app call the same functions.
//
// A Job is one run of the index engine: bands at their stored type with
// their radiometry and nodata, an optional mask, and indices (NDVI, EVI,
// any formula of compute/index) compiled together into one program, one
// float32 plane out per index. NaN wherever a band used is nodata or
// masked, a division's denominator is zero, or the result is not finite:
// the same on every backend. The float64 evaluation (Job.Reference64,
// index.Expr.Eval64) is the truth every backend is checked against
// (VerifyJob); index.Program.Eval32 is the float32 definition.
//
// A Backend is what runs jobs (RunJob), in three timed phases: upload (host
// to device, zero on the CPU), kernel (the index computation only) and
// download (device to host). One-time work (context creation, program
// compilation, buffer allocation) is reported apart as Setup, as the
// textbook benchmark excludes numba's first call. Backends are named go,
// go-parallel, c, gl and cuda everywhere (CLI, JSON, GUI); each lives in a
// package of its own that registers itself (Register), and
// compute/backends imports them all.
package compute
