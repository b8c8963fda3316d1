//go:build !windows

package compute

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// nvidiaPresent reports whether the NVIDIA driver's control device is there.
func nvidiaPresent() bool {
	_, err := os.Stat("/dev/nvidiactl")
	return err == nil
}

// gpuDriverKey is the NVIDIA driver's version line and its GPUs' bus
// addresses, "" without that driver.
func gpuDriverKey() string {
	v, err := os.ReadFile("/proc/driver/nvidia/version")
	if err != nil {
		return ""
	}
	first, _, _ := strings.Cut(string(v), "\n")
	gpus, _ := filepath.Glob("/proc/driver/nvidia/gpus/*")
	for i := range gpus {
		gpus[i] = filepath.Base(gpus[i])
	}
	sort.Strings(gpus)
	return strings.TrimSpace(first) + " | " + strings.Join(gpus, ",")
}
