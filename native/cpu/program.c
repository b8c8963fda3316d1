#include "program.h"

/* No fused multiply-add: every op rounds once (GCC: ISO C mode, see cpu.go). */
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

#include <math.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#define CANOPY_X86 1
#include <immintrin.h>
#define AVX2 __attribute__((target("avx2")))
#endif

/* The quiet NaN every backend writes (compute.NaN32). */
static inline float qnan(void)
{
	union { uint32_t u; float f; } v = { 0x7fc00000u };
	return v.f;
}

/* Registers are padded to whole vectors: the ops run over the block's
 * length rounded up to 8 floats (CANOPY_BLOCK is a multiple of 8), and only
 * the loads and stores, which touch the caller's memory, stop at n. */
#define VEC(n) (((n) + 7) & ~(size_t)7)

size_t canopy_program_scratch(int32_t nregs)
{
	if (nregs < 1)
		nregs = 1;
	return (size_t)nregs * CANOPY_BLOCK;
}

/* ---- The scalar definitions (Eval32's), used for tails and CPUs without
 * AVX2. Each op rounds to float32 once; -ffp-contract=off keeps GCC from
 * fusing a multiply and an add. */

static inline float s_div(float a, float b)
{
	return b == 0.0f ? qnan() : a / b;
}

static inline float s_min(float a, float b)
{
	if (a != a || b != b)
		return qnan();
	return a < b ? a : b;
}

static inline float s_max(float a, float b)
{
	if (a != a || b != b)
		return qnan();
	return a > b ? a : b;
}

static inline float s_abs(float a)
{
	union { float f; uint32_t u; } v = { a };
	v.u &= 0x7fffffffu;
	return v.f;
}

static inline float s_sqrt(float a)
{
	return a < 0.0f ? qnan() : sqrtf(a);
}

static inline float s_finite(float a)
{
	return s_abs(a) == INFINITY ? qnan() : a;
}

/* The physical value of sample x (already float32(x)); eq says whether x
 * equals the band's nodata. */
static inline float s_conv(float v, int eq, const canopy_band *b)
{
	if (b->flags & CANOPY_RADIOMETRY) {
		v = v + b->add;
		v = v * b->scale;
		v = v + b->offset;
	}
	if ((b->flags & CANOPY_NODATA) && eq)
		v = qnan();
	return v;
}

static inline float f32_of_bits(uint32_t u)
{
	union { uint32_t u; float f; } v = { u };
	return v.f;
}

/* s_load converts samples [from, n) of band b at pixel lo into d. */
static void s_load(float *d, const canopy_band *b, size_t lo, size_t from,
		   size_t n)
{
	int32_t nd = (int32_t)b->nodata;
	switch (b->type) {
	case CANOPY_U8: {
		const uint8_t *s = (const uint8_t *)b->data + lo;
		for (size_t i = from; i < n; i++)
			d[i] = s_conv((float)s[i], (int32_t)s[i] == nd, b);
		break;
	}
	case CANOPY_U16: {
		const uint16_t *s = (const uint16_t *)b->data + lo;
		for (size_t i = from; i < n; i++)
			d[i] = s_conv((float)s[i], (int32_t)s[i] == nd, b);
		break;
	}
	case CANOPY_I16: {
		const int16_t *s = (const int16_t *)b->data + lo;
		for (size_t i = from; i < n; i++)
			d[i] = s_conv((float)s[i], (int32_t)s[i] == nd, b);
		break;
	}
	case CANOPY_U32: {
		/* (float)uint32_t is one round-to-nearest-even conversion, as
		 * Go's float32(uint32). */
		const uint32_t *s = (const uint32_t *)b->data + lo;
		for (size_t i = from; i < n; i++)
			d[i] = s_conv((float)s[i], s[i] == b->nodata, b);
		break;
	}
	case CANOPY_I32: {
		const int32_t *s = (const int32_t *)b->data + lo;
		for (size_t i = from; i < n; i++)
			d[i] = s_conv((float)s[i], s[i] == nd, b);
		break;
	}
	case CANOPY_F32: {
		const float *s = (const float *)b->data + lo;
		float ndf = f32_of_bits(b->nodata);
		for (size_t i = from; i < n; i++)
			d[i] = s_conv(s[i], s[i] == ndf, b);
		break;
	}
	}
}

