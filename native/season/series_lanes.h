/* series_lanes.h: the bodies of the lane-batched models (series.c includes
 * it with LANES_FN, LANES_QFN, LANES_ATTR and, for the AVX2 build,
 * LANES_AVX2 set), in GCC's vector extensions: one v8 holds the same
 * quantity of 8 pixels.
 *
 * The fit (LANES_FN): a group's values of the dates with a role are read
 * once, into a block that stays in L1 (the cube's lines of the groups a
 * few ahead are prefetched meanwhile: a date-major cube is one stream a
 * date, more than the hardware prefetchers follow), then every sum runs
 * over that block with several accumulators in registers. XᵀX is
 * assembled from the per-date sums of series.c's term table (the GPU
 * kernels' shortcut, 4K+1 or 6K+3 sums a date instead of (p²+p)/2
 * products) by the fit plan's table; Xᵀy, the Cholesky solve and the
 * residuals are the one-pixel path's (pixel) operations, lane by lane, in
 * the same order: each sum still runs over the dates in date order. */

#ifdef LANES_AVX2
#define VMIN(a, b) ((v8)_mm256_min_ps((__m256)(a), (__m256)(b)))
#define VMAX(a, b) ((v8)_mm256_max_ps((__m256)(a), (__m256)(b)))
#define VSQRT(d) ((d) = (v8)_mm256_sqrt_ps((__m256)(d)))
#else
/* min(a, b) as MINPS: a where a < b, else b; max(a, b) as MAXPS: a where
 * a > b, else b. */
#define VMIN(a, b) ((v8)(((vi8)(a) & ((a) < (b))) | ((vi8)(b) & ~((a) < (b)))))
#define VMAX(a, b) ((v8)(((vi8)(a) & ((a) > (b))) | ((vi8)(b) & ~((a) > (b)))))
#define VSQRT(d)                                            \
	do {                                                    \
		for (int l_ = 0; l_ < LANES; l_++) (d)[l_] = sqrtf((d)[l_]); \
	} while (0)
#endif

/* SORT runs the sort plan sp over v (x ≤ z after each compare-exchange
 * of the slots x, z). */
#define SORT(v, sp)                                      \
	do {                                                 \
		const unsigned char *cx_ = (sp)->cx;             \
		for (int i_ = 0; i_ < (sp)->ncx; i_++, cx_ += 2) { \
			v8 x_ = (v)[cx_[0]], z_ = (v)[cx_[1]];       \
			(v)[cx_[0]] = VMIN(x_, z_);                  \
			(v)[cx_[1]] = VMAX(z_, x_);                  \
		}                                                \
	} while (0)

/* sum_block adds terms[f][i0..i0+W) · w[f] over the fit dates f into
 * s[i0..i0+W), W accumulators at once, each in date order. */
#define SUM_BLOCK(W, src, stride, i0, wv, nf, s)                             \
	do {                                                                     \
		v8 acc_[W];                                                          \
		for (int q_ = 0; q_ < (W); q_++) acc_[q_] = (v8){0};                 \
		for (int f_ = 0; f_ < (nf); f_++) {                                  \
			const float *tt_ = (src) + (size_t)f_ * (stride) + (i0);         \
			v8 w_ = (wv)[f_];                                                \
			for (int q_ = 0; q_ < (W); q_++) acc_[q_] += tt_[q_] * w_;       \
		}                                                                    \
		for (int q_ = 0; q_ < (W); q_++) (s)[(i0) + q_] = acc_[q_];          \
	} while (0)

