// ndvi.cu: Canopy's NDVI kernels for the cuda backend (compute/cudaback).
//
// Every kernel follows compute.Pixel exactly: NaN where either input equals
// its band's nodata value or where NIR + Red == 0, else (NIR - Red) /
// (NIR + Red) in float32, each operation rounded to nearest (the _rn
// intrinsics: no fast math, no contraction, denormals kept), so the result
// is bit for bit the Go kernel's.
//
// The kernels are memory-bound (12 bytes per float32 pixel, 8 per uint16
// pixel): each thread moves 16-byte vectors with streaming (evict-first)
// loads and stores, and the pixels past the last whole vector are done one
// by one by the first threads of block 0. Pointers must be 16-byte aligned:
// cuMemAlloc gives 256, and cudaback cuts images into chunks whose offsets
// are multiples of 1024 pixels.
//
// Build with shaders/build-cuda.sh (go generate ./shaders), which writes
// ndvi.fatbin and records the hashes in ndvi.fatbin.sha256. The parameter
// lists and NDVI_BLOCK are an ABI shared with compute/cudaback (launch.go).

#define NDVI_HAS_RED 1 // flags bit: red has a nodata value
#define NDVI_HAS_NIR 2 // flags bit: nir has a nodata value
#define NDVI_BLOCK 256 // threads per block; the launch must use exactly this
#define NDVI_UNROLL 2  // float4 vectors per thread in ndvi_f32

__device__ __forceinline__ float ndvi_pixel(float r, float n, float ndr, float ndn, int flags)
{
	const float s = __fadd_rn(n, r);
	const float q = __fdiv_rn(__fsub_rn(n, r), s);
	const bool nodata = ((flags & NDVI_HAS_RED) && r == ndr) || ((flags & NDVI_HAS_NIR) && n == ndn);
	return (nodata || s == 0.0f) ? __int_as_float(0x7fc00000) : q;
}

__device__ __forceinline__ float4 ndvi4(float4 r, float4 n, float ndr, float ndn, int flags)
{
	return make_float4(ndvi_pixel(r.x, n.x, ndr, ndn, flags), ndvi_pixel(r.y, n.y, ndr, ndn, flags),
	                   ndvi_pixel(r.z, n.z, ndr, ndn, flags), ndvi_pixel(r.w, n.w, ndr, ndn, flags));
}

// ndvi_f32 computes n pixels of float32 red and nir into out. Grid:
// max(1, ceil((n/4) / (NDVI_BLOCK*NDVI_UNROLL))) blocks of NDVI_BLOCK.
extern "C" __global__ void __launch_bounds__(NDVI_BLOCK)
ndvi_f32(const float *__restrict__ red, const float *__restrict__ nir, float *__restrict__ out,
         unsigned long long n, float ndr, float ndn, int flags)
{
	const unsigned long long nv = n >> 2;
	const float4 *__restrict__ r4 = reinterpret_cast<const float4 *>(red);
	const float4 *__restrict__ n4 = reinterpret_cast<const float4 *>(nir);
	float4 *__restrict__ o4 = reinterpret_cast<float4 *>(out);
	const unsigned long long base = (unsigned long long)blockIdx.x * (NDVI_BLOCK * NDVI_UNROLL) + threadIdx.x;

	float4 a[NDVI_UNROLL], b[NDVI_UNROLL];
#pragma unroll
	for (int k = 0; k < NDVI_UNROLL; k++) {
		const unsigned long long i = base + (unsigned long long)k * NDVI_BLOCK;
		if (i < nv) {
			a[k] = __ldcs(r4 + i);
			b[k] = __ldcs(n4 + i);
		}
	}
#pragma unroll
	for (int k = 0; k < NDVI_UNROLL; k++) {
		const unsigned long long i = base + (unsigned long long)k * NDVI_BLOCK;
		if (i < nv)
			__stcs(o4 + i, ndvi4(a[k], b[k], ndr, ndn, flags));
	}
	if (blockIdx.x == 0 && threadIdx.x < (n & 3)) {
		const unsigned long long i = (nv << 2) + threadIdx.x;
		out[i] = ndvi_pixel(red[i], nir[i], ndr, ndn, flags);
	}
}

// ndvi_u16 computes n pixels of uint16 red and nir (sensor counts, as
// Sentinel-2 and most drone cameras deliver them) into float32 out,
// converting on the GPU so that the upload is half as big. The nodata
// values are compared after the exact conversion to float32. Grid:
// max(1, ceil((n/8) / NDVI_BLOCK)) blocks of NDVI_BLOCK.
extern "C" __global__ void __launch_bounds__(NDVI_BLOCK)
ndvi_u16(const unsigned short *__restrict__ red, const unsigned short *__restrict__ nir,
         float *__restrict__ out, unsigned long long n, float ndr, float ndn, int flags)
{
	const unsigned long long nv = n >> 3;
	const uint4 *__restrict__ r8 = reinterpret_cast<const uint4 *>(red);
	const uint4 *__restrict__ n8 = reinterpret_cast<const uint4 *>(nir);
	float4 *__restrict__ o4 = reinterpret_cast<float4 *>(out);
	const unsigned long long i = (unsigned long long)blockIdx.x * NDVI_BLOCK + threadIdx.x;

	if (i < nv) {
		const uint4 a = __ldcs(r8 + i), b = __ldcs(n8 + i);
		const unsigned int ra[4] = {a.x, a.y, a.z, a.w};
		const unsigned int nb[4] = {b.x, b.y, b.z, b.w};
		float v[8];
#pragma unroll
		for (int k = 0; k < 4; k++) {
			// Little-endian: pixel 2k is the low half of word k.
			v[2 * k] = ndvi_pixel(__uint2float_rn(ra[k] & 0xffffu), __uint2float_rn(nb[k] & 0xffffu), ndr, ndn, flags);
			v[2 * k + 1] = ndvi_pixel(__uint2float_rn(ra[k] >> 16), __uint2float_rn(nb[k] >> 16), ndr, ndn, flags);
		}
		__stcs(o4 + 2 * i, make_float4(v[0], v[1], v[2], v[3]));
		__stcs(o4 + 2 * i + 1, make_float4(v[4], v[5], v[6], v[7]));
	}
	if (blockIdx.x == 0 && threadIdx.x < (n & 7)) {
		const unsigned long long j = (nv << 3) + threadIdx.x;
		out[j] = ndvi_pixel(__uint2float_rn(red[j]), __uint2float_rn(nir[j]), ndr, ndn, flags);
	}
}
