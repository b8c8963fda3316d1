/* series_lanes.h: the bodies of the lane-batched models (series.c includes
 * it with LANES_FN, LANES_QFN, LANES_ATTR, VF and VI (a vector of NL
 * floats and of NL ints) and LANES_AVX2 or LANES_AVX512 set), in GCC's
 * vector extensions: one VF holds the same quantity of NL pixels, 8 or 16.
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

/* GATHERF(d, base, idx) and GATHERI: d[l] = base[idx[l]]; MASK_ANY: some
 * lane of a mask set; LANE_INDEX: 0, 1, ..., NL − 1. */
#if defined(LANES_AVX512)
#define GATHERF(d, base, idx) ((d) = (VF)_mm512_i32gather_ps((__m512i)(idx), (base), 4))
#define GATHERI(d, base, idx) ((d) = (VI)_mm512_i32gather_epi32((__m512i)(idx), (base), 4))
#define LANE_INDEX {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
#define MASK_ANY(m) (_mm512_test_epi32_mask((__m512i)(m), (__m512i)(m)) != 0)
#elif defined(LANES_AVX2)
#define GATHERF(d, base, idx) ((d) = (VF)_mm256_i32gather_ps((base), (__m256i)(idx), 4))
#define GATHERI(d, base, idx) ((d) = (VI)_mm256_i32gather_epi32((base), (__m256i)(idx), 4))
#define LANE_INDEX {0, 1, 2, 3, 4, 5, 6, 7}
#define MASK_ANY(m) (!_mm256_testz_si256((__m256i)(m), (__m256i)(m)))
#else
#define GATHERF(d, base, idx)                                          \
	do {                                                               \
		for (int l_ = 0; l_ < NL; l_++) (d)[l_] = (base)[(idx)[l_]];   \
	} while (0)
#define GATHERI GATHERF
#define LANE_INDEX {0, 1, 2, 3, 4, 5, 6, 7}
#define MASK_ANY(m) 1
#endif

/* MADDW(acc, x, w) is acc + x·w where w is 0 or 1: the product is
 * exact, so a fused multiply-add rounds as the plain one. */
#if defined(LANES_AVX512)
#define MADDW(acc, x, w) ((acc) = (VF)_mm512_fmadd_ps(_mm512_set1_ps(x), (__m512)(w), (__m512)(acc)))
#define VMIN(a, b) ((VF)_mm512_min_ps((__m512)(a), (__m512)(b)))
#define VMAX(a, b) ((VF)_mm512_max_ps((__m512)(a), (__m512)(b)))
#define VSQRT(d) ((d) = (VF)_mm512_sqrt_ps((__m512)(d)))
#elif defined(LANES_AVX2)
#define MADDW(acc, x, w) ((acc) = (VF)_mm256_fmadd_ps(_mm256_set1_ps(x), (__m256)(w), (__m256)(acc)))
#define VMIN(a, b) ((VF)_mm256_min_ps((__m256)(a), (__m256)(b)))
#define VMAX(a, b) ((VF)_mm256_max_ps((__m256)(a), (__m256)(b)))
#define VSQRT(d) ((d) = (VF)_mm256_sqrt_ps((__m256)(d)))
#else
#define MADDW(acc, x, w) ((acc) += (x) * (w))
/* min(a, b) as MINPS: a where a < b, else b; max(a, b) as MAXPS: a where
 * a > b, else b. */
#define VMIN(a, b) ((VF)(((VI)(a) & ((a) < (b))) | ((VI)(b) & ~((a) < (b)))))
#define VMAX(a, b) ((VF)(((VI)(a) & ((a) > (b))) | ((VI)(b) & ~((a) > (b)))))
#define VSQRT(d)                                            \
	do {                                                    \
		for (int l_ = 0; l_ < NL; l_++) (d)[l_] = sqrtf((d)[l_]); \
	} while (0)
#endif

