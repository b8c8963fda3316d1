/* Canopy's C NDVI kernel: the same rule as compute.Pixel, vectorised for the
 * host CPU (AVX2 or SSE2 chosen at run time on x86-64, portable C elsewhere)
 * and spread over threads with OpenMP. */
#ifndef CANOPY_NDVI_H
#define CANOPY_NDVI_H

#include <stddef.h>

typedef struct {
	float red, nir;     /* nodata values */
	int has_red, has_nir;
} canopy_nodata;

/* canopy_ndvi writes NDVI of red and nir into out (n pixels) on up to
 * threads threads (<= 0: all). Returns the number of threads used. */
int canopy_ndvi(const float *red, const float *nir, float *out, size_t n,
		canopy_nodata nd, int threads);

/* canopy_ndvi_isa names the instruction set the kernel runs with. */
const char *canopy_ndvi_isa(void);

/* canopy_max_threads is the number of threads OpenMP would use. */
int canopy_max_threads(void);

#endif
