// Package index is Canopy's index engine front end: the band-math language,
// its parser and checker, the float64 reference evaluator (the truth every
// backend is checked against), the catalogue of named indices, and the
// compiled block program that the CPU interpreters run and the GPU code
// generators start from. It imports only the standard library and nothing of
// canopy/compute (compute imports it).
//
// # The language
//
// An index is a formula over band roles:
//
//	blue green red rededge1 rededge2 rededge3 nir nir2 swir1 swir2
//
// (nir2 is the narrow NIR band, Sentinel-2 B8A). A formula is made of
// decimal numbers (2, 0.5, .5, 2.4e-3), roles, the operators + - * / with
// the usual precedence (* and / bind tighter than + and -, all are left
// associative), parentheses, unary minus, and the functions abs(x),
// sqrt(x), min(a, b), max(a, b) and clamp(x, lo, hi). Names are matched
// without regard to case; there is no power operator (write x * x).
// Numbers must be representable in float32: a non-zero literal that would
// round to zero or to infinity is an error. Errors are *SyntaxError values
// naming the 1-based column (in characters) of the offending token.
//
// # Result rules
//
// Every backend follows these rules exactly; Eval64 defines them:
//   - the inputs are physical values (reflectance), NaN where a band is
//     nodata or masked; a NaN operand makes every operation NaN, so a pixel
//     where any band the formula uses is NaN gives NaN (min and max too:
//     min(NaN, x) = NaN, unlike C's fmin);
//   - a / b is NaN when b is exactly zero (+0 or -0), including 1/0 and 0/0;
//   - sqrt(x) is NaN for x < 0;
//   - min(a, b) is a when a < b, else b; max(a, b) is a when a > b, else b
//     (the sign of a zero result is not specified: -0 and +0 compare equal);
//   - clamp(x, lo, hi) = min(max(x, lo), hi), so NaN propagates from any of
//     the three and lo > hi gives hi;
//   - + - * and unary minus are IEEE arithmetic; intermediate infinities are
//     kept (1 / (x * 1e30 * 1e30) may be 0), but the final result is NaN
//     when it is not finite (±Inf becomes NaN).
//
// # Programs
//
// Compile turns one or more expressions into a Program: a register code
// (numexpr's way) in which every operation can run over a block of pixels
// that stays in cache. Common subexpressions are shared across all the
// expressions (ndvi, evi and savi compute nir - red once), each input is
// loaded once, constant subexpressions are folded in float64 and the result
// rounded to float32 once, and registers are reused as soon as a value is
// dead. Program.Eval32 evaluates one pixel op by op in float32 and defines
// exactly what the float32 backends compute: they must match it exactly
// (== , so -0 and +0 are the same) for + - * and the comparisons, and
// within rounding for division and square root on GPUs whose division or
// square root is not correctly rounded. Against the float64 truth, Eval32
// (and so every float32 backend) agrees within the accumulated float32
// rounding of the formula; Bound computes that bound.
//
// # Generated code
//
// Expr.CExpr renders a formula as one C, CUDA or GLSL float expression over
// helper functions (cn_div, cn_min, ...) that the backend defines with the
// result rules (CHelpers is C's); it folds constants as Compile does, so
// the generated code computes what Eval32 computes.
//
// # The catalogue
//
// The named indices (Catalogue, Lookup, ParseList) take their formulas and
// constants from Awesome Spectral Indices, the standardised catalogue of
// Montero et al. (2023), "A standardized catalogue of spectral indices to
// advance the use of remote sensing in Earth system research", Scientific
// Data 10, 197: https://github.com/awesome-spectral-indices/awesome-spectral-indices
package index
