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

/* s_store writes src[from, n) to dst, NaN where the mask is set. */
static void s_store(float *dst, const float *src, const uint8_t *mask,
		    size_t from, size_t n)
{
	for (size_t i = from; i < n; i++)
		dst[i] = mask && mask[i] ? qnan() : src[i];
}

static void s_block(const canopy_program *p, float *s, size_t lo, size_t n)
{
	size_t nv = VEC(n);
	for (int32_t c = 0; c < p->ncode; c++) {
		const canopy_instr *in = &p->code[c];
		float *d = s + (size_t)in->dst * CANOPY_BLOCK;
		const float *x = s + (size_t)in->a * CANOPY_BLOCK;
		const float *y = s + (size_t)in->b * CANOPY_BLOCK;
		const float k = in->k;
		size_t i;
		switch (in->op) {
		case CANOPY_OP_LOAD:
			s_load(d, &p->bands[in->a], lo, 0, n);
			break;
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
		case CANOPY_OP_FINITE:
			for (i = 0; i < nv; i++) d[i] = s_finite(x[i]);
			break;
		}
	}
	for (int32_t o = 0; o < p->nout; o++)
		s_store(p->out[o] + lo, s + (size_t)p->outregs[o] * CANOPY_BLOCK,
			p->mask ? p->mask + lo : NULL, 0, n);
}

static void run_scalar(const canopy_program *p, float *s, size_t lo, size_t hi)
{
	for (; lo < hi; lo += CANOPY_BLOCK) {
		size_t n = hi - lo < CANOPY_BLOCK ? hi - lo : CANOPY_BLOCK;
		s_block(p, s, lo, n);
	}
}

#ifdef CANOPY_X86
/* ---- AVX2: the same ops eight lanes at a time. */

AVX2 static inline __m256 v_nan(void)
{
	return _mm256_castsi256_ps(_mm256_set1_epi32(0x7fc00000));
}

/* v_finish applies the radiometry and the nodata test to converted lanes. */
AVX2 static inline __m256 v_finish(__m256 v, __m256i eq, const canopy_band *b,
				   __m256 add, __m256 scale, __m256 offset)
{
	if (b->flags & CANOPY_RADIOMETRY) {
		v = _mm256_add_ps(v, add);
		v = _mm256_mul_ps(v, scale);
		v = _mm256_add_ps(v, offset);
	}
	if (b->flags & CANOPY_NODATA)
		v = _mm256_blendv_ps(v, v_nan(), _mm256_castsi256_ps(eq));
	return v;
}

/* Go's float32(uint32): the high and low 16 bits convert exactly, the
 * product by 65536 is exact, and the sum rounds once to nearest even. */
AVX2 static inline __m256 v_u32_to_f32(__m256i x)
{
	__m256 hi = _mm256_cvtepi32_ps(_mm256_srli_epi32(x, 16));
	__m256 lo = _mm256_cvtepi32_ps(_mm256_and_si256(x, _mm256_set1_epi32(0xffff)));
	return _mm256_add_ps(_mm256_mul_ps(hi, _mm256_set1_ps(65536.0f)), lo);
}

AVX2 static void v_load(float *d, const canopy_band *b, size_t lo, size_t n)
{
	const __m256 add = _mm256_set1_ps(b->add), scale = _mm256_set1_ps(b->scale);
	const __m256 offset = _mm256_set1_ps(b->offset);
	const __m256i nd = _mm256_set1_epi32((int32_t)b->nodata);
	size_t i = 0;
	switch (b->type) {
	case CANOPY_U8: {
		const uint8_t *s = (const uint8_t *)b->data + lo;
		for (; i + 8 <= n; i += 8) {
			__m256i x = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(s + i)));
			_mm256_storeu_ps(d + i, v_finish(_mm256_cvtepi32_ps(x), _mm256_cmpeq_epi32(x, nd), b, add, scale, offset));
		}
		break;
	}
	case CANOPY_U16: {
		const uint16_t *s = (const uint16_t *)b->data + lo;
		for (; i + 8 <= n; i += 8) {
			__m256i x = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(s + i)));
			_mm256_storeu_ps(d + i, v_finish(_mm256_cvtepi32_ps(x), _mm256_cmpeq_epi32(x, nd), b, add, scale, offset));
		}
		break;
	}
	case CANOPY_I16: {
		const int16_t *s = (const int16_t *)b->data + lo;
		for (; i + 8 <= n; i += 8) {
			__m256i x = _mm256_cvtepi16_epi32(_mm_loadu_si128((const __m128i *)(s + i)));
			_mm256_storeu_ps(d + i, v_finish(_mm256_cvtepi32_ps(x), _mm256_cmpeq_epi32(x, nd), b, add, scale, offset));
		}
		break;
	}
	case CANOPY_U32: {
		const uint32_t *s = (const uint32_t *)b->data + lo;
		for (; i + 8 <= n; i += 8) {
			__m256i x = _mm256_loadu_si256((const __m256i *)(s + i));
			_mm256_storeu_ps(d + i, v_finish(v_u32_to_f32(x), _mm256_cmpeq_epi32(x, nd), b, add, scale, offset));
		}
		break;
	}
	case CANOPY_I32: {
		const int32_t *s = (const int32_t *)b->data + lo;
		for (; i + 8 <= n; i += 8) {
			__m256i x = _mm256_loadu_si256((const __m256i *)(s + i));
			_mm256_storeu_ps(d + i, v_finish(_mm256_cvtepi32_ps(x), _mm256_cmpeq_epi32(x, nd), b, add, scale, offset));
		}
		break;
	}
	case CANOPY_F32: {
		const float *s = (const float *)b->data + lo;
		const __m256 ndf = _mm256_castsi256_ps(nd);
		for (; i + 8 <= n; i += 8) {
			__m256 x = _mm256_loadu_ps(s + i);
			__m256i eq = _mm256_castps_si256(_mm256_cmp_ps(x, ndf, _CMP_EQ_OQ));
			_mm256_storeu_ps(d + i, v_finish(x, eq, b, add, scale, offset));
		}
		break;
	}
	}
	s_load(d, b, lo, i, n);
}

