/*
 * A stand-in for Windows' bcryptprimitives.dll, for running Canopy's
 * Windows build under wine 8 (Debian 12), whose bcryptprimitives lacks
 * ProcessPrng: Go's runtime (1.22 and later) takes its random bytes from
 * ProcessPrng and stops without it. This one fills the buffer from
 * RtlGenRandom (advapi32's SystemFunction036). Only scripts/windows-smoke
 * builds and uses it; it is not shipped: Windows 10 and 11 have the real one.
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T size)
{
	while (size > 0) {
		ULONG n = size > 0x40000000 ? 0x40000000 : (ULONG)size;
		if (!SystemFunction036(data, n))
			return FALSE;
		data += n;
		size -= n;
	}
	return TRUE;
}
