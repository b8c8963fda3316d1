/* The host copy Canopy's CPU kernels are measured against. */
#ifndef CANOPY_COPY_H
#define CANOPY_COPY_H

#include <stddef.h>

/* canopy_copy copies n floats with AVX2 loads and streaming stores (memcpy
 * where AVX2 is missing): the host-copy ceiling the CPU backends are
 * measured against, moving bytes the way the interpreter's streaming
 * stores do. */
void canopy_copy(float *dst, const float *src, size_t n);

#endif
