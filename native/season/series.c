/* series.c: Canopy's per-pixel models over a stack of dates, float32; the
 * one-pixel path (pixel) in the order of operations of compute/season's Go
 * kernel (kernel.go), the lanes as said above LANES. */
#include "series.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

/* tail writes a fitted pixel's outputs from its residuals e (the n valid
 * history dates then the nm valid monitoring dates, in date order; when[i]
 * the date of e[i]), the history's RSS and the coefficients beta. */
static void tail(const canopy_series_job *j, size_t px, int n, int nm, float *e, const int *when, float rss, const float *beta) {
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
		for (int i = 0; i < nm; i++) {
			int kk = n + i;
			sum += e[kk] - e[kk - K];
			float mosum = (float)fabs((double)(sum / norm));
			float bound = j->critval * (float)sqrt((double)(2 * logplus32((float)(kk + 1) / (float)n)));
			if (mosum / bound > conf) conf = mosum / bound;
			if (brk < 0 && mosum > bound) brk = kk;
		}
		if (brk >= 0) j->out[0][px] = j->date32[when[brk]];
		j->out[1][px] = median32(e + n, nm);
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
	tail(j, px, n, nm, e, when, rss, beta);
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
/* the most dates of a composite that the sorting network takes */
#define CANOPY_SERIES_SORT_MAX 64
typedef float v8 __attribute__((vector_size(32)));
typedef int vi8 __attribute__((vector_size(32)));

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

/* sum_c and sum_s put Σcos mθ and Σsin mθ, for any m in −2K..2K, in *v
 * (through a pointer: a v8 is not passed by value outside AVX code). */
static void sum_c(const v8 *s, int m, v8 *v) {
	if (m < 0) m = -m;
	*v = m == 0 ? s[0] : s[2 * m - 1];
}
static void sum_s(const v8 *s, int m, v8 *v) {
	if (m == 0) *v = (v8){0};
	else if (m < 0) *v = -s[-2 * m];
	else *v = s[2 * m];
}

/* assemble_normal writes XᵀX's lower triangle, packed by rows, from the
 * sums s. */
static void assemble_normal(const v8 *s, int k, v8 *a) {
	int K = harmonics_of(k), trend = k % 2 == 0;
	const v8 half = {.5f, .5f, .5f, .5f, .5f, .5f, .5f, .5f};
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
			v8 u, w;
			if (ka == 0 && kb == 0) a[i] = s[0];
			else if (ka == 0 && kb == 1) a[i] = s[T0];
			else if (ka == 0 && kb == 2) sum_c(s, jb, &a[i]);
			else if (ka == 0 && kb == 3) sum_s(s, jb, &a[i]);
			else if (ka == 1 && kb == 1) a[i] = s[T0 + 1];
			else if (ka == 1 && kb == 2) a[i] = s[T0 + 2 + 2 * (jb - 1)];
			else if (ka == 1 && kb == 3) a[i] = s[T0 + 3 + 2 * (jb - 1)];
			else if (ka == 2 && kb == 2) {
				sum_c(s, ja - jb, &u);
				sum_c(s, ja + jb, &w);
				a[i] = half * (u + w);
			} else if (ka == 3 && kb == 3) {
				sum_c(s, ja - jb, &u);
				sum_c(s, ja + jb, &w);
				a[i] = half * (u - w);
			} else { /* cos ja · sin jb */
				sum_s(s, jb + ja, &u);
				sum_s(s, jb - ja, &w);
				a[i] = half * (u + w);
			}
		}
}
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
#define LANES_ATTR __attribute__((target("avx2")))
#include "series_lanes.h"
#undef LANES_FN
#undef LANES_QFN
#undef LANES_ATTR
#define HAVE_AVX2 1
#endif

void canopy_series_pixels(const canopy_series_job *j, size_t lo, size_t hi) {
	size_t px = lo;
#ifdef HAVE_AVX2
	int avx2q = __builtin_cpu_supports("avx2");
#endif
	if (j->kind == CANOPY_COMPOSITE && j->stat != CANOPY_MAX) {
		int nfit = 0, N = 2;
		for (int t = 0; t < j->dates; t++) nfit += j->role[t] == 1;
		while (N < nfit) N <<= 1;
		if (N <= CANOPY_SERIES_SORT_MAX)
			for (; px + LANES <= hi; px += LANES) {
#ifdef HAVE_AVX2
				if (avx2q) {
					lanes_q_avx2(j, N, px);
					continue;
				}
#endif
				lanes_q_base(j, N, px);
			}
	}
	if (j->kind != CANOPY_COMPOSITE && hi - lo >= LANES) {
		int ns = nsums(j->coefs);
		float *terms = malloc(sizeof(float) * (size_t)j->dates * (size_t)ns);
		if (!terms) goto rest;
		build_terms(j->x, j->dates, j->coefs, terms);
#ifdef HAVE_AVX2
		int avx2 = __builtin_cpu_supports("avx2");
#else
		int avx2 = 0;
#endif
		for (; px + LANES <= hi; px += LANES) {
#ifdef HAVE_AVX2
			if (avx2) {
				lanes_avx2(j, terms, ns, px);
				continue;
			}
#endif
			(void)avx2;
			lanes_base(j, terms, ns, px);
		}
		free(terms);
	}
rest:
	for (; px < hi; px++) pixel(j, px);
}
