package gl_test

import (
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"canopy/native/egl"
	"canopy/native/egl/gl"
)

func TestInitNamesWhatIsMissing(t *testing.T) {
	err := gl.Init(func(string) unsafe.Pointer { return nil })
	if err == nil {
		t.Fatal("Init succeeded with no entry points")
	}
	for _, name := range []string{"glDispatchCompute", "glBufferStorage", "glFenceSync", "glGetError"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error does not name %s: %v", name, err)
		}
	}
}

// TestCallsReachTheDriver makes a context and round-trips data through a
// buffer, a fence and a timer query, so that every argument reaches the
// driver in its place.
func TestCallsReachTheDriver(t *testing.T) {
	if err := egl.Load(); err != nil {
		t.Skipf("no EGL on this machine: %v", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		ctx, err := egl.Open(egl.Any, 4, 3)
		if err != nil {
			t.Errorf("no 4.3 context though libEGL loads: %v", err)
			return
		}
		defer ctx.Close()
		if err := gl.Init(egl.ProcAddress); err != nil {
			t.Error(err)
			return
		}
		if r := gl.GoStr(gl.GetString(gl.RENDERER)); r == "" {
			t.Error("empty GL_RENDERER")
		}
		in := []float32{1, 2, 3, 4, 5, 6, 7, 8}
		var buf [2]uint32
		gl.GenBuffers(2, &buf[0])
		defer gl.DeleteBuffers(2, &buf[0])
		gl.BindBuffer(gl.COPY_READ_BUFFER, buf[0])
		gl.BufferStorage(gl.COPY_READ_BUFFER, 32, nil, gl.DYNAMIC_STORAGE_BIT)
		gl.BufferSubData(gl.COPY_READ_BUFFER, 0, 32, unsafe.Pointer(&in[0]))
		gl.BindBuffer(gl.COPY_WRITE_BUFFER, buf[1])
		gl.BufferStorage(gl.COPY_WRITE_BUFFER, 32, nil, gl.MAP_READ_BIT)
		// Copy the second half of buf[0] to the start of buf[1].
		gl.CopyBufferSubData(gl.COPY_READ_BUFFER, gl.COPY_WRITE_BUFFER, 16, 0, 16)
		f := gl.FenceSync(gl.SYNC_GPU_COMMANDS_COMPLETE, 0)
		if r := gl.ClientWaitSync(f, gl.SYNC_FLUSH_COMMANDS_BIT, 5e9); r != gl.ALREADY_SIGNALED && r != gl.CONDITION_SATISFIED {
			t.Errorf("ClientWaitSync = %#x", r)
		}
		gl.DeleteSync(f)
		out := make([]float32, 4)
		gl.GetBufferSubData(gl.COPY_WRITE_BUFFER, 0, 16, unsafe.Pointer(&out[0]))
		for i, v := range out {
			if v != in[4+i] {
				t.Errorf("copied buffer[%d] = %v, want %v", i, v, in[4+i])
			}
		}
		if e := gl.GetError(); e != gl.NO_ERROR {
			t.Errorf("GL error %#x", e)
		}
	}()
	<-done
}
