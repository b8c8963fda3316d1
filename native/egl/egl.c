//go:build !windows

/*
 * Headless OpenGL contexts through EGL; see egl.h. No window, no X server
 * and never EGL_DEFAULT_DISPLAY: the display comes from EGL device
 * enumeration (a hardware device first, then Mesa's software device) or,
 * failing that, from Mesa's surfaceless platform.
 */
#include "egl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int32_t EGLint;
typedef unsigned int EGLBoolean;
typedef unsigned int EGLenum;
typedef void *EGLDisplay;
typedef void *EGLContext;
typedef void *EGLConfig;
typedef void *EGLSurface;
typedef void *EGLDeviceEXT;

#define EGL_SUCCESS 0x3000
#define EGL_NONE 0x3038
#define EGL_VENDOR 0x3053
#define EGL_VERSION 0x3054
#define EGL_EXTENSIONS 0x3055
#define EGL_SURFACE_TYPE 0x3033
#define EGL_RENDERABLE_TYPE 0x3040
#define EGL_OPENGL_BIT 0x0008
#define EGL_OPENGL_API 0x30A2
#define EGL_CONTEXT_MAJOR_VERSION 0x3098
#define EGL_CONTEXT_MINOR_VERSION 0x30FB
#define EGL_CONTEXT_OPENGL_PROFILE_MASK 0x30FD
#define EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT 0x0001
#define EGL_PLATFORM_DEVICE_EXT 0x313F
#define EGL_PLATFORM_SURFACELESS_MESA 0x31DD
#define EGL_DRM_DEVICE_FILE_EXT 0x3233
#define EGL_DRM_RENDER_NODE_FILE_EXT 0x3377
#define EGL_RENDERER_EXT 0x335F

static struct {
	void *lib;
	EGLint (*GetError)(void);
	void *(*GetProcAddress)(const char *);
	const char *(*QueryString)(EGLDisplay, EGLint);
	EGLBoolean (*Initialize)(EGLDisplay, EGLint *, EGLint *);
	EGLBoolean (*Terminate)(EGLDisplay);
	EGLBoolean (*BindAPI)(EGLenum);
	EGLBoolean (*ChooseConfig)(EGLDisplay, const EGLint *, EGLConfig *, EGLint, EGLint *);
	EGLContext (*CreateContext)(EGLDisplay, EGLConfig, EGLContext, const EGLint *);
	EGLBoolean (*DestroyContext)(EGLDisplay, EGLContext);
	EGLBoolean (*MakeCurrent)(EGLDisplay, EGLSurface, EGLSurface, EGLContext);
	EGLContext (*GetCurrentContext)(void);
	/* extensions, through eglGetProcAddress; NULL when absent */
	EGLBoolean (*QueryDevicesEXT)(EGLint, EGLDeviceEXT *, EGLint *);
	const char *(*QueryDeviceStringEXT)(EGLDeviceEXT, EGLint);
	EGLDisplay (*GetPlatformDisplayEXT)(EGLenum, void *, const EGLint *);
} egl;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int load_state; /* 0 not tried, 1 loaded, -1 failed */
static char load_err[512];

/* Displays this library initialised, with the number of its contexts on
 * each, so that one backend's Close never terminates another's display. */
#define MAX_DISPLAYS 32
static struct {
	EGLDisplay d;
	int refs;
} displays[MAX_DISPLAYS];

static const char *errname(EGLint e) {
	switch (e) {
	case 0x3000: return "EGL_SUCCESS";
	case 0x3001: return "EGL_NOT_INITIALIZED";
	case 0x3002: return "EGL_BAD_ACCESS";
	case 0x3003: return "EGL_BAD_ALLOC";
	case 0x3004: return "EGL_BAD_ATTRIBUTE";
	case 0x3005: return "EGL_BAD_CONFIG";
	case 0x3006: return "EGL_BAD_CONTEXT";
	case 0x3007: return "EGL_BAD_CURRENT_SURFACE";
	case 0x3008: return "EGL_BAD_DISPLAY";
	case 0x3009: return "EGL_BAD_MATCH";
	case 0x300A: return "EGL_BAD_NATIVE_PIXMAP";
	case 0x300B: return "EGL_BAD_NATIVE_WINDOW";
	case 0x300C: return "EGL_BAD_PARAMETER";
	case 0x300D: return "EGL_BAD_SURFACE";
	case 0x300E: return "EGL_CONTEXT_LOST";
	case 0x322B: return "EGL_BAD_DEVICE_EXT";
	}
	return "unknown EGL error";
}

