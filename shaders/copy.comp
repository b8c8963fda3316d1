#version 430 core
// A device-to-device copy in a compute shader: the gl backend's bandwidth
// ceiling. It walks memory as the job shaders do (VEC4S vec4s per
// invocation, consecutive invocations on consecutive vec4s), with one read
// stream and one write stream, so that a kernel's bandwidth reads as a
// share of what a shader can move on the same device. (glCopyBufferSubData
// may run on a copy engine far slower than the shader cores:
// docs/BENCHMARKS.md.)

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

layout(std430, binding = 0) readonly restrict buffer Src { vec4 src[]; };
layout(std430, binding = 1) writeonly restrict buffer Dst { vec4 dst[]; };

// count: vec4s in this dispatch.
layout(location = 0) uniform uint count;

void main() {
	uint group = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
	for (uint it = 0u; it < ITERS; it++) {
		uint first = (group * ITERS + it) * gl_WorkGroupSize.x * VEC4S + gl_LocalInvocationID.x;
		vec4 v[VEC4S];
		for (uint k = 0u; k < VEC4S; k++) {
			uint i = first + k * gl_WorkGroupSize.x;
			if (i < count) {
				v[k] = src[i];
			}
		}
		for (uint k = 0u; k < VEC4S; k++) {
			uint i = first + k * gl_WorkGroupSize.x;
			if (i < count) {
				dst[i] = v[k];
			}
		}
	}
}
