package scene

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"canopy/compute"
)

// This file builds products around real metadata (testdata/real) with
// synthetic pixels, at the sizes and geocoding the metadata declares: a
// Landsat band is 7611 x 7741 pixels as its MTL says, but all zero (fill)
// but for a patch of known values, so that it is quick to write and to
// read by window. Files are written the way their makers write them
// (tiled, deflated GeoTIFFs; an all-zero band compresses as well as
// deflate can, as a real QA_RADSAT does) into a temporary folder.

// patchSize is the side of the patch of known pixels.
const patchSize = 16

// tiffSpec is a single-band tiled, deflated GeoTIFF to write.
type tiffSpec struct {
	w, h      int
	bits      int // 8 or 16
	geo       *compute.GeoRef
	nodata    string // GDAL_NODATA, "" for none
	px, py    int    // the patch's top-left pixel
	patch     []uint16
	patchSize int
}

// writeTIFF writes s to path: 512 x 512 tiles, zlib-deflated at the best
// compression, every tile outside the patch the same all-zero tile (each
// stored on its own, as GDAL writes them).
func writeTIFF(t testing.TB, path string, s tiffSpec) {
	t.Helper()
	const ts = 512
	bps := s.bits / 8
	across, down := (s.w+ts-1)/ts, (s.h+ts-1)/ts
	deflate := func(b []byte) []byte {
		var buf bytes.Buffer
		z, _ := zlib.NewWriterLevel(&buf, zlib.BestCompression)
		z.Write(b)
		z.Close()
		return buf.Bytes()
	}
	zero := deflate(make([]byte, ts*ts*bps))
	var out bytes.Buffer
	out.Write([]byte{'I', 'I', 42, 0, 0, 0, 0, 0})
	var offs, counts []uint32
	for ty := range down {
		for tx := range across {
			x0, y0 := tx*ts, ty*ts
			data := zero
			if s.patch != nil && s.px < x0+ts && s.px+s.patchSize > x0 && s.py < y0+ts && s.py+s.patchSize > y0 {
				raw := make([]byte, ts*ts*bps)
				for j := range s.patchSize {
					for i := range s.patchSize {
						x, y := s.px+i-x0, s.py+j-y0
						if x < 0 || y < 0 || x >= ts || y >= ts {
							continue
						}
						v := s.patch[j*s.patchSize+i]
						if bps == 1 {
							raw[y*ts+x] = uint8(v)
						} else {
							binary.LittleEndian.PutUint16(raw[2*(y*ts+x):], v)
						}
					}
				}
				data = deflate(raw)
			}
			offs = append(offs, uint32(out.Len()))
			counts = append(counts, uint32(len(data)))
			out.Write(data)
			if out.Len()%2 == 1 {
				out.WriteByte(0)
			}
		}
	}
	type entry struct {
		tag, typ uint16
		count    int
		data     []byte
	}
	var es []entry
	shorts := func(tag uint16, v ...uint16) {
		b := make([]byte, 2*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint16(b[2*i:], x)
		}
		es = append(es, entry{tag, 3, len(v), b})
	}
	longs := func(tag uint16, v ...uint32) {
		b := make([]byte, 4*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint32(b[4*i:], x)
		}
		es = append(es, entry{tag, 4, len(v), b})
	}
	doubles := func(tag uint16, v []float64) {
		b := make([]byte, 8*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
		}
		es = append(es, entry{tag, 12, len(v), b})
	}
	longs(256, uint32(s.w))
	longs(257, uint32(s.h))
	shorts(258, uint16(s.bits))
	shorts(259, 8)
	shorts(262, 1)
	shorts(277, 1)
	shorts(284, 1)
	shorts(322, ts)
	shorts(323, ts)
	longs(324, offs...)
	longs(325, counts...)
	shorts(339, 1)
	if s.geo != nil {
		doubles(33550, s.geo.PixelScale)
		doubles(33922, s.geo.Tiepoints)
		shorts(34735, s.geo.GeoKeyDirectory...)
	}
	if s.nodata != "" {
		es = append(es, entry{42113, 2, len(s.nodata) + 1, append([]byte(s.nodata), 0)})
	}
	sort.Slice(es, func(i, j int) bool { return es[i].tag < es[j].tag })
	ifd := uint32(out.Len())
	binary.LittleEndian.PutUint32(out.Bytes()[4:], ifd)
	extra := ifd + 2 + uint32(12*len(es)) + 4
	var tail bytes.Buffer
	var head bytes.Buffer
	binary.Write(&head, binary.LittleEndian, uint16(len(es)))
	for _, e := range es {
		binary.Write(&head, binary.LittleEndian, e.tag)
		binary.Write(&head, binary.LittleEndian, e.typ)
		binary.Write(&head, binary.LittleEndian, uint32(e.count))
		if len(e.data) <= 4 {
			v := make([]byte, 4)
			copy(v, e.data)
			head.Write(v)
			continue
		}
		binary.Write(&head, binary.LittleEndian, extra+uint32(tail.Len()))
		tail.Write(e.data)
		if tail.Len()%2 == 1 {
			tail.WriteByte(0)
		}
	}
	head.Write([]byte{0, 0, 0, 0})
	out.Write(head.Bytes())
	out.Write(tail.Bytes())
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// tarDir writes the files of dir (flat, sorted) into a tar at dst, as
// USGS delivers Landsat products.
func tarDir(t testing.TB, dir, dst string) {
	t.Helper()
	f, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	tw := tar.NewWriter(f)
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		tw.WriteHeader(&tar.Header{Name: e.Name(), Mode: 0o644, Size: int64(len(b)), Typeflag: tar.TypeReg, Format: tar.FormatGNU})
		tw.Write(b)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// zipDir zips the folder src (its name the archive's top folder) into dst,
// members deflated as the Copernicus services serve them.
func zipDir(t testing.TB, src, dst string) {
	t.Helper()
	f, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	base := filepath.Dir(src)
	err = filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(base, p)
		w, err := zw.Create(filepath.ToSlash(rel))
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	})
	if err == nil {
		err = zw.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// copyFile copies a corpus file verbatim.
func copyFile(t testing.TB, src, dst string) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	out.Close()
}

// realLandsat is a real Landsat Collection 2 Level-2 MTL of the corpus
// with what it declares, read by hand from the file (the test's own
// numbers, not the reader's).
type realLandsat struct {
	id       string   // LANDSAT_PRODUCT_ID
	forms    []string // the MTL forms in the corpus: "txt", "xml", "json"
	sensor   string
	oli      bool
	pathRow  string
	date     string // DATE_ACQUIRED SCENE_CENTER_TIME to the second
	cloud    float64
	epsg     int
	w, h     int     // REFLECTIVE_SAMPLES, REFLECTIVE_LINES
	ulx, uly float64 // CORNER_UL_PROJECTION_X/Y_PRODUCT: the centre of the upper-left pixel
	mult     float64 // REFLECTANCE_MULT_BAND_n of LEVEL2_SURFACE_REFLECTANCE_PARAMETERS
	add      float64 // REFLECTANCE_ADD_BAND_n
}

var realLandsats = []realLandsat{
	{"LC09_L2SP_010065_20220129_20220131_02_T1", []string{"txt"}, "Landsat 9", true, "010065", "2022-01-29 15:28:34", 21.12, 32617, 7611, 7741, 492000, -683700, 2.75e-5, -0.2},
	{"LC08_L2SP_001070_20190114_20200830_02_T2", []string{"json", "xml"}, "Landsat 8", true, "001070", "2019-01-14 14:34:30", 75.65, 32619, 7651, 7781, 528300, -1482300, 2.75e-5, -0.2},
	{"LC08_L2SR_084024_20160111_20201016_02_T1", []string{"txt"}, "Landsat 8", true, "084024", "2016-01-11 22:49:22", 30.41, 32601, 8031, 8121, 257400, 5849700, 2.75e-5, -0.2},
	{"LE07_L2SP_021030_20100109_20200911_02_T1", []string{"xml"}, "Landsat 7", false, "021030", "2010-01-09 16:13:46", 8.00, 32616, 8031, 7091, 559500, 4890000, 2.75e-5, -0.2},
	{"LT05_L2SR_087017_20090621_20200827_02_T2", []string{"xml"}, "Landsat 5", false, "087017", "2009-06-21 22:53:30", 25.00, 32601, 8451, 7851, 328200, 6932700, 2.75e-5, -0.2},
}

// landsatPatch is where the known pixels are (a pixel not on a tile edge
// of 512 so that the patch spans four tiles).
const landsatPX, landsatPY = 1020, 2040

// landsatDN is the stored value of SR band n at patch pixel (i, j): a
// ramp of real reflectances, fill (0) in the first row's first pixels.
func landsatDN(n, i, j int) uint16 {
	if j == 0 && i < 3 {
		return 0
	}
	return uint16(7273 + 400*n + 37*i + 113*j + 5*i*j)
}

// landsatQA is QA_PIXEL at patch pixel (i, j): clear (21824) with fill,
// cloud, dilated cloud, shadow and cirrus at known pixels.
func landsatQA(i, j int) uint16 {
	switch {
	case j == 0 && i < 3:
		return 1 // fill
	case j == 5 && i == 5:
		return 21824 | 1<<3 // cloud
	case j == 6 && i == 6:
		return 21824 | 1<<1 // dilated cloud
	case j == 7 && i == 7:
		return 21824 | 1<<4 // cloud shadow
	case j == 8 && i == 8:
		return 21824 | 1<<2 // cirrus: OLI only
	}
	return 21824
}

// buildLandsat writes the product of r into a new folder of dir (named
// after the product), with the MTL forms given, and returns the folder.
func buildLandsat(t testing.TB, dir string, r realLandsat, forms []string) string {
	t.Helper()
	p := filepath.Join(dir, r.id)
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range forms {
		copyFile(t, filepath.Join("testdata", "real", "landsat", r.id+"_MTL."+f), filepath.Join(p, r.id+"_MTL."+f))
	}
	// The GeoTIFF's corner is the upper-left pixel's outer corner: half a
	// pixel up and left of the MTL's pixel centre.
	geo := northUp(r.epsg, r.ulx-15, r.uly+15, 30)
	patch := func(f func(i, j int) uint16) []uint16 {
		v := make([]uint16, patchSize*patchSize)
		for j := range patchSize {
			for i := range patchSize {
				v[j*patchSize+i] = f(i, j)
			}
		}
		return v
	}
	for n := 1; n <= 7; n++ {
		if n == 6 && !r.oli {
			continue // TM and ETM+ band 6 is thermal (ST_B6)
		}
		writeTIFF(t, filepath.Join(p, r.id+"_SR_B"+string(rune('0'+n))+".TIF"), tiffSpec{w: r.w, h: r.h, bits: 16, geo: geo, nodata: "0",
			px: landsatPX, py: landsatPY, patchSize: patchSize, patch: patch(func(i, j int) uint16 { return landsatDN(n, i, j) })})
	}
	writeTIFF(t, filepath.Join(p, r.id+"_QA_PIXEL.TIF"), tiffSpec{w: r.w, h: r.h, bits: 16, geo: geo, nodata: "1",
		px: landsatPX, py: landsatPY, patchSize: patchSize, patch: patch(landsatQA)})
	// QA_RADSAT: all zero (no saturation) but for the red band's bit at
	// (10, 10) and the blue band's at (11, 11).
	red, blue := 3, 1 // SR band numbers on TM and ETM+
	if r.oli {
		red, blue = 4, 2
	}
	writeTIFF(t, filepath.Join(p, r.id+"_QA_RADSAT.TIF"), tiffSpec{w: r.w, h: r.h, bits: 16, geo: geo,
		px: landsatPX, py: landsatPY, patchSize: patchSize, patch: patch(func(i, j int) uint16 {
			switch {
			case i == 10 && j == 10:
				return 1 << (red - 1)
			case i == 11 && j == 11:
				return 1 << (blue - 1)
			}
			return 0
		})})
	return p
}

// landsatNDVI is the reference NDVI of patch pixel (i, j) from the MTL's
// own factors, with the rules of the mask: NaN for fill, for the QA_PIXEL
// bits the sensor uses, and for red's saturation.
func landsatNDVI(r realLandsat, i, j int) float64 {
	redN, nirN := 3, 4
	if r.oli {
		redN, nirN = 4, 5
	}
	qa := landsatQA(i, j)
	bits := uint16(1<<0 | 1<<1 | 1<<3 | 1<<4)
	if r.oli {
		bits |= 1 << 2
	}
	rd, nd := landsatDN(redN, i, j), landsatDN(nirN, i, j)
	if rd == 0 || nd == 0 || qa&bits != 0 || (i == 10 && j == 10) {
		return math.NaN()
	}
	red := float64(rd)*r.mult + r.add
	nir := float64(nd)*r.mult + r.add
	return (nir - red) / (nir + red)
}

// hasForm reports whether the MTL forms include f.
func hasForm(forms []string, f string) bool {
	for _, x := range forms {
		if strings.EqualFold(x, f) {
			return true
		}
	}
	return false
}