/* The kinds of output store: the register as it is, its finite value, or
 * the finite value of the normalised difference of two registers. */
enum { OUT_COPY, OUT_FINITE, OUT_ND };

/* s_out writes outputs [from, n) to dst by kind, NaN where the mask is
 * set. */
static void s_out(float *dst, const float *x, const float *y,
		  const uint8_t *mask, size_t from, size_t n, int kind)
{
	for (size_t i = from; i < n; i++) {
		float v = x[i];
		if (kind == OUT_ND)
			v = s_div(x[i] - y[i], x[i] + y[i]);
		if (kind != OUT_COPY)
			v = s_finite(v);
		dst[i] = mask && mask[i] ? qnan() : v;
	}
}

/* passthrough reports whether band b can be read in place over a block of
 * n pixels: float32 samples taken as they are, whole vectors only (the ops
 * read VEC(n) lanes, which must not run past the plane). */
static inline int passthrough(const canopy_band *b, size_t n)
{
	return b->type == CANOPY_F32 && b->flags == 0 && (n & 7) == 0;
}

/* The registers of a block: reg[r] is where register r's values are (its
 * scratch, or a band read in place), own(r) the scratch an op writes. */
#define OWN(r) (s + (size_t)(r) * CANOPY_BLOCK)

static void s_block(const canopy_program *p, float *s, const float **reg,
		    size_t lo, size_t n)
{
	size_t nv = VEC(n);
	const uint8_t *mask = p->mask ? p->mask + lo : NULL;
	for (int32_t c = 0; c < p->ncode; c++) {
		const canopy_instr *in = &p->code[c];
		float *d = OWN(in->dst);
		const float *x = reg[in->a], *y = reg[in->b];
		const float k = in->k;
		size_t i;
		switch (in->op) {
		case CANOPY_OP_LOAD: {
			const canopy_band *b = &p->bands[in->a];
			if (passthrough(b, n)) {
				reg[in->dst] = (const float *)b->data + lo;
				continue;
			}
			s_load(d, b, lo, 0, n);
			break;
		}
		case CANOPY_OP_CONST:
			for (i = 0; i < nv; i++) d[i] = k;
			break;
		case CANOPY_OP_ADD:
			for (i = 0; i < nv; i++) d[i] = x[i] + y[i];
			break;
		case CANOPY_OP_SUB:
			for (i = 0; i < nv; i++) d[i] = x[i] - y[i];
			break;
		case CANOPY_OP_MUL:
			for (i = 0; i < nv; i++) d[i] = x[i] * y[i];
			break;
		case CANOPY_OP_DIV:
			for (i = 0; i < nv; i++) d[i] = s_div(x[i], y[i]);
			break;
		case CANOPY_OP_NEG:
			for (i = 0; i < nv; i++) d[i] = -x[i];
			break;
		case CANOPY_OP_ABS:
			for (i = 0; i < nv; i++) d[i] = s_abs(x[i]);
			break;
		case CANOPY_OP_SQRT:
			for (i = 0; i < nv; i++) d[i] = s_sqrt(x[i]);
			break;
		case CANOPY_OP_MIN:
			for (i = 0; i < nv; i++) d[i] = s_min(x[i], y[i]);
			break;
		case CANOPY_OP_MAX:
			for (i = 0; i < nv; i++) d[i] = s_max(x[i], y[i]);
			break;
		case CANOPY_OP_ADDK:
			for (i = 0; i < nv; i++) d[i] = x[i] + k;
			break;
		case CANOPY_OP_SUBK:
			for (i = 0; i < nv; i++) d[i] = x[i] - k;
			break;
		case CANOPY_OP_KSUB:
			for (i = 0; i < nv; i++) d[i] = k - x[i];
			break;
		case CANOPY_OP_MULK:
			for (i = 0; i < nv; i++) d[i] = x[i] * k;
			break;
		case CANOPY_OP_DIVK:
			for (i = 0; i < nv; i++) d[i] = x[i] / k;
			break;
		case CANOPY_OP_KDIV:
			for (i = 0; i < nv; i++) d[i] = s_div(k, x[i]);
			break;
		case CANOPY_OP_MINK:
			for (i = 0; i < nv; i++) d[i] = s_min(x[i], k);
			break;
		case CANOPY_OP_MAXK:
			for (i = 0; i < nv; i++) d[i] = s_max(x[i], k);
			break;
		case CANOPY_OP_ND:
			for (i = 0; i < nv; i++) d[i] = s_div(x[i] - y[i], x[i] + y[i]);
			break;
		case CANOPY_OP_ND_STORE:
			for (int32_t o = 0; o < p->nout; o++)
				if (p->outat[o] == c)
					s_out(p->out[o] + lo, x, y, mask, 0, n, OUT_ND);
			continue;
		case CANOPY_OP_FINITE:
			if (in->store) {
				for (int32_t o = 0; o < p->nout; o++)
					if (p->outat[o] == c)
						s_out(p->out[o] + lo, x, NULL, mask, 0, n, OUT_FINITE);
				continue;
			}
			for (i = 0; i < nv; i++) d[i] = s_finite(x[i]);
			break;
		}
		reg[in->dst] = d;
	}
	for (int32_t o = 0; o < p->nout; o++)
		if (p->outat[o] < 0)
			s_out(p->out[o] + lo, reg[p->outregs[o]], NULL, mask, 0, n, OUT_COPY);
}

