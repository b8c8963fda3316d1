package scene

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"sync"
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

// zeroTiles holds the deflated all-zero tile of each sample size.
var zeroTiles sync.Map

// writeTIFF writes s to path: 512 x 512 tiles, zlib-deflated, every tile
// outside the patch the same all-zero tile deflated at the best
// compression (each stored on its own, as GDAL writes them).
func writeTIFF(t testing.TB, path string, s tiffSpec) {
	t.Helper()
	const ts = 512
	bps := s.bits / 8
	across, down := (s.w+ts-1)/ts, (s.h+ts-1)/ts
	deflate := func(b []byte, level int) []byte {
		var buf bytes.Buffer
		z, _ := zlib.NewWriterLevel(&buf, level)
		z.Write(b)
		z.Close()
		return buf.Bytes()
	}
	z, ok := zeroTiles.Load(bps)
	if !ok {
		z = deflate(make([]byte, ts*ts*bps), zlib.BestCompression)
		zeroTiles.Store(bps, z)
	}
	zero := z.([]byte)
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
				data = deflate(raw, zlib.BestSpeed)
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
	{"LT04_L2SP_002026_19830110_20200918_02_T1", []string{"xml"}, "Landsat 4", false, "002026", "1983-01-10 13:52:14", 7.00, 32622, 8121, 7431, 210300, 5525400, 2.75e-5, -0.2},
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

// Full-size JPEG 2000 bands. Encoding a 10980² image takes OpenJPEG most
// of a minute, so a band is assembled from tiles GDAL encodes once: the
// codestream of an image of 2048² tiles is its main header and one
// tile-part per tile, each tile coded on its own. With five
// decomposition levels and 64² code-blocks, tiles whose origins are
// multiples of 2048 are coded the same wherever they lie, so an all-zero
// tile (and the narrower zero tiles of the right and bottom edges), and
// one tile holding the patch of known values, encoded once, make the whole
// band: the main header of the small images with the full size in SIZ,
// the tile-parts renumbered. OpenJPEG (and GDAL) decode the result as
// they decode any tiled JPEG 2000.

const j2kTile = 2048

// j2kParts are the codestream pieces of one encoded image.
type j2kParts struct {
	main  []byte         // SOC to the first SOT
	tiles map[int][]byte // tile index -> its tile-parts (SOT ... data)
}

// encodeJ2K encodes a w×h single-band image (bits 8 or 16, all zero but
// for the patch) with GDAL into a raw codestream and splits it.
func encodeJ2K(t testing.TB, dir string, w, h, bits int, patch []uint16, px, py, ps int) j2kParts {
	t.Helper()
	needGDALTool(t)
	in := filepath.Join(dir, "in.tif")
	out := filepath.Join(dir, "out.j2k")
	writeTIFF(t, in, tiffSpec{w: w, h: h, bits: bits, px: px, py: py, patch: patch, patchSize: ps})
	cmd := exec.Command("gdal_translate", "-q", "-of", "JP2OpenJPEG", "-co", "CODEC=J2K", "-co", "QUALITY=100", "-co", "REVERSIBLE=YES",
		"-co", "YCBCR420=NO", "-co", "RESOLUTIONS=6", "-co", "BLOCKXSIZE=2048", "-co", "BLOCKYSIZE=2048", "-co", "PROGRESSION=LRCP", in, out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gdal_translate: %v %s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(in)
	os.Remove(out)
	return splitJ2K(t, b)
}

func splitJ2K(t testing.TB, b []byte) j2kParts {
	t.Helper()
	be := binary.BigEndian
	if len(b) < 4 || be.Uint16(b) != 0xFF4F {
		t.Fatal("not a JPEG 2000 codestream")
	}
	i := 2
	for i+4 <= len(b) && be.Uint16(b[i:]) != 0xFF90 {
		m := be.Uint16(b[i:])
		if m == 0xFF55 || m == 0xFF57 || m == 0xFF60 { // TLM, PLM, PPM: tile positions in the main header
			t.Fatalf("GDAL wrote marker %04X in the main header: tiles cannot be renumbered", m)
		}
		i += 2 + int(be.Uint16(b[i+2:]))
	}
	p := j2kParts{main: b[:i], tiles: map[int][]byte{}}
	for i+12 <= len(b) && be.Uint16(b[i:]) == 0xFF90 {
		idx := int(be.Uint16(b[i+4:]))
		n := int(be.Uint32(b[i+6:]))
		if n == 0 {
			n = len(b) - 2 - i
		}
		p.tiles[idx] = append(p.tiles[idx], b[i:i+n]...)
		i += n
	}
	if be.Uint16(b[i:]) != 0xFFD9 {
		t.Fatalf("codestream: %04X after the tile-parts, not EOC", be.Uint16(b[i:]))
	}
	return p
}

// j2kBand is what a band needs: the zero tiles of its size and type, and
// the patch tile.
type j2kBand struct {
	w, h, bits int
	zero       j2kParts // an image of (2048+ew) x (2048+eh): tiles full, right, bottom, corner
	patch      j2kParts // one 2048² tile with the patch
	pt         int      // the tile the patch goes to
}

var j2kCache sync.Map // "w h bits" -> the zero image; bits, place and patch -> the patch tile

// newJ2KBand encodes what a w×h band with the patch at (px, py) needs.
func newJ2KBand(t testing.TB, w, h, bits int, patch []uint16, px, py, ps int) j2kBand {
	t.Helper()
	ew, eh := w%j2kTile, h%j2kTile
	if ew == 0 || eh == 0 || px/j2kTile != (px+ps-1)/j2kTile || py/j2kTile != (py+ps-1)/j2kTile || px >= w-ew || py >= h-eh {
		t.Fatalf("patch (%d, %d) must lie within one full tile of a %dx%d band with partial edge tiles", px, py, w, h)
	}
	dir := t.TempDir()
	key := fmt.Sprint(w, h, bits)
	z, ok := j2kCache.Load(key)
	if !ok {
		z = encodeJ2K(t, dir, j2kTile+ew, j2kTile+eh, bits, nil, 0, 0, 0)
		j2kCache.Store(key, z)
	}
	tx, ty := px/j2kTile, py/j2kTile
	pkey := fmt.Sprint(bits, px-tx*j2kTile, py-ty*j2kTile, ps, patch)
	pv, ok := j2kCache.Load(pkey)
	if !ok {
		pv = encodeJ2K(t, dir, j2kTile, j2kTile, bits, patch, px-tx*j2kTile, py-ty*j2kTile, ps)
		j2kCache.Store(pkey, pv)
	}
	pp := pv.(j2kParts)
	across := (w + j2kTile - 1) / j2kTile
	return j2kBand{w: w, h: h, bits: bits, zero: z.(j2kParts), patch: pp, pt: ty*across + tx}
}

// writeJP2 writes the band as a JP2 file (signature, file type, header
// and codestream boxes).
func (jb j2kBand) writeJP2(t testing.TB, path string) {
	t.Helper()
	be := binary.BigEndian
	across, down := (jb.w+j2kTile-1)/j2kTile, (jb.h+j2kTile-1)/j2kTile
	var cs bytes.Buffer
	main := append([]byte(nil), jb.zero.main...)
	// SIZ follows SOC: FF51 Lsiz Rsiz Xsiz Ysiz ...
	if be.Uint16(main[2:]) != 0xFF51 {
		t.Fatal("no SIZ after SOC")
	}
	be.PutUint32(main[8:], uint32(jb.w))
	be.PutUint32(main[12:], uint32(jb.h))
	cs.Write(main)
	for ty := range down {
		for tx := range across {
			src := 0 // full zero tile
			switch {
			case tx == across-1 && ty == down-1:
				src = 3
			case tx == across-1:
				src = 1
			case ty == down-1:
				src = 2
			}
			part := jb.zero.tiles[src]
			idx := ty*across + tx
			if idx == jb.pt {
				part = jb.patch.tiles[0]
			}
			part = append([]byte(nil), part...)
			// Renumber every tile-part of the tile.
			for i := 0; i+12 <= len(part); {
				be.PutUint16(part[i+4:], uint16(idx))
				i += int(be.Uint32(part[i+6:]))
			}
			cs.Write(part)
		}
	}
	cs.Write([]byte{0xFF, 0xD9})
	box := func(typ string, body []byte) []byte {
		b := make([]byte, 8, 8+len(body))
		be.PutUint32(b, uint32(8+len(body)))
		copy(b[4:], typ)
		return append(b, body...)
	}
	ihdr := make([]byte, 14)
	be.PutUint32(ihdr, uint32(jb.h))
	be.PutUint32(ihdr[4:], uint32(jb.w))
	be.PutUint16(ihdr[8:], 1)
	ihdr[10] = byte(jb.bits - 1)
	ihdr[11] = 7
	colr := []byte{1, 0, 0, 0, 0, 0, 17}
	var f bytes.Buffer
	f.Write([]byte{0, 0, 0, 12, 'j', 'P', ' ', ' ', 0x0D, 0x0A, 0x87, 0x0A})
	f.Write(box("ftyp", []byte("jp2 \x00\x00\x00\x00jp2 ")))
	f.Write(box("jp2h", append(box("ihdr", ihdr), box("colr", colr)...)))
	f.Write(box("jp2c", cs.Bytes()))
	if err := os.WriteFile(path, f.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// realS2 is a real Sentinel-2 L2A MTD_MSIL2A.xml of the corpus (and its
// MTD_TL.xml where the corpus has it) with what it declares, read by hand
// from the files.
type realS2 struct {
	id       string // product name (PRODUCT_URI without .SAFE)
	mtdName  string // the metadata file's name in the product
	tlHead   string // the corpus's MTD_TL.xml head ("" : none, made from the tile)
	granule  string // GRANULE/<granule>
	prefix   string // band file prefix, "T29UNU_20221005T115411_"
	ext      string // band files: ".jp2" or ".tif" (imageFormat)
	sensor   string
	baseline string
	tile     string
	date     string // SENSING_TIME (or PRODUCT_START_TIME), to the second
	cloud    float64
	epsg     int
	ulx, uly float64
	add      float64 // BOA_ADD_OFFSET (0 when the baseline has none)
}

var realS2s = []realS2{
	{"S2A_MSIL2A_20221005T115411_N0400_R023_T29UNU_20221005T164454", "MTD_MSIL2A.xml", "S2A_MSIL2A_20221005T115411_N0400_R023_T29UNU_20221005T164454_MTD_TL.head.xml",
		"L2A_T29UNU_A038058_20221005T115407", "T29UNU_20221005T115411_", ".jp2", "Sentinel-2A", "04.00", "29UNU", "2022-10-05 11:56:49", 59.769726, 32629, 499980, 5900040, -1000},
	{"S2B_MSIL2A_20230823T095559_N0509_R122_T34UCF_20230823T124759", "MTD_MSIL2A.xml", "S2B_MSIL2A_20230823T095559_N0509_R122_T34UCF_20230823T124759_MTD_TL.head.xml",
		"L2A_T34UCF_A033753_20230823T095553", "T34UCF_20230823T095559_", ".jp2", "Sentinel-2B", "05.09", "34UCF", "2023-08-23 10:05:35", 6.859297, 32634, 300000, 6100020, -1000},
	// Reprocessed at baseline 02.12 by ESRI in 2020: MTD_MSIL2a.xml,
	// imageFormat GeoTIFF, no BOA_ADD_OFFSET. The corpus has no MTD_TL.xml
	// for it: the test writes one for tile 43MDV (UTM 43 south, the
	// 100 km square D V at 400 km east, 9900 km north: the tile's corner
	// 20 m west and 40 m north of the square's, as every tile's).
	{"S2A_MSIL2A_20180721T053721_N0212_R062_T43MDV_20201011T181419", "MTD_MSIL2a.xml", "",
		"L2A_T43MDV_A016075_20180721T053717", "T43MDV_20180721T053721_", ".tif", "Sentinel-2A", "02.12", "43MDV", "2018-07-21 05:37:21", 99.999999, 32743, 399960, 10000040, 0},
}

// The patch of known values: 16 x 16 pixels at 10 m from s2PX, s2PY (the
// same ground as 8 x 8 at 20 m).
const s2PX, s2PY = 4100, 2050

// s2DN is the stored value of band b (B04, B08, B05, B8A) at 10 m patch
// pixel (i, j); 20 m bands hold the value of their pixel's upper-left
// 10 m pixel. Row 0 holds nodata, saturation, and DN 1000 in red and NIR
// (reflectance exactly 0 at baselines with the offset −1000).
func s2DN(b string, i, j int) uint16 {
	switch {
	case j == 0 && i == 0 && (b == "B04" || b == "B05"):
		return 0
	case j == 0 && i == 1 && b == "B04":
		return 65535
	case j == 0 && i == 2 && (b == "B04" || b == "B08"):
		return 1000
	case j == 0 && i == 3 && b == "B08":
		return 0
	}
	switch b {
	case "B04":
		return uint16(1300 + 17*i + 23*j)
	case "B08":
		return uint16(3500 + 31*i + 11*j)
	case "B05":
		return uint16(1800 + 13*i + 7*j)
	}
	return uint16(3300 + 29*i + 5*j) // B8A
}

// s2SCL is the scene class at 20 m patch pixel (i, j).
func s2SCL(i, j int) uint16 {
	if j == 1 && i >= 1 && i <= 6 {
		return []uint16{9, 3, 8, 10, 1, 0}[i-1]
	}
	if j == 3 && i == 1 {
		return 5
	}
	if j == 3 && i == 2 {
		return 6
	}
	return 4
}

// s2NDVI is the reference NDVI of 10 m patch pixel (i, j) (red B04, NIR
// B08), from the metadata's own numbers: (DN + add) / 10000, NaN where a
// DN is 0 or 65535, where SCL masks, or where the denominator is 0.
func s2NDVI(r realS2, i, j int) float64 {
	rd, nd := s2DN("B04", i, j), s2DN("B08", i, j)
	switch s2SCL(i/2, j/2) {
	case 0, 1, 3, 8, 9, 10:
		return math.NaN()
	}
	if rd == 0 || nd == 0 || rd == 65535 || nd == 65535 {
		return math.NaN()
	}
	red := (float64(rd) + r.add) / 10000
	nir := (float64(nd) + r.add) / 10000
	if nir+red == 0 {
		return math.NaN()
	}
	return (nir - red) / (nir + red)
}

var s2Bands = map[int][]string{10: {"B02", "B03", "B04", "B08"}, 20: {"B05", "B06", "B07", "B8A", "B11", "B12", "SCL"}}

// buildS2 writes the .SAFE folder of r in dir: the corpus's MTD (as
// mtdName) and MTD_TL.xml, and the 10 m and 20 m band files the readers
// use, at 10980² and 5490², JPEG 2000 or GeoTIFF as imageFormat says.
func buildS2(t testing.TB, dir string, r realS2) string {
	t.Helper()
	safe := filepath.Join(dir, r.id+".SAFE")
	gran := filepath.Join(safe, "GRANULE", r.granule)
	if err := os.MkdirAll(filepath.Join(gran, "QI_DATA"), 0o755); err != nil {
		t.Fatal(err)
	}
	copyFile(t, filepath.Join("testdata", "real", "sentinel2", r.id+"_"+r.mtdName), filepath.Join(safe, r.mtdName))
	var tl []byte
	if r.tlHead != "" {
		head, err := os.ReadFile(filepath.Join("testdata", "real", "sentinel2", r.tlHead))
		if err != nil {
			t.Fatal(err)
		}
		tl = append(head, "  </n1:Geometric_Info>\n</n1:Level-2A_Tile_ID>\n"...)
	} else {
		tl = []byte(fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8"?>
<n1:Level-2A_Tile_ID xmlns:n1="https://psd-14.sentinel2.eo.esa.int/PSD/S2_PDI_Level-2A_Tile_Metadata.xsd">
  <n1:General_Info><TILE_ID>made by the test for T%s</TILE_ID></n1:General_Info>
  <n1:Geometric_Info>
    <Tile_Geocoding metadataLevel="Brief">
      <HORIZONTAL_CS_NAME>WGS84 / UTM zone %s</HORIZONTAL_CS_NAME>
      <HORIZONTAL_CS_CODE>EPSG:%d</HORIZONTAL_CS_CODE>
      <Size resolution="10"><NROWS>10980</NROWS><NCOLS>10980</NCOLS></Size>
      <Size resolution="20"><NROWS>5490</NROWS><NCOLS>5490</NCOLS></Size>
      <Size resolution="60"><NROWS>1830</NROWS><NCOLS>1830</NCOLS></Size>
      <Geoposition resolution="10"><ULX>%g</ULX><ULY>%g</ULY><XDIM>10</XDIM><YDIM>-10</YDIM></Geoposition>
      <Geoposition resolution="20"><ULX>%g</ULX><ULY>%g</ULY><XDIM>20</XDIM><YDIM>-20</YDIM></Geoposition>
      <Geoposition resolution="60"><ULX>%g</ULX><ULY>%g</ULY><XDIM>60</XDIM><YDIM>-60</YDIM></Geoposition>
    </Tile_Geocoding>
  </n1:Geometric_Info>
</n1:Level-2A_Tile_ID>
`, r.tile, r.tile[:3], r.epsg, r.ulx, r.uly, r.ulx, r.uly, r.ulx, r.uly))
	}
	if err := os.WriteFile(filepath.Join(gran, "MTD_TL.xml"), tl, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, res := range []int{10, 20} {
		n, px, py, ps := 10980, s2PX, s2PY, patchSize
		if res == 20 {
			n, px, py, ps = 5490, s2PX/2, s2PY/2, patchSize/2
		}
		img := filepath.Join(gran, "IMG_DATA", fmt.Sprintf("R%dm", res))
		os.MkdirAll(img, 0o755)
		for _, b := range s2Bands[res] {
			bits := 16
			var patch []uint16
			switch {
			case b == "SCL":
				bits = 8
				patch = make([]uint16, ps*ps)
				for j := range ps {
					for i := range ps {
						patch[j*ps+i] = s2SCL(i, j)
					}
				}
			case b == "B04" || b == "B08" || b == "B05" || b == "B8A":
				k := res / 10
				patch = make([]uint16, ps*ps)
				for j := range ps {
					for i := range ps {
						patch[j*ps+i] = s2DN(b, i*k, j*k)
					}
				}
			}
			file := filepath.Join(img, fmt.Sprintf("%s%s_%dm%s", r.prefix, b, res, r.ext))
			if r.ext == ".tif" {
				writeTIFF(t, file, tiffSpec{w: n, h: n, bits: bits, geo: northUp(r.epsg, r.ulx, r.uly, float64(res)), nodata: "0",
					px: px, py: py, patch: patch, patchSize: ps})
				continue
			}
			if patch == nil {
				patch = make([]uint16, ps*ps) // all zero: the zero tiles alone
			}
			newJ2KBand(t, n, n, bits, patch, px, py, ps).writeJP2(t, file)
		}
	}
	return safe
}
