/*
 * Headless OpenGL contexts through EGL, with libEGL.so.1 loaded at run time.
 *
 * The few EGL 1.5 types, constants and entry points used here are declared
 * below (values from the Khronos registry's egl.h and eglext.h), so that
 * building needs no EGL headers and a machine without libEGL still runs the
 * program: canopy_egl_load then reports that the library is missing.
 */
#ifndef CANOPY_EGL_H
#define CANOPY_EGL_H

#include <stddef.h>

/* How canopy_egl_open may find its display. */
enum {
	CANOPY_EGL_ANY = 0,         /* hardware device, then software device, then surfaceless */
	CANOPY_EGL_HARDWARE = 1,    /* an EGL device that is not Mesa's software device */
	CANOPY_EGL_SOFTWARE = 2,    /* Mesa's software device (llvmpipe) */
	CANOPY_EGL_SURFACELESS = 3  /* EGL_PLATFORM_SURFACELESS_MESA */
};

/* One headless context: the display it lives on and the context itself. */
typedef struct canopy_egl_ctx {
	void *display; /* EGLDisplay */
	void *context; /* EGLContext */
	char where[256]; /* how the display was found, for people */
} canopy_egl_ctx;

/* canopy_egl_load opens libEGL.so.1 once. It returns 0, or -1 with a
 * message in err. */
int canopy_egl_load(char *err, size_t errlen);

/* canopy_egl_open creates an OpenGL major.minor core-profile context on the
 * first display of the given kind (CANOPY_EGL_*) that gives one and makes it
 * current on the calling thread with no surface. It returns 0, or -1 with
 * what every candidate answered in err. */
int canopy_egl_open(int kind, int major, int minor, canopy_egl_ctx *out, char *err, size_t errlen);

/* canopy_egl_is_current reports whether c is the calling thread's current
 * context. */
int canopy_egl_is_current(const canopy_egl_ctx *c);

/* canopy_egl_make_current makes c current on the calling thread with no
 * surface. It returns 0, or -1 with a message in err. */
int canopy_egl_make_current(const canopy_egl_ctx *c, char *err, size_t errlen);

/* canopy_egl_close releases c from the calling thread if it is current
 * there, destroys it, and terminates its display when no other context of
 * this library uses it. */
void canopy_egl_close(canopy_egl_ctx *c);

/* canopy_egl_proc returns eglGetProcAddress(name), or NULL. */
void *canopy_egl_proc(const char *name);

#endif