static const char *lasterr(void) { return errname(egl.GetError()); }

/* has_ext reports whether the space-separated list holds name exactly. */
static int has_ext(const char *list, const char *name) {
	size_t n = strlen(name);
	const char *p = list;
	if (!list)
		return 0;
	while ((p = strstr(p, name)) != NULL) {
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
			return 1;
		p += n;
	}
	return 0;
}

/* appendf adds a formatted message to buf, separated by "; ". */
static void appendf(char *buf, size_t len, const char *fmt, ...) {
	va_list ap;
	size_t used = strlen(buf);
	if (used + 3 >= len)
		return;
	if (used > 0) {
		strcpy(buf + used, "; ");
		used += 2;
	}
	va_start(ap, fmt);
	vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}

#define SYM(field, name)                                                           \
	do {                                                                           \
		*(void **)(&egl.field) = dlsym(egl.lib, name);                             \
		if (!egl.field) {                                                          \
			snprintf(load_err, sizeof load_err, "the EGL library lacks %s", name); \
			return -1;                                                             \
		}                                                                          \
	} while (0)

static int load_locked(void) {
	const char *name = getenv("CANOPY_LIBEGL");
	if (!name || !*name)
		name = "libEGL.so.1";
	egl.lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (!egl.lib) {
		const char *e = dlerror();
		snprintf(load_err, sizeof load_err, "%s not found: install libegl1 and a GL driver (%s)", name, e ? e : "dlopen failed");
		return -1;
	}
	SYM(GetError, "eglGetError");
	SYM(GetProcAddress, "eglGetProcAddress");
	SYM(QueryString, "eglQueryString");
	SYM(Initialize, "eglInitialize");
	SYM(Terminate, "eglTerminate");
	SYM(BindAPI, "eglBindAPI");
	SYM(ChooseConfig, "eglChooseConfig");
	SYM(CreateContext, "eglCreateContext");
	SYM(DestroyContext, "eglDestroyContext");
	SYM(MakeCurrent, "eglMakeCurrent");
	SYM(GetCurrentContext, "eglGetCurrentContext");
	*(void **)(&egl.QueryDevicesEXT) = egl.GetProcAddress("eglQueryDevicesEXT");
	*(void **)(&egl.QueryDeviceStringEXT) = egl.GetProcAddress("eglQueryDeviceStringEXT");
	*(void **)(&egl.GetPlatformDisplayEXT) = egl.GetProcAddress("eglGetPlatformDisplayEXT");
	return 0;
}

int canopy_egl_load(char *err, size_t errlen) {
	pthread_mutex_lock(&mu);
	if (load_state == 0)
		load_state = load_locked() == 0 ? 1 : -1;
	int st = load_state;
	pthread_mutex_unlock(&mu);
	if (st < 0) {
		snprintf(err, errlen, "%s", load_err);
		return -1;
	}
	return 0;
}

/* display_ref initialises d (a no-op when it already is) and counts one
 * more context on it. */
static int display_ref(EGLDisplay d, EGLint *major, EGLint *minor) {
	int i, free_slot = -1;
	pthread_mutex_lock(&mu);
	if (!egl.Initialize(d, major, minor)) {
		pthread_mutex_unlock(&mu);
		return -1;
	}
	for (i = 0; i < MAX_DISPLAYS; i++) {
		if (displays[i].d == d) {
			displays[i].refs++;
			pthread_mutex_unlock(&mu);
			return 0;
		}
		if (!displays[i].d && free_slot < 0)
			free_slot = i;
	}
	if (free_slot >= 0) {
		displays[free_slot].d = d;
		displays[free_slot].refs = 1;
	}
	/* With no free slot the display is simply never terminated. */
	pthread_mutex_unlock(&mu);
	return 0;
}

/* display_unref drops one context from d and terminates d after its last. */
static void display_unref(EGLDisplay d) {
	int i;
	pthread_mutex_lock(&mu);
	for (i = 0; i < MAX_DISPLAYS; i++) {
		if (displays[i].d == d) {
			if (--displays[i].refs == 0) {
				egl.Terminate(d);
				displays[i].d = NULL;
			}
			break;
		}
	}
	pthread_mutex_unlock(&mu);
}

