package compute

import (
	"bufio"
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

func hostCPUModel() string { return cpuModel() }
