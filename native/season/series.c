/* series.c: Canopy's per-pixel models over a stack of dates, float32; the
 * one-pixel path (pixel) in the order of operations of compute/season's Go
 * kernel (kernel.go), the lanes as said above LANES. */
#include "series.h"

#include <math.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

/* alloc64 returns n bytes on a 64-byte boundary (free64 releases them):
 * C11's aligned_alloc is missing from mingw-w64's C library, which the
 * Windows build links. */
static void *alloc64(size_t n)
{
	void *raw = malloc(n + 63 + sizeof(void *));
	if (!raw)
		return NULL;
	uintptr_t p = ((uintptr_t)raw + sizeof(void *) + 63) & ~(uintptr_t)63;
	((void **)p)[-1] = raw;
	return (void *)p;
}

static void free64(void *p)
{
	if (p)
		free(((void **)p)[-1]);
}
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#endif

#define NAN32 ((float)NAN)

static void swapf(float *a, float *b) {
	float t = *a;
	*a = *b;
	*b = t;
}

/* select_k puts the k-th smallest of v[0..n) at v[k], smaller ones before
 * it and greater or equal ones after (Hoare's quickselect). */
static void select_k(float *v, int n, int k) {
	int lo = 0, hi = n - 1;
	while (lo < hi) {
		float pivot = v[lo + (hi - lo) / 2];
		int i = lo, j = hi;
		while (i <= j) {
			while (v[i] < pivot) i++;
			while (v[j] > pivot) j--;
			if (i <= j) {
				swapf(&v[i], &v[j]);
				i++;
				j--;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			return;
	}
}

/* order2 returns the k-th and (k+1)-th smallest of v (n > k + 1). */
static void order2(float *v, int n, int k, float *a, float *b) {
	select_k(v, n, k);
	float m = v[k + 1];
	for (int i = k + 2; i < n; i++)
		if (v[i] < m) m = v[i];
	*a = v[k];
	*b = m;
}

static float quantile32(float *v, int n, float q) {
	float h = (float)(n - 1) * q / 100;
	int lo = (int)h;
	if (lo >= n - 1) {
		float m = v[0];
		for (int i = 1; i < n; i++)
			if (v[i] > m) m = v[i];
		return m;
	}
	float a, b;
	order2(v, n, lo, &a, &b);
	return a + (h - (float)lo) * (b - a);
}

static float median32(float *v, int n) {
	if (n == 0) return NAN32;
	if (n % 2 == 1) {
		select_k(v, n, n / 2);
		return v[n / 2];
	}
	float a, b;
	order2(v, n, n / 2 - 1, &a, &b);
	return a + (b - a) / 2;
}

static int cholesky32(float *a, int k) {
	for (int c = 0; c < k; c++) {
		float d = a[c * k + c];
		for (int q = 0; q < c; q++) d -= a[c * k + q] * a[c * k + q];
		if (!(d > 0)) return 0;
		d = sqrtf(d);
		a[c * k + c] = d;
		for (int r = c + 1; r < k; r++) {
			float v = a[r * k + c];
			for (int q = 0; q < c; q++) v -= a[r * k + q] * a[c * k + q];
			a[r * k + c] = v / d;
		}
	}
	return 1;
}

static void chol_solve32(const float *l, float *b, int k) {
	for (int r = 0; r < k; r++) {
		float v = b[r];
		for (int q = 0; q < r; q++) v -= l[r * k + q] * b[q];
		b[r] = v / l[r * k + r];
	}
	for (int r = k - 1; r >= 0; r--) {
		float v = b[r];
		for (int q = r + 1; q < k; q++) v -= l[q * k + r] * b[q];
		b[r] = v / l[r * k + r];
	}
}

static float signed32(float v, int d) {
	return d == CANOPY_DOWN ? -v : d == CANOPY_UP ? v : fabsf(v);
}

static float logplus32(float x) { return x <= (float)2.718281828459045 ? 1.0f : (float)log((double)x); }

static void composite(const canopy_series_job *j, size_t px, float *y) {
	size_t P = (size_t)j->pixels;
	int n = 0, best = -1;
	float bestv = 0;
	for (int t = 0; t < j->dates; t++) {
		float v = j->values[(size_t)t * P + px];
		if (j->role[t] != 1 || v != v) continue;
		y[n++] = v;
		if (best < 0 || v > bestv) {
			best = t;
			bestv = v;
		}
	}
	j->out[1][px] = (float)n;
	if (n == 0) return;
	switch (j->stat) {
	case CANOPY_MAX:
		j->out[0][px] = bestv;
		j->out[2][px] = j->date32[best];
		break;
	case CANOPY_MEDIAN:
		j->out[0][px] = quantile32(y, n, 50);
		break;
	default:
		j->out[0][px] = quantile32(y, n, j->percentile);
	}
}

/* the most values that the lanes' sorting networks take */
#define CANOPY_SERIES_SORT_MAX 64

/* sortplan: a sorting network as run by the lanes (a composite's, the
 * MOSUM's median of the monitoring residuals): the values (a composite's
 * dates t[0..nv)) are loaded into the slots 0..nv), the slots
 * nv..N) hold +∞ (never stored: a compare-exchange with a known +∞ does
 * nothing or swaps, which the plan does by renaming slots), and the
 * compare-exchanges that the order statistics asked for do not depend on
 * are left out; slot[i] is where the i-th smallest ends. */
typedef struct {
	int nv, ncx;
	int t[CANOPY_SERIES_SORT_MAX];
	unsigned char slot[CANOPY_SERIES_SORT_MAX];
	unsigned char cx[2 * CANOPY_SERIES_SORT_MAX * 21]; /* N/2 · log N (log N + 1)/2 at most */
} sortplan;

/* mosum_bound is the MOSUM's boundary at the kk-th valid date of a pixel
 * with n valid history dates. */
static float mosum_bound(const canopy_series_job *j, int kk, int n) {
	return j->critval * (float)sqrt((double)(2 * logplus32((float)(kk + 1) / (float)n)));
}

/* fitplan is what the lanes of one call share: the design's rows and term
 * sums of the dates with a role, XᵀX's assembly from the sums, and the
 * MOSUM's boundaries, a row for each history count n met, made when first
 * needed (the same float operations as mosum_bound). */
typedef struct {
	int ns, nf, nr;           /* sums, fit dates, dates with a role */
	const float *terms;       /* nf x ns: the fit dates' terms */
	const float *xf;          /* nf x k: the fit dates' design rows */
	const float *xr;          /* nr x k: the role dates' design rows */
	const int *tr;            /* nr: the role dates */
	const unsigned char *rr;  /* nr: their roles */
	unsigned char op[CANOPY_SERIES_MAX_COEF * (CANOPY_SERIES_MAX_COEF + 1) / 2];
	unsigned char ia[CANOPY_SERIES_MAX_COEF * (CANOPY_SERIES_MAX_COEF + 1) / 2];
	unsigned char ib[CANOPY_SERIES_MAX_COEF * (CANOPY_SERIES_MAX_COEF + 1) / 2];
	const sortplan *ms;       /* the monitoring residuals' median, or NULL */
	float *bound;             /* (dates + 1) x dates, row n once bound_ok[n] */
	unsigned char *bound_ok;  /* dates + 1 */
} fitplan;

static const float *bound_row(const canopy_series_job *j, const fitplan *fp, int n) {
	float *row = fp->bound + (size_t)n * (size_t)j->dates;
	if (!fp->bound_ok[n]) {
		for (int kk = n; kk < j->dates; kk++) row[kk] = mosum_bound(j, kk, n);
		fp->bound_ok[n] = 1;
	}
	return row;
}

/* tail writes a fitted pixel's outputs from its residuals e (the n valid
 * history dates then the nm valid monitoring dates, in date order; when[i]
 * the date of e[i]), the history's RSS and the coefficients beta; fp, where
 * not NULL, has the MOSUM's boundaries. */
static void tail(const canopy_series_job *j, const fitplan *fp, size_t px, int n, int nm, float *e, const int *when, float rss, const float *beta, const float *med) {
	int k = j->coefs;
	if (j->kind == CANOPY_HARMONIC) {
		j->out[0][px] = (float)sqrt((double)(rss / (float)n));
		for (int q = 0; q < k; q++) j->out[2 + q][px] = beta[q];
		return;
	}
	if (j->kind == CANOPY_MOSUM) {
		int K = (int)floor(j->h * (double)n);
		if (n <= k || K <= 1 || nm == 0) return;
		float sigma = (float)sqrt((double)(rss / (float)(n - k)));
		if (!(sigma > 0)) return;
		float norm = sigma * (float)sqrt((double)n);
		float sum = 0, conf = 0;
		for (int i = n - K; i < n; i++) sum += e[i];
		int brk = -1;
		const float *bounds = fp ? bound_row(j, fp, n) : NULL;
		for (int i = 0; i < nm; i++) {
			int kk = n + i;
			sum += e[kk] - e[kk - K];
			float mosum = fabsf(sum / norm);
			float bound = bounds ? bounds[kk] : mosum_bound(j, kk, n);
			if (mosum / bound > conf) conf = mosum / bound;
			if (brk < 0 && mosum > bound) brk = kk;
		}
		if (brk >= 0) j->out[0][px] = j->date32[when[brk]];
		j->out[1][px] = med ? *med : median32(e + n, nm);
		j->out[2][px] = conf;
		return;
	}
	/* fordead's anomaly rule */
	float thr = j->threshold;
	int start = -1, runa = 0, runn = 0, first = 0;
	for (int i = 0; i < nm; i++) {
		if (signed32(e[n + i], j->direction) > thr) {
			if (runa == 0) first = i;
			runa++;
			runn = 0;
			if (start < 0 && runa >= j->run) start = first;
		} else {
			runn++;
			runa = 0;
			if (start >= 0 && runn >= j->run) start = -1;
		}
	}
	if (start < 0) return;
	int an = 0;
	for (int i = start; i < nm; i++)
		if (signed32(e[n + i], j->direction) > thr) an++;
	j->out[0][px] = j->date32[when[n + start]];
	j->out[1][px] = median32(e + n + start, nm - start);
	j->out[2][px] = (float)an / (float)(nm - start);
}

static int nouts(const canopy_series_job *j) {
	return j->kind == CANOPY_COMPOSITE ? 3 : j->kind == CANOPY_HARMONIC ? 2 + j->coefs : 4;
}

/* pixel runs the model over one pixel's series. */
static void pixel(const canopy_series_job *j, size_t px) {
	float y[CANOPY_SERIES_MAX_DATES], e[CANOPY_SERIES_MAX_DATES];
	int when[CANOPY_SERIES_MAX_DATES]; /* the date of each residual */
	float a[CANOPY_SERIES_MAX_COEF * CANOPY_SERIES_MAX_COEF], beta[CANOPY_SERIES_MAX_COEF];
	size_t P = (size_t)j->pixels;
	int T = j->dates, k = j->coefs, nout = nouts(j);
	for (int i = 0; i < nout; i++) j->out[i][px] = NAN32;
	if (j->kind == CANOPY_COMPOSITE) {
		composite(j, px, y);
		return;
	}
	for (int i = 0; i < k * k; i++) a[i] = 0;
	for (int i = 0; i < k; i++) beta[i] = 0;
	int n = 0, nm = 0;
	for (int t = 0; t < T; t++) {
		float v = j->values[(size_t)t * P + px];
		if (v != v) continue;
		if (j->role[t] == 2) {
			nm++;
			continue;
		}
		if (j->role[t] != 1) continue;
		n++;
		const float *x = j->x + (size_t)t * k;
		for (int r = 0; r < k; r++) {
			float xr = x[r];
			for (int q = 0; q <= r; q++) a[r * k + q] += xr * x[q];
			beta[r] += xr * v;
		}
	}
	if (j->kind == CANOPY_HARMONIC)
		j->out[1][px] = (float)n;
	else
		j->out[3][px] = (float)(n + nm);
	if (n < k || !cholesky32(a, k)) return;
	chol_solve32(a, beta, k);
	float rss = 0;
	int ne = 0;
	for (int t = 0; t < T; t++) {
		float v = j->values[(size_t)t * P + px];
		if (v != v || j->role[t] == 0) continue;
		const float *x = j->x + (size_t)t * k;
		float f = 0;
		for (int q = 0; q < k; q++) f += x[q] * beta[q];
		float r = v - f;
		when[ne] = t;
		e[ne++] = r;
		if (j->role[t] == 1) rss += r * r;
	}
	tail(j, NULL, px, n, nm, e, when, rss, beta, NULL);
}

/* The fit of LANES pixels at once, one SIMD lane each (a masked lane adds
 * 0). XᵀX is not summed entry by entry but assembled from the sums of a
 * few per-date terms (compute/season/normal's shortcut, as the GPU
 * kernels): with θ a date's angle in the year and τ its trend column,
 * cos jθ·cos kθ = ½(cos (j−k)θ + cos (j+k)θ), sin jθ·sin kθ =
 * ½(cos (j−k)θ − cos (j+k)θ), cos jθ·sin kθ = ½(sin (k+j)θ + sin (k−j)θ),
 * so every entry is a combination of Σ1, Σcos mθ, Σsin mθ (m = 1..2K),
 * Στ, Στ², Στ·cos kθ, Στ·sin kθ: 4K+1 sums a date (6K+3 with the trend)
 * instead of (p²+p)/2 products. That rounds differently from pixel (and
 * from compute/season's Go kernel), within the conformance suite's bound.
 * series_lanes.h is compiled twice on x86-64: for AVX2 and for the
 * baseline. */
#define LANES 8
/* how far ahead, in floats of a date's row, the lanes prefetch the cube:
 * eight groups */
#define CANOPY_SERIES_PREFETCH 64
typedef float v8 __attribute__((vector_size(32)));
typedef int vi8 __attribute__((vector_size(32)));
typedef float v16 __attribute__((vector_size(64)));

typedef int vi16 __attribute__((vector_size(64)));

/* The layout of a date's terms for a design of k columns (intercept,
 * the trend when k is even, then cos kθ, sin kθ for k = 1..K): 0 the
 * count; 2m−1, 2m: cos mθ, sin mθ (m = 1..2K); then τ, τ², and τ·cos kθ,
 * τ·sin kθ (k = 1..K). */
static int harmonics_of(int k) { return (k - 1 - (k % 2 == 0)) / 2; }
static int nsums(int k) {
	int K = harmonics_of(k);
	return k % 2 == 0 ? 6 * K + 3 : 4 * K + 1;
}

/* build_terms fills terms (dates × nsums(k)) from the design matrix x:
 * cos mθ and sin mθ for m > K by the angle sums, in double, from x's
 * float32 columns. */
static void build_terms(const float *x, int T, int k, float *terms) {
	int K = harmonics_of(k), trend = k % 2 == 0, ns = nsums(k), h = 1 + trend;
	for (int t = 0; t < T; t++) {
		const float *r = x + (size_t)t * k;
		float *o = terms + (size_t)t * ns;
		double c[2 * CANOPY_SERIES_MAX_COEF + 1], sn[2 * CANOPY_SERIES_MAX_COEF + 1];
		for (int m = 1; m <= K; m++) {
			c[m] = r[h + 2 * (m - 1)];
			sn[m] = r[h + 2 * (m - 1) + 1];
		}
		for (int m = K + 1; m <= 2 * K; m++) {
			int a = K, b = m - K;
			c[m] = c[a] * c[b] - sn[a] * sn[b];
			sn[m] = sn[a] * c[b] + c[a] * sn[b];
		}
		o[0] = 1;
		for (int m = 1; m <= 2 * K; m++) {
			o[2 * m - 1] = (float)c[m];
			o[2 * m] = (float)sn[m];
		}
		if (trend) {
			double tau = r[1];
			int i = 4 * K + 1;
			o[i++] = (float)tau;
			o[i++] = (float)(tau * tau);
			for (int m = 1; m <= K; m++) {
				o[i++] = (float)(tau * c[m]);
				o[i++] = (float)(tau * sn[m]);
			}
		}
	}
}

/* The index in the sums s (then −s at ns + i, then 0 at 2ns) of Σcos mθ
 * and Σsin mθ, for any m in −2K..2K. */
static int at_c(int ns, int m) {
	if (m < 0) m = -m;
	return m == 0 ? 0 : 2 * m - 1;
}
static int at_s(int ns, int m) {
	if (m == 0) return 2 * ns;
	if (m < 0) return ns + 2 * -m;
	return 2 * m;
}

/* plan_normal writes how XᵀX's lower triangle, packed by rows, is made
 * from the sums (the entry i: s[ia] when op is 0, ½(s[ia] + s[ib]) when 1,
 * ½(s[ia] − s[ib]) when 2, with s extended by −s and 0): cos jθ·cos kθ =
 * ½(cos (j−k)θ + cos (j+k)θ), sin jθ·sin kθ = ½(cos (j−k)θ − cos (j+k)θ),
 * cos jθ·sin kθ = ½(sin (k+j)θ + sin (k−j)θ). */
static void plan_normal(fitplan *fp, int k) {
	int K = harmonics_of(k), trend = k % 2 == 0, ns = fp->ns;
	/* column c: kind 0 intercept, 1 trend, 2 cos, 3 sin; order k */
	int kind[CANOPY_SERIES_MAX_COEF], ord[CANOPY_SERIES_MAX_COEF];
	int c = 0;
	kind[c] = 0, ord[c++] = 0;
	if (trend) kind[c] = 1, ord[c++] = 0;
	for (int m = 1; m <= K; m++) {
		kind[c] = 2, ord[c++] = m;
		kind[c] = 3, ord[c++] = m;
	}
	int T0 = 4 * K + 1;
	int i = 0;
	for (int r = 0; r < k; r++)
		for (int q = 0; q <= r; q++, i++) {
			int ka = kind[q], kb = kind[r], ja = ord[q], jb = ord[r];
			if (ka > kb) {
				int t = ka;
				ka = kb, kb = t;
				t = ja, ja = jb, jb = t;
			}
			int op = 0, u = 0, w = 0;
			if (ka == 0 && kb == 0) u = 0;
			else if (ka == 0 && kb == 1) u = T0;
			else if (ka == 0 && kb == 2) u = at_c(ns, jb);
			else if (ka == 0 && kb == 3) u = at_s(ns, jb);
			else if (ka == 1 && kb == 1) u = T0 + 1;
			else if (ka == 1 && kb == 2) u = T0 + 2 + 2 * (jb - 1);
			else if (ka == 1 && kb == 3) u = T0 + 3 + 2 * (jb - 1);
			else if (ka == 2 && kb == 2) op = 1, u = at_c(ns, ja - jb), w = at_c(ns, ja + jb);
			else if (ka == 3 && kb == 3) op = 2, u = at_c(ns, ja - jb), w = at_c(ns, ja + jb);
			else op = 1, u = at_s(ns, jb + ja), w = at_s(ns, jb - ja); /* cos ja · sin jb */
			fp->op[i] = (unsigned char)op;
			fp->ia[i] = (unsigned char)u;
			fp->ib[i] = (unsigned char)w;
		}
}


/* plan_sort makes the plan of a bitonic network of N for nv values in
 * the slots 0..nv), for the order statistics up to the one at need
 * (0-based). */
static void plan_sort(int nv, int N, int need, sortplan *sp) {
	sp->nv = nv;
	unsigned char at[CANOPY_SERIES_SORT_MAX], inf[CANOPY_SERIES_SORT_MAX];
	for (int i = 0; i < N; i++) at[i] = (unsigned char)i, inf[i] = i >= nv;
	int m = 0;
	for (int k = 2; k <= N; k <<= 1)
		for (int s = k >> 1; s > 0; s >>= 1)
			for (int i = 0; i < N; i++) {
				int l = i ^ s;
				if (l <= i) continue;
				int lo = (i & k) == 0 ? i : l, hi = lo == i ? l : i;
				if (inf[hi]) continue; /* min(x, +∞) = x: nothing moves */
				if (inf[lo]) {         /* +∞ goes up: a swap */
					unsigned char a = at[lo];
					at[lo] = at[hi], at[hi] = a;
					inf[lo] = 0, inf[hi] = 1;
					continue;
				}
				sp->cx[2 * m] = at[lo];
				sp->cx[2 * m + 1] = at[hi];
				m++;
			}
	for (int i = 0; i < N; i++) sp->slot[i] = at[i];
	/* Backwards: keep a compare-exchange where a slot it writes is needed
	 * later; then both slots it reads are. */
	unsigned char needed[CANOPY_SERIES_SORT_MAX] = {0};
	for (int i = 0; i <= need && i < N; i++) needed[at[i]] = 1;
	int o = m;
	for (int c = m - 1; c >= 0; c--) {
		unsigned char p = sp->cx[2 * c], q = sp->cx[2 * c + 1];
		if (!needed[p] && !needed[q]) {
			sp->cx[2 * c] = 0xff; /* left out */
			continue;
		}
		needed[p] = needed[q] = 1;
	}
	o = 0;
	for (int c = 0; c < m; c++) {
		if (sp->cx[2 * c] == 0xff) continue;
		sp->cx[2 * o] = sp->cx[2 * c];
		sp->cx[2 * o + 1] = sp->cx[2 * c + 1];
		o++;
	}
	sp->ncx = o;
}

/* network returns the size of the bitonic network for n values, 0 when
 * more than CANOPY_SERIES_SORT_MAX. */
static int network(int n) {
	int N = 2;
	while (N < n) N <<= 1;
	return N <= CANOPY_SERIES_SORT_MAX ? N : 0;
}

#define NL 8
#define VF v8
#define VI vi8
#define LANES_FN lanes_base
#define LANES_QFN lanes_q_base
#define LANES_ATTR
#include "series_lanes.h"
#undef LANES_FN
#undef LANES_QFN
#undef LANES_ATTR
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define LANES_FN lanes_avx2
#define LANES_QFN lanes_q_avx2
#define LANES_ATTR __attribute__((target("avx2,fma")))
#define LANES_AVX2 1
#include "series_lanes.h"
#undef LANES_FN
#undef LANES_QFN
#undef LANES_ATTR
#undef LANES_AVX2
#undef NL
#undef VF
#undef VI
/* AVX-512: sixteen pixels a vector, the same operations lane by lane */
#define NL 16
#define VF v16
#define VI vi16
#define LANES_FN lanes_avx512
#define LANES_QFN lanes_q_avx512
#define LANES_ATTR __attribute__((target("avx512f")))
#define LANES_AVX512 1
#include "series_lanes.h"
#undef LANES_FN
#undef LANES_QFN
#undef LANES_ATTR
#undef LANES_AVX512
#define HAVE_AVX2 1
#endif
#undef NL
#undef VF
#undef VI

/* LANE_SCRATCH is the vectors of 16 lanes a role date that a fit's lanes
 * need. */
#define LANE_SCRATCH 6

/* quantile_need is the largest 0-based order statistic that a quantile q
 * of up to n values reads (quantile32's h, lo and lo + 1). */
static int quantile_need(int n, float q) {
	if (n <= 1) return 0;
	float h = (float)(n - 1) * q / 100;
	int lo = (int)h;
	return lo >= n - 1 ? n - 1 : lo + 1;
}

void canopy_series_pixels(const canopy_series_job *j, size_t lo, size_t hi) {
	size_t px = lo;
#ifdef HAVE_AVX2
	int avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"), avx512 = __builtin_cpu_supports("avx512f");
#else
	int avx2 = 0, avx512 = 0;
#endif
	(void)avx2, (void)avx512;
	if (j->kind == CANOPY_COMPOSITE && j->stat != CANOPY_MAX && hi - lo >= LANES) {
		int nfit = 0;
		for (int t = 0; t < j->dates; t++)
			if (j->role[t] == 1) nfit++;
		int N = network(nfit);
		sortplan *sp = N ? malloc(sizeof *sp) : NULL;
		if (sp) {
			for (int t = 0, c = 0; t < j->dates; t++)
				if (j->role[t] == 1) sp->t[c++] = t;
			float q = j->stat == CANOPY_MEDIAN ? 50 : j->percentile;
			/* h grows with n: the most values ask for the highest */
			int need = 0;
			for (int n = 1; n <= nfit; n++) {
				int o = quantile_need(n, q);
				if (o > need) need = o;
			}
			plan_sort(nfit, N, need, sp);
#ifdef HAVE_AVX2
			if (avx512)
				for (; px + 16 <= hi; px += 16) lanes_q_avx512(j, sp, px);
#endif
			for (; px + LANES <= hi; px += LANES) {
#ifdef HAVE_AVX2
				if (avx2) {
					lanes_q_avx2(j, sp, px);
					continue;
				}
#endif
				lanes_q_base(j, sp, px);
			}
			free(sp);
		}
	}
	if (j->kind != CANOPY_COMPOSITE && hi - lo >= LANES) {
		int T = j->dates, k = j->coefs, ns = nsums(k);
		fitplan fp;
		memset(&fp, 0, sizeof fp);
		fp.ns = ns;
		float *terms = malloc(sizeof(float) * (size_t)T * (size_t)ns);
		float *fit = malloc(sizeof(float) * (size_t)T * (size_t)(ns + 2 * k));
		int *tr = malloc(sizeof(int) * (size_t)T);
		unsigned char *rr = malloc((size_t)T);
		int mosum = j->kind == CANOPY_MOSUM;
		float *bound = mosum ? malloc(sizeof(float) * (size_t)(T + 1) * (size_t)T) : NULL;
		unsigned char *bound_ok = mosum ? calloc((size_t)T + 1, 1) : NULL;
		/* vectors of 16 floats, 64-byte aligned, enough for 8 too */
		void *scratch = alloc64((size_t)LANE_SCRATCH * 64 * (size_t)T);
		if (!terms || !fit || !tr || !rr || (mosum && (!bound || !bound_ok)) || !scratch) {
			free(terms), free(fit), free(tr), free(rr), free(bound), free(bound_ok), free64(scratch);
			goto rest;
		}
		build_terms(j->x, T, k, terms);
		float *tf = fit, *xf = fit + (size_t)T * ns, *xr = xf + (size_t)T * k;
		for (int t = 0; t < T; t++) {
			if (j->role[t] == 0) continue;
			if (j->role[t] == 1) {
				memcpy(tf + (size_t)fp.nf * ns, terms + (size_t)t * ns, sizeof(float) * (size_t)ns);
				memcpy(xf + (size_t)fp.nf * k, j->x + (size_t)t * k, sizeof(float) * (size_t)k);
				fp.nf++;
			}
			memcpy(xr + (size_t)fp.nr * k, j->x + (size_t)t * k, sizeof(float) * (size_t)k);
			tr[fp.nr] = t;
			rr[fp.nr++] = j->role[t];
		}
		fp.terms = tf, fp.xf = xf, fp.xr = xr, fp.tr = tr, fp.rr = rr;
		fp.bound = bound, fp.bound_ok = bound_ok;
		plan_normal(&fp, k);
		/* The monitoring residuals' median through a network where the
		 * history comes before the monitoring. */
		sortplan *ms = NULL;
		int nmd = 0, order = 1;
		for (int i = 0; i < fp.nr; i++) {
			if (rr[i] == 2) nmd++;
			else if (nmd > 0) order = 0;
		}
		if (mosum && order && nmd > 0 && network(nmd) && (ms = malloc(sizeof *ms)) != NULL) {
			plan_sort(nmd, network(nmd), nmd / 2, ms);
			fp.ms = ms;
		}
#ifdef HAVE_AVX2
		if (avx512)
			for (; px + 16 <= hi; px += 16) lanes_avx512(j, &fp, scratch, px);
#endif
		for (; px + LANES <= hi; px += LANES) {
#ifdef HAVE_AVX2
			if (avx2) {
				lanes_avx2(j, &fp, scratch, px);
				continue;
			}
#endif
			lanes_base(j, &fp, scratch, px);
		}
		free(terms), free(fit), free(tr), free(rr), free(bound), free(bound_ok), free(ms), free64(scratch);
	}
rest:
	for (; px < hi; px++) pixel(j, px);
}
