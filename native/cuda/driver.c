/*
 * driver.c: opens the CUDA driver library at run time and fills the symbol
 * table of driver.h. The _v2 names are the ones cuda.h maps the plain names
 * to since CUDA 3.2/11 (64-bit device pointers and sizes); a driver that
 * lacks one is too old for Canopy.
 */
#include "driver.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#ifdef _WIN32
#include <windows.h>
static void *cc_dlopen(const char *name) { return (void *)LoadLibraryA(name); }
static void *cc_dlsym(void *lib, const char *name) { return (void *)GetProcAddress((HMODULE)lib, name); }
static void cc_dlclose(void *lib) { FreeLibrary((HMODULE)lib); }
static void cc_dlerror(const char *name, char *msg, size_t len)
{
	snprintf(msg, len, "%s: LoadLibrary failed with Windows error %lu", name, (unsigned long)GetLastError());
}
#else
#include <dlfcn.h>
static void *cc_dlopen(const char *name) { return dlopen(name, RTLD_NOW | RTLD_LOCAL); }
static void *cc_dlsym(void *lib, const char *name) { return dlsym(lib, name); }
static void cc_dlclose(void *lib) { dlclose(lib); }
static void cc_dlerror(const char *name, char *msg, size_t len)
{
	const char *e = dlerror();
	snprintf(msg, len, "%s", e ? e : name);
}
#endif

#define SYM(field, name) { name, offsetof(cc_table, field) }

