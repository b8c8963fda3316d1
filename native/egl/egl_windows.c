//go:build windows

/*
 * OpenGL contexts on Windows through WGL, behind the same functions as
 * egl.c (see egl.h). Windows has no EGL: a context there needs a window's
 * device context, so each context gets its own hidden 1x1 window (never
 * shown, no message loop), the way GLFW makes Fyne's. opengl32.dll is
 * loaded at run time; a core-profile context needs the graphics driver's
 * WGL_ARB_create_context (Windows' own OpenGL 1.1 has none, nor has a
 * Remote Desktop session without a driver), and its absence is said in one
 * line. CANOPY_LIBGL names another opengl32.dll to load (Mesa's, say).
 */
#include "egl.h"

#include <windows.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WGL_CONTEXT_MAJOR_VERSION_ARB 0x2091
#define WGL_CONTEXT_MINOR_VERSION_ARB 0x2092
#define WGL_CONTEXT_PROFILE_MASK_ARB 0x9126
#define WGL_CONTEXT_CORE_PROFILE_BIT_ARB 0x0001
#define GL_RENDERER 0x1F01

typedef HGLRC(WINAPI *create_attribs_fn)(HDC, HGLRC, const int *);

static struct {
	HMODULE lib;
	PROC(WINAPI *GetProcAddress)(LPCSTR);
	HGLRC(WINAPI *CreateContext)(HDC);
	BOOL(WINAPI *DeleteContext)(HGLRC);
	BOOL(WINAPI *MakeCurrent)(HDC, HGLRC);
	HGLRC(WINAPI *GetCurrentContext)(void);
	const unsigned char *(WINAPI *GetString)(unsigned int);
} wgl;

static SRWLOCK mu = SRWLOCK_INIT;
static int load_state; /* 0 not tried, 1 loaded, -1 failed */
static char load_err[512];
static ATOM window_class;
static const wchar_t class_name[] = L"CanopyHiddenGL";

#define SYM(field, name)                                                                  \
	do {                                                                                  \
		*(void **)(&wgl.field) = (void *)GetProcAddress(wgl.lib, name);                   \
		if (!wgl.field) {                                                                 \
			snprintf(load_err, sizeof load_err, "the OpenGL library lacks %s", name);     \
			return -1;                                                                    \
		}                                                                                 \
	} while (0)

static int load_locked(void) {
	WNDCLASSEXW wc;
	const char *name = getenv("CANOPY_LIBGL");
	if (!name || !*name)
		name = "opengl32.dll";
	wgl.lib = LoadLibraryA(name);
	if (!wgl.lib) {
		snprintf(load_err, sizeof load_err, "%s not found (Windows error %lu): install the graphics card's driver",
		         name, (unsigned long)GetLastError());
		return -1;
	}
	SYM(GetProcAddress, "wglGetProcAddress");
	SYM(CreateContext, "wglCreateContext");
	SYM(DeleteContext, "wglDeleteContext");
	SYM(MakeCurrent, "wglMakeCurrent");
	SYM(GetCurrentContext, "wglGetCurrentContext");
	SYM(GetString, "glGetString");
	memset(&wc, 0, sizeof wc);
	wc.cbSize = sizeof wc;
	wc.style = CS_OWNDC;
	wc.lpfnWndProc = DefWindowProcW;
	wc.hInstance = GetModuleHandleW(NULL);
	wc.lpszClassName = class_name;
	window_class = RegisterClassExW(&wc);
	if (!window_class) {
		snprintf(load_err, sizeof load_err, "cannot register a window class for OpenGL (Windows error %lu)",
		         (unsigned long)GetLastError());
		return -1;
	}
	return 0;
}

int canopy_egl_load(char *err, size_t errlen) {
	AcquireSRWLockExclusive(&mu);
	if (load_state == 0)
		load_state = load_locked() == 0 ? 1 : -1;
	int st = load_state;
	ReleaseSRWLockExclusive(&mu);
	if (st < 0) {
		snprintf(err, errlen, "%s", load_err);
		return -1;
	}
	return 0;
}

/* hidden_window makes an invisible window with an OpenGL pixel format. */
static HWND hidden_window(char *err, size_t errlen) {
	PIXELFORMATDESCRIPTOR pfd;
	HWND w;
	HDC dc;
	int pf;
	w = CreateWindowExW(0, class_name, L"Canopy GL", WS_OVERLAPPEDWINDOW, 0, 0, 1, 1, NULL, NULL,
	                    GetModuleHandleW(NULL), NULL);
	if (!w) {
		snprintf(err, errlen, "cannot create a hidden window for OpenGL (Windows error %lu)", (unsigned long)GetLastError());
		return NULL;
	}
	dc = GetDC(w);
	memset(&pfd, 0, sizeof pfd);
	pfd.nSize = sizeof pfd;
	pfd.nVersion = 1;
	pfd.dwFlags = PFD_DRAW_TO_WINDOW | PFD_SUPPORT_OPENGL | PFD_DOUBLEBUFFER;
	pfd.iPixelType = PFD_TYPE_RGBA;
	pfd.cColorBits = 32;
	pfd.iLayerType = PFD_MAIN_PLANE;
	pf = ChoosePixelFormat(dc, &pfd);
	if (pf == 0 || !SetPixelFormat(dc, pf, &pfd)) {
		snprintf(err, errlen, "no OpenGL pixel format (Windows error %lu): install the graphics card's driver",
		         (unsigned long)GetLastError());
		DestroyWindow(w);
		return NULL;
	}
	return w;
}

