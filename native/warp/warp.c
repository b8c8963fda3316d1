#pragma STDC FP_CONTRACT OFF
#include "warp.h"

#include <math.h>
#include <stdlib.h>

/* Every expression below rounds each product before it is added, as the
   Go reference does with its float64 conversions. */

typedef struct {
	const canopy_warp_params *p;
	const void *src;
	const uint8_t *mask;
	double lo, hi;
	int is_float;
	double *wx;
} ctx;

#define DEFINE_TYPE(NAME, T)                                                    \
	static inline double get_##NAME(const void *s, long i) { return (double)((const T *)s)[i]; } \
	static inline void put_##NAME(void *d, long i, double v) { ((T *)d)[i] = (T)v; }

DEFINE_TYPE(u8, uint8_t)
DEFINE_TYPE(u16, uint16_t)
DEFINE_TYPE(i16, int16_t)
DEFINE_TYPE(u32, uint32_t)
DEFINE_TYPE(i32, int32_t)
DEFINE_TYPE(f32, float)

static inline double get(const ctx *c, long i) {
	switch (c->p->type) {
	case 1: return get_u8(c->src, i);
	case 2: return get_u16(c->src, i);
	case 3: return get_i16(c->src, i);
	case 4: return get_u32(c->src, i);
	case 5: return get_i32(c->src, i);
	default: return get_f32(c->src, i);
	}
}

static inline int valid(const ctx *c, long i) {
	if (c->mask != NULL && c->mask[i] != 0) return 0;
	double v = get(c, i);
	if (v != v) return 0;
	return !c->p->has_nodata || v != c->p->nodata;
}

static void store(const ctx *c, void *dst, uint8_t *filled, long i, double v) {
	const canopy_warp_params *p = c->p;
	if (c->is_float) {
		put_f32(dst, i, (double)(float)v);
	} else {
		double r;
		if (v < c->lo) r = c->lo;
		else if (v > c->hi) r = c->hi;
		else if (c->lo < 0) r = floor(v + 0.5);
		else r = trunc(v + 0.5);
		if (p->has_dst_nodata && r == p->dst_nodata) {
			if (r == c->lo) r = r + 1;
			else r = r - 1;
		}
		switch (p->type) {
		case 1: put_u8(dst, i, r); break;
		case 2: put_u16(dst, i, r); break;
		case 3: put_i16(dst, i, r); break;
		case 4: put_u32(dst, i, r); break;
		default: put_i32(dst, i, r); break;
		}
	}
	if (filled != NULL) filled[i] = 1;
}

static inline void pos(const canopy_seg *s, int k, double *x, double *y) {
	double fk = (double)(s->k0 + k);
	double px = s->dx * fk, py = s->dy * fk;
	*x = s->sx + px;
	*y = s->sy + py;
}

