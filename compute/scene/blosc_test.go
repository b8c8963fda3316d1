package scene

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"canopy/compute/fake"
	"canopy/compute/geotiff"
)

// gdalZarr writes w x h uint16 values v as a Zarr v2 array with GDAL's
// Zarr driver (Blosc with the compressor and shuffle given, chunks of
// cw x ch) and returns the array's folder.
func gdalZarr(t *testing.T, dir string, w, h int, v []uint16, cname, shuffle string, cw, ch int) string {
	t.Helper()
	needGDALTool(t)
	tif := filepath.Join(dir, "a.tif")
	if err := geotiff.WriteBands(tif, w, h, [][]uint16{v}, fake.GeoRef(), geotiff.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, fmt.Sprintf("%s-%s-%dx%d.zarr", cname, shuffle, cw, ch))
	if b, err := exec.Command("gdal_translate", "-q", "-of", "Zarr", "-co", "FORMAT=ZARR_V2", "-co", "COMPRESS=BLOSC", "-co", "BLOSC_CNAME="+cname,
		"-co", "BLOSC_CLEVEL=3", "-co", "BLOSC_SHUFFLE="+shuffle, "-co", fmt.Sprintf("BLOCKSIZE=%d,%d", ch, cw), "-co", "ARRAY_NAME=a", tif, out).CombinedOutput(); err != nil {
		t.Fatalf("gdal_translate: %v %s", err, b)
	}
	return filepath.Join(out, "a")
}

// TestBloscAgainstGDAL: chunks GDAL's Zarr driver (c-blosc) wrote decode
// to the values written, for zstd and zlib, no, byte and bit shuffle, and
// chunk sizes whose element count is not a multiple of 8.
func TestBloscAgainstGDAL(t *testing.T) {
	const w, h = 100, 70
	v := make([]uint16, w*h)
	for i := range v {
		v[i] = uint16(i * 7919 % 65536)
		if i%13 == 0 {
			v[i] = 0
		}
	}
	for _, c := range []struct {
		cname, shuffle string
		cw, ch         int
	}{
		{"zstd", "BIT", 64, 48}, {"zstd", "BYTE", 64, 48}, {"zstd", "NONE", 64, 48}, {"zlib", "BIT", 64, 48},
		{"zstd", "BIT", 37, 23}, {"zstd", "BYTE", 37, 23},
	} {
		t.Run(fmt.Sprintf("%s-%s-%dx%d", c.cname, c.shuffle, c.cw, c.ch), func(t *testing.T) {
			arr := gdalZarr(t, t.TempDir(), w, h, v, c.cname, c.shuffle, c.cw, c.ch)
			var meta struct {
				Chunks     []int  `json:"chunks"`
				Sep        string `json:"dimension_separator"`
				Compressor struct {
					ID string `json:"id"`
				} `json:"compressor"`
			}
			b, err := os.ReadFile(filepath.Join(arr, ".zarray"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &meta); err != nil || meta.Compressor.ID != "blosc" || len(meta.Chunks) != 2 || meta.Chunks[0] != c.ch || meta.Chunks[1] != c.cw {
				t.Fatalf(".zarray %s: %v", b, err)
			}
			if meta.Sep == "" {
				meta.Sep = "."
			}
			n := 0
			for cy := 0; cy*c.ch < h; cy++ {
				for cx := 0; cx*c.cw < w; cx++ {
					raw, err := os.ReadFile(filepath.Join(arr, fmt.Sprintf("%d%s%d", cy, meta.Sep, cx)))
					if err != nil {
						t.Fatal(err)
					}
					got, err := unblosc(raw, c.cw*c.ch*2)
					if err != nil {
						t.Fatalf("chunk %d.%d: %v", cy, cx, err)
					}
					for y := range c.ch {
						for x := range c.cw {
							gx, gy := cx*c.cw+x, cy*c.ch+y
							if gx >= w || gy >= h {
								continue
							}
							if g := binary.LittleEndian.Uint16(got[2*(y*c.cw+x):]); g != v[gy*w+gx] {
								t.Fatalf("chunk %d.%d at (%d, %d): %d, want %d", cy, cx, x, y, g, v[gy*w+gx])
							}
							n++
						}
					}
				}
			}
			if n != w*h {
				t.Fatalf("checked %d of %d values", n, w*h)
			}
		})
	}
	// Damaged chunks: one line, no panic.
	for _, b := range [][]byte{nil, make([]byte, 15), append([]byte{2, 1, 0x21, 2}, make([]byte, 12)...)} {
		if _, err := unblosc(b, 64); err == nil {
			t.Errorf("%x: no error", b)
		}
	}
}

// FuzzUnblosc: any bytes give a chunk of the size asked or an error,
// never a panic.
func FuzzUnblosc(f *testing.F) {
	f.Add([]byte{2, 1, 0x21, 2, 64, 0, 0, 0, 64, 0, 0, 0, 16, 0, 0, 0}, 64)
	f.Add(append([]byte{2, 1, 0x83, 2, 8, 0, 0, 0, 8, 0, 0, 0, 40, 0, 0, 0, 20, 0, 0, 0, 4, 0, 0, 0}, make([]byte, 16)...), 8)
	f.Add(append([]byte{2, 1, 0x86, 2, 16, 0, 0, 0, 8, 0, 0, 0, 40, 0, 0, 0, 24, 0, 0, 0, 32, 0, 0, 0}, make([]byte, 16)...), 16)
	f.Fuzz(func(t *testing.T, b []byte, want int) {
		if want < 0 || want > 1<<16 {
			return
		}
		out, err := unblosc(b, want)
		if err == nil && len(out) != want {
			t.Fatalf("%d bytes, want %d", len(out), want)
		}
	})
}