/* try_display makes a major.minor core context current on dpy, or says why
 * not in why. */
static int try_display(EGLDisplay dpy, int major, int minor, canopy_egl_ctx *out, char *why, size_t whylen) {
	EGLint vmaj = 0, vmin = 0, n = 0;
	EGLConfig cfg = NULL; /* EGL_NO_CONFIG_KHR */
	EGLContext ctx;
	const char *ext;
	char ver[32];

	if (!dpy) {
		snprintf(why, whylen, "no display (%s)", lasterr());
		return -1;
	}
	if (display_ref(dpy, &vmaj, &vmin) != 0) {
		snprintf(why, whylen, "eglInitialize failed (%s)", lasterr());
		return -1;
	}
	ext = egl.QueryString(dpy, EGL_EXTENSIONS);
	if (!has_ext(ext, "EGL_KHR_surfaceless_context")) {
		snprintf(why, whylen, "EGL %d.%d without EGL_KHR_surfaceless_context", vmaj, vmin);
		goto fail;
	}
	if ((vmaj == 1 && vmin < 5) && !has_ext(ext, "EGL_KHR_create_context")) {
		snprintf(why, whylen, "EGL %d.%d cannot request a core profile (no EGL_KHR_create_context)", vmaj, vmin);
		goto fail;
	}
	if (!egl.BindAPI(EGL_OPENGL_API)) {
		snprintf(why, whylen, "eglBindAPI(EGL_OPENGL_API) failed (%s)", lasterr());
		goto fail;
	}
	if (!has_ext(ext, "EGL_KHR_no_config_context")) {
		const EGLint want[] = {EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT, EGL_SURFACE_TYPE, 0, EGL_NONE};
		if (!egl.ChooseConfig(dpy, want, &cfg, 1, &n) || n < 1) {
			snprintf(why, whylen, "no EGL config renders OpenGL (%s)", lasterr());
			goto fail;
		}
	}
	{
		const EGLint attrs[] = {
		    EGL_CONTEXT_MAJOR_VERSION, major,
		    EGL_CONTEXT_MINOR_VERSION, minor,
		    EGL_CONTEXT_OPENGL_PROFILE_MASK, EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT,
		    EGL_NONE,
		};
		ctx = egl.CreateContext(dpy, cfg, NULL, attrs);
	}
	if (!ctx) {
		snprintf(ver, sizeof ver, "%d.%d", major, minor);
		snprintf(why, whylen, "no OpenGL %s core context (%s)", ver, lasterr());
		goto fail;
	}
	if (!egl.MakeCurrent(dpy, NULL, NULL, ctx)) {
		snprintf(why, whylen, "eglMakeCurrent without a surface failed (%s)", lasterr());
		egl.DestroyContext(dpy, ctx);
		goto fail;
	}
	out->display = dpy;
	out->context = ctx;
	return 0;
fail:
	display_unref(dpy);
	return -1;
}

/* describe_device writes a short name of device i for people. */
static void describe_device(EGLDeviceEXT dev, int i, int n, int sw, char *buf, size_t len) {
	const char *dext = egl.QueryDeviceStringEXT(dev, EGL_EXTENSIONS);
	const char *name = NULL;
	if (sw) {
		name = "Mesa software";
	} else {
		if (has_ext(dext, "EGL_EXT_device_query_name"))
			name = egl.QueryDeviceStringEXT(dev, EGL_RENDERER_EXT);
		if (!name && has_ext(dext, "EGL_EXT_device_drm_render_node"))
			name = egl.QueryDeviceStringEXT(dev, EGL_DRM_RENDER_NODE_FILE_EXT);
		if (!name && has_ext(dext, "EGL_EXT_device_drm"))
			name = egl.QueryDeviceStringEXT(dev, EGL_DRM_DEVICE_FILE_EXT);
		if (!name && has_ext(dext, "EGL_NV_device_cuda"))
			name = "NVIDIA CUDA device";
		if (!name)
			name = "hardware";
	}
	egl.GetError(); /* a failed name query must not leak into later errors */
	snprintf(buf, len, "EGL device %d of %d, %s", i, n, name);
}

