/* series_lanes.h: the body of the lane-batched fit (series.c includes it
 * with LANES_FN and LANES_ATTR set), in GCC's vector extensions: one v8
 * holds the same quantity of 8 pixels. XᵀX is assembled from the per-date
 * sums of series.c's term table (the GPU kernels' shortcut, 4K+1 or 6K+3
 * sums a date instead of (p²+p)/2 products); Xᵀy, the Cholesky solve and
 * the residuals are the one-pixel path's (pixel) operations, lane by lane,
 * in the same order. */

LANES_ATTR static void LANES_FN(const canopy_series_job *j, const float *terms, int ns, size_t p0) {
	enum { KK = CANOPY_SERIES_MAX_COEF * (CANOPY_SERIES_MAX_COEF + 1) / 2 };
	v8 a[KK], b[CANOPY_SERIES_MAX_COEF], s[CANOPY_SERIES_MAX_SUMS];
	v8 res[CANOPY_SERIES_MAX_DATES];
	unsigned valid[CANOPY_SERIES_MAX_DATES]; /* bit l: lane l has a value */
	v8 rss = {0};
	vi8 n = {0}, nm = {0}, bad = {0};
	const vi8 one = {1, 1, 1, 1, 1, 1, 1, 1};
	const v8 onef = {1, 1, 1, 1, 1, 1, 1, 1};
	size_t P = (size_t)j->pixels;
	int T = j->dates, k = j->coefs, nout = nouts(j);
	for (int i = 0; i < nout; i++)
		for (int l = 0; l < LANES; l++) j->out[i][p0 + l] = NAN32;
	for (int i = 0; i < ns; i++) s[i] = (v8){0};
	for (int i = 0; i < k; i++) b[i] = (v8){0};
	for (int t = 0; t < T; t++) {
		if (j->role[t] == 0) continue;
		v8 y;
		memcpy(&y, j->values + (size_t)t * P + p0, sizeof y);
		vi8 ok = y == y; /* -1 where valid */
		if (j->role[t] == 2) {
			nm += ok & one;
			continue;
		}
		/* w: 1 for a valid value, 0 for a missing one; a product with 0
		 * adds ±0, which leaves a sum as it is. */
		v8 w = (v8)((vi8)onef & ok), v = (v8)((vi8)y & ok);
		n += ok & one;
		const float *x = j->x + (size_t)t * k;
		const float *tt = terms + (size_t)t * ns;
		for (int i = 0; i < ns; i++) s[i] += tt[i] * w;
		for (int r = 0; r < k; r++) b[r] += x[r] * v;
	}
	/* XᵀX from the sums (compute/season/normal's shortcut). */
	assemble_normal(s, k, a);
	/* Cholesky; a lane whose pivot is not positive is marked bad and
	 * carries on with 1 so that nothing traps. */
#define A(r, q) a[(r) * ((r) + 1) / 2 + (q)]
	for (int c = 0; c < k; c++) {
		v8 d = A(c, c);
		for (int q = 0; q < c; q++) d -= A(c, q) * A(c, q);
		vi8 ok = d > (v8){0};
		bad |= ~ok;
		d = (v8)(((vi8)d & ok) | ((vi8)onef & ~ok));
		for (int l = 0; l < LANES; l++) d[l] = sqrtf(d[l]);
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
	/* The residuals of every date with a role, in date order. */
	for (int t = 0; t < T; t++) {
		if (j->role[t] == 0) continue;
		v8 y;
		memcpy(&y, j->values + (size_t)t * P + p0, sizeof y);
		const float *x = j->x + (size_t)t * k;
		v8 f = {0};
		for (int q = 0; q < k; q++) f += x[q] * b[q];
		v8 r = y - f;
		vi8 ok = y == y;
		res[t] = r;
		if (j->role[t] == 1) rss += (v8)((vi8)(r * r) & ok);
		unsigned m = 0;
		for (int l = 0; l < LANES; l++) m |= (unsigned)(ok[l] & 1) << l;
		valid[t] = m;
	}
	if (j->kind == CANOPY_HARMONIC) {
		for (int l = 0; l < LANES; l++) {
			size_t px = p0 + (size_t)l;
			j->out[1][px] = (float)n[l];
			if (n[l] < k || bad[l]) continue;
			j->out[0][px] = (float)sqrt((double)(rss[l] / (float)n[l]));
			for (int q = 0; q < k; q++) j->out[2 + q][px] = b[q][l];
		}
		return;
	}
	for (int l = 0; l < LANES; l++) {
		size_t px = p0 + (size_t)l;
		j->out[3][px] = (float)(n[l] + nm[l]);
		if (n[l] < k || bad[l]) continue;
		float e[CANOPY_SERIES_MAX_DATES], beta[CANOPY_SERIES_MAX_COEF];
		int when[CANOPY_SERIES_MAX_DATES], ne = 0;
		for (int t = 0; t < T; t++) {
			if (j->role[t] == 0 || !(valid[t] >> l & 1)) continue;
			when[ne] = t;
			e[ne++] = res[t][l];
		}
		for (int q = 0; q < k; q++) beta[q] = b[q][l];
		tail(j, px, n[l], nm[l], e, when, rss[l], beta);
	}
}

/* LANES_QFN: a median or percentile composite of 8 pixels at once: each
 * lane's values of the period (a missing one as +∞, after every value) go
 * through a bitonic sorting network of N (a power of 2, at least the
 * period's dates, at most CANOPY_SERIES_SORT_MAX) compare-exchanges in
 * SIMD, instead of one quickselect per pixel; the order statistics are
 * exact, so the result is quantile32's bit for bit. */
LANES_ATTR static void LANES_QFN(const canopy_series_job *j, int N, size_t p0) {
	v8 v[CANOPY_SERIES_SORT_MAX];
	const v8 inf = {INFINITY, INFINITY, INFINITY, INFINITY, INFINITY, INFINITY, INFINITY, INFINITY};
	const vi8 one = {1, 1, 1, 1, 1, 1, 1, 1};
	vi8 n = {0};
	size_t P = (size_t)j->pixels;
	int c = 0;
	for (int t = 0; t < j->dates; t++) {
		if (j->role[t] != 1) continue;
		v8 y;
		memcpy(&y, j->values + (size_t)t * P + p0, sizeof y);
		vi8 ok = y == y;
		n += ok & one;
		v[c++] = (v8)(((vi8)y & ok) | ((vi8)inf & ~ok));
	}
	for (; c < N; c++) v[c] = inf;
	for (int k = 2; k <= N; k <<= 1)
		for (int s = k >> 1; s > 0; s >>= 1)
			for (int i = 0; i < N; i++) {
				int l = i ^ s;
				if (l <= i) continue;
				int lo = (i & k) == 0 ? i : l, hi = lo == i ? l : i;
				v8 a = v[lo], b = v[hi];
				vi8 m = a < b;
				v[lo] = (v8)(((vi8)a & m) | ((vi8)b & ~m));
				v[hi] = (v8)(((vi8)b & m) | ((vi8)a & ~m));
			}
	float q = j->stat == CANOPY_MEDIAN ? 50 : j->percentile;
	for (int l = 0; l < LANES; l++) {
		size_t px = p0 + (size_t)l;
		int nl = n[l];
		j->out[0][px] = NAN32;
		j->out[1][px] = (float)nl;
		j->out[2][px] = NAN32;
		if (nl == 0) continue;
		float h = (float)(nl - 1) * q / 100;
		int lo = (int)h;
		if (lo >= nl - 1) {
			j->out[0][px] = v[nl - 1][l];
			continue;
		}
		float a = v[lo][l], b = v[lo + 1][l];
		j->out[0][px] = a + (h - (float)lo) * (b - a);
	}
}
