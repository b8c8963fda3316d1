package vec

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// fallbackCacheBytes is the last-level cache assumed where the system does
// not say (no Linux sysfs): a desktop CPU's.
const fallbackCacheBytes = 32 << 20

// CacheBytes is the size of the CPU's last-level cache as Linux's sysfs
// reports it for CPU 0 (the largest level listed), or 32 MiB where it
// cannot be read. A block program whose bands and outputs together exceed
// it writes its outputs with streaming stores: they could not stay in the
// cache for whoever reads them next anyway.
var CacheBytes = sync.OnceValue(func() int64 {
	return lastLevelCache("/sys/devices/system/cpu/cpu0/cache")
})

// lastLevelCache reads the sizes (such as "307200K") of the cache levels
// under dir and returns the highest level's, or fallbackCacheBytes.
func lastLevelCache(dir string) int64 {
	idx, _ := filepath.Glob(filepath.Join(dir, "index*"))
	best, size := 0, int64(0)
	for _, d := range idx {
		lv, err1 := readInt(filepath.Join(d, "level"))
		raw, err2 := os.ReadFile(filepath.Join(d, "size"))
		if err1 != nil || err2 != nil {
			continue
		}
		s := strings.TrimSpace(string(raw))
		mult := int64(1)
		switch {
		case strings.HasSuffix(s, "K"):
			mult, s = 1<<10, strings.TrimSuffix(s, "K")
		case strings.HasSuffix(s, "M"):
			mult, s = 1<<20, strings.TrimSuffix(s, "M")
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 {
			continue
		}
		if lv > best {
			best, size = lv, n*mult
		}
	}
	if size == 0 {
		return fallbackCacheBytes
	}
	return size
}

func readInt(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}
