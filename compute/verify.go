package compute

import "fmt"

// Tolerance is the largest error a Report without its own Tol accepts:
// float32 rounding of a value in [-1, 1] is below 1.2e-7, so 1e-6 leaves
// room for a fused or reordered operation but catches any real mistake.
const Tolerance = 1e-6

// Report is the outcome of checking a result against the float64 reference.
type Report struct {
	Pixels int `json:"pixels"`
	// MaxAbsErr is the largest |got - ref| over pixels where both are
	// numbers, divided by max(1, |ref|) so that the rare NDVI outside
	// [-1, 1] (negative inputs) is measured in float32 ulps too.
	MaxAbsErr float64 `json:"max_abs_err"`
	// NaNMismatch counts pixels that are NaN in one and not the other.
	NaNMismatch int `json:"nan_mismatch"`
	// NaN counts NaN pixels in the reference.
	NaN int `json:"nan"`
	// Worst is the index of the pixel with the largest error or the first
	// NaN mismatch, -1 when all agree exactly.
	Worst int `json:"worst"`
	// Tol is the tolerance OK applies (0: Tolerance).
	Tol float64 `json:"tolerance,omitempty"`
	// Bounded reports (VerifyJob) count as wrong only the pixels that are
	// beyond Tol and beyond the formula's float32 error bound too.
	Bounded bool `json:"bounded,omitempty"`
	// Conditioned counts pixels beyond Tol (or NaN in one result only)
	// that the float32 error bound of the formula explains: ill-conditioned
	// pixels, such as EVI next to a zero denominator.
	Conditioned int `json:"conditioned,omitempty"`
	// Wrong counts the numbers beyond Tol that nothing explains.
	Wrong int `json:"wrong,omitempty"`
}

// OK reports whether the result matches within Tolerance with NaN in
// exactly the same pixels.
func (r Report) OK() bool {
	if r.Bounded {
		return r.NaNMismatch == 0 && r.Wrong == 0
	}
	tol := r.Tol
	if tol == 0 {
		tol = Tolerance
	}
	return r.NaNMismatch == 0 && r.MaxAbsErr <= tol
}

// String describes the report for a user: "verified: max error 5.96e-08".
func (r Report) String() string {
	if r.OK() {
		if r.Conditioned > 0 {
			return fmt.Sprintf("verified: max error %.3g over %d pixels (%d NaN; %d ill-conditioned pixels within the float32 error bound)", r.MaxAbsErr, r.Pixels, r.NaN, r.Conditioned)
		}
		return fmt.Sprintf("verified: max error %.3g over %d pixels (%d NaN)", r.MaxAbsErr, r.Pixels, r.NaN)
	}
	if r.Bounded {
		return fmt.Sprintf("WRONG: %d values beyond the float32 error bound, %d NaN mismatches over %d pixels (max error %.3g, first bad pixel %d)", r.Wrong, r.NaNMismatch, r.Pixels, r.MaxAbsErr, r.Worst)
	}
	return fmt.Sprintf("WRONG: max error %.3g, %d NaN mismatches over %d pixels (first bad pixel %d)", r.MaxAbsErr, r.NaNMismatch, r.Pixels, r.Worst)
}

// Err returns nil when the report is OK, else an error naming the backend.
func (r Report) Err(backend string) error {
	if r.OK() {
		return nil
	}
	return fmt.Errorf("%s: %s", backend, r)
}