/* v_store writes src[0, n) to dst, NaN where the mask is set; with stream,
 * the aligned middle goes out with streaming stores, which spare the
 * read-for-ownership of dst (the caller fences). */
AVX2 static void v_store(float *dst, const float *src, const uint8_t *mask,
			 size_t n, int stream)
{
	size_t i = 0;
	if (stream)
		while (i < n && ((uintptr_t)(dst + i) & 31))
			i++;
	s_store(dst, src, mask, 0, i);
	const __m256i zero = _mm256_setzero_si256();
	for (; i + 8 <= n; i += 8) {
		__m256 v = _mm256_loadu_ps(src + i);
		if (mask) {
			__m256i m = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(mask + i)));
			v = _mm256_blendv_ps(v_nan(), v, _mm256_castsi256_ps(_mm256_cmpeq_epi32(m, zero)));
		}
		if (stream)
			_mm256_stream_ps(dst + i, v);
		else
			_mm256_storeu_ps(dst + i, v);
	}
	s_store(dst, src, mask, i, n);
}

#define LOOP2(expr)                                              \
	for (i = 0; i < nv; i += 8) {                            \
		__m256 a = _mm256_loadu_ps(x + i);               \
		__m256 b = _mm256_loadu_ps(y + i);               \
		_mm256_storeu_ps(d + i, (expr));                 \
	}
#define LOOP1(expr)                                              \
	for (i = 0; i < nv; i += 8) {                            \
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

AVX2 static void v_block(const canopy_program *p, float *s, size_t lo, size_t n)
{
	size_t nv = VEC(n);
	const __m256 sign = _mm256_castsi256_ps(_mm256_set1_epi32((int32_t)0x80000000u));
	for (int32_t c = 0; c < p->ncode; c++) {
		const canopy_instr *in = &p->code[c];
		float *d = s + (size_t)in->dst * CANOPY_BLOCK;
		const float *x = s + (size_t)in->a * CANOPY_BLOCK;
		const float *y = s + (size_t)in->b * CANOPY_BLOCK;
		const __m256 k = _mm256_set1_ps(in->k);
		size_t i;
		switch (in->op) {
		case CANOPY_OP_LOAD:
			v_load(d, &p->bands[in->a], lo, n);
			break;
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
		case CANOPY_OP_FINITE: LOOP1(v_finite(a)); break;
		}
	}
	for (int32_t o = 0; o < p->nout; o++)
		v_store(p->out[o] + lo, s + (size_t)p->outregs[o] * CANOPY_BLOCK,
			p->mask ? p->mask + lo : NULL, n, p->stream);
}

AVX2 static void run_avx2(const canopy_program *p, float *s, size_t lo, size_t hi)
{
	for (; lo < hi; lo += CANOPY_BLOCK) {
		size_t n = hi - lo < CANOPY_BLOCK ? hi - lo : CANOPY_BLOCK;
		v_block(p, s, lo, n);
	}
	if (p->stream)
		_mm_sfence();
}
#endif

typedef void (*run_fn)(const canopy_program *, float *, size_t, size_t);

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
	if (p->nregs < 1 || p->ncode < 0 || p->nout < 0 || p->nbands < 0)
		return 0;
	for (int32_t c = 0; c < p->ncode; c++) {
		const canopy_instr *in = &p->code[c];
		if (in->op >= CANOPY_NUM_OPS || in->dst >= p->nregs)
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
	for (int32_t o = 0; o < p->nout; o++)
		if (p->outregs[o] < 0 || p->outregs[o] >= p->nregs)
			return 0;
	return 1;
}

int canopy_program_run(const canopy_program *p, float *scratch, size_t lo,
		       size_t hi)
{
	if (!valid(p))
		return -1;
	if (lo < hi)
		chosen(p, scratch, lo, hi);
	return 0;
}
