#include "copy.h"

#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#define CANOPY_X86 1
#include <immintrin.h>
#endif

#ifdef CANOPY_X86
/* The copy the kernels are measured against moves its bytes the way they
 * write with streaming stores: AVX2 loads and streaming stores, so the ceiling is what memory can do,
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
