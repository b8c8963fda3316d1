/* The warp kernel for one sample type, included by warp.c once a type
   with T (the C type), SUFFIX (a name), IS_FLOAT, LO and HI (the type's
   range) and STORE (how a rounded value becomes a T) defined. Every
   expression rounds each product before it is added, as compute/warp's
   Go reference does with its float64 conversions. */

#define CAT_(a, b) a##_##b
#define CAT(a, b) CAT_(a, b)
#define FN(name) CAT(name, SUFFIX)

typedef struct {
	const canopy_warp_params *p;
	const T *src;
	const uint8_t *mask;
	T *dst;
	uint8_t *filled;
	double *wx;
} FN(ctx);

static inline int FN(valid)(const FN(ctx) *c, long i) {
	if (c->mask != NULL && c->mask[i] != 0) return 0;
	double v = (double)c->src[i];
	if (v != v) return 0;
	return !c->p->has_nodata || v != c->p->nodata;
}

static inline void FN(store)(const FN(ctx) *c, long i, double v) {
#if IS_FLOAT
	c->dst[i] = (T)v;
#else
	const canopy_warp_params *p = c->p;
	double r;
	if (v < LO) r = LO;
	else if (v > HI) r = HI;
	else if (LO < 0) r = floor(v + 0.5);
	else r = trunc(v + 0.5);
	if (p->has_dst_nodata && r == p->dst_nodata) {
		if (r == LO) r = r + 1;
		else r = r - 1;
	}
	c->dst[i] = (T)r;
#endif
	if (c->filled != NULL) c->filled[i] = 1;
}

static int FN(bilinear4)(const FN(ctx) *c, double sx, double sy, double *out) {
	const int w = c->p->src_w, h = c->p->src_h;
	int ix = (int)floor(sx - 0.5), iy = (int)floor(sy - 0.5);
	double rx = 1.5 - (sx - (double)ix), ry = 1.5 - (sy - (double)iy);
	if (ix == -1) { ix = 0; rx = 1; }
	if (iy == -1) { iy = 0; ry = 1; }
	double m0 = rx * ry, m1 = (1 - rx) * ry, m2 = rx * (1 - ry), m3 = (1 - rx) * (1 - ry);
	long i = (long)iy * w + ix;
	if (ix + 1 < w && iy + 1 < h && c->mask == NULL) {
		/* Inside: when the four are valid, the same sums in the same
		   order without the checks. */
		const double v0 = (double)c->src[i], v1 = (double)c->src[i + 1];
		const double v2 = (double)c->src[i + w], v3 = (double)c->src[i + w + 1];
		const double nd = c->p->nodata;
		int ok = !(v0 != v0 || v1 != v1 || v2 != v2 || v3 != v3);
		if (c->p->has_nodata) ok = ok && v0 != nd && v1 != nd && v2 != nd && v3 != nd;
		if (ok) {
			double acc = v0 * m0;
			double t = v1 * m1;
			acc += t;
			t = v2 * m2;
			acc += t;
			t = v3 * m3;
			acc += t;
			double div = m0 + m1;
			div += m2;
			div += m3;
			if (div == 1) { *out = acc; return 1; }
			if (div < 0.00001) return 0;
			*out = acc / div;
			return 1;
		}
	}
	double acc = 0, div = 0;
	const double m[4] = {m0, m1, m2, m3};
	const int xs[4] = {ix, ix + 1, ix, ix + 1}, ys[4] = {iy, iy, iy + 1, iy + 1};
	for (int k = 0; k < 4; k++) {
		int x = xs[k], y = ys[k];
		if (x < 0 || x >= w || y < 0 || y >= h) continue;
		long j = (long)y * w + x;
		if (!FN(valid)(c, j)) continue;
		div += m[k];
		double t = (double)c->src[j] * m[k];
		acc += t;
	}
	if (div == 1) { *out = acc; return 1; }
	if (div < 0.00001) return 0;
	*out = acc / div;
	return 1;
}