LANES_ATTR static void LANES_FN(const canopy_series_job *j, const fitplan *fp, size_t p0) {
	enum { KK = CANOPY_SERIES_MAX_COEF * (CANOPY_SERIES_MAX_COEF + 1) / 2 };
	v8 a[KK], b[CANOPY_SERIES_MAX_COEF], s[2 * CANOPY_SERIES_MAX_SUMS + 1];
	v8 y[CANOPY_SERIES_MAX_DATES];  /* the role dates' values */
	v8 wv[CANOPY_SERIES_MAX_DATES]; /* the fit dates': 1 valid, 0 missing */
	v8 vv[CANOPY_SERIES_MAX_DATES]; /* the fit dates' values, 0 missing */
	v8 rss = {0};
	vi8 n = {0}, nm = {0}, bad = {0};
	const vi8 one = {1, 1, 1, 1, 1, 1, 1, 1};
	const v8 onef = {1, 1, 1, 1, 1, 1, 1, 1};
	const v8 nanv = {NAN32, NAN32, NAN32, NAN32, NAN32, NAN32, NAN32, NAN32};
	size_t P = (size_t)j->pixels;
	int k = j->coefs, ns = fp->ns, nr = fp->nr, nf = 0;
	const float *vals = j->values + p0;
	for (int i = 0; i < nr; i++) {
		const float *row = vals + (size_t)fp->tr[i] * P;
		__builtin_prefetch(row + CANOPY_SERIES_PREFETCH);
		v8 yi;
		memcpy(&yi, row, sizeof yi);
		y[i] = yi;
		vi8 ok = yi == yi; /* -1 where valid */
		if (fp->rr[i] == 2) {
			nm += ok & one;
			continue;
		}
		/* w: 1 for a valid value, 0 for a missing one; a product with 0
		 * adds ±0, which leaves a sum as it is. */
		wv[nf] = (v8)((vi8)onef & ok);
		vv[nf++] = (v8)((vi8)yi & ok);
		n += ok & one;
	}
	/* Σ terms · w (the normal matrix's sums) and Xᵀy. */
	{
		const float *terms = fp->terms;
		int i = 0;
		for (; i + 8 <= ns; i += 8) SUM_BLOCK(8, terms, ns, i, wv, nf, s);
		for (; i + 4 <= ns; i += 4) SUM_BLOCK(4, terms, ns, i, wv, nf, s);
		for (; i < ns; i++) SUM_BLOCK(1, terms, ns, i, wv, nf, s);
		const float *xf = fp->xf;
		int r = 0;
		for (; r + 8 <= k; r += 8) SUM_BLOCK(8, xf, k, r, vv, nf, b);
		for (; r + 4 <= k; r += 4) SUM_BLOCK(4, xf, k, r, vv, nf, b);
		for (; r < k; r++) SUM_BLOCK(1, xf, k, r, vv, nf, b);
	}
	/* XᵀX from the sums (compute/season/normal's shortcut): s then −s then
	 * 0, so that every entry is one of three forms. */
	for (int i = 0; i < ns; i++) s[ns + i] = -s[i];
	s[2 * ns] = (v8){0};
	{
		const v8 half = {.5f, .5f, .5f, .5f, .5f, .5f, .5f, .5f};
		int kk = k * (k + 1) / 2;
		for (int i = 0; i < kk; i++) {
			v8 u = s[fp->ia[i]], w = s[fp->ib[i]];
			a[i] = fp->op[i] == 0 ? u : fp->op[i] == 1 ? half * (u + w) : half * (u - w);
		}
	}
	/* Cholesky; a lane whose pivot is not positive is marked bad and
	 * carries on with 1 so that nothing traps. */
#define A(r, q) a[(r) * ((r) + 1) / 2 + (q)]
	for (int c = 0; c < k; c++) {
		v8 d = A(c, c);
		for (int q = 0; q < c; q++) d -= A(c, q) * A(c, q);
		vi8 ok = d > (v8){0};
		bad |= ~ok;
		d = (v8)(((vi8)d & ok) | ((vi8)onef & ~ok));
		VSQRT(d);
		A(c, c) = d;
		for (int r = c + 1; r < k; r++) {
			v8 v = A(r, c);
			for (int q = 0; q < c; q++) v -= A(r, q) * A(c, q);
			A(r, c) = v / d;
		}
	}
	for (int r = 0; r < k; r++) {
		v8 v = b[r];
		for (int q = 0; q < r; q++) v -= A(r, q) * b[q];
		b[r] = v / A(r, r);
	}
	for (int r = k - 1; r >= 0; r--) {
		v8 v = b[r];
		for (int q = r + 1; q < k; q++) v -= A(q, r) * b[q];
		b[r] = v / A(r, r);
	}
#undef A
	/* fitted: the lanes with at least k valid dates and a positive
	 * definite XᵀX. */
	vi8 fitted = (n >= (vi8){k, k, k, k, k, k, k, k}) & ~bad;
	v8 nf32 = __builtin_convertvector(n, v8);
	if (j->kind == CANOPY_HARMONIC) {
		/* The RSS of the fit dates, in date order. */
		const float *xr = fp->xr;
		for (int i = 0; i < nr; i++) {
			if (fp->rr[i] != 1) continue;
			const float *x = xr + (size_t)i * k;
			v8 f = {0};
			for (int q = 0; q < k; q++) f += x[q] * b[q];
			v8 r = y[i] - f;
			vi8 ok = y[i] == y[i];
			rss += (v8)((vi8)(r * r) & ok);
		}
		/* sqrt in float is sqrt in double rounded to float (53 ≥ 2·24 + 2). */
		v8 rm = rss / nf32;
		VSQRT(rm);
		rm = (v8)(((vi8)rm & fitted) | ((vi8)nanv & ~fitted));
		memcpy(j->out[0] + p0, &rm, sizeof rm);
		memcpy(j->out[1] + p0, &nf32, sizeof nf32);
		for (int q = 0; q < k; q++) {
			v8 o = (v8)(((vi8)b[q] & fitted) | ((vi8)nanv & ~fitted));
			memcpy(j->out[2 + q] + p0, &o, sizeof o);
		}
		return;
	}
	/* The residuals of every date with a role, in date order. */
	v8 res[CANOPY_SERIES_MAX_DATES];
	unsigned valid[CANOPY_SERIES_MAX_DATES]; /* bit l: lane l has a value */
	{
		const float *xr = fp->xr;
		for (int i = 0; i < nr; i++) {
			const float *x = xr + (size_t)i * k;
			v8 f = {0};
			for (int q = 0; q < k; q++) f += x[q] * b[q];
			v8 r = y[i] - f;
			vi8 ok = y[i] == y[i];
			res[i] = r;
			if (fp->rr[i] == 1) rss += (v8)((vi8)(r * r) & ok);
			unsigned m = 0;
			for (int l = 0; l < LANES; l++) m |= (unsigned)(ok[l] & 1) << l;
			valid[i] = m;
		}
	}
	/* The median of each lane's valid monitoring residuals (median32's
	 * order statistics) through the sort plan, a missing date as +∞; a
	 * lane with a NaN residual leaves it to median32. */
	v8 med = {0};
	vi8 nanr = {0};
	if (fp->ms) {
		const v8 inf = {INFINITY, INFINITY, INFINITY, INFINITY, INFINITY, INFINITY, INFINITY, INFINITY};
		v8 mv[CANOPY_SERIES_SORT_MAX];
		int c = 0;
		for (int i = 0; i < nr; i++) {
			if (fp->rr[i] != 2) continue;
			vi8 ok = y[i] == y[i];
			nanr |= ok & (res[i] != res[i]);
			mv[c++] = (v8)(((vi8)res[i] & ok) | ((vi8)inf & ~ok));
		}
		SORT(mv, fp->ms);
		for (int l = 0; l < LANES; l++) {
			int nl = nm[l];
			if (nl == 0) continue;
			if (nl % 2 == 1) {
				med[l] = mv[fp->ms->slot[nl / 2]][l];
				continue;
			}
			float lo = mv[fp->ms->slot[nl / 2 - 1]][l], hi = mv[fp->ms->slot[nl / 2]][l];
			med[l] = lo + (hi - lo) / 2;
		}
	}
	v8 cnt = __builtin_convertvector(n + nm, v8);
	memcpy(j->out[3] + p0, &cnt, sizeof cnt);
	for (int o = 0; o < 3; o++) memcpy(j->out[o] + p0, &nanv, sizeof nanv);
	for (int l = 0; l < LANES; l++) {
		size_t px = p0 + (size_t)l;
		if (!fitted[l]) continue;
		float e[CANOPY_SERIES_MAX_DATES], beta[CANOPY_SERIES_MAX_COEF];
		int when[CANOPY_SERIES_MAX_DATES], ne = 0;
		/* compacted without a branch: a missing date is written over */
		const int *tr = fp->tr;
		for (int i = 0; i < nr; i++) {
			when[ne] = tr[i];
			e[ne] = res[i][l];
			ne += valid[i] >> l & 1;
		}
		for (int q = 0; q < k; q++) beta[q] = b[q][l];
		float ml = med[l];
		tail(j, fp, px, n[l], nm[l], e, when, rss[l], beta, fp->ms && !nanr[l] ? &ml : NULL);
	}
}
#undef SUM_BLOCK

