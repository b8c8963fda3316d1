package cuda

import (
	"canopy/compute/computetest"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
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
		computetest.SkipUnlessGPU(t, false, fmt.Sprintf("no usable CUDA driver: %v", err))
	}
	defer d.Close()
	v, err := d.Version()
	if err != nil || v < 11000 {
		t.Fatalf("Version = %d, %v", v, err)
	}
	n, err := d.DeviceCount()
	if err != nil || n < 1 {
		computetest.SkipUnlessGPU(t, false, fmt.Sprintf("no CUDA device: %d, %v", n, err))
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
