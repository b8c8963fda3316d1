package egl_test

import (
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"

	"canopy/native/egl/gl"

	"canopy/native/egl"
)

// onThread runs f on a fresh goroutine locked to its OS thread, as every
// user of this package must.
func onThread(f func()) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		f()
	}()
	wg.Wait()
}

var glInit = sync.OnceValue(func() error { return gl.Init(egl.ProcAddress) })

// needEGL skips when this machine has no libEGL at all: the only case the
// tests may not run.
func needEGL(t *testing.T) {
	t.Helper()
	if err := egl.Load(); err != nil {
		t.Skipf("EGL unavailable on this machine: %v", err)
	}
}

// renderer opens a context of the given kind, checks it is current with a
// 4.3 core profile and returns GL_RENDERER.
func renderer(t *testing.T, kind egl.Kind) (string, error) {
	var name string
	var err error
	onThread(func() {
		var ctx *egl.Context
		ctx, err = egl.Open(kind, 4, 3)
		if err != nil {
			return
		}
		defer ctx.Close()
		if !ctx.Current() {
			t.Errorf("%s: context not current after Open", kind)
		}
		if e := glInit(); e != nil {
			t.Fatalf("loading GL through eglGetProcAddress: %v", e)
		}
		var major, minor, mask int32
		gl.GetIntegerv(gl.MAJOR_VERSION, &major)
		gl.GetIntegerv(gl.MINOR_VERSION, &minor)
		gl.GetIntegerv(gl.CONTEXT_PROFILE_MASK, &mask)
		if major*10+minor < 43 || mask&gl.CONTEXT_CORE_PROFILE_BIT == 0 {
			t.Errorf("%s: got OpenGL %d.%d profile mask %#x, want 4.3 core", kind, major, minor, mask)
		}
		name = gl.GoStr(gl.GetString(gl.RENDERER))
		t.Logf("%s: %s, OpenGL %s on %s", kind, name, gl.GoStr(gl.GetString(gl.VERSION)), ctx.Display())
		ctx.Close()
		if ctx.Current() {
			t.Errorf("%s: context still current after Close", kind)
		}
	})
	return name, err
}

func TestOpenAny(t *testing.T) {
	needEGL(t)
	name, err := renderer(t, egl.Any)
	if err != nil {
		t.Fatal(err)
	}
	if name == "" {
		t.Fatal("empty GL_RENDERER")
	}
	if os.Getenv("CANOPY_EXPECT_GPU") != "" && strings.Contains(strings.ToLower(name), "llvmpipe") {
		t.Errorf("CANOPY_EXPECT_GPU is set but the context runs on %s", name)
	}
}

// TestOpenEachKind opens every kind this machine offers. Mesa offers its
// software device and the surfaceless platform; the NVIDIA driver offers a
// hardware device. A kind that is absent must fail with a message, never
// crash or hand out a context of another kind.
func TestOpenEachKind(t *testing.T) {
	needEGL(t)
	opened := 0
	for _, k := range []egl.Kind{egl.Hardware, egl.Software, egl.Surfaceless} {
		name, err := renderer(t, k)
		if err != nil {
			if !strings.Contains(err.Error(), "EGL") {
				t.Errorf("%s: error does not say where it came from: %v", k, err)
			}
			t.Logf("%s: %v", k, err)
			continue
		}
		opened++
		sw := strings.Contains(strings.ToLower(name), "llvmpipe") || strings.Contains(strings.ToLower(name), "softpipe")
		if k == egl.Hardware && sw {
			t.Errorf("hardware kind gave software renderer %s", name)
		}
		if k == egl.Software && !sw {
			t.Errorf("software kind gave renderer %s", name)
		}
	}
	if opened == 0 {
		t.Fatal("no kind of display gave a 4.3 context, though libEGL loaded")
	}
}

// TestTwoContextsTwoThreads holds two contexts current at once on two
// threads: each stays current on its own thread while the other works.
func TestTwoContextsTwoThreads(t *testing.T) {
	needEGL(t)
	var wg sync.WaitGroup
	hold := make(chan struct{})
	errs := make(chan error, 2)
	opened := make(chan *egl.Context, 2)
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			ctx, err := egl.Open(egl.Any, 4, 3)
			if err != nil {
				errs <- err
				opened <- nil
				return
			}
			opened <- ctx
			<-hold
			if !ctx.Current() {
				t.Error("context lost currency while another thread held its own")
			}
			ctx.Close()
		}()
	}
	a, b := <-opened, <-opened
	close(hold)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if a == b {
		t.Fatal("two Opens returned one context")
	}
}

func TestParseKind(t *testing.T) {
	for _, s := range []string{"any", "hardware", "software", "surfaceless"} {
		k, err := egl.ParseKind(s)
		if err != nil || k.String() != s {
			t.Errorf("ParseKind(%q) = %v, %v", s, k, err)
		}
	}
	if _, err := egl.ParseKind("default"); err == nil {
		t.Error("ParseKind accepted \"default\"")
	}
}