static const struct {
	const char *name;
	size_t offset;
} cc_symbols[] = {
	SYM(cuInit, "cuInit"),
	SYM(cuDriverGetVersion, "cuDriverGetVersion"),
	SYM(cuGetErrorName, "cuGetErrorName"),
	SYM(cuGetErrorString, "cuGetErrorString"),
	SYM(cuDeviceGetCount, "cuDeviceGetCount"),
	SYM(cuDeviceGet, "cuDeviceGet"),
	SYM(cuDeviceGetName, "cuDeviceGetName"),
	SYM(cuDeviceGetAttribute, "cuDeviceGetAttribute"),
	SYM(cuDeviceTotalMem, "cuDeviceTotalMem_v2"),
	SYM(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"),
	SYM(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2"),
	SYM(cuCtxSetCurrent, "cuCtxSetCurrent"),
	SYM(cuCtxSynchronize, "cuCtxSynchronize"),
	SYM(cuModuleLoadData, "cuModuleLoadData"),
	SYM(cuModuleLoadDataEx, "cuModuleLoadDataEx"),
	SYM(cuModuleUnload, "cuModuleUnload"),
	SYM(cuModuleGetFunction, "cuModuleGetFunction"),
	SYM(cuMemGetInfo, "cuMemGetInfo_v2"),
	SYM(cuMemAlloc, "cuMemAlloc_v2"),
	SYM(cuMemFree, "cuMemFree_v2"),
	SYM(cuMemHostAlloc, "cuMemHostAlloc"),
	SYM(cuMemFreeHost, "cuMemFreeHost"),
	SYM(cuMemHostRegister, "cuMemHostRegister_v2"),
	SYM(cuMemHostUnregister, "cuMemHostUnregister"),
	SYM(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2"),
	SYM(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2"),
	SYM(cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2"),
	SYM(cuMemsetD8Async, "cuMemsetD8Async"),
	SYM(cuMemsetD16Async, "cuMemsetD16Async"),
	SYM(cuMemsetD32Async, "cuMemsetD32Async"),
	SYM(cuLaunchKernel, "cuLaunchKernel"),
	SYM(cuStreamCreate, "cuStreamCreate"),
	SYM(cuStreamDestroy, "cuStreamDestroy_v2"),
	SYM(cuStreamSynchronize, "cuStreamSynchronize"),
	SYM(cuStreamWaitEvent, "cuStreamWaitEvent"),
	SYM(cuEventCreate, "cuEventCreate"),
	SYM(cuEventDestroy, "cuEventDestroy_v2"),
	SYM(cuEventRecord, "cuEventRecord"),
	SYM(cuEventSynchronize, "cuEventSynchronize"),
	SYM(cuEventElapsedTime, "cuEventElapsedTime"),
	SYM(cuDeviceGetUuid, "cuDeviceGetUuid"),
	SYM(cuMemGetAllocationGranularity, "cuMemGetAllocationGranularity"),
	SYM(cuMemCreate, "cuMemCreate"),
	SYM(cuMemRelease, "cuMemRelease"),
	SYM(cuMemExportToShareableHandle, "cuMemExportToShareableHandle"),
	SYM(cuMemAddressReserve, "cuMemAddressReserve"),
	SYM(cuMemAddressFree, "cuMemAddressFree"),
	SYM(cuMemMap, "cuMemMap"),
	SYM(cuMemUnmap, "cuMemUnmap"),
	SYM(cuMemSetAccess, "cuMemSetAccess"),
};

int cc_open(cc_table *t, const char *lib, char *msg, size_t msglen)
{
	size_t i;
	memset(t, 0, sizeof *t);
	t->lib = cc_dlopen(lib);
	if (t->lib == NULL) {
		cc_dlerror(lib, msg, msglen);
		return 1;
	}
	for (i = 0; i < sizeof cc_symbols / sizeof cc_symbols[0]; i++) {
		void *p = cc_dlsym(t->lib, cc_symbols[i].name);
		if (p == NULL) {
			snprintf(msg, msglen, "%s", cc_symbols[i].name);
			cc_dlclose(t->lib);
			memset(t, 0, sizeof *t);
			return 2;
		}
		memcpy((char *)t + cc_symbols[i].offset, &p, sizeof p);
	}
	return 0;
}

void cc_close(cc_table *t)
{
	if (t->lib != NULL)
		cc_dlclose(t->lib);
	memset(t, 0, sizeof *t);
}

CUresult cc_launch(cc_table *t, CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                   unsigned int bx, unsigned int by, unsigned int bz, unsigned int shmem,
                   CUstream s, void *packed, const int *offsets, int nargs)
{
	void *params[CC_MAX_ARGS];
	int i;
	if (nargs < 0 || nargs > CC_MAX_ARGS)
		return 1; /* CUDA_ERROR_INVALID_VALUE */
	for (i = 0; i < nargs; i++)
		params[i] = (char *)packed + offsets[i];
	/* The driver copies the parameter values before it returns. */
	return t->cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shmem, s, params, NULL);
}

/* CUjit_option values (cuda.h). */
enum {
	CC_JIT_WALL_TIME = 2,
	CC_JIT_INFO_LOG_BUFFER = 3,
	CC_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
	CC_JIT_ERROR_LOG_BUFFER = 5,
	CC_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
	CC_JIT_LOG_VERBOSE = 12,
};

CUresult cc_load_jit(cc_table *t, CUmodule *m, const void *image, char *errlog, unsigned int errlen,
                     char *infolog, unsigned int infolen, float *wall_ms)
{
	int opts[6] = {CC_JIT_ERROR_LOG_BUFFER, CC_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CC_JIT_INFO_LOG_BUFFER,
	               CC_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CC_JIT_LOG_VERBOSE, CC_JIT_WALL_TIME};
	void *vals[6];
	CUresult r;
	if (errlen > 0)
		errlog[0] = 0;
	if (infolen > 0)
		infolog[0] = 0;
	vals[0] = errlog;
	vals[1] = (void *)(uintptr_t)errlen;
	vals[2] = infolog;
	vals[3] = (void *)(uintptr_t)infolen;
	vals[4] = (void *)(uintptr_t)1;
	vals[5] = NULL;
	r = t->cuModuleLoadDataEx(m, image, 6, opts, vals);
	/* The driver writes the wall time as a float into the option's slot. */
	memcpy(wall_ms, &vals[5], sizeof *wall_ms);
	if (errlen > 0)
		errlog[errlen - 1] = 0;
	if (infolen > 0)
		infolog[infolen - 1] = 0;
	return r;
}