/* SORT runs the sort plan sp over v (x ≤ z after each compare-exchange
 * of the slots x, z). */
#define SORT(v, sp)                                      \
	do {                                                 \
		const unsigned char *cx_ = (sp)->cx;             \
		for (int i_ = 0; i_ < (sp)->ncx; i_++, cx_ += 2) { \
			VF x_ = (v)[cx_[0]], z_ = (v)[cx_[1]];       \
			(v)[cx_[0]] = VMIN(x_, z_);                  \
			(v)[cx_[1]] = VMAX(z_, x_);                  \
		}                                                \
	} while (0)

/* SUM_BLOCK adds src[f][i0..i0+W) · wv[f] over the fit dates f into
 * s[i0..i0+W) with MADD, W accumulators at once, each in date order. */
#define SUM_BLOCK(W, MADD, src, stride, i0, wv, nf, s)                       \
	do {                                                                     \
		VF acc_[W];                                                          \
		for (int q_ = 0; q_ < (W); q_++) acc_[q_] = (VF){0};                 \
		for (int f_ = 0; f_ < (nf); f_++) {                                  \
			const float *tt_ = (src) + (size_t)f_ * (stride) + (i0);         \
			VF w_ = (wv)[f_];                                                \
			for (int q_ = 0; q_ < (W); q_++) MADD(acc_[q_], tt_[q_], w_);    \
		}                                                                    \
		for (int q_ = 0; q_ < (W); q_++) (s)[(i0) + q_] = acc_[q_];          \
	} while (0)
#define MADD(acc, x, v) ((acc) += (x) * (v))

