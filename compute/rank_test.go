package compute

import (
	"slices"
	"testing"
)

// TestRank: the canonical order of the five backends, a backend outside it
// after them, and Names sorted by it (registered strangers last, by name).
func TestRank(t *testing.T) {
	canon := []string{NameGo, NameGoParallel, NameC, NameGL, NameCUDA}
	for i, n := range canon {
		if Rank(n) != i {
			t.Errorf("Rank(%q) = %d, want %d", n, Rank(n), i)
		}
	}
	if r := Rank("metal"); r <= Rank(NameCUDA) {
		t.Errorf("Rank(metal) = %d, not after cuda's %d", r, Rank(NameCUDA))
	}
	Register("zz-test", func() Backend { return nil })
	Register("aa-test", func() Backend { return nil })
	defer func() {
		regMu.Lock()
		delete(registry, "zz-test")
		delete(registry, "aa-test")
		regMu.Unlock()
	}()
	names := Names()
	if n := len(names); n < 2 || names[n-2] != "aa-test" || names[n-1] != "zz-test" {
		t.Errorf("Names() = %v: the unranked backends are not last, by name", names)
	}
	var ranked []int
	for _, n := range names[:len(names)-2] {
		ranked = append(ranked, Rank(n))
	}
	if !slices.IsSorted(ranked) {
		t.Errorf("Names() = %v: not in canonical order", names)
	}
}
