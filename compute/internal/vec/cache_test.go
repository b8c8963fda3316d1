package vec

import (
	"os"
	"path/filepath"
	"testing"
)

// TestLastLevelCache reads sysfs-shaped folders: the highest level wins,
// K and M suffixes, and the fallback where nothing can be read.
func TestLastLevelCache(t *testing.T) {
	dir := t.TempDir()
	write := func(idx, level, size string) {
		d := filepath.Join(dir, idx)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(d, "level"), []byte(level+"\n"), 0o644)
		os.WriteFile(filepath.Join(d, "size"), []byte(size+"\n"), 0o644)
	}
	if got := lastLevelCache(dir); got != fallbackCacheBytes {
		t.Errorf("empty folder: %d, want the fallback %d", got, fallbackCacheBytes)
	}
	write("index0", "1", "48K")
	write("index2", "2", "2048K")
	write("index3", "3", "307200K")
	if got := lastLevelCache(dir); got != 307200<<10 {
		t.Errorf("three levels: %d, want %d", got, 307200<<10)
	}
	write("index4", "4", "1M")
	if got := lastLevelCache(dir); got != 1<<20 {
		t.Errorf("a fourth level of 1M: %d, want %d", got, 1<<20)
	}
	write("index5", "5", "garbage")
	if got := lastLevelCache(dir); got != 1<<20 {
		t.Errorf("an unreadable fifth level: %d, want the fourth's %d", got, 1<<20)
	}
	if CacheBytes() <= 0 {
		t.Errorf("this machine's last-level cache: %d", CacheBytes())
	}
}
