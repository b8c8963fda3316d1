/*
 * holdopen FILE: opens FILE as a program that keeps a document open does
 * (Excel, QGIS: read access, sharing reads only, so that nobody may write,
 * rename or delete it), says "held" on stdout, and keeps it open until its
 * stdin ends. For scripts/windows-smoke, under wine; never shipped.
 */
#include <windows.h>
#include <stdio.h>

int wmain(int argc, wchar_t **argv) {
	HANDLE h;
	char buf[64];
	DWORD n;
	if (argc != 2) {
		fprintf(stderr, "usage: holdopen FILE\n");
		return 2;
	}
	h = CreateFileW(argv[1], GENERIC_READ, FILE_SHARE_READ, NULL, OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, NULL);
	if (h == INVALID_HANDLE_VALUE) {
		fprintf(stderr, "holdopen: cannot open the file (Windows error %lu)\n", (unsigned long)GetLastError());
		return 1;
	}
	printf("held\n");
	fflush(stdout);
	while (ReadFile(GetStdHandle(STD_INPUT_HANDLE), buf, sizeof buf, &n, NULL) && n > 0) {
	}
	CloseHandle(h);
	return 0;
}