static void run_scalar(const canopy_program *p, float *s, const float **reg,
		       size_t lo, size_t hi)
{
	for (; lo < hi; lo += CANOPY_BLOCK) {
		size_t n = hi - lo < CANOPY_BLOCK ? hi - lo : CANOPY_BLOCK;
		s_block(p, s, reg, lo, n);
	}
}

#ifdef CANOPY_X86
/* ---- AVX2: the same ops eight lanes at a time. */

AVX2 static inline __m256 v_nan(void)
{
	return _mm256_castsi256_ps(_mm256_set1_epi32(0x7fc00000));
}

/* While a block is computed, its ops prefetch the next block's samples
 * into L2, one cache line every fourth vector, so that reading memory
 * overlaps the arithmetic instead of alternating with it (EVI from memory
 * is measurably faster so: docs/BENCHMARKS.md, "Index engine"). */
#define PF_BANDS 16
typedef struct {
	const char *cur, *end;
	int k, n;
	const char *lo[PF_BANDS], *hi[PF_BANDS];
} prefetch;

#ifndef PF_MASK
#define PF_MASK 24
#endif
#ifndef PF_HINT
#define PF_HINT _MM_HINT_T1
#endif
#ifdef PF_OFF
#define PF(i) (void)pf
#else
#define PF(i)                                                             \
	do {                                                              \
		if (((i) & PF_MASK) != 0)                                 \
			break;                                            \
		if (pf->cur < pf->end) {                                  \
			_mm_prefetch(pf->cur, PF_HINT);                   \
			pf->cur += 64;                                    \
		} else if (pf->k < pf->n) {                               \
			pf->cur = pf->lo[pf->k];                          \
			pf->end = pf->hi[pf->k];                          \
			pf->k++;                                          \
		}                                                         \
	} while (0)
#endif

#define LOOP2(expr)                                              \
	for (i = 0; i < nv; i += 8) {                            \
		PF(i);                                           \
		__m256 a = _mm256_loadu_ps(x + i);               \
		__m256 b = _mm256_loadu_ps(y + i);               \
		_mm256_storeu_ps(d + i, (expr));                 \
	}
#define LOOP1(expr)                                              \
	for (i = 0; i < nv; i += 8) {                            \
		PF(i);                                           \
		__m256 a = _mm256_loadu_ps(x + i);               \
		_mm256_storeu_ps(d + i, (expr));                 \
	}

/* NaN where either lane is NaN, else min_ps/max_ps, which return the second
 * operand unless the first compares less (greater): Go's a < b ? a : b. */
