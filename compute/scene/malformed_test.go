package scene

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"canopy/compute/internal/cputime"
	"compress/flate"
	"compress/gzip"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// zipTree zips a folder (members named from its parent, as products are),
// then lets extra add hostile members.
func zipTree(t *testing.T, dir, dst string, extra func(w *zip.Writer)) {
	t.Helper()
	f, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := zip.NewWriter(f)
	base := filepath.Dir(dir)
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(base, p)
		m, _ := w.Create(filepath.ToSlash(rel))
		b, _ := os.ReadFile(p)
		m.Write(b)
		return nil
	})
	if extra != nil {
		extra(w)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// rawMember adds a deflated member whose header declares size bytes while
// its data inflates to real bytes.
func rawMember(t *testing.T, w *zip.Writer, name string, real []byte, size uint64) {
	t.Helper()
	var buf bytes.Buffer
	fw, _ := flate.NewWriter(&buf, flate.BestCompression)
	fw.Write(real)
	fw.Close()
	deflatedMember(t, w, name, buf.Bytes(), crc32.ChecksumIEEE(real), size)
}

// deflatedMember writes a zip member of DEFLATE data, its CRC-32 and the
// size it declares as given.
func deflatedMember(t *testing.T, w *zip.Writer, name string, deflated []byte, crc uint32, size uint64) {
	t.Helper()
	h := &zip.FileHeader{Name: name, Method: zip.Deflate, CRC32: crc, CompressedSize64: uint64(len(deflated)), UncompressedSize64: size}
	m, err := w.CreateRaw(h)
	if err != nil {
		t.Fatal(err)
	}
	m.Write(deflated)
}

// zerosDeflated is a DEFLATE stream of n MiB of zeros (n >= 2) and its
// CRC-32, made from two compressed MiB: the blocks of the second (which
// refer only to the zeros before them, and end byte-aligned) repeated, so
// that a 256 MiB bomb takes milliseconds to make instead of compressing
// 256 MiB (20 s under the race detector).
func zerosDeflated(n int) ([]byte, uint32) {
	var buf bytes.Buffer
	fw, _ := flate.NewWriter(&buf, flate.BestCompression)
	mib := make([]byte, 1<<20)
	fw.Write(mib)
	fw.Flush()
	first := buf.Len()
	fw.Write(mib)
	fw.Flush()
	out := bytes.Clone(buf.Bytes())
	chunk := out[first:]
	for range n - 2 {
		out = append(out, chunk...)
	}
	buf.Reset()
	fw.Close() // the final, empty block
	out = append(out, buf.Bytes()...)
	crc := uint32(0)
	for range n {
		crc = crc32.Update(crc, crc32.IEEETable, mib)
	}
	return out, crc
}

// The repeated blocks of zerosDeflated inflate to what they claim.
func TestZerosDeflated(t *testing.T) {
	for _, n := range []int{2, 3, 5} {
		z, crc := zerosDeflated(n)
		got, err := io.ReadAll(flate.NewReader(bytes.NewReader(z)))
		if err != nil || len(got) != n<<20 || crc32.ChecksumIEEE(got) != crc || slices.ContainsFunc(got, func(b byte) bool { return b != 0 }) {
			t.Fatalf("%d MiB: %d bytes inflated (err %v), CRC %08x against %08x", n, len(got), err, crc32.ChecksumIEEE(got), crc)
		}
	}
}

// malformedSAFE copies the N0500 SAFE and lets edit break it.
func malformedSAFE(t *testing.T, edit func(safe string)) string {
	t.Helper()
	safe := filepath.Join(t.TempDir(), s2New+".SAFE")
	copyTree(t, fx(t, s2New+".SAFE"), safe)
	edit(safe)
	return safe
}

func band(t *testing.T, safe, name string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(safe, "GRANULE", "*", "IMG_DATA", "R*m", "*_"+name+".jp2"))
	if len(m) != 1 {
		t.Fatalf("no %s in %s", name, safe)
	}
	return m[0]
}

const entityBomb = `<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol9 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY xxe SYSTEM "file:///etc/passwd">
]>
<n1:Level-2A_User_Product xmlns:n1="x"><n1:General_Info><Product_Info><PRODUCT_URI>&lol9;&xxe;</PRODUCT_URI></Product_Info></n1:General_Info></n1:Level-2A_User_Product>
`

