package cuda

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// A library that does not exist gives a LoadError naming it, not a crash.
func TestLoadMissingLibrary(t *testing.T) {
	const name = "libcanopy-no-such-cuda-driver.so.1"
	d, err := Load(name)
	if err == nil {
		d.Close()
		t.Fatalf("Load(%q) succeeded", name)
	}
	var le *LoadError
	if !errors.As(err, &le) {
		t.Fatalf("Load(%q): error %T %v, want *LoadError", name, err, err)
	}
	if le.Library != name || le.Symbol != "" || !strings.Contains(err.Error(), name) {
		t.Errorf("Load(%q): %+v / %q", name, le, err)
	}
}

// A library that opens but is not the CUDA driver is reported by the first
// missing symbol, not by a crash.
func TestLoadLibraryWithoutDriverSymbols(t *testing.T) {
	const name = "libm.so.6"
	d, err := Load(name)
	if err == nil {
		d.Close()
		t.Fatalf("Load(%q) succeeded", name)
	}
	var le *LoadError
	if !errors.As(err, &le) {
		t.Fatalf("Load(%q): %T %v", name, err, err)
	}
	if le.Msg != "" && strings.Contains(le.Msg, "cannot open") {
		t.Skipf("%s is not on this system: %s", name, le.Msg)
	}
	if le.Symbol != "cuInit" {
		t.Errorf("Load(%q): missing symbol %q, want cuInit (the first in the table): %v", name, le.Symbol, err)
	}
	if !strings.Contains(err.Error(), "older than") {
		t.Errorf("message does not say the driver is older than needed: %v", err)
	}
}

func TestPackArgs(t *testing.T) {
	var packed [64]byte
	var offs [8]int
	args := []any{DevicePtr(0x1122334455667788), float32(1.5), uint64(7), int32(-2), float32(-0.25), int32(3)}
	if err := packArgs(packed[:], offs[:], args); err != nil {
		t.Fatal(err)
	}
	want := []int{0, 8, 16, 24, 28, 32}
	for i, w := range want {
		if offs[i] != w {
			t.Fatalf("offsets %v, want %v", offs[:len(want)], want)
		}
	}
	ne := binary.NativeEndian
	if ne.Uint64(packed[0:]) != 0x1122334455667788 || math.Float32frombits(ne.Uint32(packed[8:])) != 1.5 ||
		ne.Uint64(packed[16:]) != 7 || int32(ne.Uint32(packed[24:])) != -2 ||
		math.Float32frombits(ne.Uint32(packed[28:])) != -0.25 || ne.Uint32(packed[32:]) != 3 {
		t.Errorf("packed bytes wrong: % x", packed[:36])
	}
	// A float32 then a pointer: the pointer is aligned to 8.
	if err := packArgs(packed[:], offs[:], []any{float32(1), DevicePtr(2)}); err != nil || offs[1] != 8 {
		t.Errorf("pointer after float32 at %d (%v), want 8", offs[1], err)
	}
	if err := packArgs(packed[:], offs[:], []any{"text"}); err == nil {
		t.Error("a string argument was accepted")
	}
	if err := packArgs(packed[:8], offs[:], []any{uint64(1), uint64(2)}); err == nil {
		t.Error("arguments overflowing the buffer were accepted")
	}
}

func TestVersionString(t *testing.T) {
	for v, want := range map[int]string{13000: "13.0", 12040: "12.4", 11080: "11.8"} {
		if got := VersionString(v); got != want {
			t.Errorf("VersionString(%d) = %q, want %q", v, got, want)
		}
	}
}

func TestErrorCode(t *testing.T) {
	err := error(&Error{Func: "cuMemAlloc_v2", Code: ErrOutOfMemory, Name: "CUDA_ERROR_OUT_OF_MEMORY", Text: "out of memory"})
	wrapped := errors.Join(errors.New("context"), err)
	if c, ok := Code(wrapped); !ok || c != ErrOutOfMemory {
		t.Errorf("Code = %d, %v", c, ok)
	}
	if _, ok := Code(errors.New("plain")); ok {
		t.Error("Code found a CUresult in a plain error")
	}
	if s := err.Error(); !strings.Contains(s, "cuMemAlloc_v2") || !strings.Contains(s, "CUDA_ERROR_OUT_OF_MEMORY") {
		t.Errorf("message %q lacks the function or the code name", s)
	}
}