int canopy_egl_open(int kind, int major, int minor, canopy_egl_ctx *out, char *err, size_t errlen) {
	EGLDeviceEXT devs[32];
	EGLint n = 0, i;
	int pass;
	const char *client;
	char why[256], where[256];

	err[0] = '\0';
	memset(out, 0, sizeof *out);
	if (canopy_egl_load(err, errlen) != 0)
		return -1;
	client = egl.QueryString(NULL, EGL_EXTENSIONS);
	egl.GetError();

	if (has_ext(client, "EGL_EXT_platform_device") && egl.QueryDevicesEXT && egl.QueryDeviceStringEXT &&
	    egl.GetPlatformDisplayEXT &&
	    (has_ext(client, "EGL_EXT_device_enumeration") || has_ext(client, "EGL_EXT_device_base"))) {
		if (!egl.QueryDevicesEXT(32, devs, &n))
			n = 0;
		if (n == 0)
			appendf(err, errlen, "no EGL device found");
		/* pass 0: hardware devices, pass 1: Mesa's software device */
		for (pass = 0; pass < 2; pass++) {
			if (kind != CANOPY_EGL_ANY && kind != (pass == 0 ? CANOPY_EGL_HARDWARE : CANOPY_EGL_SOFTWARE))
				continue;
			for (i = 0; i < n; i++) {
				int sw = has_ext(egl.QueryDeviceStringEXT(devs[i], EGL_EXTENSIONS), "EGL_MESA_device_software");
				if (sw != pass)
					continue;
				describe_device(devs[i], i, n, sw, where, sizeof where);
				if (try_display(egl.GetPlatformDisplayEXT(EGL_PLATFORM_DEVICE_EXT, devs[i], NULL), major, minor, out, why, sizeof why) == 0) {
					snprintf(out->where, sizeof out->where, "%s", where);
					err[0] = '\0';
					return 0;
				}
				appendf(err, errlen, "%s: %s", where, why);
			}
		}
	} else if (kind != CANOPY_EGL_SURFACELESS) {
		appendf(err, errlen, "EGL cannot enumerate devices (no EGL_EXT_device_enumeration and EGL_EXT_platform_device)");
	}

	if (kind == CANOPY_EGL_ANY || kind == CANOPY_EGL_SURFACELESS) {
		if (has_ext(client, "EGL_MESA_platform_surfaceless") && egl.GetPlatformDisplayEXT) {
			if (try_display(egl.GetPlatformDisplayEXT(EGL_PLATFORM_SURFACELESS_MESA, NULL, NULL), major, minor, out, why, sizeof why) == 0) {
				snprintf(out->where, sizeof out->where, "surfaceless platform");
				err[0] = '\0';
				return 0;
			}
			appendf(err, errlen, "surfaceless platform: %s", why);
		} else {
			appendf(err, errlen, "no EGL_MESA_platform_surfaceless");
		}
	}
	if (err[0] == '\0')
		appendf(err, errlen, "none of the %d EGL devices is of the requested kind (%s)", (int)n,
		        kind == CANOPY_EGL_HARDWARE ? "hardware" : kind == CANOPY_EGL_SOFTWARE ? "Mesa software" : "surfaceless");
	return -1;
}

int canopy_egl_is_current(const canopy_egl_ctx *c) {
	return c->context != NULL && egl.GetCurrentContext && egl.GetCurrentContext() == c->context;
}

int canopy_egl_make_current(const canopy_egl_ctx *c, char *err, size_t errlen) {
	if (!c->context) {
		snprintf(err, errlen, "the EGL context is closed");
		return -1;
	}
	if (!egl.MakeCurrent(c->display, NULL, NULL, c->context)) {
		snprintf(err, errlen, "eglMakeCurrent failed (%s)", lasterr());
		return -1;
	}
	return 0;
}

void canopy_egl_close(canopy_egl_ctx *c) {
	if (!c->context)
		return;
	if (canopy_egl_is_current(c))
		egl.MakeCurrent(c->display, NULL, NULL, NULL);
	egl.DestroyContext(c->display, c->context);
	display_unref(c->display);
	c->context = NULL;
	c->display = NULL;
}

void *canopy_egl_proc(const char *name) {
	void *(*get)(const char *);
	pthread_mutex_lock(&mu);
	get = load_state == 1 ? egl.GetProcAddress : NULL;
	pthread_mutex_unlock(&mu);
	return get ? get(name) : NULL;
}