static int FN(cubic4)(const FN(ctx) *c, double sx, double sy, double *out) {
	const int w = c->p->src_w, h = c->p->src_h;
	int ix = (int)(sx - 0.5), iy = (int)(sy - 0.5);
	if (ix - 1 < 0 || ix + 2 >= w || iy - 1 < 0 || iy + 2 >= h) return FN(bilinear4)(c, sx, sy, out);
	double fx = sx - 0.5 - (double)ix, fy = sy - 0.5 - (double)iy;
	double cx[4], cy[4], row[4], vals[4];
	cubic_weights(fx, cx);
	for (int j = -1; j < 3; j++) {
		long o = (long)(iy + j) * w + ix - 1;
		for (int i = 0; i < 4; i++) {
			if (!FN(valid)(c, o + i)) return FN(bilinear4)(c, sx, sy, out);
			row[i] = (double)c->src[o + i];
		}
		vals[j + 1] = convol4(cx, row);
	}
	cubic_weights(fy, cy);
	*out = convol4(cy, vals);
	return 1;
}

static int FN(general)(const FN(ctx) *c, double sx, double sy, double *out) {
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
			if (!FN(valid)(c, o + i)) continue;
			double w2 = wx[i - imin];
			double t = (double)c->src[o + i] * w2;
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

static inline int FN(sample_at)(const FN(ctx) *c, double sx, double sy, double *out) {
	const canopy_warp_params *p = c->p;
	const int w = p->src_w, h = p->src_h;
	if (sx != sx || sy != sy || sx < 0 || sy < 0) return 0;
	if (sx + 1e-10 > (double)w || sy + 1e-10 > (double)h) return 0;
	int ix = (int)(sx + 1e-10), iy = (int)(sy + 1e-10);
	if (ix == w) ix--;
	if (iy == h) iy--;
	long i = (long)iy * w + ix;
	if (!FN(valid)(c, i)) return 0;
	switch (p->resampling) {
	case 0: *out = (double)c->src[i]; return 1;
	case 1: return p->use4 ? FN(bilinear4)(c, sx, sy, out) : FN(general)(c, sx, sy, out);
	case 2: return p->use4 ? FN(cubic4)(c, sx, sy, out) : FN(general)(c, sx, sy, out);
	}
	return 0;
}

static int FN(average)(const FN(ctx) *c, double x0, double y0, double x1, double y1, double *out) {
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
			if (!FN(valid)(c, i)) continue;
			double wt = wy;
			if (ix == ixmin && ixmin + 1 == ixmax) {
			} else if (ix == ixmin) {
				wt = wy * (1 - (x0 - (double)ixmin));
			} else if (ix + 1 == ixmax) {
				wt = wy * (1 - ((double)ixmax - x1));
			}
			if (wt > 0) {
				double t = (double)c->src[i] * wt;
				total += t;
				weight += wt;
			}
		}
	}
	if (!(weight > 0)) return 0;
	*out = total / weight;
	return 1;
}

static int FN(rows)(const canopy_warp_params *p, const void *src, const uint8_t *mask, void *dst, uint8_t *filled,
                    const canopy_seg *segs, const int32_t *row_start, const canopy_seg *far, const int32_t *far_start,
                    int r0, int r1) {
	FN(ctx) c = {p, (const T *)src, mask, (T *)dst, filled, NULL};
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
				if (FN(average)(&c, x0, y0, x1, y1, &v)) FN(store)(&c, base + x, v);
			}
			continue;
		}
		for (int32_t si = row_start[r]; si < row_start[r + 1]; si++) {
			const canopy_seg *s = segs + si;
			int j0, j1;
			span(s, -1, (double)p->src_w + 1, -1, (double)p->src_h + 1, &j0, &j1);
			for (int j = j0; j <= j1; j++) {
				long x = s->start + j;
				if (filled != NULL && filled[base + x] != 0) continue;
				double sx, sy, v;
				pos(s, j, &sx, &sy);
				if (FN(sample_at)(&c, sx, sy, &v)) FN(store)(&c, base + x, v);
			}
		}
	}
	free(c.wx);
	return 0;
}

#undef FN
#undef CAT
#undef CAT_