// Each malformed product gives one clear line, quickly and in bounded
// memory; Open or Load, whichever meets the problem.
func TestMalformed(t *testing.T) {
	write := func(p, s string) { os.WriteFile(p, []byte(s), 0o644) }
	mtd := func(safe string) string { return filepath.Join(safe, "MTD_MSIL2A.xml") }
	cases := []struct {
		name string
		path func(t *testing.T) string
		want string
	}{
		{"missing MTD", func(t *testing.T) string {
			return malformedSAFE(t, func(s string) { os.Remove(mtd(s)) })
		}, "without MTD_MSIL2A.xml"},
		{"MTD of another product", func(t *testing.T) string {
			return malformedSAFE(t, func(s string) {
				write(mtd(s), `<?xml version="1.0"?><n1:Level-1C_User_Product xmlns:n1="x"><a/></n1:Level-1C_User_Product>`)
			})
		}, "not a Level-2A product metadata file"},
		{"MTD without quantification", func(t *testing.T) string {
			return malformedSAFE(t, func(s string) {
				b, _ := os.ReadFile(mtd(s))
				write(mtd(s), strings.Replace(string(b), "BOA_QUANTIFICATION_VALUE", "BOA_Q", 2))
			})
		}, "no BOA_QUANTIFICATION_VALUE"},
		{"MTD not XML", func(t *testing.T) string {
			return malformedSAFE(t, func(s string) { write(mtd(s), "<n1:Level-2A_User_Product><unclosed>") })
		}, "malformed XML"},
		{"XML entity bomb", func(t *testing.T) string {
			return malformedSAFE(t, func(s string) { write(mtd(s), entityBomb) })
		}, "declares entities"},
		{"missing MTD_TL", func(t *testing.T) string {
			return malformedSAFE(t, func(s string) {
				m, _ := filepath.Glob(filepath.Join(s, "GRANULE", "*", "MTD_TL.xml"))
				os.Remove(m[0])
			})
		}, "MTD_TL.xml"},
		{"missing band file", func(t *testing.T) string {
			return malformedSAFE(t, func(s string) { os.Remove(band(t, s, "B04_10m")) })
		}, "B04 is listed in MTD_MSIL2A.xml but"},
		{"JP2 not a JP2", func(t *testing.T) string {
			return malformedSAFE(t, func(s string) { write(band(t, s, "B08_10m"), "not a jpeg 2000 file") })
		}, "not a JPEG 2000 file"},
		{"JP2 truncated", func(t *testing.T) string {
			return malformedSAFE(t, func(s string) {
				p := band(t, s, "B08_10m")
				b, _ := os.ReadFile(p)
				write(p, string(b[:len(b)*2/3]))
			})
		}, "jpeg2000"},
		{"JP2 of the wrong size", func(t *testing.T) string {
			return malformedSAFE(t, func(s string) {
				b, _ := os.ReadFile(band(t, s, "B05_20m"))
				write(band(t, s, "B04_10m"), string(b))
			})
		}, "is 32x32 but MTD_TL.xml says 64x64"},
		{"zip member named ../", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), s2New+".SAFE.zip")
			zipTree(t, fx(t, s2New+".SAFE"), p, func(w *zip.Writer) {
				m, _ := w.Create("../../evil.txt")
				m.Write([]byte("x"))
			})
			return p
		}, "points outside the archive"},
		{"zip bomb: huge declared metadata", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), s2New+".SAFE.zip")
			zipTree(t, malformedSAFE(t, func(s string) { os.Remove(mtd(s)) }), p, func(w *zip.Writer) {
				rawMember(t, w, s2New+".SAFE/MTD_MSIL2A.xml", make([]byte, 1<<20), 1<<40)
			})
			return p
		}, "more than the"},
		{"zip bomb: member inflating past its size", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), s2New+".SAFE.zip")
			zipTree(t, malformedSAFE(t, func(s string) { os.Remove(mtd(s)) }), p, func(w *zip.Writer) {
				z, crc := zerosDeflated(256)
				deflatedMember(t, w, s2New+".SAFE/MTD_MSIL2A.xml", z, crc, 4096)
			})
			return p
		}, "MTD_MSIL2A.xml"},
		{"zip bomb: huge declared band", func(t *testing.T) string {
			safe := malformedSAFE(t, func(s string) { os.Remove(band(t, s, "B04_10m")) })
			p := filepath.Join(t.TempDir(), s2New+".SAFE.zip")
			zipTree(t, safe, p, func(w *zip.Writer) {
				rawMember(t, w, s2New+".SAFE/GRANULE/L2A_T32TQM_A041614_20230615T102544/IMG_DATA/R10m/T32TQM_20230615T102021_B04_10m.jp2", make([]byte, 1<<20), 3<<30)
			})
			return p
		}, "declares 3221225472 bytes, more than"},
		{"not a zip", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), "x.SAFE.zip")
			write(p, "PK\x03\x04 but not really")
			return p
		}, "not a zip archive or it is damaged"},
		{"tar with a symlink", func(t *testing.T) string {
			return tarWith(t, &tar.Header{Name: "evil", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"})
		}, "is a link"},
		{"tar with a hard link", func(t *testing.T) string {
			return tarWith(t, &tar.Header{Name: "evil", Typeflag: tar.TypeLink, Linkname: "x"})
		}, "is a link"},
		{"tar member named ../", func(t *testing.T) string {
			return tarWith(t, &tar.Header{Name: "../evil", Typeflag: tar.TypeReg, Size: 1, Mode: 0o644})
		}, "points outside the archive"},
		{"gzip tar", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), lsID+".tar")
			f, _ := os.Create(p)
			g := gzip.NewWriter(f)
			b, _ := os.ReadFile(fx(t, lsID+".tar"))
			g.Write(b)
			g.Close()
			f.Close()
			return p
		}, "gzip-compressed tar"},
		{"truncated tar", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), lsID+".tar")
			b, _ := os.ReadFile(fx(t, lsID+".tar"))
			write(p, string(b[:len(b)/2]))
			return p
		}, ".tar"},
		{"Landsat band missing", func(t *testing.T) string {
			dir := filepath.Join(t.TempDir(), lsID)
			copyTree(t, fx(t, lsID), dir)
			os.Remove(filepath.Join(dir, lsID+"_SR_B5.TIF"))
			return dir
		}, "SR_B5"},
		{"Landsat MTL garbage", func(t *testing.T) string {
			dir := filepath.Join(t.TempDir(), lsID)
			copyTree(t, fx(t, lsID), dir)
			os.Remove(filepath.Join(dir, lsID+"_MTL.xml"))
			os.Remove(filepath.Join(dir, lsID+"_MTL.txt"))
			write(filepath.Join(dir, lsID+"_MTL.json"), `{"a": [`)
			return dir
		}, "malformed JSON"},
		{"Landsat Level-1", func(t *testing.T) string {
			dir := filepath.Join(t.TempDir(), lsID)
			copyTree(t, fx(t, lsID), dir)
			os.Remove(filepath.Join(dir, lsID+"_MTL.xml"))
			os.Remove(filepath.Join(dir, lsID+"_MTL.json"))
			p := filepath.Join(dir, lsID+"_MTL.txt")
			b, _ := os.ReadFile(p)
			write(p, strings.Replace(string(b), `"L2SP"`, `"L1TP"`, 1))
			return dir
		}, "processing level L1TP"},
		{"STAC not an item", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), "item.json")
			write(p, `{"type": "FeatureCollection", "features": []}`)
			return p
		}, "not a STAC item"},
		{"unknown file", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), "notes.txt")
			write(p, "hello")
			return p
		}, "not a product Canopy knows"},
		{"empty folder", func(t *testing.T) string { return t.TempDir() }, "no product metadata found"},
		{"no such path", func(t *testing.T) string { return filepath.Join(t.TempDir(), "nothing.zip") }, "no such file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := c.path(t)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			start := cputime.Now()
			s, err := Open(p)
			if err == nil {
				_, _, err = s.Load([]string{"red", "nir"}, LoadOptions{})
				s.Close()
			}
			runtime.ReadMemStats(&after)
			oneLine(t, c.name, err, c.want)
			if d := cputime.Since(start); d > 5*time.Second {
				t.Errorf("took %v of CPU time", d)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
				t.Errorf("allocated %d MB", alloc>>20)
			}
		})
	}
}

// tarWith writes the Landsat tar with one more member in front.
func tarWith(t *testing.T, h *tar.Header) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), lsID+".tar")
	f, _ := os.Create(p)
	defer f.Close()
	w := tar.NewWriter(f)
	w.WriteHeader(h)
	if h.Size > 0 {
		w.Write(bytes.Repeat([]byte("x"), int(h.Size)))
	}
	src, _ := os.Open(fx(t, lsID+".tar"))
	defer src.Close()
	r := tar.NewReader(src)
	for {
		hh, err := r.Next()
		if err == io.EOF {
			break
		}
		w.WriteHeader(hh)
		io.Copy(w, r)
	}
	w.Close()
	return p
}