LANES_ATTR static void LANES_FN(const canopy_series_job *j, const fitplan *fp, void *scratch, size_t p0) {
	enum { KK = CANOPY_SERIES_MAX_COEF * (CANOPY_SERIES_MAX_COEF + 1) / 2 };
	VF a[KK], b[CANOPY_SERIES_MAX_COEF], s[2 * CANOPY_SERIES_MAX_SUMS + 1];
	/* the scratch, from the caller (LANE_SCRATCH vectors a role date):
	 * not on the stack, which a thread of some C libraries has little of */
	int nr = fp->nr;
	VF *y = scratch;                    /* the role dates' values */
	VF *wv = y + nr;                    /* the fit dates': 1 valid, 0 missing */
	VF *vv = wv + nr;                   /* the fit dates' values, 0 missing */
	VF *res = vv + nr;                  /* the residuals */
	VI *okv = (VI *)(res + nr);         /* −1 where lane l has a value */
	VI *nxt = okv + nr;                 /* the MOSUM's next valid date */
	VF rss = {0};
	VI n = {0}, nm = {0}, bad = {0};
	const VI one = (VI){0} + 1;
	const VF onef = (VF){0} + 1.0f;
	const VF nanv = (VF){0} + NAN32;
	size_t P = (size_t)j->pixels;
	int k = j->coefs, ns = fp->ns, nf = 0;
	const float *vals = j->values + p0;
	for (int i = 0; i < nr; i++) {
		const float *row = vals + (size_t)fp->tr[i] * P;
		__builtin_prefetch(row + CANOPY_SERIES_PREFETCH);
		VF yi;
		memcpy(&yi, row, sizeof yi);
		y[i] = yi;
		VI ok = yi == yi; /* -1 where valid */
		if (fp->rr[i] == 2) {
			nm += ok & one;
			continue;
		}
		/* w: 1 for a valid value, 0 for a missing one; a product with 0
		 * adds ±0, which leaves a sum as it is. */
		wv[nf] = (VF)((VI)onef & ok);
		vv[nf++] = (VF)((VI)yi & ok);
		n += ok & one;
	}
	/* Σ terms · w (the normal matrix's sums) and Xᵀy. */
	{
		const float *terms = fp->terms;
		int i = 0;
		for (; i + 8 <= ns; i += 8) SUM_BLOCK(8, MADDW, terms, ns, i, wv, nf, s);
		for (; i + 4 <= ns; i += 4) SUM_BLOCK(4, MADDW, terms, ns, i, wv, nf, s);
		for (; i < ns; i++) SUM_BLOCK(1, MADDW, terms, ns, i, wv, nf, s);
		const float *xf = fp->xf;
		int r = 0;
		for (; r + 8 <= k; r += 8) SUM_BLOCK(8, MADD, xf, k, r, vv, nf, b);
		for (; r + 4 <= k; r += 4) SUM_BLOCK(4, MADD, xf, k, r, vv, nf, b);
		for (; r < k; r++) SUM_BLOCK(1, MADD, xf, k, r, vv, nf, b);
	}
	/* XᵀX from the sums (compute/season/normal's shortcut): s then −s then
	 * 0, so that every entry is one of three forms. */
	for (int i = 0; i < ns; i++) s[ns + i] = -s[i];
	s[2 * ns] = (VF){0};
	{
		const VF half = (VF){0} + .5f;
		int kk = k * (k + 1) / 2;
		for (int i = 0; i < kk; i++) {
			VF u = s[fp->ia[i]], w = s[fp->ib[i]];
			a[i] = fp->op[i] == 0 ? u : fp->op[i] == 1 ? half * (u + w) : half * (u - w);
		}
	}
	/* Cholesky; a lane whose pivot is not positive is marked bad and
	 * carries on with 1 so that nothing traps. */
#define A(r, q) a[(r) * ((r) + 1) / 2 + (q)]
	for (int c = 0; c < k; c++) {
		VF d = A(c, c);
		for (int q = 0; q < c; q++) d -= A(c, q) * A(c, q);
		VI ok = d > (VF){0};
		bad |= ~ok;
		d = (VF)(((VI)d & ok) | ((VI)onef & ~ok));
		VSQRT(d);
		A(c, c) = d;
		for (int r = c + 1; r < k; r++) {
			VF v = A(r, c);
			for (int q = 0; q < c; q++) v -= A(r, q) * A(c, q);
			A(r, c) = v / d;
		}
	}
	for (int r = 0; r < k; r++) {
		VF v = b[r];
		for (int q = 0; q < r; q++) v -= A(r, q) * b[q];
		b[r] = v / A(r, r);
	}
	for (int r = k - 1; r >= 0; r--) {
		VF v = b[r];
		for (int q = r + 1; q < k; q++) v -= A(q, r) * b[q];
		b[r] = v / A(r, r);
	}
#undef A
	/* fitted: the lanes with at least k valid dates and a positive
	 * definite XᵀX. */
	VI fitted = (n >= (VI){0} + k) & ~bad;
	VF nf32 = __builtin_convertvector(n, VF);
	if (j->kind == CANOPY_HARMONIC) {
		/* The RSS of the fit dates, in date order. */
		const float *xr = fp->xr;
		for (int i = 0; i < nr; i++) {
			if (fp->rr[i] != 1) continue;
			const float *x = xr + (size_t)i * k;
			VF f = {0};
			for (int q = 0; q < k; q++) f += x[q] * b[q];
			VF r = y[i] - f;
			VI ok = y[i] == y[i];
			rss += (VF)((VI)(r * r) & ok);
		}
		/* sqrt in float is sqrt in double rounded to float (53 ≥ 2·24 + 2). */
		VF rm = rss / nf32;
		VSQRT(rm);
		rm = (VF)(((VI)rm & fitted) | ((VI)nanv & ~fitted));
		memcpy(j->out[0] + p0, &rm, sizeof rm);
		memcpy(j->out[1] + p0, &nf32, sizeof nf32);
		for (int q = 0; q < k; q++) {
			VF o = (VF)(((VI)b[q] & fitted) | ((VI)nanv & ~fitted));
			memcpy(j->out[2 + q] + p0, &o, sizeof o);
		}
		return;
	}
	/* The residuals of every date with a role, in date order. */
	unsigned valid[CANOPY_SERIES_MAX_DATES]; /* bit l: lane l has a value */
	{
		const float *xr = fp->xr;
		for (int i = 0; i < nr; i++) {
			const float *x = xr + (size_t)i * k;
			VF f = {0};
			for (int q = 0; q < k; q++) f += x[q] * b[q];
			VF r = y[i] - f;
			VI ok = y[i] == y[i];
			res[i] = r;
			okv[i] = ok;
			if (fp->rr[i] == 1) rss += (VF)((VI)(r * r) & ok);
			unsigned m = 0;
			for (int l = 0; l < NL; l++) m |= (unsigned)(ok[l] & 1) << l;
			valid[i] = m;
		}
	}
	/* The median of each lane's valid monitoring residuals (median32's
	 * order statistics) through the sort plan, a missing date as +∞; a
	 * lane with a NaN residual leaves it to median32. */
	VF med = {0};
	VI nanr = {0};
	if (fp->ms) {
		const VF inf = (VF){0} + INFINITY;
		VF mv[CANOPY_SERIES_SORT_MAX];
		int c = 0;
		for (int i = 0; i < nr; i++) {
			if (fp->rr[i] != 2) continue;
			VI ok = y[i] == y[i];
			nanr |= ok & (res[i] != res[i]);
			mv[c++] = (VF)(((VI)res[i] & ok) | ((VI)inf & ~ok));
		}
		SORT(mv, fp->ms);
		for (int l = 0; l < NL; l++) {
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
	VF cnt = __builtin_convertvector(n + nm, VF);
	memcpy(j->out[3] + p0, &cnt, sizeof cnt);
	if (j->kind == CANOPY_MOSUM && fp->ms) {
		/* tail's MOSUM for every lane at once, each lane's operations
		 * those of tail in the same order: the window's oldest residual
		 * is found through a per-lane pointer to its date (advanced to
		 * the next valid date after each monitoring value), the
		 * boundaries read from the fit plan's table. */
		int nh = fp->nr - fp->ms->nv; /* the history dates come first */
		const VI lane = LANE_INDEX;
		VI K, act = fitted & (n > (VI){0} + k) & (nm > (VI){0});
		for (int l = 0; l < NL; l++) {
			K[l] = (int)floor(j->h * (double)n[l]);
			if (act[l] && K[l] > 1) bound_row(j, fp, n[l]);
		}
		act &= K > (VI){0} + 1;
		VF sigma = rss / __builtin_convertvector(n - k, VF);
		VSQRT(sigma);
		act &= sigma > (VF){0};
		VF sn = nf32;
		VSQRT(sn);
		VF norm = sigma * sn;
		/* p: the K-th last valid history date; nxt[i]: the next valid
		 * date after i (i itself after the last one) */
		VI p = {0}, c = {0};
		nxt[nr - 1] = (VI){0} + (nr - 1);
		for (int i = nr - 2; i >= 0; i--) nxt[i] = (okv[i + 1] & ((VI){0} + i + 1)) | (~okv[i + 1] & nxt[i + 1]);
		for (int i = nh - 1; i >= 0; i--) {
			c -= okv[i];
			VI at = okv[i] & (c == K);
			p = (at & ((VI){0} + i)) | (~at & p);
		}
		VF sum = {0}, conf = {0}, brk = nanv;
		VI found = {0};
		for (int i = 0; i < nh; i++) {
			VI m = act & okv[i] & ((VI){0} + i >= p);
			sum = (VF)((m & (VI)(sum + res[i])) | (~m & (VI)sum));
		}
		VI rk = n;
		const float *bt = fp->bound;
		int T = j->dates;
		for (int i = nh; i < nr; i++) {
			VI m = act & okv[i];
			if (!MASK_ANY(m)) continue;
			VI at = (p * NL + lane) & m;
			VF old;
			GATHERF(old, (const float *)res, at);
			VF s2 = sum + (res[i] - old);
			sum = (VF)((m & (VI)s2) | (~m & (VI)sum));
			VF ms = (VF)((VI)(sum / norm) & (VI){0} + 0x7fffffff);
			VF bound;
			VI bi = (n * T + rk) & m;
			GATHERF(bound, bt, bi);
			VF q = ms / bound;
			VI up = m & (q > conf);
			conf = (VF)((up & (VI)q) | (~up & (VI)conf));
			VI hit = m & ~found & (ms > bound);
			found |= hit;
			VF d = (VF){0} + j->date32[fp->tr[i]];
			brk = (VF)((hit & (VI)d) | (~hit & (VI)brk));
			VI np;
			GATHERI(np, (const int *)nxt, at);
			p = (m & np) | (~m & p);
			rk -= m;
		}
		/* a lane whose median the network does not give: median32 */
		for (int l = 0; l < NL; l++) {
			if (!act[l] || !nanr[l]) continue;
			float e[CANOPY_SERIES_MAX_DATES];
			int ne = 0;
			for (int i = nh; i < nr; i++) {
				e[ne] = res[i][l];
				ne += valid[i] >> l & 1;
			}
			med[l] = median32(e, ne);
		}
		VF o0 = (VF)((act & found & (VI)brk) | (~(act & found) & (VI)nanv));
		VF o1 = (VF)((act & (VI)med) | (~act & (VI)nanv));
		VF o2 = (VF)((act & (VI)conf) | (~act & (VI)nanv));
		memcpy(j->out[0] + p0, &o0, sizeof o0);
		memcpy(j->out[1] + p0, &o1, sizeof o1);
		memcpy(j->out[2] + p0, &o2, sizeof o2);
		return;
	}
	for (int o = 0; o < 3; o++) memcpy(j->out[o] + p0, &nanv, sizeof nanv);
	for (int l = 0; l < NL; l++) {
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
#undef MADD

/* LANES_QFN: a median or percentile composite of NL pixels at once: each
 * lane's values of the period (a missing one as +∞, after every value) go
 * through the sort plan's compare-exchanges (series.c's sortplan: a
 * bitonic network of N, at least the period's dates, at most
 * CANOPY_SERIES_SORT_MAX, less those that the padding's known +∞ or the
 * order statistics asked for make idle) in SIMD, as min and max, instead
 * of one quickselect per pixel; the order statistics are exact, so the
 * result is quantile32's bit for bit. */
LANES_ATTR static void LANES_QFN(const canopy_series_job *j, const sortplan *sp, size_t p0) {
	VF v[CANOPY_SERIES_SORT_MAX];
	const VF inf = (VF){0} + INFINITY;
	const VF nanv = (VF){0} + NAN32;
	const VI one = (VI){0} + 1;
	VI n = {0};
	size_t P = (size_t)j->pixels;
	const float *vals = j->values + p0;
	for (int c = 0; c < sp->nv; c++) {
		const float *row = vals + (size_t)sp->t[c] * P;
		__builtin_prefetch(row + CANOPY_SERIES_PREFETCH);
		VF y;
		memcpy(&y, row, sizeof y);
		VI ok = y == y;
		n += ok & one;
		v[c] = (VF)(((VI)y & ok) | ((VI)inf & ~ok));
	}
	SORT(v, sp);
	float q = j->stat == CANOPY_MEDIAN ? 50 : j->percentile;
	VF res = nanv;
	for (int l = 0; l < NL; l++) {
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
	VF cnt = __builtin_convertvector(n, VF);
	memcpy(j->out[0] + p0, &res, sizeof res);
	memcpy(j->out[1] + p0, &cnt, sizeof cnt);
	memcpy(j->out[2] + p0, &nanv, sizeof nanv);
}
#undef MADDW
#undef GATHERF
#undef GATHERI
#undef LANE_INDEX
#undef MASK_ANY
#undef VMIN
#undef VMAX
#undef VSQRT