AVX2 static inline __m256 v_min(__m256 a, __m256 b)
{
	return _mm256_blendv_ps(_mm256_min_ps(a, b), v_nan(), _mm256_cmp_ps(a, b, _CMP_UNORD_Q));
}

AVX2 static inline __m256 v_max(__m256 a, __m256 b)
{
	return _mm256_blendv_ps(_mm256_max_ps(a, b), v_nan(), _mm256_cmp_ps(a, b, _CMP_UNORD_Q));
}

AVX2 static inline __m256 v_div(__m256 a, __m256 b)
{
	return _mm256_blendv_ps(_mm256_div_ps(a, b), v_nan(), _mm256_cmp_ps(b, _mm256_setzero_ps(), _CMP_EQ_OQ));
}

AVX2 static inline __m256 v_abs(__m256 a)
{
	return _mm256_and_ps(a, _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff)));
}

AVX2 static inline __m256 v_sqrt(__m256 a)
{
	/* sqrt_ps is correctly rounded and NaN below zero (sqrt(-0) = -0). */
	return _mm256_sqrt_ps(a);
}

AVX2 static inline __m256 v_finite(__m256 a)
{
	return _mm256_blendv_ps(a, v_nan(), _mm256_cmp_ps(v_abs(a), _mm256_set1_ps(INFINITY), _CMP_EQ_OQ));
}

/* Go's float32(uint32): the high and low 16 bits convert exactly, the
 * product by 65536 is exact, and the sum rounds once to nearest even. */
AVX2 static inline __m256 v_u32_to_f32(__m256i x)
{
	__m256 hi = _mm256_cvtepi32_ps(_mm256_srli_epi32(x, 16));
	__m256 lo = _mm256_cvtepi32_ps(_mm256_and_si256(x, _mm256_set1_epi32(0xffff)));
	return _mm256_add_ps(_mm256_mul_ps(hi, _mm256_set1_ps(65536.0f)), lo);
}

/* LOAD_LOOP converts whole vectors of samples of type T: CVT(x) gives the
 * float32 lanes and EQ(x) the nodata lanes of the raw vector x, which
 * READ(ptr) loads; RAD and ND are constants, so that each of the four
 * combinations compiles to its own loop. */
#define LOAD_LOOP(T, READ, CVT, EQ, RAD, ND)                                      \
	for (; i + 8 <= n; i += 8) {                                              \
		PF(i);                                                            \
		__auto_type x = READ((const T *)b->data + lo + i);                \
		__m256 v = CVT(x);                                                \
		if (RAD) {                                                        \
			v = _mm256_add_ps(v, add);                                \
			v = _mm256_mul_ps(v, scale);                              \
			v = _mm256_add_ps(v, offset);                             \
		}                                                                 \
		if (ND)                                                           \
			v = _mm256_blendv_ps(v, nan, _mm256_castsi256_ps(EQ(x))); \
		_mm256_storeu_ps(d + i, v);                                       \
	}
#define LOAD_TYPE(T, READ, CVT, EQ)                                             \
	switch (b->flags & 3) {                                                 \
	case 0: LOAD_LOOP(T, READ, CVT, EQ, 0, 0); break;                        \
	case CANOPY_RADIOMETRY: LOAD_LOOP(T, READ, CVT, EQ, 1, 0); break;        \
	case CANOPY_NODATA: LOAD_LOOP(T, READ, CVT, EQ, 0, 1); break;            \
	default: LOAD_LOOP(T, READ, CVT, EQ, 1, 1); break;                       \
	}

#define RD_U8(p) _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(p)))
#define RD_U16(p) _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(p)))
#define RD_I16(p) _mm256_cvtepi16_epi32(_mm_loadu_si128((const __m128i *)(p)))
#define RD_I32(p) _mm256_loadu_si256((const __m256i *)(p))
#define RD_F32(p) _mm256_loadu_ps(p)
#define CVT_I(x) _mm256_cvtepi32_ps(x)
#define CVT_U32(x) v_u32_to_f32(x)
#define CVT_F(x) (x)
#define EQ_I(x) _mm256_cmpeq_epi32(x, nd)
#define EQ_F(x) _mm256_castps_si256(_mm256_cmp_ps(x, ndf, _CMP_EQ_OQ))

