package compute

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
)

var cpuModel = sync.OnceValue(func() string {
	f, err := os.Open("/proc/cpuinfo")
	if err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			k, v, ok := strings.Cut(sc.Text(), ":")
			if ok && strings.TrimSpace(k) == "model name" {
				return strings.Join(strings.Fields(v), " ")
			}
		}
	}
	return runtime.GOARCH + " CPU"
})

// CPUName describes the host CPU for a backend's Info.Device: the model,
// the threads the backend uses, the OS and architecture.
func CPUName(threads int) string {
	return fmt.Sprintf("%s (%d threads, %s/%s)", cpuModel(), threads, runtime.GOOS, runtime.GOARCH)
}
