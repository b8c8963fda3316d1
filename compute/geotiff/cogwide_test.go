package geotiff

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCOGVeryWide: an image so wide that a row of 512² tiles would take
// gigabytes gets smaller tiles (and reads back as written); one wider than
// MaxCOGWidth is refused at once, naming the limit.
func TestCOGVeryWide(t *testing.T) {
	if testing.Short() {
		t.Skip("the widest COG, a limit and not concurrency: it runs without -short (make test's run after the race detector's)")
	}
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "wide.tif"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewCOG(f, MaxCOGWidth+1, 1, 1, nil, COGOptions{}); err == nil || !strings.Contains(err.Error(), "more than the 262144") {
		t.Errorf("an image %d pixels wide: %v", MaxCOGWidth+1, err)
	}
	w := MaxCOGWidth
	c, err := NewCOG(f, w, 3, 1, nil, COGOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c.ts*w*4 > maxTileRow {
		t.Errorf("tiles of %d² make a row of %d MiB", c.ts, c.ts*w*4>>20)
	}
	rows := make([]float32, 3*w)
	for i := range rows {
		rows[i] = float32(i % 1000)
	}
	if err := c.WriteRows(0, 3, [][]float32{rows}); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	r, err := Open(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	b, err := r.ReadBand(1)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range b.Data {
		if v != rows[i] {
			t.Fatalf("pixel %d: %v, want %v", i, v, rows[i])
		}
	}
}