AVX2 static void v_load(float *d, const canopy_band *b, size_t lo, size_t n,
			prefetch *pf)
{
	const __m256 add = _mm256_set1_ps(b->add), scale = _mm256_set1_ps(b->scale);
	const __m256 offset = _mm256_set1_ps(b->offset);
	const __m256i nd = _mm256_set1_epi32((int32_t)b->nodata);
	const __m256 ndf = _mm256_castsi256_ps(nd);
	const __m256 nan = v_nan();
	size_t i = 0;
	switch (b->type) {
	case CANOPY_U8: LOAD_TYPE(uint8_t, RD_U8, CVT_I, EQ_I); break;
	case CANOPY_U16: LOAD_TYPE(uint16_t, RD_U16, CVT_I, EQ_I); break;
	case CANOPY_I16: LOAD_TYPE(int16_t, RD_I16, CVT_I, EQ_I); break;
	case CANOPY_U32: LOAD_TYPE(uint32_t, RD_I32, CVT_U32, EQ_I); break;
	case CANOPY_I32: LOAD_TYPE(int32_t, RD_I32, CVT_I, EQ_I); break;
	case CANOPY_F32: LOAD_TYPE(float, RD_F32, CVT_F, EQ_F); break;
	}
	s_load(d, b, lo, i, n);
}

/* v_store writes n values to dst, NaN where the mask is set: by kind,
 * x (OUT_COPY), finite(x) (OUT_FINITE) or finite(nd(x, y)) (OUT_ND); with
 * stream, the aligned middle goes out with streaming stores, which spare
 * the read-for-ownership of dst (the caller fences). */
#define STORE_LOOP(KIND, MASK, STREAM)                                                      \
	for (; i + 8 <= n; i += 8) {                                                          \
		PF(i);                                                                        \
		__m256 v = _mm256_loadu_ps(x + i);                                            \
		if (KIND == OUT_ND)                                                           \
			v = v_nd(v, _mm256_loadu_ps(y + i));                                  \
		if (KIND != OUT_COPY)                                                         \
			v = v_finite(v);                                                      \
		if (MASK) {                                                                   \
			__m256i m = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(mask + i))); \
			v = _mm256_blendv_ps(nan, v, _mm256_castsi256_ps(_mm256_cmpeq_epi32(m, zero))); \
		}                                                                             \
		if (STREAM)                                                                   \
			_mm256_stream_ps(dst + i, v);                                         \
		else                                                                          \
			_mm256_storeu_ps(dst + i, v);                                         \
	}
#define STORE_KIND(KIND)                                         \
	switch ((mask ? 2 : 0) | (stream ? 1 : 0)) {             \
	case 0: STORE_LOOP(KIND, 0, 0); break;                   \
	case 1: STORE_LOOP(KIND, 0, 1); break;                   \
	case 2: STORE_LOOP(KIND, 1, 0); break;                   \
	default: STORE_LOOP(KIND, 1, 1); break;                  \
	}

AVX2 static inline __m256 v_nd(__m256 a, __m256 b)
{
	return v_div(_mm256_sub_ps(a, b), _mm256_add_ps(a, b));
}

AVX2 static void v_store(float *dst, const float *x, const float *y,
			 const uint8_t *mask, size_t n, int stream, int kind,
			 prefetch *pf)
{
	size_t i = 0;
	if (stream)
		while (i < n && ((uintptr_t)(dst + i) & 31))
			i++;
	s_out(dst, x, y, mask, 0, i, kind);
	const __m256i zero = _mm256_setzero_si256();
	const __m256 nan = v_nan();
	switch (kind) {
	case OUT_COPY: STORE_KIND(OUT_COPY); break;
	case OUT_FINITE: STORE_KIND(OUT_FINITE); break;
	default: STORE_KIND(OUT_ND); break;
	}
	s_out(dst, x, y, mask, i, n, kind);
}

static const size_t type_size[] = {0, 1, 2, 2, 4, 4, 4};

