package egl

/*
#cgo linux LDFLAGS: -ldl -lpthread
#cgo windows LDFLAGS: -lgdi32 -luser32
#include <stdlib.h>
#include "egl.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"
)

// Kind selects which displays Open may use.
type Kind int

// The kinds of display Open tries, in this order for Any.
const (
	// Any tries hardware devices, then Mesa's software device, then the
	// surfaceless platform, and takes the first that gives the context.
	Any Kind = C.CANOPY_EGL_ANY
	// Hardware takes only EGL devices that are not Mesa's software device.
	Hardware Kind = C.CANOPY_EGL_HARDWARE
	// Software takes only Mesa's software device (llvmpipe).
	Software Kind = C.CANOPY_EGL_SOFTWARE
	// Surfaceless takes only EGL_PLATFORM_SURFACELESS_MESA.
	Surfaceless Kind = C.CANOPY_EGL_SURFACELESS
)

var kindNames = map[string]Kind{"any": Any, "hardware": Hardware, "software": Software, "surfaceless": Surfaceless}

// ParseKind turns "any", "hardware", "software" or "surfaceless" into a Kind.
func ParseKind(s string) (Kind, error) {
	k, ok := kindNames[s]
	if !ok {
		return Any, fmt.Errorf("EGL display kind %q: want any, hardware, software or surfaceless", s)
	}
	return k, nil
}

// String returns the name ParseKind accepts.
func (k Kind) String() string {
	for n, v := range kindNames {
		if v == k {
			return n
		}
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

const errLen = 2048

// Load opens libEGL.so.1 (once per process) and reports whether it could.
func Load() error {
	buf := (*C.char)(C.calloc(errLen, 1))
	defer C.free(unsafe.Pointer(buf))
	if C.canopy_egl_load(buf, errLen) != 0 {
		return errors.New(C.GoString(buf))
	}
	return nil
}

// Context is an OpenGL core-profile context with no surface.
type Context struct {
	c *C.canopy_egl_ctx // C memory: EGL handles are not Go pointers
}

// Open creates an OpenGL major.minor core-profile context on the first
// display of the given kind that gives one and makes it current on the
// calling OS thread, which must be locked (runtime.LockOSThread). The error
// lists what every display answered.
func Open(kind Kind, major, minor int) (*Context, error) {
	buf := (*C.char)(C.calloc(errLen, 1))
	defer C.free(unsafe.Pointer(buf))
	c := (*C.canopy_egl_ctx)(C.calloc(1, C.size_t(unsafe.Sizeof(C.canopy_egl_ctx{}))))
	if C.canopy_egl_open(C.int(kind), C.int(major), C.int(minor), c, buf, errLen) != 0 {
		C.free(unsafe.Pointer(c))
		return nil, fmt.Errorf("EGL: no OpenGL %d.%d core context: %s", major, minor, C.GoString(buf))
	}
	return &Context{c: c}, nil
}

// Display says which display the context lives on, for people: "EGL device
// 0 of 1, NVIDIA H200", "EGL device 1 of 2, Mesa software", "surfaceless
// platform".
func (x *Context) Display() string {
	if x.c == nil {
		return "closed"
	}
	return C.GoString(&x.c.where[0])
}

// Current reports whether x is the calling thread's current context.
func (x *Context) Current() bool {
	return x.c != nil && C.canopy_egl_is_current(x.c) != 0
}

// MakeCurrent makes x current on the calling thread with no surface.
func (x *Context) MakeCurrent() error {
	if x.c == nil {
		return errors.New("EGL: make current: the context is closed")
	}
	buf := (*C.char)(C.calloc(errLen, 1))
	defer C.free(unsafe.Pointer(buf))
	if C.canopy_egl_make_current(x.c, buf, errLen) != 0 {
		return fmt.Errorf("EGL: %s", C.GoString(buf))
	}
	return nil
}

// Close releases x from the calling thread, destroys it and terminates its
// display when no other Context uses it. Closing twice is harmless.
func (x *Context) Close() {
	if x.c == nil {
		return
	}
	C.canopy_egl_close(x.c)
	C.free(unsafe.Pointer(x.c))
	x.c = nil
}

// ProcAddress returns the address of an EGL or OpenGL entry point from
// eglGetProcAddress, or nil. Its signature fits go-gl's
// gl.InitWithProcAddrFunc.
func ProcAddress(name string) unsafe.Pointer {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	return C.canopy_egl_proc(cs)
}
