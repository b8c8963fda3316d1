// Package season runs per-pixel models over a stack of dates on one grid:
// composites (median, maximum, a percentile over a period, with the count
// of valid observations), the season-trend model fitted by least squares
// with missing dates (intercept, optional trend, 0 to 6 harmonics, its
// residual RMSE), BFAST-monitor's MOSUM monitoring (strucchange's OLS-MOSUM
// mefp/monitor, which bfastmonitor is built on) and fordead's anomaly rule,
// each with a float64 reference (Ref) and a float32 kernel (Pixels) that
// the go and go-parallel backends run.
//
// # How a backend plugs in
//
// A backend runs per-pixel models by implementing Runner, an optional
// interface of compute.Backend found by type assertion (RunJob, Runs), as
// compute.JobStreamer and compute.Resident are: the method
//
//	RunSeries(j *season.Job) (compute.Timings, error)
//
// on the backend's own type, so that it shares the backend's context,
// device, pools and caches. There is no registry of its own: the backends
// are compute's (compute.New). Every runner must pass
// compute/season/seasontest's suite (seasontest.Run).
//
// A backend with several devices (cuda: every GPU of the machine) also
// implements Devices (DeviceCount, OnDevice): Spread opens one backend
// per device, each with its own context, streams and device buffers, and
// Deal hands the blocks of a stack to them, the next free device taking
// the next block, the results in block order (compute/stack.RunRows).
//
// A backend that keeps a cube on its device also implements Keeper
// (cudaback and glback: KeepCube); Keep then uploads a cube once and its
// Kept runs one model after another there, as a window re-runs a model
// whose controls change. On any other backend Keep's Kept runs each model
// through the Runner on the host, in chunks of pixels that a cancelled
// context stops between.
//
// # Contract for a backend (cuda, gl, c)
//
// Inputs, all on the host, the same for every block of a stack (the Plan)
// or per block (the Cube):
//
//   - Cube.Values: T×P float32, date-major (Values[t*P+p]), NaN = missing.
//     1 ≤ T ≤ MaxDates (400). A backend must not assume P is a multiple of
//     anything; P may be 0.
//   - Plan.Role[t] (uint8): RoleFit (composite period / history), RoleMonitor,
//     RoleNone. History dates all come before monitoring dates.
//   - Plan.X32: T×Coefs float32 design matrix, row-major (intercept,
//     [trend,] cos1, sin1, ..., cosK, sinK), computed on the host: kernels
//     never evaluate sin/cos of dates. Coefs ≤ MaxCoef (14).
//   - Plan.Dates32[t]: what a kernel writes as a date (bit for bit).
//   - Plan.Model: Kind, Stat, Percentile, H, Threshold, Direction, Run;
//     Plan.Critval (float64; use it as float32).
//
// Outputs: Job.Out, one float32 plane of P values per Model.Outputs name,
// every element written (NaN where undefined). count planes hold whole
// numbers.
//
// Per pixel, for Harmonic, Mosum and Anomaly (Pixels is the float32
// algorithm to follow; another order of operations is fine within the
// bound below):
//
//  1. n = valid dates with RoleFit, nm = valid dates with RoleMonitor.
//     count = n (Harmonic) or n + nm (Mosum, Anomaly), always written.
//  2. If n < Coefs, or the normal matrix XᵀX over the valid history is not
//     positive definite (a Cholesky pivot ≤ 0 or NaN): every other output
//     NaN. Otherwise β from the normal equations (Cholesky in float32).
//  3. Residuals e = y − Xβ over the valid history then the valid monitoring
//     dates, in date order; RSS over the history.
//  4. Harmonic: rmse = √(RSS/n), then β.
//  5. Mosum: K = ⌊H·n⌋ (in float64, as R), σ = √(RSS/(n−Coefs)). If
//     n ≤ Coefs, K ≤ 1, nm = 0 or σ is not > 0: break, magnitude and
//     confidence NaN. Otherwise for each monitoring observation, index
//     k = n..n+nm−1 among the valid ones (0-based): MOSUMₖ = Σ e[k−K+1..k] /
//     (σ√n), boundₖ = Critval·√(2·logPlus((k+1)/n)), logPlus(x) = 1 for
//     x ≤ e, else ln x. break = Dates32 of the first k with |MOSUMₖ| > boundₖ
//     (NaN: none); confidence = maxₖ |MOSUMₖ|/boundₖ; magnitude = median
//     of the monitoring residuals (the mean of the two middle ones, a+(b−a)/2,
//     when their number is even), as bfastmonitor's.
//  6. Anomaly: over the monitoring residuals in order, d = −e (Down), e
//     (Up) or |e| (Both); anomalous when d > Threshold. Run successive
//     anomalous dates raise an alert dated at the first of them (when none
//     stands); Run successive normal ones clear it. break = the date of the
//     alert standing after the last date (NaN: none); magnitude = median of
//     the residuals from it on; confidence = the share of anomalous dates
//     from it on.
//
// Composite: the valid values of RoleFit dates; count = their number;
// value = the median, the maximum or the percentile (type 7, in float32:
// h = (n−1)·q/100, x[⌊h⌋] + (h−⌊h⌋)·(x[⌊h⌋+1] − x[⌊h⌋])); date = Dates32
// of the first maximum for Max, else NaN; value and date NaN when n = 0.
//
// What the suite checks (seasontest): counts and NaN patterns exactly (a
// pixel whose normal matrix is ill-conditioned, cond·2⁻²⁴ > 10⁻³, may
// differ); value, rmse, β, magnitude, confidence within a bound from
// float32 rounding scaled by the pixel's condition number
// (seasontest.Tolerance); break dates identical on at least 99.9 % of
// the pixels, each differing pixel within the bound of flipping its
// decision (Reference.Margin). Edge cases: 1 date, all dates missing, the
// whole history missing, 400 dates, P = 0 and P = 1, blocks whose pixel
// count fits no work-group.
//
// Where this differs from bfastmonitor: the history is the period given
// (bfastmonitor's history = "all"), dates between the history and the
// monitoring period take no part, a rank-deficient history gives NaN (R's
// lm drops aliased columns), and the trend is in years from the history's
// mean date (the residuals, and so the MOSUM, are the same).
package season