/* plan_prefetch sets pf to the samples of pixels [lo, hi) of every band. */
static void plan_prefetch(prefetch *pf, const canopy_program *p, size_t lo, size_t hi)
{
	pf->cur = pf->end = NULL;
	pf->k = pf->n = 0;
	for (int32_t k = 0; k < p->nbands && pf->n < PF_BANDS && lo < hi; k++) {
		size_t z = type_size[p->bands[k].type];
		uintptr_t a = (uintptr_t)p->bands[k].data + lo * z;
		pf->lo[pf->n] = (const char *)(a & ~(uintptr_t)63);
		pf->hi[pf->n] = (const char *)(a + (hi - lo) * z);
		pf->n++;
	}
}

AVX2 static void v_block(const canopy_program *p, float *s, const float **reg,
			 size_t lo, size_t n, prefetch *pf)
{
	size_t nv = VEC(n);
	const uint8_t *mask = p->mask ? p->mask + lo : NULL;
	const __m256 sign = _mm256_castsi256_ps(_mm256_set1_epi32((int32_t)0x80000000u));
	for (int32_t c = 0; c < p->ncode; c++) {
		const canopy_instr *in = &p->code[c];
		float *d = OWN(in->dst);
		const float *x = reg[in->a], *y = reg[in->b];
		const __m256 k = _mm256_set1_ps(in->k);
		size_t i;
		switch (in->op) {
		case CANOPY_OP_LOAD: {
			const canopy_band *b = &p->bands[in->a];
			if (passthrough(b, n)) {
				reg[in->dst] = (const float *)b->data + lo;
				continue;
			}
			v_load(d, b, lo, n, pf);
			break;
		}
		case CANOPY_OP_CONST:
			for (i = 0; i < nv; i += 8)
				_mm256_storeu_ps(d + i, k);
			break;
		case CANOPY_OP_ADD: LOOP2(_mm256_add_ps(a, b)); break;
		case CANOPY_OP_SUB: LOOP2(_mm256_sub_ps(a, b)); break;
		case CANOPY_OP_MUL: LOOP2(_mm256_mul_ps(a, b)); break;
		case CANOPY_OP_DIV: LOOP2(v_div(a, b)); break;
		case CANOPY_OP_NEG: LOOP1(_mm256_xor_ps(a, sign)); break;
		case CANOPY_OP_ABS: LOOP1(v_abs(a)); break;
		case CANOPY_OP_SQRT: LOOP1(v_sqrt(a)); break;
		case CANOPY_OP_MIN: LOOP2(v_min(a, b)); break;
		case CANOPY_OP_MAX: LOOP2(v_max(a, b)); break;
		case CANOPY_OP_ADDK: LOOP1(_mm256_add_ps(a, k)); break;
		case CANOPY_OP_SUBK: LOOP1(_mm256_sub_ps(a, k)); break;
		case CANOPY_OP_KSUB: LOOP1(_mm256_sub_ps(k, a)); break;
		case CANOPY_OP_MULK: LOOP1(_mm256_mul_ps(a, k)); break;
		case CANOPY_OP_DIVK: LOOP1(_mm256_div_ps(a, k)); break;
		case CANOPY_OP_KDIV: LOOP1(v_div(k, a)); break;
		case CANOPY_OP_MINK: LOOP1(v_min(a, k)); break;
		case CANOPY_OP_MAXK: LOOP1(v_max(a, k)); break;
		case CANOPY_OP_ND: LOOP2(v_nd(a, b)); break;
		case CANOPY_OP_ND_STORE:
			for (int32_t o = 0; o < p->nout; o++)
				if (p->outat[o] == c)
					v_store(p->out[o] + lo, x, y, mask, n, p->stream, OUT_ND, pf);
			continue;
		case CANOPY_OP_FINITE:
			if (in->store) {
				for (int32_t o = 0; o < p->nout; o++)
					if (p->outat[o] == c)
						v_store(p->out[o] + lo, x, NULL, mask, n, p->stream, OUT_FINITE, pf);
				continue;
			}
			LOOP1(v_finite(a));
			break;
		}
		reg[in->dst] = d;
	}
	for (int32_t o = 0; o < p->nout; o++)
		if (p->outat[o] < 0)
			v_store(p->out[o] + lo, reg[p->outregs[o]], NULL, mask, n, p->stream, OUT_COPY, pf);
}

