package shaders

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The committed fat binary was built from the committed ndvi.cu: the hashes
// build-cuda.sh recorded match both files on disk and the embedded copies.
func TestCUDAFatbinMatchesSource(t *testing.T) {
	if err := CheckCUDAFatbin(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"ndvi.cu", "ndvi.fatbin"} {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if name == "ndvi.cu" {
			data = bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
		}
		sum := sha256.Sum256(data)
		if !strings.Contains(CUDAManifest, hex.EncodeToString(sum[:])+"  "+name) {
			t.Errorf("%s on disk does not match ndvi.fatbin.sha256: run go generate ./shaders on a machine with nvcc %s", name, CUDAToolkit)
		}
	}
	// A fat binary starts with the fatbin magic 0xBA55ED50 (little-endian).
	if len(CUDAFatbin) < 16 || !bytes.Equal(CUDAFatbin[:4], []byte{0x50, 0xed, 0x55, 0xba}) {
		t.Errorf("ndvi.fatbin does not start with the fat binary magic: % x", CUDAFatbin[:min(8, len(CUDAFatbin))])
	}
}

// The check notices a source that no longer matches.
func TestCheckCUDAFatbinCatchesEdits(t *testing.T) {
	src := CUDASource
	defer func() { CUDASource = src }()
	CUDASource = src + "\n// edited\n"
	if err := CheckCUDAFatbin(); err == nil || !strings.Contains(err.Error(), "ndvi.cu") {
		t.Errorf("edited source passed the check: %v", err)
	}
}

// The kernel names and ABI constants in cuda.go are the ones ndvi.cu
// defines: the backend sizes its grids and flags from them.
func TestCUDAConstantsMatchSource(t *testing.T) {
	define := func(name string) int {
		m := regexp.MustCompile(`(?m)^#define ` + name + ` (\d+)`).FindStringSubmatch(CUDASource)
		if m == nil {
			t.Fatalf("ndvi.cu does not #define %s", name)
		}
		v, _ := strconv.Atoi(m[1])
		return v
	}
	if b := define("NDVI_BLOCK"); b != CUDABlock {
		t.Errorf("NDVI_BLOCK is %d in ndvi.cu, CUDABlock %d", b, CUDABlock)
	}
	if u := define("NDVI_UNROLL"); 4*u != CUDAPixelsPerThreadF32 {
		t.Errorf("ndvi_f32 does %d pixels a thread, CUDAPixelsPerThreadF32 says %d", 4*u, CUDAPixelsPerThreadF32)
	}
	if define("NDVI_HAS_RED") != 1 || define("NDVI_HAS_NIR") != 2 {
		t.Error("nodata flag bits differ from the documented 1 (red) and 2 (nir)")
	}
	for _, k := range []string{CUDAKernelF32, CUDAKernelU16} {
		if !strings.Contains(CUDASource, "__global__ void __launch_bounds__(NDVI_BLOCK)\n"+k+"(") {
			t.Errorf("ndvi.cu has no extern \"C\" kernel %s", k)
		}
	}
	// ndvi_u16 loads one uint4 (8 uint16) per band per thread.
	if !strings.Contains(CUDASource, "const unsigned long long nv = n >> 3;") || CUDAPixelsPerThreadU16 != 8 {
		t.Error("ndvi_u16's pixels per thread disagree with CUDAPixelsPerThreadU16")
	}
}