// With a driver present, the basic queries work and a bad call comes back
// as an *Error with the driver's name for the code.
func TestDriver(t *testing.T) {
	d, err := Open()
	if err != nil {
		skipUnlessGPU(t, false, fmt.Sprintf("no usable CUDA driver: %v", err))
	}
	defer d.Close()
	v, err := d.Version()
	if err != nil || v < 11000 {
		t.Fatalf("Version = %d, %v", v, err)
	}
	n, err := d.DeviceCount()
	if err != nil || n < 1 {
		skipUnlessGPU(t, false, fmt.Sprintf("no CUDA device: %d, %v", n, err))
	}
	dev, err := d.Device(0)
	if err != nil {
		t.Fatal(err)
	}
	name, err := dev.Name()
	if err != nil || name == "" {
		t.Fatalf("Name = %q, %v", name, err)
	}
	mem, err := dev.TotalMem()
	if err != nil || mem < 1<<28 {
		t.Fatalf("TotalMem = %d, %v", mem, err)
	}
	major, err := dev.Attribute(AttrComputeCapabilityMajor)
	if err != nil || major < 3 {
		t.Fatalf("compute capability major = %d, %v", major, err)
	}
	t.Logf("driver CUDA %s, %s, compute %d.x, %d MiB", VersionString(v), name, major, mem>>20)
	if _, err := d.Device(n + 100); err == nil {
		t.Error("cuDeviceGet of a device that does not exist succeeded")
	} else if c, ok := Code(err); !ok || c == Success || !strings.Contains(err.Error(), "CUDA_ERROR_") {
		t.Errorf("bad device: %v (code %d, %v)", err, c, ok)
	}
}

// jitPTX is a kernel storing 1.0 through its one pointer; jitBadLine is
// its line 14 broken (a register never declared).
const jitPTX = `.version 7.0
.target sm_75
.address_size 64

.visible .entry canopy_test(
	.param .u64 canopy_test_param_0
)
{
	.reg .b64 %rd<3>;
	.reg .f32 %f<2>;
	ld.param.u64 %rd1, [canopy_test_param_0];
	cvta.to.global.u64 %rd2, %rd1;
	mov.f32 %f1, 0f3F800000;
	st.global.f32 [%rd2], %f1;
	ret;
}
`

// The JIT compiles PTX text, reports its wall time and registers, and a
// PTX error comes back with the compiler's log naming the line.
func TestLoadModuleJIT(t *testing.T) {
	d, err := Open()
	if err != nil {
		skipUnlessGPU(t, false, fmt.Sprintf("no usable CUDA driver: %v", err))
	}
	defer d.Close()
	if n, err := d.DeviceCount(); err != nil || n < 1 {
		skipUnlessGPU(t, false, fmt.Sprintf("no CUDA device: %d, %v", n, err))
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	dev, err := d.Device(0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, err := dev.RetainPrimaryContext()
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Release()
	if err := ctx.SetCurrent(); err != nil {
		t.Fatal(err)
	}
	// A program of this run's own (the stored constant, 1.0 plus a few
	// ulps): the driver keeps compiled PTX in its cache (~/.nv), and from
	// there a module loads without a JIT and with no info log, so that a
	// second run on the same machine would not compile at all.
	ptx := strings.Replace(jitPTX, "0f3F800000", fmt.Sprintf("0f3F8%05X", time.Now().UnixNano()&0xFFFFF), 1)
	m, log, err := d.LoadModuleJIT([]byte(ptx))
	if err != nil {
		t.Fatalf("valid PTX: %v; log %q", err, log.Error)
	}
	if _, err := m.Function("canopy_test"); err != nil {
		t.Error(err)
	}
	m.Unload()
	t.Logf("JIT wall %v; info log %q", log.Wall, log.Info)
	if !strings.Contains(log.Info, "registers") {
		t.Errorf("the verbose info log does not report registers: %q", log.Info)
	}
	bad := strings.Replace(ptx, "st.global.f32 [%rd2], %f1;", "st.global.f32 [%rd2], %r1;", 1)
	_, log, err = d.LoadModuleJIT([]byte(bad))
	if err == nil {
		t.Fatal("PTX with an undeclared register compiled")
	}
	if c, _ := Code(err); c != ErrInvalidPTX {
		t.Errorf("broken PTX: %v, want CUDA_ERROR_INVALID_PTX", err)
	}
	if !strings.Contains(log.Error, "line 14") {
		t.Errorf("error log does not name line 14: %q", log.Error)
	}
	if _, _, err := d.LoadModuleJIT(nil); err == nil {
		t.Error("an empty image loaded")
	}
}

// skipUnlessGPU skips t with reason when there is no usable CUDA device,
// and fails it instead when CANOPY_EXPECT_GPU is set (the GPU machine's
// check script sets it: the GPU tests must run there).
func skipUnlessGPU(t testing.TB, available bool, reason string) {
	t.Helper()
	if available {
		return
	}
	if os.Getenv("CANOPY_EXPECT_GPU") != "" {
		t.Fatalf("CANOPY_EXPECT_GPU is set but the GPU is not usable: %s", reason)
	}
	t.Skipf("no usable GPU here: %s", reason)
}