AVX2 static void run_avx2(const canopy_program *p, float *s, const float **reg,
			  size_t lo, size_t hi)
{
	/* A program of one pass over the block (NDVI: one nd-store reading
	 * the bands in place) streams like a fused kernel, and the hardware
	 * prefetcher serves it best alone; with more passes, the arithmetic
	 * between them leaves memory idle unless the next block is fetched
	 * meanwhile. */
	int passes = 0;
	for (int32_t c = 0; c < p->ncode; c++)
		if (p->code[c].op != CANOPY_OP_LOAD || !passthrough(&p->bands[p->code[c].a], 8))
			passes++;
	prefetch pf = { 0 };
	for (; lo < hi; lo += CANOPY_BLOCK) {
		size_t n = hi - lo < CANOPY_BLOCK ? hi - lo : CANOPY_BLOCK;
		size_t next = lo + n, nn = hi - next < CANOPY_BLOCK ? hi - next : CANOPY_BLOCK;
		if (passes > 1)
			plan_prefetch(&pf, p, next, next + nn);
		v_block(p, s, reg, lo, n, &pf);
	}
	if (p->stream)
		_mm_sfence();
}
#endif

typedef void (*run_fn)(const canopy_program *, float *, const float **, size_t, size_t);

static run_fn pick(const char **name)
{
#ifdef CANOPY_X86
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx2")) {
		*name = "avx2";
		return run_avx2;
	}
#endif
	*name = "scalar";
	return run_scalar;
}

/* The interpreter for this CPU, chosen once at load time (before any
 * thread runs a program). */
static run_fn chosen;
static const char *chosen_name;

__attribute__((constructor)) static void choose(void)
{
	chosen = pick(&chosen_name);
}

const char *canopy_program_isa(void)
{
	return chosen_name;
}

void canopy_program_use_scalar(int scalar)
{
	if (scalar) {
		chosen = run_scalar;
		chosen_name = "scalar";
	} else {
		chosen = pick(&chosen_name);
	}
}

/* valid checks every register, band and op once per call, so that a
 * malformed program is refused, never run out of bounds. */
static int valid(const canopy_program *p)
{
	if (p->nregs < 1 || p->nregs > CANOPY_MAX_REGS || p->ncode < 0 || p->nout < 0 || p->nbands < 0)
		return 0;
	for (int32_t c = 0; c < p->ncode; c++) {
		const canopy_instr *in = &p->code[c];
		if (in->op >= CANOPY_NUM_OPS_ALL || in->dst >= p->nregs)
			return 0;
		if (in->store != (in->op == CANOPY_OP_ND_STORE) && in->op != CANOPY_OP_FINITE)
			return 0;
		if (in->op == CANOPY_OP_LOAD) {
			if (in->a >= p->nbands)
				return 0;
			continue;
		}
		if (in->a >= p->nregs || in->b >= p->nregs)
			return 0;
	}
	for (int32_t b = 0; b < p->nbands; b++)
		if (p->bands[b].type < CANOPY_U8 || p->bands[b].type > CANOPY_F32)
			return 0;
	for (int32_t o = 0; o < p->nout; o++) {
		if (p->outregs[o] < 0 || p->outregs[o] >= p->nregs)
			return 0;
		int32_t at = p->outat[o];
		if (at >= p->ncode || (at >= 0 && !p->code[at].store))
			return 0;
	}
	return 1;
}

int canopy_program_run(const canopy_program *p, float *scratch, size_t lo,
		       size_t hi)
{
	if (!valid(p))
		return -1;
	/* Every register starts as its own scratch (zeroed by the caller: the
	 * padding lanes of a short block are then harmless numbers). */
	const float *reg[CANOPY_MAX_REGS];
	for (int32_t r = 0; r < p->nregs; r++)
		reg[r] = scratch + (size_t)r * CANOPY_BLOCK;
	if (lo < hi)
		chosen(p, scratch, reg, lo, hi);
	return 0;
}