static int bilinear4(const ctx *c, double sx, double sy, double *out) {
	const int w = c->p->src_w, h = c->p->src_h;
	int ix = (int)floor(sx - 0.5), iy = (int)floor(sy - 0.5);
	double rx = 1.5 - (sx - (double)ix), ry = 1.5 - (sy - (double)iy);
	if (ix == -1) { ix = 0; rx = 1; }
	if (iy == -1) { iy = 0; ry = 1; }
	double acc = 0, div = 0;
	double m[4];
	m[0] = rx * ry;
	m[1] = (1 - rx) * ry;
	m[2] = rx * (1 - ry);
	m[3] = (1 - rx) * (1 - ry);
	const int xs[4] = {ix, ix + 1, ix, ix + 1}, ys[4] = {iy, iy, iy + 1, iy + 1};
	for (int k = 0; k < 4; k++) {
		int x = xs[k], y = ys[k];
		if (x < 0 || x >= w || y < 0 || y >= h) continue;
		long i = (long)y * w + x;
		if (!valid(c, i)) continue;
		div += m[k];
		double t = get(c, i) * m[k];
		acc += t;
	}
	if (div == 1) { *out = acc; return 1; }
	if (div < 0.00001) return 0;
	*out = acc / div;
	return 1;
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

static int cubic4(const ctx *c, double sx, double sy, double *out) {
	const int w = c->p->src_w, h = c->p->src_h;
	int ix = (int)(sx - 0.5), iy = (int)(sy - 0.5);
	if (ix - 1 < 0 || ix + 2 >= w || iy - 1 < 0 || iy + 2 >= h) return bilinear4(c, sx, sy, out);
	double fx = sx - 0.5 - (double)ix, fy = sy - 0.5 - (double)iy;
	double cx[4], cy[4], row[4], vals[4];
	cubic_weights(fx, cx);
	for (int j = -1; j < 3; j++) {
		long o = (long)(iy + j) * w + ix - 1;
		for (int i = 0; i < 4; i++) {
			if (!valid(c, o + i)) return bilinear4(c, sx, sy, out);
			row[i] = get(c, o + i);
		}
		vals[j + 1] = convol4(cx, row);
	}
	cubic_weights(fy, cy);
	*out = convol4(cy, vals);
	return 1;
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

static int general(const ctx *c, double sx, double sy, double *out) {
	const canopy_warp_params *p = c->p;
	const int w = p->src_w, h = p->src_h;
	double (*f)(double) = p->resampling == 1 ? bilinear_weight : cubic_weight;
	int ix = (int)floor(sx - 0.5), iy = (int)floor(sy - 0.5);
	double dx = sx - 0.5 - (double)ix, dy = sy - 0.5 - (double)iy;
	int j = (p->filter_radius + 1) % 2 - p->yradius, jmax = p->yradius;
	int imin = (p->filter_radius + 1) % 2 - p->xradius, imax = p->xradius;
	if (iy + j < 0) j = -iy;
	if (iy + jmax >= h) jmax = h - iy - 1;
	if (ix + imin < 0) imin = -ix;
	if (ix + imax >= w) imax = w - ix - 1;
	if (imax < imin) return 0;
	double *wx = c->wx;
	for (int i = imin; i <= imax; i++) {
		double d = (double)i - dx;
		if (p->xscale < 1) d = d * p->xscale;
		wx[i - imin] = f(d);
	}
	double acc = 0, accw = 0;
	for (; j <= jmax; j++) {
		double d = (double)j - dy;
		if (p->yscale < 1) d = d * p->yscale;
		double w1 = f(d);
		double a = 0, aw = 0;
		long o = (long)(iy + j) * w + ix;
		for (int i = imin; i <= imax; i++) {
			if (!valid(c, o + i)) continue;
			double w2 = wx[i - imin];
			double t = get(c, o + i) * w2;
			a += t;
			aw += w2;
		}
		double ta = a * w1, tw = aw * w1;
		acc += ta;
		accw += tw;
	}
	if (accw < 0.000001) return 0;
	if (accw < 0.99999 || accw > 1.00001) { *out = acc / accw; return 1; }
	*out = acc;
	return 1;
}

static int sample_at(const ctx *c, double sx, double sy, double *out) {
	const canopy_warp_params *p = c->p;
	const int w = p->src_w, h = p->src_h;
	if (sx != sx || sy != sy || sx < 0 || sy < 0) return 0;
	if (sx + 1e-10 > (double)w || sy + 1e-10 > (double)h) return 0;
	int ix = (int)(sx + 1e-10), iy = (int)(sy + 1e-10);
	if (ix == w) ix--;
	if (iy == h) iy--;
	long i = (long)iy * w + ix;
	if (!valid(c, i)) return 0;
	switch (p->resampling) {
	case 0: *out = get(c, i); return 1;
	case 1: return p->use4 ? bilinear4(c, sx, sy, out) : general(c, sx, sy, out);
	case 2: return p->use4 ? cubic4(c, sx, sy, out) : general(c, sx, sy, out);
	}
	return 0;
}

static int average(const ctx *c, double x0, double y0, double x1, double y1, double *out) {
	const int w = c->p->src_w, h = c->p->src_h;
	if (x0 != x0 || y0 != y0 || x1 != x1 || y1 != y1) return 0;
	if (x0 > x1) { double t = x0; x0 = x1; x1 = t; }
	if (y0 > y1) { double t = y0; y0 = y1; y1 = t; }
	int ixmin = (int)fmax(floor(x0 + 1e-10), 0), ixmax = (int)fmin(ceil(x1 - 1e-10), (double)w);
	int iymin = (int)fmax(floor(y0 + 1e-10), 0), iymax = (int)fmin(ceil(y1 - 1e-10), (double)h);
	if (ixmin == ixmax && ixmax < w) ixmax++;
	if (iymin == iymax && iymax < h) iymax++;
	double total = 0, weight = 0;
	for (int iy = iymin; iy < iymax; iy++) {
		double wy = 1.0;
		if (iy == iymin && iymin + 1 == iymax) wy = 1;
		else if (iy == iymin) wy = 1 - (y0 - (double)iymin);
		else if (iy + 1 == iymax) wy = 1 - ((double)iymax - y1);
		for (int ix = ixmin; ix < ixmax; ix++) {
			long i = (long)iy * w + ix;
			if (!valid(c, i)) continue;
			double wt = wy;
			if (ix == ixmin && ixmin + 1 == ixmax) {
			} else if (ix == ixmin) {
				wt = wy * (1 - (x0 - (double)ixmin));
			} else if (ix + 1 == ixmax) {
				wt = wy * (1 - ((double)ixmax - x1));
			}
			if (wt > 0) {
				double t = get(c, i) * wt;
				total += t;
				weight += wt;
			}
		}
	}
	if (!(weight > 0)) return 0;
	*out = total / weight;
	return 1;
}

int canopy_warp_rows(const canopy_warp_params *p, const void *src, const uint8_t *mask,
                     void *dst, uint8_t *filled, const canopy_seg *segs, const int32_t *row_start,
                     const canopy_seg *far, const int32_t *far_start, int r0, int r1) {
	ctx c = {p, src, mask, 0, 0, 0, NULL};
	switch (p->type) {
	case 1: c.lo = 0; c.hi = 255; break;
	case 2: c.lo = 0; c.hi = 65535; break;
	case 3: c.lo = -32768; c.hi = 32767; break;
	case 4: c.lo = 0; c.hi = 4294967295.0; break;
	case 5: c.lo = -2147483648.0; c.hi = 2147483647.0; break;
	default: c.is_float = 1;
	}
	int rad = p->xradius > 2 ? p->xradius : 2;
	c.wx = malloc(sizeof(double) * (size_t)(2 * (rad + 1) + 2));
	if (c.wx == NULL) return -1;
	const int W = p->dst_w;
	for (int r = r0; r < r1; r++) {
		long base = (long)r * W;
		if (p->resampling == 3) {
			const canopy_seg *near = segs + row_start[r], *nend = segs + row_start[r + 1];
			const canopy_seg *fa = far + far_start[r], *fend = far + far_start[r + 1];
			for (int x = 0; x < W; x++) {
				while (near < nend && near->start + near->n <= x) near++;
				while (fa < fend && fa->start + fa->n <= x) fa++;
				if (near >= nend || fa >= fend) break;
				if (filled != NULL && filled[base + x] != 0) continue;
				double x0, y0, x1, y1, v;
				pos(near, x - near->start, &x0, &y0);
				pos(fa, x - fa->start, &x1, &y1);
				if (average(&c, x0, y0, x1, y1, &v)) store(&c, dst, filled, base + x, v);
			}
			continue;
		}
		for (int32_t si = row_start[r]; si < row_start[r + 1]; si++) {
			const canopy_seg *s = segs + si;
			for (int j = 0; j < s->n; j++) {
				long x = s->start + j;
				if (filled != NULL && filled[base + x] != 0) continue;
				double sx, sy, v;
				pos(s, j, &sx, &sy);
				if (sample_at(&c, sx, sy, &v)) store(&c, dst, filled, base + x, v);
			}
		}
	}
	free(c.wx);
	return 0;
}
