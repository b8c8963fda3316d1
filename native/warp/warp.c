#pragma STDC FP_CONTRACT OFF
#include "warp.h"

#include <math.h>
#include <stdlib.h>

/* What every sample type shares: positions along a segment and the
   kernels' weights. Each product is rounded before it is added, as the
   Go reference does with its float64 conversions. */

static inline void pos(const canopy_seg *s, int k, double *x, double *y) {
	double fk = (double)(s->k0 + k);
	double px = s->dx * fk, py = s->dy * fk;
	*x = s->sx + px;
	*y = s->sy + py;
}

/* krange: the pixels k of [0, n) whose coordinate a + d*k may lie in
   [lo, hi], one pixel wider a side than solved (compute/warp's kRange). */
static void krange(double a, double d, double lo, double hi, int n, int *k0, int *k1) {
	*k0 = 0;
	*k1 = -1;
	if (d == 0 || n == 1) {
		if (a >= lo - 1e-9 && a <= hi + 1e-9) *k1 = n - 1;
		return;
	}
	double t0 = (lo - a) / d, t1 = (hi - a) / d;
	if (t0 > t1) { double t = t0; t0 = t1; t1 = t; }
	if (t1 < -1 || t0 > (double)n || t0 != t0 || t1 != t1) return;
	int a0 = (int)floor(t0) - 1, a1 = (int)ceil(t1) + 1;
	*k0 = a0 > 0 ? a0 : 0;
	*k1 = a1 < n - 1 ? a1 : n - 1;
}

/* span: the pixels of s whose position may fall in the box. */
static void span(const canopy_seg *s, double xlo, double xhi, double ylo, double yhi, int *k0, int *k1) {
	double fk = (double)s->k0;
	double px = s->dx * fk, py = s->dy * fk;
	double ax = s->sx + px, ay = s->sy + py;
	if (ax != ax || ay != ay) { *k0 = 0; *k1 = s->n - 1; return; }
	int x0, x1, y0, y1;
	krange(ax, s->dx, xlo, xhi, s->n, &x0, &x1);
	krange(ay, s->dy, ylo, yhi, s->n, &y0, &y1);
	*k0 = x0 > y0 ? x0 : y0;
	*k1 = x1 < y1 ? x1 : y1;
}

static void cubic_weights(double x, double co[4]) {
	double halfX = 0.5 * x, threeX = 3.0 * x;
	double halfX2 = halfX * x;
	double t;
	t = 2 - x; t = x * t; t = -1 + t; co[0] = halfX * t;
	t = -5 + threeX; t = halfX2 * t; co[1] = 1 + t;
	t = 4 - threeX; t = x * t; t = 1 + t; co[2] = halfX * t;
	t = -1 + x; co[3] = halfX2 * t;
}

static inline double convol4(const double a[4], const double b[4]) {
	double p0 = a[0] * b[0], p1 = a[1] * b[1], p2 = a[2] * b[2], p3 = a[3] * b[3];
	double s = p0 + p1;
	s = s + p2;
	return s + p3;
}

static double bilinear_weight(double x) {
	double a = fabs(x);
	return a <= 1 ? 1 - a : 0;
}

static double cubic_weight(double x) {
	double a = fabs(x);
	if (a <= 1) {
		double x2 = x * x;
		double t = 1.5 * a;
		t = t - 2.5;
		t = x2 * t;
		return t + 1;
	}
	if (a <= 2) {
		double x2 = x * x;
		double t = -0.5 * a;
		t = t + 2.5;
		t = x2 * t;
		double f = 4 * a;
		t = t - f;
		return t + 2;
	}
	return 0;
}

/* One kernel a sample type. */
#define T uint8_t
#define SUFFIX u8
#define IS_FLOAT 0
#define LO 0.0
#define HI 255.0
#include "warp_kernel.h"
#undef T
#undef SUFFIX
#undef IS_FLOAT
#undef LO
#undef HI

#define T uint16_t
#define SUFFIX u16
#define IS_FLOAT 0
#define LO 0.0
#define HI 65535.0
#include "warp_kernel.h"
#undef T
#undef SUFFIX
#undef IS_FLOAT
#undef LO
#undef HI

#define T int16_t
#define SUFFIX i16
#define IS_FLOAT 0
#define LO -32768.0
#define HI 32767.0
#include "warp_kernel.h"
#undef T
#undef SUFFIX
#undef IS_FLOAT
#undef LO
#undef HI

#define T uint32_t
#define SUFFIX u32
#define IS_FLOAT 0
#define LO 0.0
#define HI 4294967295.0
#include "warp_kernel.h"
#undef T
#undef SUFFIX
#undef IS_FLOAT
#undef LO
#undef HI

#define T int32_t
#define SUFFIX i32
#define IS_FLOAT 0
#define LO -2147483648.0
#define HI 2147483647.0
#include "warp_kernel.h"
#undef T
#undef SUFFIX
#undef IS_FLOAT
#undef LO
#undef HI

#define T float
#define SUFFIX f32
#define IS_FLOAT 1
#define LO 0.0
#define HI 0.0
#include "warp_kernel.h"
#undef T
#undef SUFFIX
#undef IS_FLOAT
#undef LO
#undef HI

int canopy_warp_rows(const canopy_warp_params *p, const void *src, const uint8_t *mask,
                     void *dst, uint8_t *filled, const canopy_seg *segs, const int32_t *row_start,
                     const canopy_seg *far, const int32_t *far_start, int r0, int r1) {
	switch (p->type) {
	case 1: return rows_u8(p, src, mask, dst, filled, segs, row_start, far, far_start, r0, r1);
	case 2: return rows_u16(p, src, mask, dst, filled, segs, row_start, far, far_start, r0, r1);
	case 3: return rows_i16(p, src, mask, dst, filled, segs, row_start, far, far_start, r0, r1);
	case 4: return rows_u32(p, src, mask, dst, filled, segs, row_start, far, far_start, r0, r1);
	case 5: return rows_i32(p, src, mask, dst, filled, segs, row_start, far, far_start, r0, r1);
	case 6: return rows_f32(p, src, mask, dst, filled, segs, row_start, far, far_start, r0, r1);
	}
	return -1;
}
