// Package egl creates headless OpenGL contexts through EGL: no window, no X
// server, no display connection. It serves the gl compute backend in the
// command line, in CI (Mesa llvmpipe) and beside the running Fyne app, whose
// own GLFW context it leaves alone.
//
// libEGL.so.1 is loaded with dlopen when first needed, so a program built
// with this package still runs where EGL is missing; Open then returns an
// error saying so. The environment variable CANOPY_LIBEGL names another
// library to load instead (a vendor's libEGL, or a missing one in tests).
//
// The display is found without EGL_DEFAULT_DISPLAY: EGL device enumeration
// (EGL_EXT_device_enumeration, EGL_EXT_platform_device) offers a hardware
// device first (the NVIDIA driver exposes one headless), then Mesa's
// software device, then the surfaceless platform
// (EGL_MESA_platform_surfaceless, which the NVIDIA driver implements too).
// The context is a core profile of the requested version, made current
// with no surface (EGL_KHR_surfaceless_context).
//
// An OpenGL context is current on one OS thread. Open must run on a
// goroutine that has called runtime.LockOSThread, and every later call on
// the Context, and every GL call, must come from that same goroutine.
// ProcAddress hands GL entry points to a loader: native/egl/gl's Init, or
// go-gl's gl.InitWithProcAddrFunc.
//
// On Windows, which has no EGL, the same functions make the context through
// WGL (egl_windows.c): opengl32.dll loaded at run time (CANOPY_LIBGL names
// another), a hidden 1x1 window per context for its device context, as GLFW
// makes Fyne's, and wglCreateContextAttribsARB for the core profile. Only
// the kinds Any and Hardware apply there; where the driver has no
// WGL_ARB_create_context (Windows' own OpenGL 1.1, a Remote Desktop session
// without a driver), Open says so in one line.
package egl
