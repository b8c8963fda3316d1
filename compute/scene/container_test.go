package scene

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"encoding/binary"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// A deflated member read in place: header-sized reads inflate little,
// reads past the first MiB inflate the rest in the background; concurrent
// readers at any offset get the right bytes.
func TestInflater(t *testing.T) {
	data := make([]byte, 9<<20+123)
	rng := rand.New(rand.NewPCG(3, 4))
	// Compressible (each byte 0 to 15), like a JP2 is not, but it is
	// large; eight bytes a draw, which the race detector's run needs.
	for i := 0; i < len(data); i += 8 {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], rng.Uint64()&0x0f0f0f0f0f0f0f0f)
		copy(data[i:], b[:])
	}
	p := filepath.Join(t.TempDir(), "x.zip")
	f, _ := os.Create(p)
	w := zip.NewWriter(f)
	// The fastest level: compressing is most of this test's time under
	// the race detector, and the reader is what it tests.
	w.RegisterCompressor(zip.Deflate, func(out io.Writer) (io.WriteCloser, error) { return flate.NewWriter(out, flate.BestSpeed) })
	m, _ := w.Create("a/band.jp2")
	m.Write(data)
	h := &zip.FileHeader{Name: "a/short.jp2", Method: zip.Deflate}
	m, _ = w.CreateHeader(h)
	m.Write(data[:3<<20])
	w.Close()
	f.Close()
	// Make short.jp2 declare more than it holds (the central directory's
	// sizes are what the reader trusts).
	b, _ := os.ReadFile(p)
	cd := bytes.LastIndex(b, []byte("PK\x01\x02"))
	off := cd + 24 // uncompressed size in the central directory entry
	b[off], b[off+1], b[off+2], b[off+3] = 0, 0, 0x40, 0
	os.WriteFile(p, b, 0o644)

	c, err := openZip(p)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	r, n, err := c.open("a/band.jp2")
	if err != nil || n != int64(len(data)) {
		t.Fatal(n, err)
	}
	head := make([]byte, 100)
	if _, err := r.ReadAt(head, 0); err != nil || !bytes.Equal(head, data[:100]) {
		t.Fatal("header read", err)
	}
	if z := r.(*inflater); z.bg || len(z.buf) > 1<<20 {
		t.Fatalf("a header read inflated %d bytes (background %v)", len(z.buf), z.bg)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rg := rand.New(rand.NewPCG(uint64(g), 9))
			for range 200 {
				o := rg.IntN(len(data))
				buf := make([]byte, rg.IntN(1<<20))
				k, err := r.ReadAt(buf, int64(o))
				if k != min(len(buf), len(data)-o) || (err != nil && err != io.EOF) || !bytes.Equal(buf[:k], data[o:o+k]) {
					t.Errorf("ReadAt(%d, %d): %d %v", len(buf), o, k, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	// The member past its first MiB is in the temporary file, not memory.
	if z := r.(*inflater); !z.bg || z.spill == nil || cap(z.buf) > 2<<20 || z.have != int64(len(data)) {
		t.Fatalf("after reading the whole member: background %v, spill %v, %d bytes in memory, %d inflated", z.bg, z.spill != nil, cap(z.buf), z.have)
	}
	band := r
	r, _, err = c.open("a/short.jp2")
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.ReadAt(make([]byte, 5<<20), 0)
	if err == nil || !strings.Contains(err.Error(), "a/short.jp2") {
		t.Fatalf("short member: %v", err)
	}
	// Closing the archive frees the temporary files: reads fail after it.
	sp := band.(*inflater).spill
	c.close()
	if _, err := band.ReadAt(make([]byte, 10), 5<<20); err == nil {
		t.Error("a read after the archive was closed succeeded")
	}
	if _, err := sp.ReadAt(make([]byte, 1), 0); err == nil {
		t.Error("the temporary file is still open after close")
	}
	if _, err := os.Stat(sp.Name()); err == nil {
		t.Errorf("the temporary file %s is left after close", sp.Name())
	}
}
