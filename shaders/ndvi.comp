#version 430 core
// NDVI = (NIR - Red) / (NIR + Red), the OpenGL compute shader of Canopy's gl
// backend. It follows compute.Pixel, whose float64 twin compute.Reference64
// is the truth:
//   - NaN where either input equals its band's nodata value, where either
//     input is NaN or infinite (the reference gives NaN there too), and
//     where NIR + Red == 0. GLSL does not promise NaN from 0/0 or Inf/Inf,
//     so NaN is written explicitly, with its bits.
//   - No reliance on IEEE corner cases a GPU may skip: denormals may be
//     flushed to zero and x/y is only good to 2.5 ulp for |y| in
//     [2^-126, 2^126]. NDVI does not change when both inputs are scaled by
//     the same power of two, so tiny and huge pairs are scaled into the safe
//     range first (exactly). The quotient comes from a fast reciprocal and
//     is then corrected with the exact remainder (one fma step), which
//     costs far less than an IEEE division and lands within an ulp of it.
//
// Each invocation computes VEC4S groups of four pixels (one vec4 from each
// band per group), loading all of them before computing any, so that more
// memory requests are in flight. Consecutive invocations take consecutive
// vec4s. The buffers are padded to a multiple of four floats; lanes past
// the image end compute garbage into the padding, which is never read back.
// The gl backend defines VEC4S when it compiles the shader.

#ifndef VEC4S
#define VEC4S 1u
#endif
// ITERS: how many times a work group repeats that, on the next
// gl_WorkGroupSize.x * VEC4S vec4s, so that one group walks a contiguous
// span of ITERS times as many.
#ifndef ITERS
#define ITERS 1u
#endif
// LOCAL: invocations per work group.
#ifndef LOCAL
#define LOCAL 256
#endif

layout(local_size_x = LOCAL) in;

layout(std430, binding = 0) readonly restrict buffer RedBand { vec4 red[]; };
layout(std430, binding = 1) readonly restrict buffer NirBand { vec4 nir[]; };
layout(std430, binding = 2) writeonly restrict buffer NDVI { vec4 ndvi[]; };

// count: vec4s in this dispatch (buffers are bound at the chunk's offset).
layout(location = 0) uniform uint count;
// nodataBits: the nodata values' bits (red, nir); hasNodata: 1 where set.
layout(location = 1) uniform uvec2 nodataBits;
layout(location = 2) uniform uvec2 hasNodata;

const uint SIGN = 0x80000000u;
const uint EXP = 0x7f800000u;
const uint MANT = 0x007fffffu;
const float NAN = uintBitsToFloat(0x7fc00000u);
const float TWO_P100 = uintBitsToFloat(0x71800000u);  // 2^100
const float TWO_M100 = uintBitsToFloat(0x0d800000u);  // 2^-100
const float TWO_M49 = uintBitsToFloat(0x27000000u);   // 2^-49

// sameValue is IEEE equality of two non-NaN floats on their bits, so that
// a flushed denormal never equals zero by accident and -0 equals +0.
bool sameValue(uint a, uint b) {
	return a == b || ((a | b) & ~SIGN) == 0u;
}

// up returns x * 2^100 exactly, also for denormal x, which it rebuilds from
// its mantissa bits (m * 2^-149 * 2^100 = m * 2^-49, m < 2^23).
float up(float x) {
	uint b = floatBitsToUint(x);
	if ((b & EXP) == 0u) {
		float v = float(b & MANT) * TWO_M49;
		return (b & SIGN) != 0u ? -v : v;
	}
	return x * TWO_P100;
}

float pixel(float r, float n) {
	uint rb = floatBitsToUint(r), nb = floatBitsToUint(n);
	if ((hasNodata.x != 0u && sameValue(rb, nodataBits.x)) ||
	    (hasNodata.y != 0u && sameValue(nb, nodataBits.y))) {
		return NAN;
	}
	// NaN or infinite input: the reference is NaN (Inf/Inf, NaN, Inf-Inf).
	if ((rb & EXP) == EXP || (nb & EXP) == EXP) {
		return NAN;
	}
	uint mb = max(rb & ~SIGN, nb & ~SIGN);  // bits of max(|r|, |n|)
	if (mb >= 0x71800000u) {                // >= 2^100
		r *= TWO_M100;
		n *= TWO_M100;
	} else if (mb < 0x0d800000u) {          // < 2^-100 (and denormals)
		r = up(r);
		n = up(n);
	}
	precise float s = n + r;
	if (s == 0.0) {
		return NAN;
	}
	precise float d = n - r;
	float inv = 1.0 / s;              // fast; |s| is in [2^-123, 2^101]
	float q = d * inv;                // within a few ulp
	precise float e = fma(-q, s, d);  // the exact remainder d - q*s
	precise float res = fma(e, inv, q);
	return res;
}

vec4 pixel4(vec4 r, vec4 n) {
	return vec4(pixel(r.x, n.x), pixel(r.y, n.y), pixel(r.z, n.z), pixel(r.w, n.w));
}

void main() {
	uint group = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
	for (uint it = 0u; it < ITERS; it++) {
		uint first = (group * ITERS + it) * gl_WorkGroupSize.x * VEC4S + gl_LocalInvocationID.x;
		vec4 r[VEC4S], n[VEC4S];
		for (uint k = 0u; k < VEC4S; k++) {
			uint i = first + k * gl_WorkGroupSize.x;
			if (i < count) {
				r[k] = red[i];
				n[k] = nir[i];
			}
		}
		for (uint k = 0u; k < VEC4S; k++) {
			uint i = first + k * gl_WorkGroupSize.x;
			if (i < count) {
				ndvi[i] = pixel4(r[k], n[k]);
			}
		}
	}
}