int canopy_egl_open(int kind, int major, int minor, canopy_egl_ctx *out, char *err, size_t errlen) {
	HWND w;
	HDC dc;
	HGLRC legacy, core;
	create_attribs_fn create;
	const char *renderer;
	int attribs[] = {WGL_CONTEXT_MAJOR_VERSION_ARB, major, WGL_CONTEXT_MINOR_VERSION_ARB, minor,
	                 WGL_CONTEXT_PROFILE_MASK_ARB, WGL_CONTEXT_CORE_PROFILE_BIT_ARB, 0};

	memset(out, 0, sizeof *out);
	if (kind == CANOPY_EGL_SOFTWARE || kind == CANOPY_EGL_SURFACELESS) {
		snprintf(err, errlen, "WGL: Windows has no EGL software or surfaceless display (use kind any or hardware)");
		return -1;
	}
	if (canopy_egl_load(err, errlen) != 0)
		return -1;
	w = hidden_window(err, errlen);
	if (!w)
		return -1;
	dc = GetDC(w);
	legacy = wgl.CreateContext(dc);
	if (!legacy || !wgl.MakeCurrent(dc, legacy)) {
		snprintf(err, errlen, "WGL: no OpenGL context at all (Windows error %lu): install the graphics card's driver",
		         (unsigned long)GetLastError());
		if (legacy)
			wgl.DeleteContext(legacy);
		DestroyWindow(w);
		return -1;
	}
	create = (create_attribs_fn)(void *)wgl.GetProcAddress("wglCreateContextAttribsARB");
	core = create ? create(dc, NULL, attribs) : NULL;
	wgl.MakeCurrent(NULL, NULL);
	wgl.DeleteContext(legacy);
	if (!create || !core) {
		if (!create)
			snprintf(err, errlen, "WGL: the OpenGL driver cannot make a core profile (no WGL_ARB_create_context; "
			                      "Windows' own OpenGL 1.1 or a Remote Desktop session): install the graphics card's driver");
		else
			snprintf(err, errlen, "WGL: the OpenGL driver gives no OpenGL %d.%d core context", major, minor);
		DestroyWindow(w);
		return -1;
	}
	if (!wgl.MakeCurrent(dc, core)) {
		snprintf(err, errlen, "WGL: wglMakeCurrent failed (Windows error %lu)", (unsigned long)GetLastError());
		wgl.DeleteContext(core);
		DestroyWindow(w);
		return -1;
	}
	out->display = (void *)w;
	out->context = (void *)core;
	renderer = (const char *)wgl.GetString(GL_RENDERER);
	snprintf(out->where, sizeof out->where, "WGL, %s", renderer ? renderer : "unknown renderer");
	return 0;
}

int canopy_egl_is_current(const canopy_egl_ctx *c) {
	return c->context && load_state == 1 && wgl.GetCurrentContext() == (HGLRC)c->context;
}

int canopy_egl_make_current(const canopy_egl_ctx *c, char *err, size_t errlen) {
	if (!c->context) {
		snprintf(err, errlen, "make current: the context is closed");
		return -1;
	}
	if (!wgl.MakeCurrent(GetDC((HWND)c->display), (HGLRC)c->context)) {
		snprintf(err, errlen, "wglMakeCurrent failed (Windows error %lu)", (unsigned long)GetLastError());
		return -1;
	}
	return 0;
}

void canopy_egl_close(canopy_egl_ctx *c) {
	if (!c->context)
		return;
	if (canopy_egl_is_current(c))
		wgl.MakeCurrent(NULL, NULL);
	wgl.DeleteContext((HGLRC)c->context);
	DestroyWindow((HWND)c->display);
	c->context = NULL;
	c->display = NULL;
}

void *canopy_egl_proc(const char *name) {
	void *p;
	if (load_state != 1)
		return NULL;
	p = (void *)wgl.GetProcAddress(name);
	/* wglGetProcAddress answers only for what opengl32.dll does not export
	 * itself (OpenGL 1.1), and some drivers answer 1, 2, 3 or -1 for "no". */
	if (p == NULL || p == (void *)1 || p == (void *)2 || p == (void *)3 || p == (void *)-1)
		p = (void *)GetProcAddress(wgl.lib, name);
	return p;
}
