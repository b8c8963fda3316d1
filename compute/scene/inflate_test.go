package scene

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInflateOnceWithinBudget: a compressed member read twice is inflated
// once (the same inflater serves both), and members whose inflated sizes
// together pass maxInflate are refused before any is inflated, naming the
// limit and the way round.
func TestInflateOnceWithinBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("deflates 400 MiB (-short)")
	}
	const n = 400 << 20
	var z bytes.Buffer
	fw, _ := flate.NewWriter(&z, flate.BestSpeed)
	zero := make([]byte, 1<<20)
	crc := crc32.NewIEEE()
	for range n >> 20 {
		fw.Write(zero)
		crc.Write(zero)
	}
	fw.Close()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for _, name := range []string{"a/B04.jp2", "a/B08.jp2"} {
		raw, err := w.CreateRaw(&zip.FileHeader{Name: name, Method: zip.Deflate, CRC32: crc.Sum32(), CompressedSize64: uint64(z.Len()), UncompressedSize64: n})
		if err != nil {
			t.Fatal(err)
		}
		raw.Write(z.Bytes())
	}
	w.Close()
	p := filepath.Join(t.TempDir(), "bands.zip")
	os.WriteFile(p, buf.Bytes(), 0o644)
	c, err := openZip(p)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	r1, _, err := c.open("a/B04.jp2")
	if err != nil {
		t.Fatal(err)
	}
	r2, _, err := c.open("a/B04.jp2")
	if err != nil || r1 != r2 {
		t.Fatalf("the member opened twice gives two readers (%v)", err)
	}
	if _, _, err := c.open("a/B08.jp2"); err == nil || !strings.Contains(err.Error(), "more than the 768 MiB") || !strings.Contains(err.Error(), "unzip") {
		t.Errorf("two members of 400 MiB: %v", err)
	}
}
