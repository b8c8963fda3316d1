/* The warp kernel in C: GDAL's resamplings over a plan's segments, the
   same float64 arithmetic as compute/warp's Go reference, operation by
   operation (no fused multiply-add: built as ISO C11). Portable C11. */
#ifndef CANOPY_WARP_H
#define CANOPY_WARP_H

#include <stdint.h>

/* One run of destination pixels (compute/warp.Segment's layout). */
typedef struct {
	int32_t start, n, k0, pad_;
	double sx, sy, dx, dy;
} canopy_seg;

/* What a warp reads besides its arrays. Types are compute.DataType's
   numbers (1 uint8, 2 uint16, 3 int16, 4 uint32, 5 int32, 6 float32);
   resampling is 0 nearest, 1 bilinear, 2 cubic, 3 average. */
typedef struct {
	int type;
	int src_w, src_h;
	double nodata;
	int has_nodata;
	int dst_w;
	double dst_nodata;
	int has_dst_nodata;
	int resampling;
	int use4;
	double xscale, yscale;
	int xradius, yradius, filter_radius;
} canopy_warp_params;

/* canopy_warp_rows warps destination rows [r0, r1). mask and filled may
   be NULL; far and far_start are read for average only. Returns 0, or -1
   when the scratch space for a kernel could not be allocated. */
int canopy_warp_rows(const canopy_warp_params *p, const void *src, const uint8_t *mask,
                     void *dst, uint8_t *filled, const canopy_seg *segs, const int32_t *row_start,
                     const canopy_seg *far, const int32_t *far_start, int r0, int r1);

#endif
