/* series.h: Canopy's per-pixel models over a stack of dates in C (see
 * season.go and compute/season's doc.go for the contract). */
#ifndef CANOPY_SERIES_H
#define CANOPY_SERIES_H

#include <stddef.h>
#include <stdint.h>

#define CANOPY_SERIES_MAX_DATES 400
#define CANOPY_SERIES_MAX_COEF 14
/* the most per-date sums of the fit's normal matrix: 6K+3, K = 6 */
#define CANOPY_SERIES_MAX_SUMS 39

enum { CANOPY_COMPOSITE = 0, CANOPY_HARMONIC = 1, CANOPY_MOSUM = 2, CANOPY_ANOMALY = 3 };
enum { CANOPY_MEDIAN = 0, CANOPY_MAX = 1, CANOPY_PERCENTILE = 2 };
enum { CANOPY_DOWN = 0, CANOPY_UP = 1, CANOPY_BOTH = 2 };

typedef struct {
	int kind, stat, direction, run;
	int dates, pixels, coefs;
	float percentile, critval, threshold;
	double h;
	const float *values;       /* dates x pixels, date-major, NaN missing */
	const float *x;            /* dates x coefs, row-major */
	const float *date32;       /* dates */
	const unsigned char *role; /* dates: 0 none, 1 fit, 2 monitor */
	float *const *out;         /* the output planes, pixels each */
} canopy_series_job;

/* canopy_series_pixels runs the job's model over the pixels [lo, hi). */
void canopy_series_pixels(const canopy_series_job *j, size_t lo, size_t hi);

#endif
