package compute

import (
	"os"
	"strings"
	"testing"
)

// With an NVIDIA device present and a host whose C kernels beat any PCIe
// bus, auto takes c without opening the GPU; with a slower host it goes
// on to the GPU (here unavailable, so the first backend that runs).
func TestAutoSkipsTheGPUForAFastHost(t *testing.T) {
	defer func(p func() bool, h func(int) float64) { gpuDevicePresent, hostCopy = p, h }(gpuDevicePresent, hostCopy)
	gpuDevicePresent = func() bool { return true }
	measured := 0
	for _, c := range []struct {
		host float64
		want string
	}{
		{400, "more than any PCIe bus moves (128 GB/s both ways); cuda was not opened"},
		{50, ""},
	} {
		hostCopy = func(int) float64 { measured++; return c.host }
		b, why, err := AutoWhy()
		if err != nil {
			t.Fatal(err)
		}
		b.Close()
		if b.Name() != NameC {
			t.Fatalf("host %g GB/s: auto chose %s (%s)", c.host, b.Name(), why)
		}
		if c.want != "" && !strings.Contains(why, c.want) {
			t.Errorf("host %g GB/s: %q", c.host, why)
		}
		if c.want == "" && strings.Contains(why, "not opened") {
			t.Errorf("host %g GB/s skipped the GPU: %q", c.host, why)
		}
	}
	if measured != 2 {
		t.Errorf("the host was measured %d times in two choices", measured)
	}
}

// A bus measured at an earlier start on the same GPUs and driver decides
// without opening the GPU: a host whose C kernels beat it takes c, one
// that does not goes on to the GPU; a record for other GPUs, an old one
// or a torn file is not used.
func TestAutoUsesTheMeasuredBus(t *testing.T) {
	defer func(p func() bool, h func(int) float64, k func() string) {
		gpuDevicePresent, hostCopy, gpuKey = p, h, k
	}(gpuDevicePresent, hostCopy, gpuKey)
	gpuDevicePresent = func() bool { return true }
	key := "NVRM version: test 1.0 | 0000:01:00.0"
	gpuKey = func() string { return key }
	dir := t.TempDir()
	t.Setenv(EnvCacheDir, dir)
	if _, ok := cachedBus(NameCUDA); ok {
		t.Fatal("a bus rate came from an empty cache")
	}
	storeBus(NameCUDA, 101)
	r, ok := cachedBus(NameCUDA)
	if !ok || r.Duplex != 101 || r.Key != key {
		t.Fatalf("stored 101 GB/s, read %+v %v", r, ok)
	}
	// Where cuda really runs, a choice that opens it may keep it.
	choose := func(host float64) string {
		t.Helper()
		hostCopy = func(int) float64 { return host }
		b, why, err := AutoWhy()
		if err != nil {
			t.Fatal(err)
		}
		b.Close()
		if b.Name() != NameC && (b.Name() != NameCUDA || strings.Contains(why, "not opened")) {
			t.Fatalf("host %g GB/s: auto chose %s (%s)", host, b.Name(), why)
		}
		return why
	}
	if why := choose(150); !strings.HasPrefix(why, NameC+":") || !strings.Contains(why, "bus moved both ways when measured on") || !strings.Contains(why, "(101 GB/s); cuda was not opened") {
		t.Errorf("host 150 GB/s, bus 101 measured: %q", why)
	}
	if why := choose(100); strings.Contains(why, "not opened") {
		t.Errorf("host 100 GB/s (C kernels 80) against a 101 GB/s bus skipped the GPU: %q", why)
	}
	// Other GPUs or driver: not this record.
	key = "NVRM version: test 2.0 | 0000:01:00.0"
	if why := choose(150); strings.Contains(why, "not opened") {
		t.Errorf("a record of another driver was used: %q", why)
	}
	key = "NVRM version: test 1.0 | 0000:01:00.0"
	f := busFile(NameCUDA, key)
	data, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{string(data[:len(data)/2]), strings.Replace(string(data), `"measured":"2`, `"measured":"1`, 1), `{"backend":"cuda","duplex_gbps":0}`} {
		if err := os.WriteFile(f, []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		if r, ok := cachedBus(NameCUDA); ok {
			t.Errorf("record %q was used: %+v", bad, r)
		}
	}
	t.Setenv(EnvCacheDir, "off")
	if busFile(NameCUDA, key) != "" {
		t.Error("CANOPY_CACHE_DIR=off still names a cache file")
	}
	storeBus(NameCUDA, 50)
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the cache folder holds %d files, want the one record", len(entries))
	}
}
