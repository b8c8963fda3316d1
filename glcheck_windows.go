//go:build !nogui

package main

/*
#include <stdio.h>

// GLFW's C functions, compiled into this program by the GLFW package Fyne
// uses (github.com/go-gl/glfw); declared here, as its header lives in that
// module. The constants are glfw3.h's.
typedef struct GLFWwindow GLFWwindow;
typedef struct GLFWmonitor GLFWmonitor;
typedef void (*GLFWerrorfun)(int, const char *);
extern int glfwInit(void);
extern void glfwTerminate(void);
extern GLFWerrorfun glfwSetErrorCallback(GLFWerrorfun);
extern void glfwDefaultWindowHints(void);
extern void glfwWindowHint(int, int);
extern GLFWwindow *glfwCreateWindow(int, int, const char *, GLFWmonitor *, GLFWwindow *);

#define CANOPY_GLFW_VISIBLE 0x00020004
#define CANOPY_GLFW_CONTEXT_VERSION_MAJOR 0x00022002
#define CANOPY_GLFW_CONTEXT_VERSION_MINOR 0x00022003

static char canopy_gl_err[512];

static void canopy_gl_error(int code, const char *desc) {
	if (canopy_gl_err[0] == 0)
		snprintf(canopy_gl_err, sizeof canopy_gl_err, "%s", desc ? desc : "unknown GLFW error");
}

// canopy_check_gl does what Fyne does to open its window (GLFW's
// initialisation, a hidden window with an OpenGL 2.1 context): 0 when that
// works, 1 when GLFW cannot start (no window system), 2 when no such
// context can be made. The first GLFW error is in canopy_gl_err. GLFW's own
// error callback (go-gl's) is restored after. When it works, GLFW stays
// initialised (Fyne's glfwInit then finds it so) and the hidden window
// stays, until Fyne's glfwTerminate: a context made and destroyed before
// Fyne makes its own crashed Fyne's start under wine's OpenGL on Mesa's
// llvmpipe every other time (an execute fault in freed code).
static int canopy_check_gl(void) {
	int status = 0;
	GLFWerrorfun prev;
	canopy_gl_err[0] = 0;
	prev = glfwSetErrorCallback(canopy_gl_error);
	if (!glfwInit()) {
		status = 1;
	} else {
		glfwDefaultWindowHints();
		glfwWindowHint(CANOPY_GLFW_VISIBLE, 0);
		glfwWindowHint(CANOPY_GLFW_CONTEXT_VERSION_MAJOR, 2);
		glfwWindowHint(CANOPY_GLFW_CONTEXT_VERSION_MINOR, 1);
		if (!glfwCreateWindow(16, 16, "Canopy", NULL, NULL)) {
			status = 2;
			glfwTerminate();
		}
		glfwDefaultWindowHints();
	}
	glfwSetErrorCallback(prev);
	return status;
}

static const char *canopy_gl_error_text(void) { return canopy_gl_err; }
*/
import "C"

import (
	"fmt"
	"strings"
)

// checkOpenGL says, in one line, why the window cannot open on this
// computer, or returns "" when it can. Fyne's GLFW panics when Windows
// gives it no window (wine without a display) and logs several lines and
// ends when the graphics driver has no OpenGL 2.1 (Windows' own OpenGL 1.1
// in a virtual machine or over Remote Desktop, fyne issues 409 and 2959);
// this does the same steps first, through the same GLFW, and keeps the
// reason. It must run on the main thread (main.main's, which Fyne locks).
func checkOpenGL() string {
	status := C.canopy_check_gl()
	why := strings.TrimSpace(strings.ReplaceAll(C.GoString(C.canopy_gl_error_text()), "\n", " "))
	if why == "" {
		why = "no reason given"
	}
	switch status {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf("canopy: Windows gives no window to draw in (GLFW: %s); the command line works without one (canopy.exe help)", why)
	default:
		return fmt.Sprintf("canopy: the window needs OpenGL 2.1 from the graphics driver, which is missing or too old here (GLFW: %s); in a virtual machine or over Remote Desktop install the graphics driver or put Mesa's opengl32.dll beside canopy.exe; the command line works without it (canopy.exe help)", why)
	}
}