/* LANES_QFN: a median or percentile composite of 8 pixels at once: each
 * lane's values of the period (a missing one as +∞, after every value) go
 * through the sort plan's compare-exchanges (series.c's sortplan: a
 * bitonic network of N, at least the period's dates, at most
 * CANOPY_SERIES_SORT_MAX, less those that the padding's known +∞ or the
 * order statistics asked for make idle) in SIMD, as min and max, instead
 * of one quickselect per pixel; the order statistics are exact, so the
 * result is quantile32's bit for bit. */
LANES_ATTR static void LANES_QFN(const canopy_series_job *j, const sortplan *sp, size_t p0) {
	v8 v[CANOPY_SERIES_SORT_MAX];
	const v8 inf = {INFINITY, INFINITY, INFINITY, INFINITY, INFINITY, INFINITY, INFINITY, INFINITY};
	const v8 nanv = {NAN32, NAN32, NAN32, NAN32, NAN32, NAN32, NAN32, NAN32};
	const vi8 one = {1, 1, 1, 1, 1, 1, 1, 1};
	vi8 n = {0};
	size_t P = (size_t)j->pixels;
	const float *vals = j->values + p0;
	for (int c = 0; c < sp->nv; c++) {
		const float *row = vals + (size_t)sp->t[c] * P;
		__builtin_prefetch(row + CANOPY_SERIES_PREFETCH);
		v8 y;
		memcpy(&y, row, sizeof y);
		vi8 ok = y == y;
		n += ok & one;
		v[c] = (v8)(((vi8)y & ok) | ((vi8)inf & ~ok));
	}
	SORT(v, sp);
	float q = j->stat == CANOPY_MEDIAN ? 50 : j->percentile;
	v8 res = nanv;
	for (int l = 0; l < LANES; l++) {
		int nl = n[l];
		if (nl == 0) continue;
		float h = (float)(nl - 1) * q / 100;
		int lo = (int)h;
		if (lo >= nl - 1) {
			res[l] = v[sp->slot[nl - 1]][l];
			continue;
		}
		float a = v[sp->slot[lo]][l], b = v[sp->slot[lo + 1]][l];
		res[l] = a + (h - (float)lo) * (b - a);
	}
	v8 cnt = __builtin_convertvector(n, v8);
	memcpy(j->out[0] + p0, &res, sizeof res);
	memcpy(j->out[1] + p0, &cnt, sizeof cnt);
	memcpy(j->out[2] + p0, &nanv, sizeof nanv);
}
#undef VMIN
#undef VMAX
#undef VSQRT
