#include "ndvi.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#define CANOPY_X86 1
#include <immintrin.h>
#endif

/* One pixel, exactly compute.Pixel. */
static inline float pixel(float r, float v, canopy_nodata nd)
{
	if ((nd.has_red && r == nd.red) || (nd.has_nir && v == nd.nir))
		return NAN;
	float s = v + r;
	if (s == 0.0f)
		return NAN;
	return (v - r) / s;
}

__attribute__((unused))
static void span_scalar(const float *red, const float *nir, float *out,
			size_t n, canopy_nodata nd)
{
	for (size_t i = 0; i < n; i++)
		out[i] = pixel(red[i], nir[i], nd);
}

#ifdef CANOPY_X86
/* Streaming (non-temporal) stores skip the read-for-ownership of out, so
 * the kernel moves 12 bytes per pixel, not 16. They need aligned addresses:
 * a scalar head aligns out, a scalar tail finishes. */
__attribute__((target("avx2")))
static void span_avx2(const float *red, const float *nir, float *out,
		      size_t n, canopy_nodata nd)
{
	size_t i = 0;
	while (i < n && ((uintptr_t)(out + i) & 31))
		out[i] = pixel(red[i], nir[i], nd), i++;
	const __m256 zero = _mm256_setzero_ps();
	const __m256 qnan = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fc00000));
	const __m256 rnd = _mm256_set1_ps(nd.red), nnd = _mm256_set1_ps(nd.nir);
	const __m256 hr = _mm256_castsi256_ps(_mm256_set1_epi32(nd.has_red ? -1 : 0));
	const __m256 hn = _mm256_castsi256_ps(_mm256_set1_epi32(nd.has_nir ? -1 : 0));
	for (; i + 16 <= n; i += 16) {
		for (int k = 0; k < 16; k += 8) {
			__m256 r = _mm256_loadu_ps(red + i + k);
			__m256 v = _mm256_loadu_ps(nir + i + k);
			__m256 s = _mm256_add_ps(v, r);
			__m256 q = _mm256_div_ps(_mm256_sub_ps(v, r), s);
			__m256 bad = _mm256_cmp_ps(s, zero, _CMP_EQ_OQ);
			bad = _mm256_or_ps(bad, _mm256_and_ps(hr, _mm256_cmp_ps(r, rnd, _CMP_EQ_OQ)));
			bad = _mm256_or_ps(bad, _mm256_and_ps(hn, _mm256_cmp_ps(v, nnd, _CMP_EQ_OQ)));
			_mm256_stream_ps(out + i + k, _mm256_blendv_ps(q, qnan, bad));
		}
	}
	_mm_sfence();
	for (; i < n; i++)
		out[i] = pixel(red[i], nir[i], nd);
}

static void span_sse2(const float *red, const float *nir, float *out,
		      size_t n, canopy_nodata nd)
{
	size_t i = 0;
	while (i < n && ((uintptr_t)(out + i) & 15))
		out[i] = pixel(red[i], nir[i], nd), i++;
	const __m128 zero = _mm_setzero_ps();
	const __m128 qnan = _mm_castsi128_ps(_mm_set1_epi32(0x7fc00000));
	const __m128 rnd = _mm_set1_ps(nd.red), nnd = _mm_set1_ps(nd.nir);
	const __m128 hr = _mm_castsi128_ps(_mm_set1_epi32(nd.has_red ? -1 : 0));
	const __m128 hn = _mm_castsi128_ps(_mm_set1_epi32(nd.has_nir ? -1 : 0));
	for (; i + 4 <= n; i += 4) {
		__m128 r = _mm_loadu_ps(red + i);
		__m128 v = _mm_loadu_ps(nir + i);
		__m128 s = _mm_add_ps(v, r);
		__m128 q = _mm_div_ps(_mm_sub_ps(v, r), s);
		__m128 bad = _mm_cmpeq_ps(s, zero);
		bad = _mm_or_ps(bad, _mm_and_ps(hr, _mm_cmpeq_ps(r, rnd)));
		bad = _mm_or_ps(bad, _mm_and_ps(hn, _mm_cmpeq_ps(v, nnd)));
		_mm_stream_ps(out + i, _mm_or_ps(_mm_and_ps(bad, qnan), _mm_andnot_ps(bad, q)));
	}
	_mm_sfence();
	for (; i < n; i++)
		out[i] = pixel(red[i], nir[i], nd);
}
#endif

typedef void (*span_fn)(const float *, const float *, float *, size_t, canopy_nodata);

static span_fn pick(const char **name)
{
#ifdef CANOPY_X86
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx2")) {
		*name = "avx2";
		return span_avx2;
	}
	*name = "sse2";
	return span_sse2;
#else
	*name = "scalar";
	return span_scalar;
#endif
}

const char *canopy_ndvi_isa(void)
{
	const char *name;
	pick(&name);
	return name;
}

/* The kernel for this CPU, chosen once at load time (before any thread
 * calls canopy_ndvi, so no two threads race to set it). */
static span_fn chosen;

__attribute__((constructor)) static void choose(void)
{
	const char *name;
	chosen = pick(&name);
}

void canopy_ndvi(const float *red, const float *nir, float *out, size_t n,
		 canopy_nodata nd)
{
	chosen(red, nir, out, n, nd);
}

#ifdef CANOPY_X86
/* The copy the kernel is measured against moves its bytes the same way:
 * AVX2 loads and streaming stores, so the ceiling is what memory can do,
 * not what one memcpy implementation happens to do on this CPU. */
__attribute__((target("avx2")))
static void copy_avx2(float *dst, const float *src, size_t n)
{
	size_t i = 0;
	while (i < n && ((uintptr_t)(dst + i) & 31))
		dst[i] = src[i], i++;
	for (; i + 32 <= n; i += 32) {
		__m256 a = _mm256_loadu_ps(src + i), b = _mm256_loadu_ps(src + i + 8);
		__m256 c = _mm256_loadu_ps(src + i + 16), d = _mm256_loadu_ps(src + i + 24);
		_mm256_stream_ps(dst + i, a);
		_mm256_stream_ps(dst + i + 8, b);
		_mm256_stream_ps(dst + i + 16, c);
		_mm256_stream_ps(dst + i + 24, d);
	}
	_mm_sfence();
	for (; i < n; i++)
		dst[i] = src[i];
}
#endif

void canopy_copy(float *dst, const float *src, size_t n)
{
#ifdef CANOPY_X86
	if (__builtin_cpu_supports("avx2")) {
		copy_avx2(dst, src, n);
		return;
	}
#endif
	memcpy(dst, src, n * sizeof(float));
}
