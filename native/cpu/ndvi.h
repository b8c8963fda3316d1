/* Canopy's C NDVI kernel: the same rule as compute.Pixel, vectorised for the
 * host CPU (AVX2 or SSE2 chosen at run time on x86-64, portable C elsewhere),
 * writing with streaming stores. It runs on one thread; the caller (the c
 * backend) spreads blocks over Go's worker pool, so the process has a single
 * set of threads. */
#ifndef CANOPY_NDVI_H
#define CANOPY_NDVI_H

#include <stddef.h>

typedef struct {
	float red, nir;     /* nodata values */
	int has_red, has_nir;
} canopy_nodata;

/* canopy_ndvi writes NDVI of red and nir into out (n pixels). */
void canopy_ndvi(const float *red, const float *nir, float *out, size_t n,
		 canopy_nodata nd);

/* canopy_copy copies n floats with AVX2 loads and streaming stores (memcpy
 * where AVX2 is missing): the host-copy ceiling the CPU backends are
 * measured against, moving bytes the way the kernel does. */
void canopy_copy(float *dst, const float *src, size_t n);

/* canopy_ndvi_isa names the instruction set the kernel runs with. */
const char *canopy_ndvi_isa(void);

#endif
